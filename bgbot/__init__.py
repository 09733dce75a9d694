"""bgbot: a GNU Backgammon-compatible backgammon bot (rules core, player, adapters)."""

from .core import FormatError, IllegalAction, InvalidPosition, Play, Position, Rules, Step

__version__ = "0.1.0"

__all__ = [
    "FormatError",
    "IllegalAction",
    "InvalidPosition",
    "Play",
    "Position",
    "Rules",
    "Step",
    "__version__",
]
