"""The decision context: everything about a game besides the board, from one player's side.

It lives in the core because every layer passes it on: codecs (a FIBS board line yields one),
players (every request carries one), agents and the referee.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from .rules import Rules


class CubeOwner(Enum):
    """Who owns the cube, from the point of view of the player asked."""

    CENTRE = 0
    ME = 1
    OPPONENT = 2


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
        return self.double_refusal() is None

    def double_refusal(self) -> str | None:
        """Why I may not double now (before rolling), or None when I may: the one statement
        of the doubling rules (R21-R25) that `Game` and the players share."""
        rules = self.rules
        if not rules.cube:
            return "the cube is not in use (cubeless play)"
        if self.crawford:
            return "this is the Crawford game: no doubling"
        if self.cube_owner is CubeOwner.OPPONENT:
            return "the cube is owned by the opponent"
        if rules.cube_limit and self.cube_value * 2 > rules.cube_limit:
            return f"the cube is at the limit of {rules.cube_limit}"
        if self.match_length and self.my_score + self.cube_value >= self.match_length:
            return (f"the cube is dead: {self.my_score} of {self.match_length} points already "
                    f"win the match with the cube at {self.cube_value}")
        return None

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
