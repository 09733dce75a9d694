"""Resignations: offer only on proof, accept when the offer gives up no equity.

Reference: heuristic-player.md §7. With contact we never resign: a heuristic evaluation is
never proof. Once contact is broken, roll-count bounds decide, the side that resigns being on
roll:

* a loss is certain when my fewest possible rolls to bear off all exceed my opponent's most
  (he finishes on his roll m, which comes after my roll m);
* a gammon is certain when I have nothing off and my fewest rolls to bear one chequer off
  exceed his most; a backgammon when, besides, my fewest rolls to get every chequer out of his
  home board (and off the bar) exceed his most.

Lower bounds are rigorous: a chequer on point i needs at least ceil(i/6) dice to get off (one
die moves one chequer at most 6 pips) and a roll gives at most four dice. The opponent's most
rolls come from the bear-off database (its best play, worst dice) when all his chequers are
home, else from the rigorous ceil(pips/2) (in a race every die moves a chequer at least a pip).
With the Jacoby rule in money play and a centred cube, gammons do not count: offer a single.
"""

from __future__ import annotations

from typing import Protocol

from ..core.position import CHEQUERS, Position
from .base import Context, CubeOwner, Probabilities
from .bearoff import BearoffDatabase, default_database
from .cube import cubeful_value
from .met import MatchEquityTable, default_met


class Evaluator(Protocol):
    """Anything that gives cubeless chances for the player on roll."""

    def evaluate(self, position: Position) -> Probabilities: ...


def _dice_needed(side: tuple[int, ...], boundary: int) -> int:
    """Fewest dice to move every chequer of ``side`` to a point <= ``boundary`` (0 = off)."""
    return sum(count * -(-(i + 1 - boundary) // 6) for i, count in enumerate(side) if i >= boundary)


def min_rolls_to_finish(side: tuple[int, ...]) -> int:
    """A lower bound on the rolls ``side`` (25 counts) needs to bear off every chequer."""
    return -(-_dice_needed(side, 0) // 4)


def min_rolls_to_first_off(side: tuple[int, ...]) -> int:
    """A lower bound on the rolls until ``side`` has a chequer off (0 if it has one)."""
    if sum(side) < CHEQUERS:
        return 0
    return -(-(_dice_needed(side, 6) + 1) // 4)


def min_rolls_to_leave_opponent_home(side: tuple[int, ...]) -> int:
    """A lower bound on the rolls until no chequer of ``side`` is on the bar or points 19-24."""
    return -(-_dice_needed(side, 18) // 4)


def max_rolls_to_finish(side: tuple[int, ...], database: BearoffDatabase | None = None) -> int:
    """An upper bound on the rolls ``side`` needs to bear off all, in a race (no contact).

    From the bear-off database (its play, worst dice) when the side is home and covered,
    else ceil(pips / 2).
    """
    if not any(side[6:]):
        db = database if database is not None else default_database()
        if db.covers(side):
            return db.max_rolls(side)
    pips = sum(count * (i + 1) for i, count in enumerate(side))
    return -(-pips // 2)


def _gammons_count(context: Context) -> bool:
    rules = context.rules
    return not (
        context.is_money and rules.jacoby and rules.cube and context.cube_owner is CubeOwner.CENTRE
    )


def proven_loss(position: Position, database: BearoffDatabase | None = None) -> int:
    """The largest loss (0 none, 1 single, 2 gammon, 3 backgammon) the player on roll is sure
    of in ``position``, by the bounds in the module docstring (0 with contact)."""
    if position.is_contact() or position.is_game_over():
        return 0
    mine = position.mover
    theirs_max = max_rolls_to_finish(position.opponent, database)
    if min_rolls_to_finish(mine) <= theirs_max:
        return 0
    if min_rolls_to_first_off(mine) <= theirs_max:
        return 1
    if min_rolls_to_leave_opponent_home(mine) <= theirs_max:
        return 2
    return 3


def offer_resignation(
    position: Position,
    context: Context,
    evaluator: Evaluator | None = None,
    *,
    database: BearoffDatabase | None = None,
) -> int:
    """What the player on roll should resign: 0 (play on), 1, 2 or 3 — only on proof.

    ``evaluator`` is not used: resignation here rests on proofs only.
    """
    del evaluator
    loss = proven_loss(position, database)
    if loss > 1 and not _gammons_count(context):
        return 1
    return loss


def _offered_points(value: int, context: Context) -> int:
    if value not in (1, 2, 3):
        raise ValueError(f"a resignation is worth 1, 2 or 3, got {value}")
    if not _gammons_count(context):
        return 1
    return (1, 2, context.rules.backgammon_value)[value - 1]


def accept_resignation(
    position: Position,
    context: Context,
    value: int,
    evaluator: Evaluator,
    *,
    database: BearoffDatabase | None = None,
    met: MatchEquityTable | None = None,
) -> bool:
    """Accept my opponent's resignation of ``value`` if it gives up no equity.

    ``position`` is seen from the resigner, who is on roll; ``context`` from me. The value of
    playing on is the resigner's cubeful value (from the exact bear-off database when both
    sides are bearing off, else from ``evaluator``), negated; money compares points, match play
    compares match-winning chances after the resignation.
    """
    points = _offered_points(value, context) * context.cube_value
    probs = None
    if not position.is_contact() and not any(position.mover[6:]) and not any(position.opponent[6:]):
        db = database if database is not None else default_database()
        probs = db.probabilities(position)
    if probs is None:
        probs = evaluator.evaluate(position)
    resigner = context.swapped()
    theirs = cubeful_value(probs, resigner, position, met=met)
    if context.is_money:
        return points >= -theirs - 1e-9
    table = met if met is not None else default_met()
    me_away = context.match_length - context.my_score
    opp_away = context.match_length - context.opponent_score
    after = table.after_game(
        me_away,
        opp_away,
        points,
        crawford=context.crawford,
        post_crawford=context.post_crawford,
        crawford_rule=context.rules.crawford,
    )
    return after >= 1.0 - theirs - 1e-9
