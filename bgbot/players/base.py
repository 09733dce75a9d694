"""The Player interface: an in-process decider, and the context every request carries.

Players keep no hidden game state: each request carries everything needed to answer it
(DESIGN §4). Every field of `Context` is seen from the player being asked ("me").
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import NamedTuple, Protocol, Sequence

from ..core.position import Play, Position
from ..core.rules import Rules


class CubeOwner(Enum):
    """Who owns the cube, from the point of view of the player asked."""

    CENTRE = 0
    ME = 1
    OPPONENT = 2


class TakeDecision(Enum):
    TAKE = "take"
    DROP = "drop"
    BEAVER = "beaver"


@dataclass(frozen=True, slots=True)
class Context:
    """Everything about the game besides the board, from the asked player's side."""

    cube_value: int = 1
    cube_owner: CubeOwner = CubeOwner.CENTRE
    match_length: int = 0
    """0 = money session."""
    my_score: int = 0
    opponent_score: int = 0
    crawford: bool = False
    """This game is the Crawford game (no doubling)."""
    post_crawford: bool = False
    rules: Rules = field(default_factory=Rules)

    @property
    def is_money(self) -> bool:
        return self.match_length == 0

    def may_double(self) -> bool:
        """May I double now (before rolling), by the cube's position, the rules and the score?"""
        if not self.rules.cube or self.crawford:
            return False
        if self.cube_owner is CubeOwner.OPPONENT:
            return False
        if self.rules.cube_limit and self.cube_value * 2 > self.rules.cube_limit:
            return False
        if self.match_length and self.my_score + self.cube_value >= self.match_length:
            return False  # a dead cube: I already win the match with the current value
        return True

    def swapped(self) -> Context:
        """The same context seen from the other player."""
        owner = {
            CubeOwner.CENTRE: CubeOwner.CENTRE,
            CubeOwner.ME: CubeOwner.OPPONENT,
            CubeOwner.OPPONENT: CubeOwner.ME,
        }[self.cube_owner]
        return Context(
            cube_value=self.cube_value,
            cube_owner=owner,
            match_length=self.match_length,
            my_score=self.opponent_score,
            opponent_score=self.my_score,
            crawford=self.crawford,
            post_crawford=self.post_crawford,
            rules=self.rules,
        )


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
