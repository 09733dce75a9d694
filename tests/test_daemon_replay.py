"""A replayed message is always refused, across restarts too (SPEC §5, issue 30 item 2).

Real daemons on one state directory, stopped by a request, by SIGTERM and by kill -9; the
messages are captured as they travelled (signed frames written from SPEC.md alone, by
tests/spec_client.py) and sent again to the next daemon.
"""

from __future__ import annotations

import signal
import time
from typing import Iterator

import pytest

from tests.daemon_harness import DaemonDirs, remove_tree, short_tmpdir, start_daemon
from tests.spec_client import RawClient, envelope


@pytest.fixture()
def dirs() -> Iterator[DaemonDirs]:
    d = DaemonDirs(short_tmpdir())
    d.write_config()
    yield d
    remove_tree(d.root)


def exchange(dirs: DaemonDirs, frames: list[bytes], msg_id: str) -> tuple[str, dict[str, object]]:
    client = RawClient(dirs.control, dirs.key)
    try:
        client.send_frames(list(frames))
        reply = client.receive(msg_id, timeout=10)
        return reply.msg_type, reply.content
    finally:
        client.close()


def test_a_captured_shutdown_does_not_stop_the_next_daemon(dirs: DaemonDirs) -> None:
    first = start_daemon(dirs, log_name="first.log")
    msg_id, shutdown = envelope(dirs.key, "shutdown_request", {"reason": "captured"})
    assert exchange(dirs, shutdown, msg_id)[0] == "shutdown_reply"
    assert first.wait(30) == 0
    second = start_daemon(dirs, log_name="second.log")
    try:
        kind, content = exchange(dirs, shutdown, msg_id)
        assert kind == "error" and content["code"] in ("stale", "replayed")
        time.sleep(0.3)
        assert second.proc.poll() is None, "the replayed shutdown stopped the new daemon"
        assert second.client().status()["state"] == "running"
    finally:
        assert second.stop() == 0, second.log


@pytest.mark.parametrize("stop", ["kill -9", "SIGTERM"])
@pytest.mark.parametrize("ahead", [0.0, 6.0], ids=["clock in step", "client clock 6 s ahead"])
def test_a_request_accepted_before_a_restart_is_refused_after_it(dirs: DaemonDirs, stop: str,
                                                                  ahead: float) -> None:
    """A client whose clock runs ahead of the daemon's makes messages that are still "in the
    future" when the next daemon starts: refusing what predates the start is not enough. (The
    next daemon answers nothing until that future has passed, so a few seconds keep it short.)"""
    first = start_daemon(dirs, log_name="first.log")
    captured = []
    stamp = time.time() + ahead
    try:
        for msg_type in ("match_list_request", "status_request"):
            msg_id, frames = envelope(dirs.key, msg_type, {}, stamp=stamp)
            kind, _ = exchange(dirs, frames, msg_id)
            assert kind == msg_type.replace("_request", "_reply")
            captured.append((msg_id, frames))
    finally:
        if stop == "kill -9":
            first.signal(signal.SIGKILL)
            first.wait(10)
        else:
            assert first.stop() == 0, first.log
    second_started = time.time()
    second = start_daemon(dirs, log_name="second.log")
    if ahead:
        assert second_started < stamp, "the next daemon started after the captured messages' " \
            "time: make the clock run further ahead, or the case is the clock-in-step one"
    try:
        for msg_id, frames in captured:
            kind, content = exchange(dirs, frames, msg_id)
            assert kind == "error" and content["code"] in ("stale", "replayed"), content
        fresh_id, fresh = envelope(dirs.key, "status_request", {})
        assert exchange(dirs, fresh, fresh_id)[0] == "status_reply"
        assert exchange(dirs, fresh, fresh_id)[1]["code"] == "replayed"
    finally:
        assert second.stop() == 0, second.log
