"""bgbot: a GNU Backgammon-compatible backgammon bot (rules core, player, adapters).

The names below are the public API that tools and tests rely on (DESIGN §7).
"""

from .core import (
    FormatError,
    Game,
    GameOutcome,
    IllegalAction,
    InvalidPosition,
    Match,
    Play,
    Position,
    Rules,
    Step,
)

__version__ = "0.1.0"

__all__ = [
    "FormatError",
    "Game",
    "GameOutcome",
    "IllegalAction",
    "InvalidPosition",
    "Match",
    "Play",
    "Position",
    "Rules",
    "Step",
    "__version__",
]
