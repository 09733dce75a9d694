"""Luck adjustment (bgbot.referee.luck): roll luck, the tracker, adjusted results."""

from __future__ import annotations

import importlib.util
import math
import random
import sys
from pathlib import Path
from types import ModuleType

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bgbot.core.context import Context
from bgbot.core.game import Doubled, Moved, OpeningRolled, Rolled, Taken
from bgbot.core.position import Play, Position
from bgbot.players.evaluator import HeuristicEvaluator, equity_after
from bgbot.players.heuristic import _shared_evaluator
from bgbot.referee import events as ev
from bgbot.referee.luck import (
    HeuristicJudge,
    LuckTracker,
    adjusted_points,
    heuristic_judge,
    roll_luck,
)

from .conftest import GNUBG

ROOT = Path(__file__).resolve().parents[1]
ALL_ROLLS = [(a, b) for a in range(1, 7) for b in range(1, 7)]
CTX = Context()


class ProductJudge:
    """A stand-in judge: the 'equity' after a roll is the product of the dice; counts calls."""

    def __init__(self) -> None:
        self.calls = 0

    def equity_after_roll(self, position: Position, dice: tuple[int, int],
                          context: Context) -> float:
        self.calls += 1
        return float(dice[0] * dice[1])


def random_position(seed: int, plies: int) -> Position:
    """The board (mover on roll) after ``plies`` random plays from the start."""
    rng = random.Random(seed)
    position = Position.initial()
    for _ in range(plies):
        dice = (rng.randint(1, 6), rng.randint(1, 6))
        results = position.play_results(dice)
        after = rng.choice(results)[1] if results else position
        if after.is_game_over():
            break
        position = after.swapped()
    return position


def test_roll_luck_weights_all_36_rolls() -> None:
    judge = ProductJudge()
    mean = sum(a * b for a, b in ALL_ROLLS) / 36  # 12.25
    assert roll_luck(judge, Position.initial(), (6, 6), CTX) == pytest.approx(36 - mean)
    assert roll_luck(judge, Position.initial(), (2, 1), CTX) == pytest.approx(2 - mean)
    assert roll_luck(judge, Position.initial(), (1, 2), CTX) == pytest.approx(2 - mean)


def test_opening_roll_luck_is_against_the_30_non_doubles() -> None:
    judge = ProductJudge()
    non_doubles = [a * b for a, b in ALL_ROLLS if a != b]
    mean = sum(non_doubles) / len(non_doubles)
    luck = roll_luck(judge, Position.initial(), (3, 1), CTX, opening=True)
    assert luck == pytest.approx(3 - mean)


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), plies=st.integers(0, 60))
def test_luck_averages_zero_over_the_36_rolls(seed: int, plies: int) -> None:
    judge = heuristic_judge()
    position = random_position(seed, plies)
    total = sum(roll_luck(judge, position, roll, CTX) for roll in ALL_ROLLS)
    assert abs(total / 36) < 1e-9


def test_heuristic_judge_takes_the_best_play() -> None:
    evaluator = _shared_evaluator()
    judge = HeuristicJudge(evaluator, prefilter=False)
    for seed in range(3):
        position = random_position(seed, 12)
        for dice in [(6, 5), (2, 2), (4, 1)]:
            results = position.play_results(dice)
            best = max((equity_after(evaluator.evaluate, after) for _, after in results),
                       default=equity_after(evaluator.evaluate, position))
            assert judge.equity_after_roll(position, dice, CTX) == pytest.approx(best)


def test_a_dance_is_judged_as_the_board_passing() -> None:
    # Mover has a chequer on the bar against a closed board: no play for any roll.
    mover = [0] * 25
    mover[24], mover[5] = 1, 14
    opponent = [0] * 25
    for i in range(6):
        opponent[i] = 2
    opponent[10] = 3
    position = Position(opponent, mover)
    assert position.play_results((6, 6)) == []
    judge = heuristic_judge()
    evaluator = _shared_evaluator()
    assert judge.equity_after_roll(position, (6, 6), CTX) == pytest.approx(
        -evaluator.evaluate(position.swapped()).equity())
    assert roll_luck(judge, position, (3, 4), CTX) == pytest.approx(0.0, abs=1e-12)


def test_judge_cache_is_bounded() -> None:
    judge = HeuristicJudge(HeuristicEvaluator(), cache_size=5)
    position = random_position(1, 5)
    for roll in ALL_ROLLS:
        judge.equity_after_roll(position, roll, CTX)
        assert len(judge.cache.data) <= 5


def _played(game: int, seat: int, dice: tuple[int, int]) -> ev.Acted:
    return ev.Acted("m", game, Moved(seat, dice, Play(), Position.initial()))


def test_tracker_sums_per_seat_times_the_cube_and_knows_the_opening() -> None:
    judge = ProductJudge()
    tracker = LuckTracker(judge)
    opening_mean = sum(a * b for a, b in ALL_ROLLS if a != b) / 30
    mean = 12.25
    tracker(ev.GameStarted("m", 1, (0, 0), False, False))
    tracker(ev.Acted("m", 1, OpeningRolled(4, 4, None)))  # a tie: rolled again
    tracker(ev.Acted("m", 1, OpeningRolled(3, 5, 1)))
    tracker(_played(1, 1, (3, 5)))
    tracker(ev.Acted("m", 1, Rolled(0, (6, 6))))
    tracker(_played(1, 0, (6, 6)))
    tracker(ev.Acted("m", 1, Doubled(1, 2)))
    tracker(ev.Acted("m", 1, Taken(0, 2)))
    tracker(ev.Acted("m", 1, Rolled(1, (1, 1))))
    tracker(_played(1, 1, (1, 1)))
    luck0, luck1 = tracker.game_luck(1)
    assert luck0 == pytest.approx(36 - mean)
    assert luck1 == pytest.approx((15 - opening_mean) + 2 * (1 - mean))
    tracker(ev.GameStarted("m", 2, (0, 0), False, False))
    assert tracker.game_luck(2) == (0.0, 0.0)
    with pytest.raises(KeyError):
        tracker.game_luck(3)


def test_adjusted_points_remove_net_luck() -> None:
    assert adjusted_points(2, 0.7, -0.3) == pytest.approx(1.0)
    assert adjusted_points(-1, -0.5, 0.0) == pytest.approx(-0.5)


def _study() -> ModuleType:
    path = ROOT / "bench" / "sprt_study.py"
    spec = importlib.util.spec_from_file_location("sprt_study", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["sprt_study"] = module
    spec.loader.exec_module(module)
    return module


def _compare(pairs: int, seed: int) -> tuple[float, float, float, float]:
    study = _study()
    raw, adjusted = study.pair_sums(study.luck_games(pairs, seed))
    ppg, half = study.interval(raw)
    ppg_adj, half_adj = study.interval(adjusted)
    return ppg, half, ppg_adj, half_adj


def test_net_luck_explains_most_of_a_few_real_results() -> None:
    """Fast version of the check below: over a few real games the net luck the tracker
    measures (points minus adjusted points) moves with the result. (Eight pairs: with four, a
    single game's big luck swing can outweigh the rest either way.)"""
    games = _study().luck_games(8, seed=5)
    points = [g[1] for g in games]
    luck = [g[1] - g[2] for g in games]
    n = len(games)
    mp, ml = sum(points) / n, sum(luck) / n
    cov = sum((p - mp) * (x - ml) for p, x in zip(points, luck))
    corr = cov / math.sqrt(sum((p - mp) ** 2 for p in points) * sum((x - ml) ** 2 for x in luck))
    assert all(p in (-3, -2, -1, 1, 2, 3) for p in points)
    assert corr > 0.5
    assert sum((g[2] - sum(h[2] for h in games) / n) ** 2 for g in games) < sum(
        (p - mp) ** 2 for p in points)


@pytest.mark.slow
def test_luck_adjustment_keeps_the_mean_and_narrows_the_interval() -> None:
    ppg, half, ppg_adj, half_adj = _compare(60, seed=3)
    assert abs(ppg_adj - ppg) < half  # same quantity, within the raw interval's noise
    assert half_adj < half


@pytest.mark.gnubg
@pytest.mark.skipif(GNUBG is None, reason="needs /usr/games/gnubg")
def test_gnubg_judge_luck_averages_zero_and_agrees_in_sign() -> None:
    from bgbot.referee.luck import gnubg_judge

    judge = gnubg_judge()
    try:
        position = random_position(4, 8)
        lucks = {roll: roll_luck(judge, position, roll, CTX) for roll in ALL_ROLLS}
        assert abs(sum(lucks.values()) / 36) < 1e-9
        ours = heuristic_judge()
        mine = {roll: roll_luck(ours, position, roll, CTX) for roll in ALL_ROLLS}
        # Two decent judges agree on which rolls are good: positive rank correlation.
        same = sum((lucks[r] - lucks[s]) * (mine[r] - mine[s]) > 0
                   for r in ALL_ROLLS for s in ALL_ROLLS if r < s)
        differ = sum((lucks[r] - lucks[s]) * (mine[r] - mine[s]) < 0
                     for r in ALL_ROLLS for s in ALL_ROLLS if r < s)
        assert same > differ
    finally:
        judge.close()
