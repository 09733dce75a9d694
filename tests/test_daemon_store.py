"""The SQLite store and match hosting, in-process: the journal replays into core Games, a match
resumed from any prefix of its journal ends exactly as the uninterrupted match, and nothing is
published before it is committed."""

from __future__ import annotations

import asyncio
import datetime as dt
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bgbot.core.dice import SeededDice
from bgbot.core.rules import Rules
from bgbot.daemon.hosting import MatchHost, default_mat_path
from bgbot.daemon.store import (
    SCHEMA_VERSION,
    GameRow,
    JournalEntry,
    MatchSpec,
    MatchState,
    ResumedDice,
    Store,
    StoreError,
    apply_action,
    journal_action,
    replay,
)
from bgbot.referee import events as ev
from bgbot.referee.referee import Referee
from bgbot.referee.series import dice_for, make_agents, SeriesConfig

from .daemon_harness import mat_body

SPEC = MatchSpec("heuristic", "pubeval", length=3, seed=11, names=("heuristic", "pubeval"))


def _create(store: Store, match_id: str, spec: MatchSpec, logs: Path) -> None:
    when = dt.datetime(2026, 1, 1, 12, 0)
    store.create_match(match_id, spec, default_mat_path(logs, match_id, spec, when),
                       when.isoformat())


def _host(store: Store, match_ids: list[str], published: list[Any] | None = None) -> None:
    async def run() -> None:
        sink = published if published is not None else []
        host = MatchHost(store, sink.extend, event_item=lambda mid, event: (mid, event))
        await asyncio.gather(*(host.start(mid) for mid in match_ids))
        host.close()

    asyncio.run(run())


def test_store_rows_round_trip(tmp_path: Path) -> None:
    store = Store(tmp_path / "state.db")
    spec = MatchSpec("heuristic", "random:seed=3", length=0, games=4,
                     rules=Rules(jacoby=True, beavers=True), seed=99, names=("a", "b"))
    _create(store, "m1", spec, tmp_path)
    row = store.get_match("m1")
    assert row is not None and row.spec == spec and row.state is MatchState.QUEUED
    store.record("m1", [JournalEntry(1, 1, "opening", {"dice": [3, 1]})],
                 [GameRow(1, (0, 0))])
    assert store.journal("m1") == [JournalEntry(1, 1, "opening", {"dice": [3, 1]})]
    store.set_state("m1", MatchState.SUSPENDED)
    assert [r.id for r in store.resumable()] == ["m1"]
    assert store.count_by_state() == {"suspended": 1}
    with pytest.raises(sqlite3.IntegrityError):  # an entry is never written twice
        store.record("m1", [JournalEntry(1, 1, "opening", {"dice": [3, 1]})])
    store.close()
    reopened = Store(tmp_path / "state.db")
    assert reopened.get_match("m1") is not None
    reopened._db.execute("UPDATE meta SET value = '99' WHERE key = 'schema'")
    reopened.close()
    with pytest.raises(StoreError, match=f"knows {SCHEMA_VERSION}"):
        Store(tmp_path / "state.db")


def test_the_journal_replays_a_referee_match_into_the_same_games(tmp_path: Path) -> None:
    config = SeriesConfig("heuristic", "random", length=5, seed=4)
    entries: list[JournalEntry] = []
    games: list[Any] = []
    number = 0

    def listen(event: ev.Event) -> None:
        nonlocal number
        if isinstance(event, ev.GameStarted):
            number = event.game
        if isinstance(event, ev.GameEnded):
            games.append(event.record)
        action = journal_action(event)
        if action is not None:
            entries.append(JournalEntry(len(entries) + 1, number, *action))

    result = asyncio.run(Referee(make_agents(config), dice_for(4, 0, False), length=5,
                                 listeners=[listen]).play())
    rebuilt = replay(MatchSpec("heuristic", "random", length=5, seed=4), entries)
    assert rebuilt.current is None
    assert [g.outcome for g in rebuilt.finished] == result.outcomes
    assert [g.history for g in rebuilt.finished] == [g.history for g in games]
    assert rebuilt.match.score == result.score


def test_an_impossible_journal_entry_is_refused_by_the_core() -> None:
    entries = [JournalEntry(1, 1, "opening", {"dice": [3, 1]}),
               JournalEntry(2, 1, "move", {"seat": 0, "dice": [3, 1], "play": [[24, 18, 0]]})]
    with pytest.raises(StoreError, match="entry 2"):
        replay(SPEC, entries)
    with pytest.raises(StoreError, match="gap"):
        replay(SPEC, [JournalEntry(2, 1, "opening", {"dice": [3, 1]})])


def test_resumed_dice_skip_what_was_drawn_and_notice_another_seed() -> None:
    stream = SeededDice(5).for_game(2)
    drawn = [stream.opening(), stream.roll(), stream.roll()]
    resumed = ResumedDice(SeededDice(5), 2, [drawn[0]], drawn[1:]).for_game(2)
    fresh = SeededDice(5).for_game(2)
    for _ in range(3):
        fresh.roll()
    assert resumed.roll() == fresh.roll()
    assert ResumedDice(SeededDice(5), 2, [], []).for_game(1).opening() == \
        SeededDice(5).for_game(1).opening()
    with pytest.raises(StoreError, match="seed"):
        ResumedDice(SeededDice(6), 2, [drawn[0]], drawn[1:]).for_game(2)


RANDOM_SPEC = MatchSpec("random:cube=on", "heuristic:noise=0.3", length=5, seed=3,
                        names=("random", "noisy"))
"""Agents with random state: resumed, they must draw what they drew uninterrupted."""


@pytest.fixture(scope="module", params=[SPEC, RANDOM_SPEC], ids=["deterministic", "random"])
def uninterrupted(request: pytest.FixtureRequest,
                  tmp_path_factory: pytest.TempPathFactory) -> tuple[MatchSpec, list[JournalEntry], str]:
    spec: MatchSpec = request.param
    root = tmp_path_factory.mktemp("whole")
    store = Store(root / "state.db")
    _create(store, "m", spec, root)
    _host(store, ["m"])
    row = store.get_match("m")
    assert row is not None and row.state is MatchState.FINISHED
    return spec, store.journal("m"), row.mat_path.read_text()


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.floats(0.0, 1.0))
def test_a_match_resumed_from_any_journal_prefix_ends_as_the_uninterrupted_one(
        uninterrupted: tuple[MatchSpec, list[JournalEntry], str],
        tmp_path_factory: pytest.TempPathFactory, fraction: float) -> None:
    spec, entries, expected = uninterrupted
    cut = int(fraction * (len(entries) - 1))
    root = tmp_path_factory.mktemp("cut")
    store = Store(root / "state.db")
    _create(store, "m", spec, root)
    prefix = entries[:cut]
    state = replay(spec, prefix)
    rows = [GameRow(i + 1, g.score, g.crawford, g.post_crawford) for i, g in
            enumerate(state.finished + ([state.current] if state.current else []))]
    rows += [GameRow(i + 1, (0, 0), outcome=g.outcome) for i, g in enumerate(state.finished)]
    store.record("m", prefix, rows)
    store.set_state("m", MatchState.RUNNING)  # as a killed daemon leaves it
    _host(store, ["m"])
    row = store.get_match("m")
    assert row is not None and row.state is MatchState.FINISHED
    assert store.journal("m") == entries
    assert mat_body(row.mat_path.read_text()) == mat_body(expected)


def test_events_are_published_only_after_their_commit(tmp_path: Path) -> None:
    store = Store(tmp_path / "state.db")
    for index in range(3):
        _create(store, f"m{index}", MatchSpec("pubeval", "heuristic", 1, seed=index,
                                              names=("p", "h")), tmp_path)
    published: dict[str, int] = {}
    reader = sqlite3.connect(tmp_path / "state.db")  # sees committed rows only

    def publish(items: list[Any]) -> None:
        for match_id, event in items:
            if journal_action(event) is not None:
                published[match_id] = published.get(match_id, 0) + 1
                # every action published so far is committed already
                (count,) = reader.execute("SELECT COUNT(*) FROM journal WHERE match_id = ?",
                                          (match_id,)).fetchone()
                assert count >= published[match_id]

    async def run() -> None:
        host = MatchHost(store, publish, event_item=lambda mid, event: (mid, event))
        await asyncio.gather(*(host.start(f"m{i}") for i in range(3)))
        assert host.journal.commits < sum(len(store.journal(f"m{i}")) for i in range(3))
        host.close()

    asyncio.run(run())
    assert published == {f"m{i}": len(store.journal(f"m{i}")) for i in range(3)}


def test_abort_and_park(tmp_path: Path) -> None:
    store = Store(tmp_path / "state.db")
    long_spec = MatchSpec("heuristic", "heuristic", 25, seed=3, names=("a", "b"))
    _create(store, "abort", long_spec, tmp_path)
    _create(store, "park", long_spec, tmp_path)
    _create(store, "early", long_spec, tmp_path)

    async def run() -> None:
        host = MatchHost(store, lambda items: None, event_item=lambda mid, event: None)
        tasks = [host.start("abort"), host.start("park"), host.start("early")]
        host.stop("early", "abort")  # before its task ever ran
        while len(store.journal("abort")) < 30 or len(store.journal("park")) < 30:
            await asyncio.sleep(0.01)
        host.stop("abort", "abort")
        await host.stop_all("park")
        await asyncio.gather(*tasks, return_exceptions=True)
        host.close()

    asyncio.run(run())
    states = {mid: store.get_match(mid).state for mid in ("abort", "park", "early")}  # type: ignore[union-attr]
    assert states == {"abort": MatchState.ABORTED, "park": MatchState.SUSPENDED,
                      "early": MatchState.ABORTED}
    aborted = store.get_match("abort")
    assert aborted is not None and "Game 1" in aborted.mat_path.read_text()
    assert [r.id for r in store.resumable()] == ["park"]
