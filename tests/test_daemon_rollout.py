"""The daemon's rollouts (protocol 1.3, SPEC §8.11-8.12): a real `bgbot serve`, its rollout
workers and its events socket.

A rollout asked of the daemon gives the figures `rollout_position` / `rollout_candidates`
give in this process with the same seed, bit for bit; progress events arrive on
``rollout.<id>``; ``rollout_cancel`` stops one; its settings are checked field by field and
its limits hold; ``status`` stays quick while one runs; a stopping daemon cancels it and
leaves no worker behind. Small rollouts: 36-72 trials cut after a few plies.
"""

from __future__ import annotations

import os
import signal
import statistics
import threading
import time
from typing import Any, Iterator

import pytest

from bgbot.core.context import Context
from bgbot.core.position import Position
from bgbot.daemon.client import Client, DaemonError
from bgbot.daemon.protocol import ErrorCode, validate_content
from bgbot.rollout import (CandidateResult, RolloutResult, RolloutSettings, rollout_candidates,
                           rollout_position)
from tests.daemon_harness import (Daemon, DaemonDirs, pid_alive, remove_tree, short_tmpdir,
                                  start_daemon, wait_for)

START = "4HPwATDgc/ABMA"
LIMITS = "rollout_workers = 2\nmax_rollouts = 1\nmax_rollout_trials = 129600\n"
LONG = {"position": START, "trials": 129600, "truncate": 2, "cubeful": False}
"""A rollout that runs for a minute or more (until it is cancelled), in short chunks."""


@pytest.fixture(scope="module")
def daemon() -> Iterator[Daemon]:
    dirs = DaemonDirs(short_tmpdir())
    dirs.write_config(LIMITS)
    running = start_daemon(dirs)
    yield running
    assert running.stop() == 0, running.log
    remove_tree(dirs.root)


def figures(result: dict[str, Any]) -> dict[str, Any]:
    """What a rollout found (not how long it took)."""
    return {key: value for key, value in result.items()
            if key not in ("seconds", "trials_per_second")}


def local(result: RolloutResult | CandidateResult) -> dict[str, Any]:
    """An in-process result as the daemon's reply writes it."""
    from bgbot.daemon.wire import _finite

    found: dict[str, Any] = _finite(result.to_json())
    return figures(found)


# ------------------------------------------------------------------ the same figures


@pytest.mark.parametrize("settings", [
    {"trials": 72, "truncate": 8, "seed": 5, "cubeful": False},
    {"trials": 36, "truncate": 4, "seed": 2, "cubeful": True},
], ids=["cubeless", "cubeful"])
def test_a_rollout_equals_rollout_position_in_process(daemon: Daemon,
                                                      settings: dict[str, Any]) -> None:
    reply = daemon.client(timeout=120).request("rollout", position=START, **settings)
    validate_content("rollout_reply", reply)
    here = rollout_position(Position.from_position_id(START), Context(),
                            RolloutSettings(**settings))
    assert figures(reply["result"]) == local(here)  # bit for bit: floats compared exactly
    assert reply["result"]["trials"] == settings["trials"]
    assert reply["result"]["stopped"] == "trials" and "candidates" not in reply
    assert reply["position_id"] == START and reply["context"]["match_length"] == 0


def test_candidates_are_ranked_and_equal_the_in_process_rollout(daemon: Daemon) -> None:
    settings = {"trials": 36, "truncate": 4, "seed": 9, "cubeful": False}
    reply = daemon.client(timeout=120).request("rollout", position=START, dice=[2, 1],
                                               candidates=3, **settings)
    validate_content("rollout_reply", reply)
    found = reply["candidates"]
    equities = [c["equity"] for c in found]
    assert len(found) >= 2 and equities == sorted(equities, reverse=True)
    here = rollout_candidates(Position.from_position_id(START), (2, 1), Context(),
                              RolloutSettings(**settings), candidates=3)
    assert [figures(c) for c in found] == [local(c) for c in here]
    assert reply["dice"] == [2, 1] and "result" not in reply


@pytest.mark.parametrize("text", ["4HPwATDgc/ABMA:cIkWAAAAAAAA",
                                  "XGID=-b----E-C---eE---c-e----AA:0:0:1:52:6:3:1:7:10"])
def test_an_id_with_dice_rolls_out_its_plays_in_its_match_context(daemon: Daemon,
                                                                  text: str) -> None:
    """The dice and the match state come from the id, read as the command line reads it."""
    from bgbot.cli._position import read_situation
    from bgbot.daemon.wire import context_to_wire

    situation = read_situation(text)
    assert situation.dice is not None
    reply = daemon.client(timeout=120).request("rollout", position=text, trials=36,
                                               truncate=2, cubeful=False)
    assert sorted(reply["dice"]) == sorted(situation.dice) and reply["candidates"]
    assert reply["context"] == context_to_wire(situation.context)
    assert reply["position_id"] == situation.position.position_id()


# ------------------------------------------------------------------ progress, cancel, status


class Running:
    """A long rollout played through its own client in a thread, with its progress events."""

    def __init__(self, daemon: Daemon, content: dict[str, Any] = LONG) -> None:
        self.events: list[dict[str, Any]] = []
        self.reply: dict[str, Any] | None = None
        self.error: BaseException | None = None
        self.client = Client(daemon.dirs.control, daemon.dirs.events, key=daemon.dirs.key,
                             timeout=10)
        self.content = dict(content)
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        content = dict(self.content)
        position = content.pop("position")
        try:
            self.reply = self.client.rollout(position, progress=self.events.append, **content)
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            self.error = exc

    @property
    def rollout_id(self) -> str:
        wait_for(lambda: self.events, timeout=60)
        return str(self.events[0]["rollout_id"])

    def finish(self, timeout: float = 120) -> dict[str, Any]:
        self.thread.join(timeout)
        assert not self.thread.is_alive(), "the rollout's reply did not come"
        self.client.close()
        if self.error is not None:
            raise self.error
        assert self.reply is not None
        return self.reply


def test_progress_events_arrive_status_stays_quick_and_cancel_stops_it(daemon: Daemon) -> None:
    running = Running(daemon)
    rollout_id = running.rollout_id
    client = daemon.client()
    wait_for(lambda: any(e["trials"] > 0 for e in running.events), timeout=60)
    latencies = []
    begin = time.monotonic()
    while time.monotonic() - begin < 1.5:
        start = time.perf_counter()
        status = client.status()
        latencies.append(time.perf_counter() - start)
        assert status["load"]["rollouts"] == 1
        time.sleep(0.02)
    assert client.rollout_cancel(rollout_id) == {"rollout_id": rollout_id}
    reply = running.finish()
    result = reply["result"]
    assert result["stopped"] == "cancelled" and 0 < result["trials"] < LONG["trials"]
    assert result["trials"] % 36 == 0 and reply["rollout_id"] == rollout_id
    events = running.events
    for event in events:
        validate_content("rollout_progress", event)
    assert [e["trials"] for e in events] == sorted(e["trials"] for e in events)
    assert events[-1]["stopped"] == "cancelled" and events[-1]["trials"] == result["trials"]
    assert any(e["stopped"] is None and e["trials"] > 0 for e in events)
    assert events[-1]["equity"] == result["equity"]
    ordered = sorted(latencies)
    p95 = ordered[int(0.95 * (len(ordered) - 1))]
    assert p95 < 0.050 and statistics.median(ordered) < 0.010, ordered
    with pytest.raises(DaemonError) as info:
        client.rollout_cancel(rollout_id)  # answered: no longer running
    assert info.value.code is ErrorCode.NOT_FOUND
    assert client.status()["load"]["rollouts"] == 0


def test_one_rollout_too_many_is_busy(daemon: Daemon) -> None:
    running = Running(daemon)
    rollout_id = running.rollout_id
    client = daemon.client()
    try:
        with pytest.raises(DaemonError) as info:
            client.request("rollout", position=START, trials=36, truncate=2)
        assert info.value.code is ErrorCode.BUSY
        assert "limits.max_rollouts" in info.value.message
    finally:
        client.rollout_cancel(rollout_id)
        running.finish()
    assert client.request("rollout", position=START, trials=36, truncate=2,
                          cubeful=False)["result"]["trials"] == 36


def test_a_rollout_worker_that_dies_fails_its_rollout_not_the_daemon(daemon: Daemon) -> None:
    running = Running(daemon)
    wait_for(lambda: any(e["trials"] > 0 for e in running.events), timeout=60)
    client = daemon.client()
    workers = client.status()["load"]["rollout_workers"]
    os.kill(workers[0], signal.SIGKILL)
    with pytest.raises(DaemonError) as info:
        running.finish()
    assert info.value.code is ErrorCode.INTERNAL and "worker died" in info.value.message
    again = daemon.client(timeout=120).request("rollout", position=START, trials=36,
                                               truncate=2, cubeful=False)
    assert again["result"]["trials"] == 36  # on a new pool
    assert not set(client.status()["load"]["rollout_workers"]) & set(workers)


def test_cancelling_an_unknown_rollout_is_not_found(daemon: Daemon) -> None:
    with pytest.raises(DaemonError) as info:
        daemon.client().rollout_cancel("no-such-rollout")
    assert info.value.code is ErrorCode.NOT_FOUND


# ------------------------------------------------------------------ checked settings


@pytest.mark.parametrize("content, field", [
    ({"trials": 100}, "trials"),
    ({"trials": 36 * 4000}, "trials"),  # above limits.max_rollout_trials
    ({"trials": 0}, "trials"),
    ({"truncate": -1}, "truncate"),
    ({"seed": -1}, "seed"),
    ({"se_target": 0}, "se_target"),
    ({"candidates": 3}, "candidates"),  # without dice
    ({"dice": [3, 1], "candidates": 40}, "candidates"),  # above limits.max_candidates
    ({"dice": [7, 1]}, "dice[0]"),
    ({"player": "nosuch"}, "player"),
    ({"player": "heuristic:plies=x"}, "player"),
    ({"position": "4HPwATDgc/ABMA:cIkWAAAAAAAA", "context": {"match_length": 5}}, "context"),
    ({"position": "AAAAAAAAAAAAAA"}, "position"),  # nothing on the board: not a position
    ({"position": "4HPwATDgc/ABMA", "context": {"my_score": 9, "match_length": 5}},
     "context.my_score"),
    ({"vr": "yes"}, "vr"),
    ({"trails": 36}, "trails"),
])
def test_bad_settings_get_bad_value_naming_the_field(daemon: Daemon, content: dict[str, Any],
                                                     field: str) -> None:
    with pytest.raises(DaemonError) as info:
        daemon.client().request("rollout", **{"position": START, **content})
    assert info.value.code is ErrorCode.BAD_VALUE, info.value
    assert info.value.details["field"] == field, info.value
    assert daemon.client().status()["load"]["rollouts"] == 0


def test_a_finished_game_has_nothing_to_roll_out(daemon: Daemon) -> None:
    over = Position((2,) + (0,) * 24, (0,) * 25)  # the side on roll has borne off all
    assert over.is_game_over()
    with pytest.raises(DaemonError) as info:
        daemon.client().request("rollout", position=over.position_id())
    assert info.value.code is ErrorCode.BAD_VALUE
    assert info.value.details["field"] == "position" and "over" in info.value.message


def test_hello_and_status_say_what_rollouts_may_do(daemon: Daemon) -> None:
    client = daemon.client()
    hello = client.hello()
    assert "rollout" in hello["capabilities"]
    assert {"rollout_request", "rollout_cancel_request"} <= set(hello["requests"])
    assert "rollout_progress" in hello["events"]
    assert hello["limits"]["max_rollouts"] == 1
    assert hello["limits"]["max_rollout_trials"] == 129600


# ------------------------------------------------------------------ a stopping daemon


def test_a_stopping_daemon_cancels_its_rollouts_and_leaves_no_worker() -> None:
    dirs = DaemonDirs(short_tmpdir())
    dirs.write_config(LIMITS)
    daemon = start_daemon(dirs)
    try:
        running = Running(daemon)
        wait_for(lambda: any(e["trials"] > 0 for e in running.events), timeout=60)
        workers = daemon.client().status()["load"]["rollout_workers"]
        assert len(workers) == 2 and all(pid_alive(pid) for pid in workers)
        begin = time.monotonic()
        assert daemon.stop() == 0, daemon.log
        assert time.monotonic() - begin < 15
        try:
            reply = running.finish(timeout=30)
        except DaemonError as exc:  # the reply could not be sent before the sockets closed
            assert exc.code in (ErrorCode.SHUTTING_DOWN, ErrorCode.TIMEOUT), exc
        else:
            assert reply["result"]["stopped"] == "cancelled"
        wait_for(lambda: not any(pid_alive(pid) for pid in workers), timeout=10)
    finally:
        daemon.stop()
        remove_tree(dirs.root)
