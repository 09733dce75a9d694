"""The one-sided bear-off database: construction, exact values, cache file, gnubg agreement."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bgbot.core.position import Position
from bgbot.players import bearoff
from bgbot.players.bearoff import (
    ROLLS,
    BearoffDatabase,
    _single_die_moves,
    position_count,
    rank,
    unrank,
)

SMALL = 6


def home(*counts: int) -> list[int]:
    """25 counts with ``counts`` on points 1, 2, ... (a side's own numbering)."""
    side = [0] * 25
    side[: len(counts)] = counts
    return side


def on_point(point: int, n: int) -> list[int]:
    side = [0] * 25
    side[point - 1] = n
    return side


def bear_position(mover: list[int], opponent: list[int]) -> Position:
    return Position(opponent, mover)


@pytest.fixture(scope="module")
def small_db() -> BearoffDatabase:
    return BearoffDatabase.build(SMALL)


@pytest.fixture(scope="session")
def full_db(tmp_path_factory: pytest.TempPathFactory) -> BearoffDatabase:
    """The full 15-chequer database, built once per session into a temporary cache dir."""
    cache = tmp_path_factory.mktemp("bgbot-cache")
    database = BearoffDatabase.load_or_build(15, cache)  # its speed is a benchmark's business
    assert list(cache.glob("bearoff-*.bin")), "the build did not write its cache file"
    return database


# ---------------------------------------------------------------------- ranking


def test_position_count_is_c21_6_for_fifteen_chequers() -> None:
    assert position_count(15) == 54264
    assert position_count(6) == 924


def capped(limit: int) -> Any:
    """Six counts whose total is at most ``limit`` (each count cut to what is left)."""

    def cut(raw: list[int]) -> list[int]:
        out, left = [], limit
        for c in raw:
            out.append(min(c, left))
            left -= out[-1]
        return out

    return st.lists(st.integers(0, limit), min_size=6, max_size=6).map(cut)


@given(capped(15))
def test_rank_is_dense_and_inverted_by_unrank(counts: list[int]) -> None:
    index = rank(counts)
    assert 0 <= index < position_count(sum(counts))  # small databases are prefixes
    assert unrank(index) == tuple(counts)


def test_every_rank_of_the_small_database_is_distinct() -> None:
    seen = {unrank(i, SMALL) for i in range(position_count(SMALL))}
    assert len(seen) == position_count(SMALL)
    assert unrank(0) == (0,) * 6


# ---------------------------------------------------------------------- the rules behind the build


home_sides = capped(SMALL).filter(lambda c: sum(c) >= 1)


@settings(max_examples=60, deadline=None)
@given(home_sides, st.sampled_from([(d1, d2) for d1, d2, _ in ROLLS]))
def test_single_die_chains_give_exactly_the_legal_results(counts: list[int], dice: tuple[int, int]) -> None:
    """The build's die-by-die chaining reaches the same positions as the core move generator."""
    position = bear_position(home(*counts), on_point(1, 1))
    legal = {after.mover[:6] for _, after in position.play_results(dice)}
    d1, d2 = dice
    orders = [(d1,) * 4] if d1 == d2 else [(d1, d2), (d2, d1)]
    chained: set[tuple[int, ...]] = set()
    for order in orders:
        frontier = {tuple(counts)}
        for die in order:
            frontier = {q for p in frontier for q in (_single_die_moves(p, die) if sum(p) else [p])}
        chained |= frontier
    assert chained == legal


@settings(max_examples=60, deadline=None)
@given(home_sides)
def test_expected_rolls_satisfy_bellman_with_the_real_move_generator(
    small_db: BearoffDatabase, counts: list[int]
) -> None:
    """E(p) = 1 + Σ_r w_r · min over legal plays of E(result): the table is optimal."""
    position = bear_position(home(*counts), on_point(1, 1))
    total = 0.0
    for d1, d2, weight in ROLLS:
        results = position.play_results((d1, d2))
        total += weight * min(small_db.expected_rolls(after.mover) for _, after in results)
    assert small_db.expected_rolls(home(*counts)) == pytest.approx(1.0 + total / 36.0, abs=1e-12)


@settings(max_examples=60, deadline=None)
@given(home_sides)
def test_distributions_are_consistent(small_db: BearoffDatabase, counts: list[int]) -> None:
    side = home(*counts)
    dist = small_db.rolls_distribution(side)
    assert sum(dist) == pytest.approx(1.0, abs=1e-6)
    mean = sum(n * p for n, p in enumerate(dist))
    assert mean == pytest.approx(small_db.expected_rolls(side), abs=1e-5)
    # 6-6 bears off four chequers from any home board, and no roll bears off more.
    first = next(n for n, p in enumerate(dist) if p > 0)
    assert first == math.ceil(sum(counts) / 4)
    assert small_db.max_rolls(side) == len(dist) - 1


# ---------------------------------------------------------------------- reference values (§5)


@pytest.mark.parametrize(
    ("side", "expected"),
    [(home(1), 1.000), (on_point(6, 1), 1.250), (on_point(6, 2), 2.110)],
)
def test_expected_rolls_small_positions(small_db: BearoffDatabase, side: list[int], expected: float) -> None:
    assert small_db.expected_rolls(side) == pytest.approx(expected, abs=5e-4)


def test_single_chequer_wastage(small_db: BearoffDatabase) -> None:
    wastage = [small_db.expected_rolls(on_point(p, 1)) * 49 / 6 - p for p in range(1, 7)]
    assert wastage == pytest.approx([7.17, 6.17, 5.17, 4.62, 4.30, 4.21], abs=0.006)


@pytest.mark.parametrize(
    ("side", "expected"),
    [(home(15), 6.980), (home(0, 0, 0, 3, 5, 7), 10.539), (on_point(6, 15), 12.266)],
)
def test_expected_rolls_fifteen_chequers(full_db: BearoffDatabase, side: list[int], expected: float) -> None:
    assert full_db.expected_rolls(side) == pytest.approx(expected, abs=5e-4)


def test_one_chequer_each_on_the_six_point_wins_13_of_16(small_db: BearoffDatabase) -> None:
    probs = small_db.probabilities(bear_position(on_point(6, 1), on_point(6, 1)))
    assert probs is not None
    assert probs.win == pytest.approx(0.8125, abs=1e-6)
    assert probs.win_gammon == probs.lose_gammon == 0.0


def test_two_on_the_six_against_three_on_the_ace(small_db: BearoffDatabase) -> None:
    probs = small_db.probabilities(bear_position(on_point(6, 2), home(3)))
    assert probs is not None
    assert probs.win == pytest.approx(0.6705, abs=1e-4)


def test_trice_triangles_against_each_other(full_db: BearoffDatabase) -> None:
    triangle = home(0, 0, 0, 3, 5, 7)
    probs = full_db.probabilities(bear_position(triangle, triangle))
    assert probs is not None
    assert probs.win == pytest.approx(0.5923, abs=1e-4)


def test_gammons_need_fifteen_chequers_left(full_db: BearoffDatabase) -> None:
    # Opponent with 15 on his 6-point cannot get one off before I finish 1 chequer on my ace.
    probs = full_db.probabilities(bear_position(home(1), on_point(6, 15)))
    assert probs is not None
    assert probs.win == 1.0 and probs.win_gammon == 1.0
    # Seen from him, on roll: he loses a gammon unless his first roll bears one off.
    probs = full_db.probabilities(bear_position(on_point(6, 15), home(1)))
    assert probs is not None
    first = full_db.first_off_distribution(on_point(6, 15))
    assert probs.lose_gammon == pytest.approx(1.0 - first[1], abs=1e-6)
    assert probs.win_backgammon == probs.lose_backgammon == 0.0
    assert full_db.first_off_distribution(on_point(6, 14)) == (1.0,)


# ---------------------------------------------------------------------- only bear-offs


def test_probabilities_only_for_two_sided_bear_offs(small_db: BearoffDatabase) -> None:
    assert small_db.probabilities(Position.initial()) is None
    outside = bear_position(on_point(7, 1), home(1))
    assert small_db.probabilities(outside) is None
    too_many = bear_position(home(SMALL + 1), home(1))
    assert small_db.probabilities(too_many) is None
    with pytest.raises(ValueError):
        small_db.expected_rolls(on_point(8, 1))


def test_best_play_minimises_expected_rolls(small_db: BearoffDatabase) -> None:
    # 6-5 with chequers on the 6 and 5 bears both off; 2-1 from 6-6 keeps the chequers even.
    position = bear_position(home(0, 0, 0, 0, 1, 1), home(1))
    play = small_db.best_play(position, (6, 5))
    assert not any(position.apply(play).mover)
    position = bear_position(on_point(6, 2), home(1))
    after = position.apply(small_db.best_play(position, (2, 1)))
    assert small_db.expected_rolls(after.mover) == min(
        small_db.expected_rolls(a.mover) for _, a in position.play_results((2, 1))
    )


# ---------------------------------------------------------------------- the cache file


def test_cache_file_round_trip_and_rebuild_on_corruption(tmp_path: Path) -> None:
    built = BearoffDatabase.load_or_build(4, tmp_path)
    (path,) = tmp_path.glob("bearoff-*.bin")
    loaded = BearoffDatabase.load_or_build(4, tmp_path)
    assert loaded.expected_rolls(home(2, 2)) == built.expected_rolls(home(2, 2))
    raw = bytearray(path.read_bytes())
    raw[-3] ^= 0xFF
    with pytest.raises(ValueError, match="checksum"):
        BearoffDatabase.from_bytes(bytes(raw))
    path.write_bytes(bytes(raw))
    again = BearoffDatabase.load_or_build(4, tmp_path)  # rebuilds and rewrites
    assert again.rolls_distribution(home(2, 2)) == built.rolls_distribution(home(2, 2))
    assert BearoffDatabase.from_bytes(path.read_bytes()).max_chequers == 4


def test_file_version_and_size_are_checked(small_db: BearoffDatabase) -> None:
    raw = small_db.to_bytes()
    assert BearoffDatabase.from_bytes(raw).expected_rolls(home(3)) == small_db.expected_rolls(home(3))
    with pytest.raises(ValueError, match="version"):
        BearoffDatabase.from_bytes(raw[:8] + (99).to_bytes(4, "little") + raw[12:])
    with pytest.raises(ValueError, match="wanted"):
        BearoffDatabase.from_bytes(raw, max_chequers=5)
    with pytest.raises(ValueError):
        BearoffDatabase.from_bytes(raw[:-10])
    with pytest.raises(ValueError, match="magic"):
        BearoffDatabase.from_bytes(b"x" * len(raw))


def test_cache_directory_follows_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("BGBOT_CACHE_DIR", str(tmp_path / "explicit"))
    assert bearoff.cache_directory() == tmp_path / "explicit"
    monkeypatch.delenv("BGBOT_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert bearoff.cache_directory() == tmp_path / "xdg" / "bgbot"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert bearoff.cache_directory() == Path.home() / ".cache" / "bgbot"


def test_default_database_is_built_once_with_the_env_size(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("BGBOT_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("BGBOT_BEAROFF_MAX_CHEQUERS", "3")
    monkeypatch.setattr(bearoff, "_default", None)
    first = bearoff.default_database()
    assert first.max_chequers == 3
    assert bearoff.default_database() is first
    monkeypatch.setenv("BGBOT_BEAROFF_MAX_CHEQUERS", "sixteen")
    with pytest.raises(ValueError, match="BGBOT_BEAROFF_MAX_CHEQUERS"):
        bearoff.default_max_chequers()


# ---------------------------------------------------------------------- against gnubg


def test_agrees_with_gnubg_bear_off_databases(
    full_db: BearoffDatabase, equity_records: list[dict[str, Any]]
) -> None:
    """gnubg's one-sided (bearoff1) and two-sided (bearoff2) values, 0-ply cubeless."""
    records = [r for r in equity_records if r["class"] in ("bearoff1", "bearoff2")]
    assert len(records) > 100
    worst = {"win": 0.0, "win_gammon": 0.0, "lose_gammon": 0.0}
    for record in records:
        probs = full_db.probabilities(Position.from_board(record["board"]))
        assert probs is not None, record["position_id"]
        for key in worst:
            worst[key] = max(worst[key], abs(getattr(probs, key) - record[key]))
    # Measured: 1.6e-5 (gnubg stores 16-bit probabilities); the brief allows 0.01-0.02.
    assert worst["win"] < 1e-3, worst
    assert worst["win_gammon"] < 1e-3 and worst["lose_gammon"] < 1e-3, worst
