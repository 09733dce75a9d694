"""Calibration of the heuristic evaluator's chances, and the cube decisions built on them.

The cube (heuristic-player.md §6) trusts P(win) and the gammon rates, so they must be neither
over- nor under-confident in positions whose value any backgammon text gives.
"""

from __future__ import annotations

import pytest

from bgbot.core.position import Position
from bgbot.players.base import Context
from bgbot.players.evaluator import RACE_SPREAD, HeuristicEvaluator, load_race_spread
from bgbot.players.heuristic import HeuristicPlayer

from .conftest import board

# Without the bear-off database (see tests/test_players.py: it would be built first).
EV = HeuristicEvaluator(use_bearoff=False)
PLAYER = HeuristicPlayer(evaluator=EV)
OPENING_ROLLS = [(a, b) for a in range(1, 7) for b in range(a + 1, 7)]


def test_opening_position_is_about_even_for_the_player_on_roll() -> None:
    assert 0.45 <= EV.evaluate(Position.initial()).win <= 0.60
    assert 0.45 <= PLAYER.cube_probabilities(Position.initial()).win <= 0.60


def test_gammon_rates_at_the_opening_are_plausible() -> None:
    probs = EV.evaluate(Position.initial())
    # Bots play about 26-27 % of games to a gammon or better (heuristic-player.md §6.2).
    assert 0.08 <= probs.win_gammon <= 0.20
    assert 0.08 <= probs.lose_gammon <= 0.20


def test_clearly_won_race_is_above_ninety_percent() -> None:
    # 60 pips against 140, no contact, both sides with chequers outside home (race formulas).
    leader = board({7: 2, 5: 4, 4: 4, 3: 3, 2: 2}, {12: 5, 11: 5, 7: 5})
    assert leader.is_race()
    assert EV.evaluate(leader).win > 0.9
    assert EV.evaluate(leader.swapped()).win < 0.1


def test_even_long_race_favours_the_player_on_roll_moderately() -> None:
    # 105 pips each: the roller's edge is worth roughly 4 pips plus the tempo, not a lock.
    side = {9: 3, 8: 3, 7: 3, 6: 3, 5: 3}
    position = board(side, side)
    assert position.is_race() and position.pip_counts()[0] == position.pip_counts()[1]
    assert 0.53 <= EV.evaluate(position).win <= 0.75


def test_race_spread_is_fitted_and_sane() -> None:
    spread = load_race_spread()
    assert 0.7 <= spread <= 2.0
    assert RACE_SPREAD == 1.5


def test_closed_out_opponent_is_a_big_favourite() -> None:
    # Mover: a closed board; opponent: two chequers on the bar, the rest in his home.
    position = board({1: 2, 2: 2, 3: 2, 4: 2, 5: 2, 6: 3, 8: 2},
                     {13: 1, 6: 4, 5: 4, 4: 4}, opponent_bar=2)
    probs = EV.evaluate(position)
    assert probs.win > 0.85
    assert probs.win_gammon > 0.3


@pytest.mark.parametrize("dice", OPENING_ROLLS)
def test_no_double_after_any_opening_move(dice: tuple[int, int]) -> None:
    """After any opening move by the 0-ply player, neither side has a money double."""
    start = Position.initial()
    results = start.play_results(dice)
    best = max(results, key=lambda r: -EV.evaluate(r[1].swapped()).equity())
    reply_side = best[1].swapped()
    assert not PLAYER.should_double(reply_side, Context())
    # ... and the player who just moved does not double either when it is his turn again.
    assert not PLAYER.should_double(best[1], Context())
