"""The daemon's frontends play with in-process players that decide off its event loop.

A real daemon (`bgbot serve`) runs a gnubg external-player frontend whose agent sleeps a second
on every play (`tests/slow_agent.py`, named in $BGBOT_AGENT_MODULES); a real gnubg plays
against it. While that agent thinks, the daemon still answers ``status``: the decision runs in
a decision worker, not on the loop that serves the other clients.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from .daemon_harness import DaemonDirs, remove_tree, short_tmpdir, start_daemon, wait_for
from .gnubg_host import match_script

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture()
def dirs() -> Iterator[DaemonDirs]:
    found = DaemonDirs(short_tmpdir())
    yield found
    remove_tree(found.root)


def _lines(path: Path, word: str) -> list[float]:
    """The times of the ``word`` lines the slow agent wrote."""
    if not path.exists():
        return []
    return [float(line.split()[1]) for line in path.read_text().splitlines()
            if line.startswith(word + " ")]


@pytest.mark.gnubg
def test_status_is_answered_while_a_frontend_agent_thinks(gnubg_binary: str,
                                                          dirs: DaemonDirs) -> None:
    notes = dirs.root / "decisions.log"
    listen = dirs.root / "player.sock"
    # the agent writes a file it names: only the configuration may say so (a request may not)
    dirs.write_config(f'[[gnubg_player]]\nname = "slow-player"\nlisten = "{listen}"\n'
                      f'agent = "slow:seconds=1,log={notes}"\nautostart = false\n')
    daemon = start_daemon(dirs, env={"BGBOT_AGENT_MODULES": "tests.slow_agent",
                                     "PYTHONPATH": str(ROOT)})
    gnubg: subprocess.Popen[bytes] | None = None
    try:
        client = daemon.client(timeout=20)
        started = client.frontend_start("slow-player")
        assert started["frontend"]["state"] == "running"
        prefs = dirs.root / "gnubg-prefs"
        prefs.mkdir()
        script = match_script(seed=4, length=1, external=str(listen)) + ["new match 1"]
        gnubg = subprocess.Popen([gnubg_binary, "-t", "-q", "-r", "-s", str(prefs)],
                                 stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL, cwd=dirs.root)
        assert gnubg.stdin is not None
        gnubg.stdin.write(("\n".join(script) + "\n").encode())
        gnubg.stdin.flush()

        wait_for(lambda: _lines(notes, "begin"), timeout=60, interval=0.01)
        status = client.status()
        answered = time.time()
        assert status["state"] == "running"
        first_end = wait_for(lambda: _lines(notes, "end"), timeout=30)[0]
        assert _lines(notes, "begin")[0] < answered < first_end
    finally:
        if gnubg is not None:
            gnubg.kill()
            gnubg.wait(10)
        assert daemon.stop() == 0
