"""``match_get`` with ``events`` on a long money session (issue 30 item 6): built off the
daemon's loop (``status`` keeps answering while it is built) and paged (``events_from``,
``events_limit``, protocol 1.3), so that a client can follow a long session from its start.

The session is played for real (random players, `bgbot.daemon.hosting.MatchHost`, the code a
match worker runs) into a real state.db, which a real daemon then serves.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import threading
import time
from pathlib import Path
from typing import Any, Iterator

import pytest

from bgbot.core.rules import Rules
from bgbot.daemon.client import DaemonError
from bgbot.daemon.hosting import MatchHost, default_mat_path
from bgbot.daemon.protocol import ErrorCode
from bgbot.daemon.store import MatchSpec, Store
from tests.daemon_harness import Daemon, DaemonDirs, remove_tree, short_tmpdir, start_daemon

MATCH = "longsession01"
GAMES = 100  # enough that building the whole list takes well over 0.3 s on a fast machine


def play_session(state_dir: Path, logs_dir: Path, games: int) -> None:
    """A finished money session of ``games`` random games, journalled as a worker does."""
    state_dir.mkdir(parents=True, exist_ok=True)
    store = Store(state_dir / "state.db")
    spec = MatchSpec("random", "random", 0, games, Rules(), 5, ("north", "south"))
    now = dt.datetime.now()
    store.create_match(MATCH, spec, default_mat_path(logs_dir, MATCH, spec, now),
                       now.isoformat(timespec="seconds"))

    async def run() -> None:
        host = MatchHost(store, lambda items: None, event_item=lambda match_id, event: None)
        await host.start(MATCH)
        host.close()

    asyncio.run(run())
    store.close()


@pytest.fixture(scope="module")
def daemon() -> Iterator[Daemon]:
    dirs = DaemonDirs(short_tmpdir())
    play_session(dirs.state, dirs.logs, GAMES)
    dirs.write_config()
    running = start_daemon(dirs)
    yield running
    assert running.stop() == 0, running.log
    remove_tree(dirs.root)


def everything(daemon: Daemon) -> list[dict[str, Any]]:
    reply = daemon.client(timeout=60).match_get(MATCH, events=True)
    assert reply["events_more"] is False
    return list(reply["events"])


def test_the_events_come_in_pages_that_add_up_to_the_whole(daemon: Daemon) -> None:
    whole = everything(daemon)
    assert [e["content"]["n"] for e in whole] == list(range(1, len(whole) + 1))
    assert whole[-1]["msg_type"] == "match_ended" and whole[-1]["content"]["games"] == GAMES
    client = daemon.client(timeout=60)
    pages: list[dict[str, Any]] = []
    more = True
    while more:
        reply = client.match_get(MATCH, events=True, events_from=len(pages) + 1,
                                 events_limit=997)
        assert len(reply["events"]) <= 997
        pages += reply["events"]
        more = reply["events_more"]
    assert pages == whole


@pytest.mark.parametrize("first, limit", [(1, 1), (2, 3), (400, 1), (10**9, 5)])
def test_a_page_starts_where_asked(daemon: Daemon, first: int, limit: int) -> None:
    whole = everything(daemon)
    reply = daemon.client().match_get(MATCH, events=True, events_from=first, events_limit=limit)
    assert reply["events"] == whole[first - 1:first - 1 + limit]
    assert reply["events_more"] is (first - 1 + limit < len(whole))


@pytest.mark.parametrize("content, field", [
    ({"events_limit": 10_001}, "events_limit"), ({"events_limit": 0}, "events_limit"),
    ({"events_from": 0}, "events_from"),
])
def test_a_page_beyond_the_limits_is_a_bad_value(daemon: Daemon, content: dict[str, Any],
                                                 field: str) -> None:
    with pytest.raises(DaemonError) as caught:
        daemon.client().request("match_get", match_id=MATCH, events=True, **content)
    assert caught.value.code is ErrorCode.BAD_VALUE and caught.value.details["field"] == field


def test_status_is_answered_while_the_events_are_built(daemon: Daemon) -> None:
    """The whole list replays every game: seconds of CPU, which used to stall the loop."""
    took: dict[str, float] = {}

    def build() -> None:
        started = time.monotonic()
        daemon.client(timeout=120).match_get(MATCH, events=True)
        took["events"] = time.monotonic() - started

    worker = threading.Thread(target=build)
    worker.start()
    time.sleep(0.05)
    latencies = []
    client = daemon.client()
    while worker.is_alive():
        started = time.monotonic()
        client.status()
        latencies.append(time.monotonic() - started)
        time.sleep(0.02)
    worker.join()
    assert latencies and took["events"] > 0.3, "the session is too short to tell"
    assert max(latencies) < max(0.2, took["events"] / 3), (max(latencies), took)
