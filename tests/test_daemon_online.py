"""The daemon keeps online-server accounts logged in as frontends and logs their matches.

FIBS and bgammon.org cannot be reached from here: the servers below are the in-repo
stand-ins (`tests/fibs_standin.py`, `tests/bgammon_standin.py`), built from the protocol
references, not the real servers. The daemon is real (`bgbot serve`, real sockets, SQLite).
"""

from __future__ import annotations

import os
import re
import socket
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from .daemon_harness import DaemonDirs, remove_tree, short_tmpdir, start_daemon, wait_for

HERE = Path(__file__).resolve().parent


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture()
def fibs_standin() -> Iterator[int]:
    """The FIBS stand-in (not FIBS) in its own process; yields its port."""
    port = _free_port()
    proc = subprocess.Popen([sys.executable, str(HERE / "fibs_standin.py"), "--port", str(port),
                             "--seed", "3"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, cwd=HERE.parent)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert "listening" in line, line
        yield port
    finally:
        proc.terminate()
        proc.wait(10)


@pytest.fixture()
def dirs() -> Iterator[DaemonDirs]:
    found = DaemonDirs(short_tmpdir())
    yield found
    remove_tree(found.root)


def test_daemon_plays_a_fibs_match_between_two_configured_accounts(
        fibs_standin: int, dirs: DaemonDirs) -> None:
    password = dirs.root / "fibs-password"
    password.write_text("sesame\n")
    os.chmod(password, 0o600)
    account = ('[[fibs.accounts]]\nuser = "{user}"\nhost = "127.0.0.1"\nport = {port}\n'
               'password_file = "{pw}"\nagent = "pubeval"\n{more}')
    dirs.write_config(
        account.format(user="alpha", port=fibs_standin, pw=password, more='invite = ["beta:1"]\n')
        + account.format(user="beta", port=fibs_standin, pw=password, more=""))
    daemon = start_daemon(dirs)
    try:
        client = daemon.client(timeout=20)
        listed = {f["name"]: f for f in client.frontends()["frontends"]}
        assert {listed["fibs-alpha"]["kind"], listed["fibs-beta"]["kind"]} == {"fibs"}
        assert listed["fibs-alpha"]["listen"] == f"127.0.0.1:{fibs_standin}"
        assert "sesame" not in repr(listed)

        logs = dirs.logs / "fibs" / "fibs-alpha"

        def finished_mat() -> Path | None:
            for path in logs.glob("*.mat") if logs.exists() else []:
                if re.search(r"Wins \d+ point", path.read_text()):
                    return path
            return None

        mat = wait_for(finished_mat, timeout=90)
        assert " 1 point match" in mat.read_text()
        with sqlite3.connect(dirs.state / "state.db") as db:
            events = {row[0] for row in db.execute(
                "SELECT event FROM frontend_events WHERE frontend = 'fibs-alpha'")}
        assert "login" in events or "logged_in" in events, events
        status = client.status()
        assert status["frontends"]["running"] == 2
        stopped = client.frontend_stop("fibs-beta")["frontend"]
        assert stopped["state"] == "stopped"
    finally:
        assert daemon.stop() == 0
    assert "sesame" not in daemon.log
