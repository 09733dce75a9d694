"""A match told in words: one line per thing that happens (`Narrator`).

A referee's events (`bgbot.referee.events`) carry what the core recorded; a person watching a
match, or playing one at the terminal, needs it said: who rolled what and played what, who
doubled, took, dropped or beavered, who resigned what and how it was answered, who won how
much, and the score and the cube after it. `bgbot play --watch` prints these lines (with a
board after every move) and `bgbot play human ...` prints them beside the human's prompts,
so the opponent's turns are never silent.
"""

from __future__ import annotations

from typing import Sequence

from ..core.game import (
    AutoDoubled,
    Beavered,
    Doubled,
    Dropped,
    GameOutcome,
    Moved,
    OpeningRolled,
    Raccooned,
    Resigned,
    ResignationAccepted,
    ResignationRejected,
    Taken,
)
from . import events as ev

__all__ = ["Narrator", "points_text"]

_RESIGNED = {1: "a single game", 2: "a gammon", 3: "a backgammon"}
_KIND = {1: "a single game", 2: "a gammon", 3: "a backgammon"}
"""What a played-out game was (its outcome's ``kind``)."""


def points_text(points: int) -> str:
    return f"{points} point{'' if points == 1 else 's'}"


class Narrator:
    """Turns one match's events into lines, keeping the score and the cube as they change.

    ``names`` are the two seats' names, ``length`` the match length (0: money), ``cube``
    whether the doubling cube is in play.
    """

    def __init__(self, names: Sequence[str], length: int, *, cube: bool = True) -> None:
        self.names = (str(names[0]), str(names[1]))
        self.length = length
        self.cube = cube
        self.score = (0, 0)
        self.crawford = False
        self.cube_value = 1
        self.cube_owner: int | None = None
        """The seat that owns the cube, None while it is centred."""
        self._doubler = 0

    # ----------------------------------------------------------------- the state line

    def score_text(self) -> str:
        """``7-point match, score human 2, heuristic 0`` (money: the points so far)."""
        a, b = self.names
        if self.length:
            kind = f"{self.length}-point match, score"
        else:
            kind = "money, points so far"
        text = f"{kind} {a} {self.score[0]}, {b} {self.score[1]}"
        return text + (", Crawford game" if self.crawford else "")

    def cube_text(self) -> str:
        """``cube 2, owned by human``, ``cube 1, centred`` or ``no cube``."""
        if not self.cube:
            return "no cube"
        if self.crawford:
            return "no cube (Crawford game)"
        owner = "centred" if self.cube_owner is None else f"owned by {self.names[self.cube_owner]}"
        return f"cube {self.cube_value}, {owner}"

    def situation(self) -> str:
        """The score and the cube as one line."""
        return f"{self.score_text()}; {self.cube_text()}"

    # ----------------------------------------------------------------- events

    def lines(self, event: ev.Event) -> list[str]:
        """What ``event`` says, in words (nothing for what another line already tells)."""
        if isinstance(event, ev.GameStarted):
            self.score, self.crawford = event.score, event.crawford
            self.cube_value, self.cube_owner = 1, None
            return [f"=== game {event.game}: {self.situation()}"]
        if isinstance(event, ev.Acted):
            text = self._action(event.action)
            return [f"game {event.game}: {text}"] if text else []
        if isinstance(event, ev.GameEnded):
            self.score, self.crawford = event.score, False
            outcome = event.outcome
            return [f"game {event.game}: {self.names[outcome.winner]} wins "
                    f"{points_text(outcome.points)} ({self._how(outcome)}); "
                    f"{self.score_text()}"]
        if isinstance(event, ev.MatchEnded):
            a, b = self.names
            if event.winner is None:
                return [f"the end after {event.games} game{'s' if event.games != 1 else ''}: "
                        f"{a} {event.score[0]}, {b} {event.score[1]}"]
            return [f"{self.names[event.winner]} wins the {self.length}-point match "
                    f"{max(event.score)}-{min(event.score)}"]
        return []

    def _action(self, action: object) -> str | None:
        names = self.names
        if isinstance(action, OpeningRolled):
            dice = f"{names[0]} {action.die0}, {names[1]} {action.die1}"
            if action.winner is None:
                return f"opening roll {dice}: a tie, roll again"
            return f"opening roll {dice}: {names[action.winner]} plays first"
        if isinstance(action, AutoDoubled):
            self.cube_value = action.cube
            return f"the tie doubles the cube to {action.cube} (automatic doubles)"
        if isinstance(action, Moved):
            high, low = max(action.dice), min(action.dice)
            play = str(action.play)
            done = f"plays {play}" if play else "cannot move"
            return f"{names[action.seat]} rolls {high}{low} and {done}"
        if isinstance(action, Doubled):
            self._doubler = action.seat
            return f"{names[action.seat]} doubles to {action.cube}"
        if isinstance(action, Taken):  # the doubled seat owns it, after any redoubles (R24)
            self.cube_value, self.cube_owner = action.cube, 1 - self._doubler
            return f"{names[action.seat]} takes; {self.cube_text()}"
        if isinstance(action, Dropped):
            return f"{names[action.seat]} drops (passes the cube at {action.cube})"
        if isinstance(action, (Beavered, Raccooned)):
            verb = "beavers" if isinstance(action, Beavered) else "raccoons"
            return f"{names[action.seat]} {verb} to {action.cube}"
        if isinstance(action, Resigned):
            return f"{names[action.seat]} offers to resign {_RESIGNED[action.value]}"
        if isinstance(action, ResignationAccepted):
            return f"{names[action.seat]} accepts the resignation"
        if isinstance(action, ResignationRejected):
            return f"{names[action.seat]} rejects the resignation; play goes on"
        return None  # Rolled: its play says the dice

    def _how(self, outcome: GameOutcome) -> str:
        loser = self.names[outcome.loser]
        if outcome.ending == "drop":
            return f"{loser} dropped the cube"
        if outcome.ending == "resign":
            return f"{loser} resigned {_RESIGNED.get(outcome.kind, 'the game')}"
        kind = _KIND.get(outcome.kind, "a game")
        if outcome.kind > 1 and outcome.points == outcome.cube:
            kind += ", counted single: the Jacoby rule"  # the cube was never turned
        return kind
