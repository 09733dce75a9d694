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


@pytest.fixture()
def bgammon_standin() -> Iterator[int]:
    """The bgammon stand-in (not bgammon.org) in its own process; yields its port."""
    proc = subprocess.Popen([sys.executable, str(HERE / "bgammon_standin.py"), "--port", "0",
                             "--seed", "3"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, cwd=HERE.parent)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        found = re.search(r":(\d+)\s*$", line)
        assert found, line
        yield int(found.group(1))
    finally:
        proc.terminate()
        proc.wait(10)


def test_daemon_plays_a_bgammon_match_for_a_configured_account(
        bgammon_standin: int, dirs: DaemonDirs) -> None:
    import asyncio

    from .bgammon_standin import StandInOpponent

    dirs.write_config('[[bgammon.accounts]]\nuser = "bot_alpha"\nhost = "127.0.0.1"\n'
                      f'port = {bgammon_standin}\nagent = "pubeval"\nmatch_length = 1\n')
    daemon = start_daemon(dirs)  # no password: a guest login, as the stand-in has no accounts
    try:
        client = daemon.client(timeout=20)
        record = client.frontends()["frontends"][0]
        assert (record["name"], record["kind"]) == ("bgammon-bot_alpha", "bgammon")
        logs = dirs.logs / "bgammon" / "bgammon-bot_alpha"

        def finished_mat() -> Path | None:
            for path in logs.glob("*.mat") if logs.exists() else []:
                if re.search(r"Wins \d+ point", path.read_text()):
                    return path
            return None

        async def human_plays() -> Path:
            opponent = StandInOpponent(bgammon_standin, "human", table_of="BOT_alpha", seed=9,
                                       smart=False)
            task = asyncio.create_task(opponent.run())
            try:
                for _ in range(1800):
                    found = finished_mat()
                    if found is not None:
                        return found
                    await asyncio.sleep(0.05)
                raise AssertionError("no finished .mat after 90 s; files: "
                                     f"{sorted(dirs.logs.rglob('*'))}; daemon log: "
                                     f"{daemon.log[-3000:]}")
            finally:
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)

        mat = asyncio.run(human_plays())
        assert " 1 point match" in mat.read_text()
        with sqlite3.connect(dirs.state / "state.db") as db:
            stored = db.execute("SELECT count(*) FROM frontend_events WHERE frontend = "
                                "'bgammon-bot_alpha'").fetchone()[0]
        assert stored > 0
    finally:
        assert daemon.stop() == 0


def test_a_refused_login_marks_the_frontend_failed_with_the_servers_words(
        bgammon_standin: int, dirs: DaemonDirs) -> None:
    dirs.write_config('[[bgammon.accounts]]\nuser = "bot_alpha"\nhost = "127.0.0.1"\n'
                      f'port = {bgammon_standin}\nagent = "pubeval"\n')
    daemon = start_daemon(dirs, env={"BGBOT_BGAMMON_PASSWORD": "sesame"})
    try:
        client = daemon.client(timeout=20)

        def failed() -> dict[str, object] | None:
            record: dict[str, object] = client.frontends()["frontends"][0]
            return record if record["state"] == "failed" else None

        record = wait_for(failed, timeout=30)
        assert "No account was found" in str(record["error"])
        assert client.status()["frontends"]["running"] == 0
    finally:
        assert daemon.stop() == 0
    assert "sesame" not in daemon.log
