"""What the daemon promises around a stop and a restart (issue 30 item 7): no new work once it
has answered ``shutdown_reply``, and ``match_get`` shows the game in play after a restart,
before the match has resumed. Real daemons, real restarts, a real engine process.
"""

from __future__ import annotations

import signal
import sys
import time
from pathlib import Path
from typing import Any, Iterator

import pytest

from bgbot.daemon.client import DaemonError
from tests.daemon_harness import DaemonDirs, remove_tree, short_tmpdir, start_daemon, wait_for
from tests.spec_client import RawClient, envelope

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture()
def dirs() -> Iterator[DaemonDirs]:
    d = DaemonDirs(short_tmpdir())
    yield d
    remove_tree(d.root)


def test_no_new_work_is_taken_after_the_shutdown_reply(dirs: DaemonDirs) -> None:
    dirs.write_config()
    daemon = start_daemon(dirs)
    client = RawClient(dirs.control, dirs.key)
    try:
        shutdown_id, shutdown = envelope(dirs.key, "shutdown_request", {"reason": "test"})
        after = [envelope(dirs.key, "match_start_request",
                          {"players": ["random", "random"], "length": 1, "seed": n})
                 for n in range(3)]
        after.append(envelope(dirs.key, "frontend_start_request", {
            "name": "late", "kind": "gnubg_external", "options": {"listen": "127.0.0.1:0"}}))
        for frames in [shutdown, *(f for _, f in after)]:  # in one go: read in one loop turn
            client.socket.send_multipart(frames)
        assert client.receive(shutdown_id, timeout=10).msg_type == "shutdown_reply"
        for msg_id, _ in after:
            reply = client.receive(msg_id, timeout=10)
            assert reply.msg_type == "error", reply.content
            assert reply.content["code"] == "shutting_down"
    finally:
        client.close()
    assert daemon.wait(30) == 0
    again = start_daemon(dirs, log_name="again.log")
    try:
        assert again.client().match_list()["matches"] == []
        assert not list((dirs.logs).glob("*.mat"))
    finally:
        assert again.stop() == 0, again.log


LAZY_ENGINE = """#!/bin/sh
# a UBGI engine that takes its time to start (as a big engine loading its tables does)
sleep 3
exec {python} -m bgbot.cli ubgi --player random
"""


def _in_play(reply: dict[str, Any]) -> tuple[int, str | None]:
    return int(reply["match"]["game"]), reply["position"]


@pytest.mark.parametrize("stop", ["SIGTERM", "kill -9"])
def test_match_get_shows_the_game_in_play_before_the_match_resumes(dirs: DaemonDirs,
                                                                    stop: str) -> None:
    engine = dirs.root / "lazy-engine"
    engine.write_text(LAZY_ENGINE.format(python=sys.executable))
    engine.chmod(0o755)
    dirs.write_config(f'[[agents.named]]\nname = "lazy"\nspec = "ubgi:command={engine},'
                      f'timeout=30,start_timeout=60"\n')
    env = {"PYTHONPATH": str(ROOT)}
    daemon = start_daemon(dirs, env=env)
    try:
        client = daemon.client(timeout=30)
        # random players finish a game in a blink: enough games that the match cannot end
        # between the wait below and the stop (20 did, once, on a loaded CI machine)
        match_id = client.match_start(["lazy", "random"], length=0, games=1000,
                                      seed=11)["match"]["match_id"]
        wait_for(lambda: _in_play(client.match_get(match_id))[0] >= 2
                 and _in_play(client.match_get(match_id))[1] is not None, timeout=120)
    finally:
        if stop == "kill -9":
            daemon.signal(signal.SIGKILL)
            daemon.wait(10)
        else:
            assert daemon.stop() == 0, daemon.log
            assert "matches parked: 1" in daemon.log, daemon.log
    again = start_daemon(dirs, env=env, log_name="again.log")
    try:
        client = again.client(timeout=30)
        started = time.monotonic()
        reply = client.match_get(match_id, events=True)
        assert time.monotonic() - started < 2.5, "answered only after the engine started"
        games = [e["content"]["game"] for e in reply["events"]
                 if e["msg_type"] == "game_started"]
        ended = [e["content"]["game"] for e in reply["events"] if e["msg_type"] == "game_ended"]
        playing = games[-1] if games[-1] not in ended else None
        assert reply["match"]["state"] == "playing"
        if playing is not None:
            assert reply["match"]["game"] == playing
            assert reply["position"] is not None
        else:
            assert reply["match"]["game"] == ended[-1] and reply["position"] is None
        assert "resuming" not in again.log or reply["position"] is not None
    finally:
        assert again.stop() == 0, again.log


def test_named_agents_change_at_a_restart_not_at_a_reload(dirs: DaemonDirs) -> None:
    """The workers learn the named agents when they start: a reload says a restart is needed,
    and until then requests may name only the agents of the start."""
    first = '[[agents.named]]\nname = "quiet"\nspec = "random:seed=1"\n'
    dirs.write_config(first)
    daemon = start_daemon(dirs)
    try:
        client = daemon.client()
        assert "quiet" in client.hello()["agents"]
        dirs.write_config(first + '[[agents.named]]\nname = "loud"\nspec = "heuristic"\n')
        reloaded = client.reload()
        assert "agents.named" in reloaded["restart_needed"]
        assert "loud" not in client.hello()["agents"]
        with pytest.raises(DaemonError) as caught:
            client.evaluate("4HPwATDgc/ABMA", agent="loud")
        assert caught.value.details["field"] == "agent"
    finally:
        assert daemon.stop() == 0, daemon.log
    again = start_daemon(dirs, log_name="again.log")
    try:
        assert again.client().evaluate("4HPwATDgc/ABMA", agent="loud")["agent"] == "loud"
    finally:
        assert again.stop() == 0, again.log
