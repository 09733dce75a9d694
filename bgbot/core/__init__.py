"""The pure rules core: positions, plays, legal-play generation, games, matches, dice."""

from .context import Context, CubeOwner
from .dice import DiceExhausted, DiceSource, GameDice, MirroredDice, ScriptedDice, SeededDice
from .errors import BgbotError, FormatError, IllegalAction, InvalidPosition
from .game import Game, GameOutcome, Phase
from .match import Match
from .position import Play, Position, Step
from .rules import Rules

__all__ = [
    "BgbotError",
    "Context",
    "CubeOwner",
    "DiceExhausted",
    "DiceSource",
    "FormatError",
    "Game",
    "GameDice",
    "GameOutcome",
    "IllegalAction",
    "InvalidPosition",
    "Match",
    "MirroredDice",
    "Phase",
    "Play",
    "Position",
    "Rules",
    "ScriptedDice",
    "SeededDice",
    "Step",
]
