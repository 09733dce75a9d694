"""The Player interface: an in-process decider, and the context every request carries.

Players keep no hidden game state: each request carries everything needed to answer it
(DESIGN §4). Every field of `Context` is seen from the player being asked ("me").
"""

from __future__ import annotations

from enum import Enum
from typing import NamedTuple, Protocol, Sequence

from ..core.context import Context, CubeOwner
from ..core.position import Play, Position

__all__ = ["Context", "CubeOwner", "Player", "Probabilities", "TakeDecision"]


class TakeDecision(Enum):
    """The doubled player's answer."""

    TAKE = "take"
    DROP = "drop"
    BEAVER = "beaver"


class Probabilities(NamedTuple):
    """Cubeless chances for the player on roll, before rolling (gnubg's five outputs).

    Gammon chances include backgammons.
    """

    win: float
    win_gammon: float
    win_backgammon: float
    lose_gammon: float
    lose_backgammon: float

    def equity(self) -> float:
        """Cubeless money equity: gammons count 2, backgammons 3."""
        return (
            2.0 * self.win
            - 1.0
            + self.win_gammon
            - self.lose_gammon
            + self.win_backgammon
            - self.lose_backgammon
        )

    def flipped(self) -> Probabilities:
        """The same chances seen from the other side."""
        return Probabilities(
            1.0 - self.win,
            self.lose_gammon,
            self.lose_backgammon,
            self.win_gammon,
            self.win_backgammon,
        )


class Player(Protocol):
    """An in-process decider. Positions are always seen from the player on roll."""

    name: str

    def choose_play(self, position: Position, dice: Sequence[int], context: Context) -> Play:
        """I am on roll with ``dice``: which of ``position.legal_plays(dice)``?"""
        ...

    def should_double(self, position: Position, context: Context) -> bool:
        """I am on roll and may double (``context.may_double()``): do I?"""
        ...

    def take_decision(self, position: Position, context: Context) -> TakeDecision:
        """My opponent, on roll in ``position``, doubled to ``2 * context.cube_value``.

        ``position`` is seen from the doubler (on roll); ``context`` from me. BEAVER only when
        ``context.rules.beavers`` and money play.
        """
        ...

    def offer_resignation(self, position: Position, context: Context) -> int:
        """I am on roll (``position`` from my side): resign 0 (no), 1, 2 or 3 (backgammon)?"""
        ...

    def accept_resignation(self, position: Position, context: Context, value: int) -> bool:
        """My opponent resigns ``value`` (1 single, 2 gammon, 3 backgammon) in ``position``.

        ``position`` is seen from the player on roll, who is the one resigning.
        """
        ...
