"""`bgbot.referee.duel` and its results file: mirrored pairs, stopping rules, executors, store."""

from __future__ import annotations

import multiprocessing
import sqlite3
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bgbot.core.errors import BgbotError
from bgbot.referee.duel import (
    DuelConfig,
    DuelStats,
    GameRow,
    InlineExecutor,
    PairResult,
    StopRule,
    agent_seed,
    play_pair,
    run_duel,
)
from bgbot.referee.duel_store import DuelStore, DuelStoreError, default_path
from bgbot.referee.stats import RunningRatio, ratio_interval


def _duel(config: DuelConfig, pairs: int, **kwargs: object) -> DuelStats:
    return run_duel(config, InlineExecutor(), StopRule(pairs=pairs), **kwargs).stats  # type: ignore[arg-type]


# ---------------------------------------------------------------------- pairs and mirroring


def test_pair_plays_one_dice_sequence_twice_with_the_seats_swapped() -> None:
    pair = play_pair(DuelConfig("pubeval", "random", seed=4), 0)
    assert [g.mirrored for g in pair.games] == [False, True]
    assert pair.game_count == 2
    assert pair.points == sum(g.delta for g in pair.games)


def test_deterministic_self_duel_cancels_exactly_in_every_pair() -> None:
    """Mirrored dice: a deterministic agent against itself gets exactly the other's games."""
    stats = _duel(DuelConfig("pubeval", "pubeval", seed=9), 15)
    assert stats.tally.units == [0.0] * 15
    assert stats.tally.wins == stats.tally.games // 2


def test_noisy_self_duel_is_not_degenerate() -> None:
    """Each seat and pair has its own noise stream, so a noisy self-duel is a real duel."""
    assert agent_seed(1, 0, 0) != agent_seed(1, 0, 1)
    assert agent_seed(1, 0, 0) != agent_seed(1, 1, 0)
    stats = _duel(DuelConfig("random", "random", seed=3), 10)
    assert any(unit != 0 for unit in stats.tally.units)


def test_self_duel_converges_on_zero_within_its_interval() -> None:
    stats = _duel(DuelConfig("random", "random", seed=11), 40)
    low, high = stats.ppg_interval()
    assert low < 0.0 < high
    assert high - low < 1.6


def test_same_seed_same_duel_other_seed_other_duel() -> None:
    config = DuelConfig("random", "pubeval", seed=21)
    first = _duel(config, 6)
    again = _duel(config, 6)
    other = _duel(DuelConfig("random", "pubeval", seed=22), 6)
    assert first.tally.units == again.tally.units
    assert first.summary()["won"] == again.summary()["won"]
    assert first.tally.units != other.tally.units


def test_heuristic_beats_random_by_sprt_in_a_handful_of_pairs() -> None:
    from bgbot.referee.sprt import MIN_PAIRS, Sprt, SprtConfig

    stats = DuelStats(DuelConfig("heuristic", "random", seed=5),
                      sprt=Sprt(SprtConfig(ppg0=0.0, ppg1=0.5)))
    result = run_duel(stats.config, InlineExecutor(), StopRule(pairs=200), stats=stats)
    assert stats.sprt is not None and stats.sprt.verdict == "H1"
    assert result.reason.startswith("SPRT")
    assert stats.pairs <= MIN_PAIRS + 5
    assert stats.summary()["sprt_verdict"] == "H1"


# ---------------------------------------------------------------------- stopping rules


def test_stops_after_the_asked_pairs_even_with_pairs_in_flight() -> None:
    config = DuelConfig("pubeval", "random", seed=2)
    result = run_duel(config, InlineExecutor(), StopRule(pairs=5), window=8)
    assert result.stats.pairs == 5 and result.new_pairs == 5
    assert result.stats.tally.games == 10


def test_stops_on_the_interval_width() -> None:
    config = DuelConfig("random", "random", seed=6)
    result = run_duel(config, InlineExecutor(), StopRule(pairs=500, ci_width=2.5, min_pairs=10))
    low, high = result.stats.ppg_interval()
    assert high - low <= 2.5
    assert result.stats.pairs < 500 and "interval" in result.reason
    shorter = run_duel(config, InlineExecutor(), StopRule(pairs=result.stats.pairs - 1))
    low, high = shorter.stats.ppg_interval()
    assert result.stats.pairs == 10 or high - low > 2.5


# ---------------------------------------------------------------------- modes


def test_match_mode_counts_match_wins_with_met_chances() -> None:
    config = DuelConfig("pubeval", "random", seed=8, length=3, cube=True)
    pair = play_pair(config, 0)
    for mirrored in (False, True):
        half = [g for g in pair.games if g.mirrored is mirrored]
        last = half[-1]
        assert max(last.score_a, last.score_b) >= 3
        assert last.mwc_a == (1.0 if last.score_a >= 3 else 0.0)
        for game in half[:-1]:
            assert game.mwc_a is not None and 0.0 < game.mwc_a < 1.0
    stats = _duel(config, 4)
    summary = stats.summary()
    assert summary["matches"] == 8
    assert 0.0 <= summary["match_win_rate"] <= 1.0
    assert summary["match_wins"] == sum(play_pair(config, i).match_wins(3) for i in range(4))


def test_cubeful_money_lets_the_cube_move() -> None:
    config = DuelConfig("heuristic", "random:cube=on", seed=3, cube=True, jacoby=True)
    assert config.rules.cube and config.rules.jacoby
    cubes = [g.cube for p in (play_pair(config, i) for i in range(3)) for g in p.games]
    assert max(cubes) > 1


def test_mat_text_comes_back_per_pair_or_per_match() -> None:
    from bgbot.formats.mat import read_match

    money = play_pair(DuelConfig("pubeval", "random", seed=1, mat=True), 0)
    assert len(money.mats) == 1
    record = read_match(money.mats[0][1])
    assert record.length == 0 and len(record.games) == 2
    match = play_pair(DuelConfig("pubeval", "random", seed=1, length=3, mat=True), 0)
    assert [suffix for suffix, _ in match.mats] == ["", "-mirror"]
    assert all(read_match(text).length == 3 for _, text in match.mats)


# ---------------------------------------------------------------------- executors


def test_process_pool_gives_the_same_totals_as_inline() -> None:
    config = DuelConfig("random", "pubeval", seed=13)
    inline = _duel(config, 8)
    with ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("forkserver")) as pool:
        pooled = run_duel(config, pool, StopRule(pairs=8), window=4).stats
    assert pooled.tally.units == inline.tally.units
    assert pooled.summary()["ppg_ci"] == inline.summary()["ppg_ci"]


def test_dask_cluster_gives_the_same_totals_as_the_local_path() -> None:
    distributed = pytest.importorskip("distributed")
    config = DuelConfig("random", "pubeval", seed=14)
    inline = _duel(config, 8)
    with distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                                  dashboard_address=None) as cluster:
        with distributed.Client(cluster) as client:
            remote = run_duel(config, client.get_executor(), StopRule(pairs=8), window=8).stats
    assert remote.tally.units == inline.tally.units
    assert remote.summary()["won"] == inline.summary()["won"]


# ---------------------------------------------------------------------- statistics


@settings(max_examples=50, deadline=None)
@given(st.lists(st.tuples(st.integers(-6, 6), st.integers(1, 4)), min_size=2, max_size=40))
def test_running_interval_equals_the_batch_interval(units: list[tuple[int, int]]) -> None:
    running = RunningRatio()
    for u, w in units:
        running.add(u, w)
    batch = ratio_interval([u for u, _ in units], [w for _, w in units])
    assert running.interval() == pytest.approx(batch, abs=1e-9)


# ---------------------------------------------------------------------- the results file


def _pair(index: int, delta: int = 1) -> PairResult:
    return PairResult(index, (
        GameRow(False, 1, 0 if delta > 0 else 1, abs(delta), 1, "normal", 1, 0, 0),
        GameRow(True, 1, 1, 1, 1, "normal", 1, 0, 0, luck_a=0.25, luck_b=-0.5),
    ), seconds=0.5)


def test_store_round_trips_pairs_and_keeps_the_config(tmp_path: Path) -> None:
    config = DuelConfig("pubeval", "random", seed=3)
    path = tmp_path / "d.sqlite"
    with DuelStore.open(path, config, resume=False) as store:
        for i in range(3):
            store.add_pair(_pair(i, delta=i + 1))
    with DuelStore.open(path, config, resume=True) as store:
        assert store.pairs() == [_pair(i, delta=i + 1) for i in range(3)]
    journal = sqlite3.connect(path).execute("PRAGMA journal_mode").fetchone()[0]
    assert journal == "wal"


def test_store_refuses_a_second_duel_without_resume(tmp_path: Path) -> None:
    config = DuelConfig("pubeval", "random", seed=3)
    path = tmp_path / "d.sqlite"
    DuelStore.open(path, config, resume=False).close()
    with pytest.raises(DuelStoreError, match="--resume"):
        DuelStore.open(path, config, resume=False)


def test_a_refused_resume_says_the_differences_in_words(tmp_path: Path) -> None:
    path = tmp_path / "d.sqlite"
    DuelStore.open(path, DuelConfig("pubeval", "random", seed=3), resume=False).close()
    with pytest.raises(DuelStoreError) as info:
        DuelStore.open(path, DuelConfig("pubeval", "random", seed=3, cube=True,
                                        luck_judge="heuristic"), resume=True)
    assert "cube was off, now on" in str(info.value)
    assert "luck_judge was none, now heuristic" in str(info.value)
    assert "False" not in str(info.value) and "'" not in str(info.value)


def test_resume_with_another_config_is_refused_naming_the_difference(tmp_path: Path) -> None:
    path = tmp_path / "d.sqlite"
    DuelStore.open(path, DuelConfig("pubeval", "random", seed=3), resume=False).close()
    with pytest.raises(DuelStoreError, match="seed was 3, now 4"):
        DuelStore.open(path, DuelConfig("pubeval", "random", seed=4), resume=True)
    assert isinstance(DuelStoreError("x"), BgbotError)


def test_a_store_of_the_old_seeding_is_refused_saying_why(tmp_path: Path) -> None:
    """Stores written before the seeding version was recorded used version 1."""
    import json

    path = tmp_path / "d.sqlite"
    config = DuelConfig("random:seed=3", "random", seed=3)
    DuelStore.open(path, config, resume=False).close()
    with sqlite3.connect(path) as db:
        stored = json.loads(db.execute("SELECT config FROM duels").fetchone()[0])
        del stored["seeding"]
        db.execute("UPDATE duels SET config = ?", (json.dumps(stored),))
    with pytest.raises(DuelStoreError, match="version 1 of the agents' random streams"):
        DuelStore.open(path, config, resume=True)


def test_a_spec_seed_is_a_base_each_pair_combines_with_its_own() -> None:
    import asyncio

    from bgbot.core.position import Position
    from bgbot.deciders import create_agent
    from bgbot.players.base import Context

    def plays(seed: int) -> list[str]:
        agent = create_agent("random:seed=3", seed=seed)
        start = Position.initial()
        return [str(asyncio.run(agent.choose_play(start, (6, 5), Context()))) for _ in range(30)]

    assert plays(agent_seed(1, 0, 0)) != plays(agent_seed(1, 1, 0))
    assert plays(agent_seed(1, 0, 0)) == plays(agent_seed(1, 0, 0))


def test_a_failing_pair_leaves_nothing_half_written(tmp_path: Path) -> None:
    config = DuelConfig("pubeval", "random", seed=3)
    with DuelStore.open(tmp_path / "d.sqlite", config, resume=False) as store:
        store.add_pair(_pair(0))
        broken = PairResult(1, (_pair(1).games[0], _pair(1).games[0]))  # same key twice
        with pytest.raises(sqlite3.IntegrityError):
            store.add_pair(broken)
        assert [p.index for p in store.pairs()] == [0]
        store.add_pair(_pair(1))
        assert store.pair_count() == 2


def test_resumed_run_equals_an_uninterrupted_one(tmp_path: Path) -> None:
    config = DuelConfig("random", "pubeval", seed=17)
    whole = _duel(config, 7)
    path = tmp_path / "d.sqlite"
    with DuelStore.open(path, config, resume=False) as store:
        run_duel(config, InlineExecutor(), StopRule(pairs=3), sink=store)
    with DuelStore.open(path, config, resume=True) as store:
        result = run_duel(config, InlineExecutor(), StopRule(pairs=7), done=store.pairs(),
                          sink=store)
        assert result.new_pairs == 4
        assert store.pair_count() == 7
    assert result.stats.tally.units == whole.tally.units
    assert result.stats.summary()["won"] == whole.summary()["won"]


def test_default_results_file_names_the_agents_mode_and_seed() -> None:
    path = default_path(DuelConfig("heuristic:plies=1", "pubeval", seed=7))
    assert path == Path("duels/heuristic_plies=1-vs-pubeval-money-cubeless-seed7.sqlite")


def test_different_duels_get_different_default_files() -> None:
    # Every field of the identity a resumed duel must share shows in the name.
    variants = [DuelConfig("heuristic", "pubeval", seed=1),
                DuelConfig("heuristic", "pubeval", seed=2),
                DuelConfig("heuristic", "pubeval", seed=1, luck_judge="heuristic"),
                DuelConfig("heuristic", "pubeval", seed=1, luck_judge="gnubg:plies=0"),
                DuelConfig("heuristic", "pubeval", seed=1, cube=True),
                DuelConfig("heuristic", "pubeval", seed=1, cube=True, jacoby=True),
                DuelConfig("heuristic", "pubeval", seed=1, cube=True, beavers=True),
                DuelConfig("heuristic", "pubeval", seed=1, cube=True, cube_limit=8),
                DuelConfig("heuristic", "pubeval", seed=1, length=7, cube=True),
                DuelConfig("heuristic", "pubeval", seed=1, length=7),
                DuelConfig("pubeval", "heuristic", seed=1)]
    names = {default_path(config) for config in variants}
    assert len(names) == len(variants)
    assert default_path(variants[2]).name == "heuristic-vs-pubeval-money-cubeless-luck-seed1.sqlite"


# ---------------------------------------------------------------------- luck


def test_luck_is_stored_per_game_and_reported() -> None:
    config = DuelConfig("pubeval", "random", seed=2, luck_judge="heuristic")
    pair = play_pair(config, 0)
    assert pair.has_luck
    stats = DuelStats(config)
    stats.add(pair)
    stats.add(PairResult(1, pair.games))
    summary = stats.summary()
    assert summary["luck_judge"] == "heuristic"
    assert summary["luck_adjusted_ppg"] == pytest.approx(pair.adjusted_points() / 2, abs=1e-4)
    assert len(summary["luck_adjusted_ci"]) == 2


@pytest.mark.slow
def test_luck_adjustment_keeps_the_mean_and_narrows_the_interval() -> None:
    config = DuelConfig("heuristic", "pubeval", seed=31, luck_judge="heuristic")
    stats = _duel(config, 150)
    raw_low, raw_high = stats.ppg.interval()
    adj_low, adj_high = stats.adjusted.interval()
    assert adj_high - adj_low < 0.8 * (raw_high - raw_low)
    # Same mean within noise: the difference is well inside the raw interval's half width.
    assert abs(stats.adjusted.ratio - stats.ppg.ratio) < (raw_high - raw_low) / 2
