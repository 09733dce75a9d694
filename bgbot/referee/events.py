"""The events a referee emits while it hosts a match (DESIGN §5).

Subscribers (the `.mat` writer, the SQLite journal, the PUB socket, the console) receive them
in order. Every event names the match it belongs to, so one stream can carry many matches.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Union

from ..core.game import Game, GameOutcome
from ..core.position import Play, Position


@dataclass(frozen=True, slots=True)
class GameStarted:
    match_id: str
    game: int
    """1-based game number."""
    score: tuple[int, int]
    crawford: bool
    post_crawford: bool


@dataclass(frozen=True, slots=True)
class Rolled:
    """A roll. For the opening roll (``opening``), ``dice`` are (seat 0's die, seat 1's die)
    and ``seat`` is the winner, or -1 on a tie (both roll again)."""

    match_id: str
    game: int
    seat: int
    dice: tuple[int, int]
    opening: bool = False


@dataclass(frozen=True, slots=True)
class Played:
    match_id: str
    game: int
    seat: int
    dice: tuple[int, int]
    play: Play
    before: Position
    """The board before the play, seen from the mover."""


@dataclass(frozen=True, slots=True)
class Doubled:
    match_id: str
    game: int
    seat: int
    cube: int
    """The value offered."""


@dataclass(frozen=True, slots=True)
class Taken:
    match_id: str
    game: int
    seat: int
    cube: int


@dataclass(frozen=True, slots=True)
class Dropped:
    match_id: str
    game: int
    seat: int
    cube: int


@dataclass(frozen=True, slots=True)
class Beavered:
    match_id: str
    game: int
    seat: int
    cube: int
    raccoon: bool = False


@dataclass(frozen=True, slots=True)
class Resigned:
    match_id: str
    game: int
    seat: int
    value: int
    accepted: bool


@dataclass(frozen=True, slots=True)
class GameEnded:
    match_id: str
    game: int
    outcome: GameOutcome
    score: tuple[int, int]
    """The score after this game."""
    record: Game
    """The finished core Game, whose history the .mat writer reads."""


@dataclass(frozen=True, slots=True)
class MatchEnded:
    match_id: str
    score: tuple[int, int]
    winner: int | None
    """None for a money session."""
    games: int


Event = Union[
    GameStarted, Rolled, Played, Doubled, Taken, Dropped, Beavered, Resigned, GameEnded, MatchEnded
]
Listener = Callable[[Event], None]
