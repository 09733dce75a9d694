"""What kind of position this is: the evaluator's class and the game plan, from the board alone.

Two layers of names, both pure functions of a `Position` (seen from the side on roll):

* `position_class`: the classes an evaluator is chosen by, as gnubg splits its nets --
  ``over``, ``bearoff`` (no contact, every chequer of both sides in its home board: the
  bear-off database's ground), ``race`` (no contact), ``crashed`` (contact, and a side whose
  game has collapsed: `is_crashed`), ``contact``. `side_class` is the same of a board given
  as the two sides' counts (the evaluator's dispatch, `evaluator.HeuristicEvaluator`, and its C
  twin ``bgbot.players._contact.position_class``, which the tests hold equal to it).
* `game_plan`: a finer label for benchmarks and position sets (issue 29): ``bearoff``,
  ``race``, ``crashed``, ``bearoff_contact``, ``back_game``, ``prime_vs_prime``, ``holding``,
  ``blitz``, ``opening``, ``middle_game_blots`` (a blot anywhere) and ``middle_game``. The
  first label that fits wins, in that order.

The definitions are bgbot's own, written for this module (numbers are the usual backgammon
rules of thumb, not fitted):

* a side is **crashed** when, not counting the chequers stacked on its 1- and 2-points beyond
  the first on each, at most 6 of its chequers are still in play (gnubg's crashed class rests
  on the same idea: a board that has collapsed onto its deepest points);
* a **back game**: a side holds two or more points in its opponent's home board (its own
  points 19-24) and trails in the race by at least 30 pips;
* **prime vs prime**: each side has four or more consecutive points made (2+ chequers);
* **holding**: a side holds one point on its 18-21 (the opponent's 4-point to bar-point), has
  no other chequer beyond its own midpoint, and the opponent has no chequer left in the
  holder's home board;
* **blitz**: a side has a chequer on the bar against three or more closed home-board points;
* **opening**: each side still has at least 11 chequers on its starting points (24, 13, 8, 6);
* **bear-off with contact**: contact, and a side has every chequer in its home board.
"""

from __future__ import annotations

from enum import Enum
from typing import NamedTuple, Sequence

from ..core.position import BAR_INDEX, Position

__all__ = [
    "GAME_PLANS",
    "PositionClass",
    "SideFacts",
    "class_of",
    "game_plan",
    "is_crashed",
    "made_points",
    "longest_prime",
    "position_class",
    "side_class",
    "side_facts",
]

_STARTING = {23: 2, 12: 5, 7: 3, 5: 5}
"""Index -> chequers of a side's starting position (points 24, 13, 8, 6)."""
CRASHED_ACTIVE = 6
HOME_POINTS = 6
BACK_GAME_DEFICIT = 30
OPENING_CHEQUERS = 11
BLITZ_POINTS = 3


class PositionClass(str, Enum):
    """The evaluator's classes (module docstring)."""

    OVER = "over"
    BEAROFF = "bearoff"
    RACE = "race"
    CRASHED = "crashed"
    CONTACT = "contact"


GAME_PLANS = ("bearoff", "race", "crashed", "bearoff_contact", "back_game", "prime_vs_prime",
              "holding", "blitz", "opening", "middle_game_blots", "middle_game")
"""Every label `game_plan` returns (but ``over``), in the order they are tried."""


def _all_home(side: Sequence[int]) -> bool:
    return not any(side[6:BAR_INDEX + 1])


def is_crashed(side: Sequence[int]) -> bool:
    """A side (25 counts, its own numbering) has at most 6 chequers still working: those in
    play minus the surplus beyond one chequer on each of its 1- and 2-points."""
    in_play = sum(side)
    surplus = max(0, side[0] - 1) + max(0, side[1] - 1)
    return in_play - surplus <= CRASHED_ACTIVE


class SideFacts(NamedTuple):
    """What the class of a position takes from one side (`side_facts`)."""

    rearmost: int
    """The index of its rearmost chequer (0..24, 24 the bar), -1 when all are borne off."""
    crashed: bool
    """`is_crashed`."""


def side_facts(side: Sequence[int]) -> SideFacts:
    """`SideFacts` of a side's 25 counts."""
    rearmost = BAR_INDEX
    while rearmost >= 0 and not side[rearmost]:
        rearmost -= 1
    return SideFacts(rearmost, is_crashed(side))


def class_of(mover: SideFacts, opponent: SideFacts) -> PositionClass:
    """The class of a board from its sides' facts, ``mover`` on roll: over when a side has
    borne everything off; a race (`Position.is_race`) when no chequer has an opposing one
    ahead, the bear-off class when both sides are all home; else crashed or contact."""
    if mover.rearmost < 0 or opponent.rearmost < 0:
        return PositionClass.OVER
    if mover.rearmost + opponent.rearmost < BAR_INDEX:
        if mover.rearmost < HOME_POINTS and opponent.rearmost < HOME_POINTS:
            return PositionClass.BEAROFF
        return PositionClass.RACE
    if mover.crashed or opponent.crashed:
        return PositionClass.CRASHED
    return PositionClass.CONTACT


def side_class(mover: Sequence[int], opponent: Sequence[int]) -> PositionClass:
    """The evaluator's class of the board with ``mover`` (25 counts) on roll."""
    return class_of(side_facts(mover), side_facts(opponent))


def position_class(position: Position) -> PositionClass:
    """The evaluator's class of ``position`` (module docstring)."""
    return side_class(position.mover, position.opponent)


def made_points(side: Sequence[int]) -> list[int]:
    """The side's made points (2+ chequers), as point numbers 1..24 of its own numbering."""
    return [i + 1 for i in range(24) if side[i] >= 2]


def longest_prime(side: Sequence[int]) -> int:
    """The longest run of consecutive made points."""
    best = run = 0
    for i in range(24):
        run = run + 1 if side[i] >= 2 else 0
        best = max(best, run)
    return best


def _back_game(side: Sequence[int], deficit: int) -> bool:
    return sum(1 for i in range(18, 24) if side[i] >= 2) >= 2 and deficit >= BACK_GAME_DEFICIT


def _holding(side: Sequence[int], other: Sequence[int]) -> bool:
    anchors = [i for i in range(17, 21) if side[i] >= 2]
    if len(anchors) != 1:
        return False
    behind = sum(side[13:BAR_INDEX + 1]) - side[anchors[0]]  # beyond its own midpoint
    # the other side has left the holder's home board (its own points 19-24) and the bar
    return behind == 0 and not any(other[18:BAR_INDEX + 1])


def _blitzed(side: Sequence[int], attacker: Sequence[int]) -> bool:
    return side[BAR_INDEX] > 0 and sum(1 for i in range(6) if attacker[i] >= 2) >= BLITZ_POINTS


def _opening(side: Sequence[int]) -> bool:
    return sum(min(side[i], n) for i, n in _STARTING.items()) >= OPENING_CHEQUERS


def game_plan(position: Position) -> str:
    """The finer label of ``position`` (module docstring): ``over`` or one of `GAME_PLANS`."""
    kind = position_class(position)
    if kind is not PositionClass.CONTACT:
        return str(kind.value)
    me, them = position.mover, position.opponent
    my_pips, their_pips = position.pip_counts()
    if _all_home(me) or _all_home(them):
        return "bearoff_contact"
    if _back_game(me, my_pips - their_pips) or _back_game(them, their_pips - my_pips):
        return "back_game"
    if longest_prime(me) >= 4 and longest_prime(them) >= 4:
        return "prime_vs_prime"
    if _holding(me, them) or _holding(them, me):
        return "holding"
    if _blitzed(me, them) or _blitzed(them, me):
        return "blitz"
    if _opening(me) and _opening(them):
        return "opening"
    if any(c == 1 for c in me[:24]) or any(c == 1 for c in them[:24]):
        return "middle_game_blots"
    return "middle_game"
