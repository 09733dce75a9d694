"""Rollouts (bgbot/rollout): gnubg's tools, the C kernel against its Python definition, the
referee's path against the kernel, exact cases, and the same totals however trials are split
(in this process, a process pool, a Dask LocalCluster)."""

from __future__ import annotations

import multiprocessing
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from dataclasses import replace
from typing import Any

import pytest

from bgbot.core.context import Context
from bgbot.core.errors import FormatError
from bgbot.core.position import Position
from bgbot.core.rules import Rules
from bgbot.deciders import create_agent
from bgbot.players import cube
from bgbot.players.heuristic import HeuristicPlayer, roll_average, shared_evaluator
from bgbot.rollout import (RolloutProgress, RolloutSettings, rollout_candidates,
                           rollout_position, select_candidates)
from bgbot.rollout.agent_trial import agent_trial
from bgbot.rollout.dice import RolloutDice, mix64, next_random, trial_state
from bgbot.rollout.runner import _worker, run_chunk
from bgbot.rollout.settings import RolloutJob
from bgbot.rollout.trial import kernel_trials, play_trial
from bgbot.rollout.values import ValueMap

from .conftest import board

EVALUATOR = shared_evaluator()
needs_kernel = pytest.mark.skipif(not EVALUATOR.compiled,
                                  reason="the C extension bgbot.players._contact is not built")

OPENING = Position.initial()
AFTER_31 = OPENING.apply(OPENING.legal_plays((3, 1))[0]).swapped()
"""After 8/5 6/5, the opponent to roll: a contact position."""
RACE = board({6: 3, 5: 3, 4: 3, 8: 2, 9: 2, 11: 2}, {6: 4, 5: 3, 3: 2, 10: 3, 12: 3})
BACK_RACE = board({20: 2, 14: 3, 9: 5, 6: 5}, {3: 5, 2: 5, 1: 3})
"""A race where the side on roll, its last chequers still in the other's home board, can be
backgammoned (the race formula's every branch)."""
CERTAIN = board({1: 1}, {6: 15})
"""The side on roll bears off its last chequer with any roll; the other has borne off none."""
BEAR_OFF = board({6: 1}, {6: 1, 5: 1})
"""One chequer against two, no choice that matters: the bear-off database is exact here."""
MATCH = Context(match_length=7, my_score=2, opponent_score=4)


def _same(a: Any, b: Any) -> None:
    """Two results with the same figures, bit for bit (their timings aside)."""
    ja, jb = a.to_json(), b.to_json()
    for key in ("seconds", "trials_per_second"):
        ja.pop(key), jb.pop(key)
    assert ja == jb


# ---------------------------------------------------------------------- dice


def test_splitmix64_is_the_published_generator() -> None:
    """The first outputs of splitmix64 seeded with 0 (Vigna's reference implementation)."""
    state, outputs = 0, []
    for _ in range(3):
        state, bits = next_random(state)
        outputs.append(bits)
    assert outputs == [0xE220A8397B1DCDAF, 0x6E789E6AA1B965F4, 0x06C45D188009454F]
    assert mix64(0) == 0


def test_every_first_roll_comes_once_in_every_36_trials() -> None:
    dice = RolloutDice(5)
    for block in range(3):
        firsts = Counter(dice.first_two(t)[0] for t in range(36 * block, 36 * block + 36))
        assert firsts == Counter({(a, b): 1 if a == b else 2
                                  for a in range(1, 7) for b in range(a, 7)})


def test_every_pair_of_first_two_rolls_comes_once_in_1296_trials() -> None:
    dice = RolloutDice(11)
    ordered = Counter()  # type: Counter[tuple[int, int]]
    for t in range(1296):
        slot = t % 36
        ordered[(dice.first[slot], dice.second[slot][(t // 36) % 36])] += 1
    assert len(ordered) == 1296 and set(ordered.values()) == {1}


def test_a_trials_dice_depend_only_on_the_seed_and_its_index() -> None:
    one, again, other = RolloutDice(3), RolloutDice(3), RolloutDice(4)
    for t in (0, 35, 36, 1295, 99_999):
        a, b = one.rolls(t), again.rolls(t)
        rolls = [a.next() for _ in range(30)]
        assert rolls == [b.next() for _ in range(30)]
        assert all(1 <= d1 <= d2 <= 6 for d1, d2 in rolls)
    assert one.table != other.table
    assert trial_state(3, 7) != trial_state(4, 7) != trial_state(3, 8)


def test_the_later_rolls_are_uniform() -> None:
    dice = RolloutDice(9)
    counts: Counter[int] = Counter()
    for t in range(2000):
        rolls = dice.rolls(t)
        rolls.next(), rolls.next()
        for _ in range(3):
            counts.update(rolls.next())
    expected = 2000 * 3 * 2 / 6
    chi2 = sum((counts[v] - expected) ** 2 / expected for v in range(1, 7))
    assert chi2 < 20.5  # 5 degrees of freedom, p = 0.001


# ---------------------------------------------------------------------- the C kernel


@needs_kernel
@pytest.mark.parametrize(("position", "truncate", "vr", "trials"), [
    (AFTER_31, 0, False, 6), (AFTER_31, 0, True, 2), (AFTER_31, 7, True, 12),
    (AFTER_31, 7, False, 12), (RACE, 0, True, 3), (BACK_RACE, 0, True, 3),
    (BACK_RACE, 0, False, 12), (BEAR_OFF, 0, True, 36), (CERTAIN, 0, True, 3),
])
def test_the_c_kernel_plays_the_python_definition_to_the_last_bit(
        position: Position, truncate: int, vr: bool, trials: int) -> None:
    """The same numbers, luck included (the kernel's races outside the bear-off zone use the
    race formula in C, held equal to race.py's in test_evaluators)."""
    dice = RolloutDice(17)
    kernel = kernel_trials(EVALUATOR, position, dice, 30, trials, truncate, vr)
    assert kernel == [play_trial(EVALUATOR, position, dice, t, truncate, vr)
                      for t in range(30, 30 + trials)]


@needs_kernel
def test_the_c_kernel_plays_a_match_utility_as_the_player_does() -> None:
    """In match play the greedy player maximises match-winning chances (an affine utility of
    the chances, one per side); the kernel plays it as the definition does."""
    player = HeuristicPlayer(evaluator=EVALUATOR)
    context = replace(MATCH, rules=Rules(cube=False))
    utilities = (player.play_utility(context), player.play_utility(context.swapped()))
    assert utilities[0] is not None and utilities[1] is not None
    assert utilities[0] != utilities[1]  # 5-away and 3-away value the outcomes differently
    dice = RolloutDice(2)
    pair = (utilities[0], utilities[1])
    kernel = kernel_trials(EVALUATOR, AFTER_31, dice, 0, 12, 9, True, pair)
    assert kernel == [play_trial(EVALUATOR, AFTER_31, dice, t, 9, True, pair) for t in range(12)]
    money = kernel_trials(EVALUATOR, AFTER_31, dice, 0, 12, 9, True)
    assert money != kernel  # the score changes some plays


@needs_kernel
@pytest.mark.parametrize("for_roller", [True, False])
@pytest.mark.parametrize("context", [Context(), MATCH])
def test_the_referee_path_plays_the_kernels_trials(for_roller: bool, context: Context) -> None:
    """bgbot's 0-ply player hosted by the referee (the path of every other agent and of the
    cube) gives the kernel's trials, luck included, bit for bit."""
    settings = RolloutSettings(trials=36, truncate=6, cubeful=False)
    job = RolloutJob.of(AFTER_31, context, settings, for_roller=for_roller)
    worker = _worker()
    player = worker.player("heuristic", settings.seed)
    values = ValueMap(job.viewer_context)
    hosted = [worker.loop.run_until_complete(agent_trial(player, job, worker.dice_of(1), t, values))
              for t in range(8)]
    assert run_chunk(job, 0, 8) == hosted


# ---------------------------------------------------------------------- results


def test_a_certain_outcome_is_rolled_out_exactly() -> None:
    for cubeful in (False, True):
        result = rollout_position(CERTAIN, Context(), RolloutSettings(trials=36, cubeful=cubeful))
        assert tuple(result.chances) == (1.0, 1.0, 0.0, 0.0, 0.0)
        assert result.estimates["cubeless"].mean == 2.0 and result.equity.se == 0.0
        assert result.equity.mean == 2.0  # too good to double: the gammon is played for
        assert result.plies == 1.0


def test_a_bear_off_rollout_is_the_bear_off_databases_answer() -> None:
    """The side on roll fails to bear off its chequer only with 11, 21, 31, 41 and 32 (9 of
    36); the other side then needs 65 or a double of 3 or more (6 of 36): 23/24. The
    database (single-precision) says so, and with it as the judge VR leaves no noise."""
    exact = 23 / 24
    assert EVALUATOR.evaluate(BEAR_OFF).win == pytest.approx(exact, abs=1e-8)
    result = rollout_position(BEAR_OFF, Context(), RolloutSettings(trials=1296, cubeful=False))
    win = result.estimates["win"]
    assert win.mean == pytest.approx(exact, abs=1e-8) and win.se < 1e-8
    assert abs(win.raw_mean - exact) < 3 * win.raw_se


def test_a_one_ply_rollout_of_36_trials_is_the_roll_average() -> None:
    """Truncated after one ply, 36 trials are the 36 rolls once each: their mean is the
    roll average, and with VR every trial is that average (each trial's luck is its roll's
    deviation from it), so the SE is nil."""
    settings = RolloutSettings(trials=36, truncate=1, cubeful=False)
    result = rollout_position(AFTER_31, Context(), settings)
    player: Any = create_agent(settings.player)  # the 0-ply player, with its own network
    average = roll_average(player.player.evaluator, AFTER_31)
    for name, expected in zip(("win", "win_gammon", "win_backgammon", "lose_gammon",
                               "lose_backgammon"), average):
        estimate = result.estimates[name]
        assert estimate.raw_mean == pytest.approx(expected, abs=1e-12)
        assert estimate.mean == pytest.approx(expected, abs=1e-12)
        assert estimate.se < 1e-9 < estimate.raw_se


def test_truncation_cuts_every_trial_after_n_plies() -> None:
    settings = RolloutSettings(trials=36, truncate=4, cubeful=False)
    job = RolloutJob.of(AFTER_31, Context(), settings)
    trials = run_chunk(job, 0, 36)
    assert {trial.plies for trial in trials} == {4}
    assert all(0.0 < trial.outcome[0] < 1.0 for trial in trials)  # an evaluation, no result


def test_variance_reduction_keeps_the_mean_and_cuts_the_se() -> None:
    result = rollout_position(AFTER_31, Context(), RolloutSettings(trials=144, truncate=6,
                                                                   cubeful=False))
    equity = result.estimates["cubeless"]
    assert abs(equity.mean - equity.raw_mean) < 3 * equity.raw_se
    gain = result.se_gain()
    assert gain is not None and gain > 3.0
    plain = rollout_position(AFTER_31, Context(), RolloutSettings(trials=144, truncate=6,
                                                                  cubeful=False, vr=False))
    assert plain.equity.mean == equity.raw_mean and plain.equity.se == equity.raw_se


def test_a_seed_reproduces_a_rollout_and_another_seed_does_not() -> None:
    for settings in (RolloutSettings(trials=72, truncate=5, seed=21, cubeful=False),
                     RolloutSettings(trials=36, truncate=3, seed=21, cubeful=True)):
        first = rollout_position(AFTER_31, Context(), settings)
        _same(first, rollout_position(AFTER_31, Context(), settings))
        other = rollout_position(AFTER_31, Context(), replace(settings, seed=22))
        assert other.equity.mean != first.equity.mean


def test_the_totals_do_not_depend_on_chunks_or_worker_processes() -> None:
    settings = RolloutSettings(trials=144, truncate=3, chunk=144, cubeful=False)
    inline = rollout_position(AFTER_31, Context(), settings)
    _same(inline, rollout_position(AFTER_31, Context(), replace(settings, chunk=36)))
    with ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("forkserver")) as pool:
        pooled = rollout_position(AFTER_31, Context(), replace(settings, chunk=36),
                                  executor=pool, window=4)
    _same(inline, pooled)


def test_a_dask_cluster_gives_the_same_totals_as_the_local_run() -> None:
    distributed = pytest.importorskip("distributed")
    settings = RolloutSettings(trials=72, truncate=3, chunk=36, cubeful=False)
    local = rollout_candidates(OPENING, (4, 2), Context(), settings, candidates=2)
    with distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                                  dashboard_address=None) as cluster:
        with distributed.Client(cluster) as client:
            remote = rollout_candidates(OPENING, (4, 2), Context(), settings, candidates=2,
                                        executor=client.get_executor(), window=6)
    assert [c.move for c in remote] == [c.move for c in local]
    for a, b in zip(local, remote):
        _same(a.result, b.result)


def test_the_se_target_stops_at_a_multiple_of_36_reproducibly() -> None:
    settings = RolloutSettings(trials=720, truncate=2, cubeful=False, se_target=0.01)
    result = rollout_position(AFTER_31, Context(), settings)
    assert result.stopped == "se_target" and result.trials % 36 == 0 and result.trials < 720
    assert result.equity.se < 0.01
    _same(result, rollout_position(AFTER_31, Context(), replace(settings, chunk=36)))


def test_progress_is_reported_and_a_cancel_stops_between_chunks() -> None:
    seen: list[RolloutProgress] = []

    def cancel() -> bool:
        return len(seen) >= 2

    result = rollout_position(AFTER_31, Context(), RolloutSettings(
        trials=180, truncate=2, cubeful=False, chunk=36), progress=seen.append, cancel=cancel)
    assert result.stopped == "cancelled" and result.trials == 36
    assert [p.trials for p in seen] == [0, 36] and seen[-1].total == 180
    assert seen[0].equities == (None,) and seen[-1].equities[0] is not None


# ---------------------------------------------------------------------- candidates


def test_a_candidates_rollout_is_the_rollout_of_the_position_after_it() -> None:
    """Each candidate is its resulting position rolled out with the rollout's seed (so every
    candidate gets the same dice), seen from the side that moved."""
    settings = RolloutSettings(trials=72, truncate=4, cubeful=False)
    # a threshold wide enough that the three best at 0-ply are kept whatever the network
    candidates = rollout_candidates(OPENING, (3, 1), Context(), settings, candidates=3,
                                    threshold=1.0)
    assert len(candidates) == 3
    assert [c.result.equity.mean for c in candidates] == sorted(
        (c.result.equity.mean for c in candidates), reverse=True)
    best = candidates[0]
    after = Position.from_position_id(best.result.position_id)
    direct = rollout_position(after, Context(), settings)
    assert best.result.equity.mean == pytest.approx(-direct.equity.mean, abs=1e-12)
    assert best.result.chances.win == pytest.approx(1.0 - direct.chances.win, abs=1e-12)


def test_a_play_that_ends_the_game_is_valued_exactly() -> None:
    position = board({1: 1, 2: 1}, {6: 15})
    results = rollout_candidates(position, (2, 1), Context(), RolloutSettings(trials=36))
    assert results[0].result.stopped == "over" and results[0].result.equity.mean == 2.0


def test_candidates_are_the_best_by_the_0_ply_ranking_within_the_threshold() -> None:
    ranked = HeuristicPlayer(evaluator=EVALUATOR).rank_plays(OPENING, (6, 5), Context())
    chosen = select_candidates(OPENING, (6, 5), Context(), candidates=3, threshold=10.0)
    assert [play for play, _ in chosen] == [entry.play for entry in ranked[:3]]
    assert len(select_candidates(OPENING, (6, 5), Context(), candidates=3, threshold=0.0)) == 1


# ---------------------------------------------------------------------- values and settings


def test_emg_is_minus_one_to_one_between_losing_and_winning_a_single_game() -> None:
    mwc = cube.match_mwc_function(MATCH)
    me, opp = 5, 3
    assert cube.mwc_to_emg(mwc(me - 1, opp), MATCH) == pytest.approx(1.0)
    assert cube.mwc_to_emg(mwc(me, opp - 1), MATCH) == pytest.approx(-1.0)
    values = ValueMap(MATCH)
    assert values.game_result(1) == pytest.approx(1.0)
    assert values.cubeless((1.0, 0.0, 0.0, 0.0, 0.0)) == pytest.approx(1.0)


@pytest.mark.parametrize(("field", "value"), [
    ("trials", 100), ("trials", 0), ("truncate", -1), ("seed", -3), ("se_target", 0.0),
    ("chunk", 50), ("player", "nosuchagent"), ("player", "heuristic:plies")])
def test_bad_settings_are_refused_naming_the_setting(field: str, value: Any) -> None:
    with pytest.raises(FormatError) as caught:
        RolloutSettings(**{field: value})
    assert field in str(caught.value) or "plies" in str(caught.value)


def test_the_cube_is_played_where_the_context_has_it() -> None:
    assert RolloutSettings().cubeful_for(Context())
    assert not RolloutSettings().cubeful_for(Context(rules=Rules(cube=False)))
    assert not RolloutSettings(cubeful=False).cubeful_for(Context())
    with pytest.raises(FormatError, match="already over"):
        RolloutJob.of(board({}, {6: 3}), Context(), RolloutSettings())


# ---------------------------------------------------------------------- long checks


@pytest.mark.slow
def test_full_rollouts_with_other_seeds_agree_within_their_ses() -> None:
    """Played out, 1296 trials: VR keeps the plain mean (within its SE) and cuts the SE; two
    seeds agree within their combined SEs (the SEs are honest about the noise)."""
    results = [rollout_position(AFTER_31, Context(), RolloutSettings(seed=seed, cubeful=False))
               for seed in (1, 2)]
    for result in results:
        equity = result.equity
        assert abs(equity.mean - equity.raw_mean) < 3 * equity.raw_se
        assert equity.se * 3 < equity.raw_se
    a, b = (r.equity for r in results)
    assert abs(a.mean - b.mean) < 4 * (a.se ** 2 + b.se ** 2) ** 0.5


def test_a_position_the_player_doubles_out_is_worth_one_cube() -> None:
    """Cubeful, the player on roll doubles this race and the other side passes (by their own
    cube decisions): every trial ends at once, +1."""
    result = rollout_position(RACE, Context(), RolloutSettings(trials=36))
    assert result.cubeful and result.equity.mean == 1.0 and result.equity.se == 0.0
    assert result.plies == 0.0


@pytest.mark.slow
def test_cubeful_money_rollouts_are_reproducible_and_value_the_cube() -> None:
    """The cube handled by the players during the trials: the cubeful equity differs from the
    cubeless one, and a seed reproduces it bit for bit however the trials are split."""
    settings = RolloutSettings(trials=216, truncate=10, cubeful=True, seed=3)
    first = rollout_position(AFTER_31, Context(), settings)
    _same(first, rollout_position(AFTER_31, Context(), replace(settings, chunk=36)))
    assert first.equity.mean != first.estimates["cubeless"].mean
