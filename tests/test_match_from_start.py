"""Seeing a hosted match from its start (protocol 1.2, issue 17 item 9): numbered events,
`match_get` with `events`, `Client.follow` and ``bgbot ctl match start --watch``.

A real daemon; a subscriber that comes late must still get every event once, in order."""

from __future__ import annotations

import re
import subprocess
import sys
from typing import Any, Iterator

import pytest

from tests.daemon_harness import Daemon, DaemonDirs, remove_tree, short_tmpdir, start_daemon, wait_for


@pytest.fixture(scope="module")
def daemon() -> Iterator[Daemon]:
    dirs = DaemonDirs(short_tmpdir())
    dirs.write_config()
    running = start_daemon(dirs)
    yield running
    assert running.stop() == 0, running.log
    remove_tree(dirs.root)


def _events(daemon: Daemon, match_id: str) -> list[dict[str, Any]]:
    return list(daemon.client().match_get(match_id, events=True)["events"])


def test_a_late_subscriber_gets_every_event_once_and_in_order(daemon: Daemon) -> None:
    client = daemon.client()
    match_id = client.match_start(["heuristic", "pubeval"], length=5, seed=31)["match"]["match_id"]
    wait_for(lambda: client.match_get(match_id)["match"]["game"] >= 2, timeout=60, interval=0.01)
    seen = list(daemon.client().follow(lambda: match_id))  # the match began long ago
    numbers = [c["n"] for kind, c in seen if "n" in c]
    assert numbers == list(range(1, len(numbers) + 1))
    assert seen[-1][0] == "match_ended"
    final = _events(daemon, match_id)
    assert [(e["msg_type"], e["content"]) for e in final] == [(k, c) for k, c in seen if "n" in c]
    assert [e["msg_type"] for e in final[:2]] == ["game_started", "rolled"]


def test_the_events_so_far_are_what_the_match_published(daemon: Daemon) -> None:
    """A subscriber from before the start, compared with the list rebuilt from the journal."""
    client = daemon.client()
    live: list[tuple[str, dict[str, Any]]] = []
    started: list[str] = []

    def start() -> str:
        started.append(client.match_start(["random:cube=on", "pubeval"], length=3,
                                          seed=8)["match"]["match_id"])
        return started[0]

    for kind, content in daemon.client().follow(start):
        live.append((kind, content))
    rebuilt = [(e["msg_type"], e["content"]) for e in _events(daemon, started[0])]
    assert [item for item in live if "n" in item[1]] == rebuilt


def test_ctl_match_start_watch_prints_the_whole_match_with_dice_high_first(daemon: Daemon) -> None:
    dirs = daemon.dirs
    result = subprocess.run(
        [sys.executable, "-m", "bgbot.cli", "ctl", "--endpoint", dirs.control,
         "--events-endpoint", dirs.events, "--key-file", str(dirs.key_file), "match", "start",
         "heuristic", "pubeval", "--length", "3", "--seed", "5", "--watch"],
        capture_output=True, text=True, timeout=180, stdin=subprocess.DEVNULL)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("started match ")
    assert lines[1].startswith("game 1 starts at 0-0")
    assert lines[-1].startswith("match over: ")
    match_id = lines[0].split()[2].rstrip(":")
    assert len(lines) == 1 + len(_events(daemon, match_id))
    rolls = [m.group(1) for m in re.finditer(r"(?:rolls|plays|opening roll) (\d\d)", result.stdout)]
    assert rolls and all(r[0] >= r[1] for r in rolls)
