"""The events of a hosted match (DESIGN §5): the rules core's actions in the referee's envelope.

The one vocabulary of game events is the core's (`bgbot.core.game`: `OpeningRolled`,
`Rolled`, `Moved`, `Doubled`, `Taken`, `Dropped`, `Beavered`, `Raccooned`, `Resigned`,
`ResignationAccepted`, `ResignationRejected`, `AutoDoubled`): exactly what the `Game` recorded.
A referee sends each one wrapped in `Acted` -- which match, which game, when -- between a
`GameStarted` and a `GameEnded`, and ends with a `MatchEnded`. Subscribers (the ``.mat`` writer,
the SQLite journal, the PUB socket, the console) receive them in order; every event names its
match, so one stream can carry many matches.

`action_record` is the one plain form of an action (a kind and JSON-able fields): the match
journal stores it, and the server frontends log their mirrored games with it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable, Union

from ..core.game import (
    Action,
    Beavered,
    Doubled,
    Dropped,
    Game,
    GameOutcome,
    Moved,
    OpeningRolled,
    Raccooned,
    ResignationAccepted,
    ResignationRejected,
    Rolled,
    Taken,
)

__all__ = ["Acted", "Event", "GameEnded", "GameStarted", "Listener", "MatchEnded",
           "action_record"]


@dataclass(frozen=True, slots=True)
class GameStarted:
    match_id: str
    game: int
    """1-based game number."""
    score: tuple[int, int]
    crawford: bool
    post_crawford: bool


@dataclass(frozen=True, slots=True)
class Acted:
    """A core action (``action``) in game ``game`` of match ``match_id``: the envelope."""

    match_id: str
    game: int
    action: Action
    at: float = field(default_factory=time.time, compare=False, repr=False)
    """When the referee saw it (Unix time; not compared: a replayed match is the same)."""


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


Event = Union[GameStarted, Acted, GameEnded, MatchEnded]
Listener = Callable[[Event], None]


def action_record(action: Action) -> tuple[str, dict[str, Any]] | None:
    """A core action as (kind, JSON-able fields) -- the kinds and fields of the match journal
    (``opening``, ``roll``, ``move``, ``double``, ``take``, ``drop``, ``beaver``, ``raccoon``,
    ``resign``), which replaying through a `Game` turns back into the same actions.

    None for what needs no record of its own: an `AutoDoubled` follows from the opening dice,
    and a resignation is one ``resign`` record once it is answered (``seat`` the resigner,
    ``accepted`` the answer)."""
    if isinstance(action, OpeningRolled):
        return "opening", {"dice": [action.die0, action.die1]}
    if isinstance(action, Rolled):
        return "roll", {"seat": action.seat, "dice": list(action.dice)}
    if isinstance(action, Moved):
        return "move", {"seat": action.seat, "dice": list(action.dice),
                        "play": [[f, t, int(h)] for f, t, h in action.play]}
    for kind, cls in _CUBE_KINDS:
        if isinstance(action, cls):
            return kind, {"seat": action.seat, "cube": action.cube}
    if isinstance(action, (ResignationAccepted, ResignationRejected)):
        return "resign", {"seat": 1 - action.seat, "value": action.value,
                          "accepted": isinstance(action, ResignationAccepted)}
    return None


_CUBE_KINDS: tuple[tuple[str, type[Doubled | Taken | Dropped | Beavered | Raccooned]], ...] = (
    ("double", Doubled), ("take", Taken), ("drop", Dropped), ("beaver", Beavered),
    ("raccoon", Raccooned))
