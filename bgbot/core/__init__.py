"""The pure rules core: positions, plays, legal-play generation, games, matches, dice."""

from .errors import BgbotError, FormatError, IllegalAction, InvalidPosition
from .position import Play, Position, Step
from .rules import Rules

__all__ = [
    "BgbotError",
    "FormatError",
    "IllegalAction",
    "InvalidPosition",
    "Play",
    "Position",
    "Rules",
    "Step",
]
