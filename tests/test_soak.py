"""The crash soak (issue 17): ``kill -9`` the daemon again and again while it hosts matches of
every agent kind (random ones and 1-ply included, gnubg when installed); each finished match's
``.mat`` must equal its uninterrupted twin (played in-process, as ``bgbot play`` plays it), and
no process the killed daemon started may outlive it.

Slow (minutes): ``python -m pytest -m slow tests/test_soak.py -s -n 0`` prints its figures.
"""

from __future__ import annotations

import os
import random
import time
from pathlib import Path
from typing import Iterator

import pytest

from tests.conftest import GNUBG
from tests.daemon_harness import (
    Daemon,
    DaemonDirs,
    mat_body,
    pid_alive,
    remove_tree,
    short_tmpdir,
    start_daemon,
)
from tests.test_daemon_server import _reference_mat

KILLS = int(os.environ.get("BGBOT_SOAK_KILLS", "50"))
"""At least 50 (the issue's figure); fewer only to try the test itself out."""
MATCHES = [  # (seat 0, seat 1, length, seed)
    ("heuristic", "pubeval", 7, 101),
    ("heuristic:plies=1", "random:cube=on", 5, 102),
    ("random", "random:cube=on", 9, 103),
    ("heuristic:noise=0.3", "pubeval", 7, 104),
    ("random:cube=on,seed=3", "heuristic:noise=0.1,seed=5", 7, 105),
    ("pubeval", "heuristic:plies=1", 5, 106),
]
if GNUBG is not None:
    MATCHES.append(("gnubg:plies=0", "random:cube=on", 5, 107))


def descendants(pid: int) -> set[int]:
    """Every living process below ``pid`` (its children, theirs, ...), from /proc."""
    parents: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] != "Z":
            parents.setdefault(int(fields[1]), []).append(int(entry))
    found: set[int] = set()
    todo = [pid]
    while todo:
        for child in parents.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


@pytest.fixture()
def dirs() -> Iterator[DaemonDirs]:
    d = DaemonDirs(short_tmpdir())
    yield d
    remove_tree(d.root)


def kill(daemon: Daemon) -> int:
    """SIGKILL the daemon; the number of its processes still alive 10 s later (orphans)."""
    below = descendants(daemon.proc.pid)
    daemon.proc.kill()
    daemon.proc.wait(10)
    for client in daemon.clients:
        client.close()
    daemon.clients.clear()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(pid_alive(p) for p in below):
        time.sleep(0.05)
    return sum(pid_alive(p) for p in below)


@pytest.mark.slow
def test_kill_9_soak_every_match_ends_as_its_uninterrupted_twin(dirs: DaemonDirs,
                                                                 tmp_path: Path) -> None:
    """Each cycle: a daemon that is up resumes the matches and is killed 0.2-2.5 s later;
    every third cycle, one more is killed 0.3-2 s after its launch, before it is ready (its
    start-up children then live too). A new round of matches starts when one is done."""
    dirs.write_config(workers=2)
    rng = random.Random(20261201)
    began = time.monotonic()
    kills = orphans = round_number = 0
    pending: dict[str, tuple[str, str, int, int]] = {}
    finished: dict[str, tuple[tuple[str, str, int, int], str]] = {}

    def collect(daemon: Daemon) -> None:
        client = daemon.client()
        for match_id in list(pending):
            reply = client.match_get(match_id, mat=True)
            state = reply["match"]["state"]
            if state != "playing":
                assert state == "finished", (match_id, state, reply["error"])
                finished[match_id] = (pending.pop(match_id), reply["mat"])

    while kills < KILLS:
        daemon = start_daemon(dirs, log_name=f"daemon-{kills}.log")
        collect(daemon)
        if not pending:  # a new round of every kind of match
            round_number += 1
            for a, b, length, seed in MATCHES:
                spec = (a, b, length, seed + 1000 * round_number)
                reply = daemon.client().match_start([a, b], length=length, seed=spec[3])
                pending[reply["match"]["match_id"]] = spec
        time.sleep(rng.uniform(0.2, 2.5))
        orphans += kill(daemon)
        kills += 1
        if kills % 3 == 0:
            early = start_daemon(dirs, wait=False, log_name=f"daemon-{kills}-early.log")
            time.sleep(rng.uniform(0.3, 2.0))
            orphans += kill(early)
            kills += 1
    daemon = start_daemon(dirs, log_name="daemon-last.log")
    try:
        deadline = time.monotonic() + 600
        while pending and time.monotonic() < deadline:
            collect(daemon)
            time.sleep(0.5)
    finally:
        assert daemon.stop() == 0
    assert not pending, f"unfinished: {pending}"
    identical = 0
    for match_id, ((a, b, length, seed), mat) in finished.items():
        twin = _reference_mat(tmp_path / match_id, a, b, length, seed)
        assert mat_body(mat) == mat_body(twin), f"match {match_id} {a} vs {b} seed {seed}"
        identical += 1
    minutes = (time.monotonic() - began) / 60
    print(f"\nsoak: {kills} kills, {len(finished)} matches, {identical} identical .mat, "
          f"{orphans} orphans, {minutes:.1f} min")
    assert kills >= KILLS and orphans == 0 and identical == len(finished) >= len(MATCHES)
