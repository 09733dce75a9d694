"""`bgbot ctl` against a real daemon in its own directories (issue 31 item 4): the events
endpoint comes from next to the control socket, ``--config`` (or ``$BGBOT_CONFIG``) reads the
daemon's endpoints and key, and a watch that cannot connect says so instead of waiting for
ever. Real processes: `bgbot serve` and `bgbot ctl`.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Iterator

import pytest

from tests.daemon_harness import Daemon, DaemonDirs, remove_tree, short_tmpdir, start_daemon

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def daemon() -> Iterator[Daemon]:
    dirs = DaemonDirs(short_tmpdir())
    dirs.write_config()
    running = start_daemon(dirs)
    yield running
    assert running.stop() == 0, running.log
    remove_tree(dirs.root)


def ctl(daemon: Daemon, *argv: str, timeout: float = 60, **env: str
        ) -> subprocess.CompletedProcess[str]:
    """`bgbot ctl ARGV` with a home of its own: nothing found by default but what it is told."""
    home = daemon.dirs.root / "home"
    home.mkdir(exist_ok=True)
    environment = {k: v for k, v in os.environ.items()
                   if not k.startswith(("BGBOT_", "XDG_"))}
    environment.update({"HOME": str(home), "XDG_RUNTIME_DIR": str(home / "run"),
                        "PYTHONPATH": str(ROOT), **env})
    return subprocess.run([sys.executable, "-m", "bgbot.cli", "ctl", *argv], text=True,
                          capture_output=True, timeout=timeout, env=environment,
                          stdin=subprocess.DEVNULL)


def by_endpoint(daemon: Daemon) -> list[str]:
    return ["--endpoint", daemon.dirs.control, "--key-file", str(daemon.dirs.key_file)]


def test_match_start_watch_finds_the_events_next_to_the_control_socket(daemon: Daemon) -> None:
    done = ctl(daemon, *by_endpoint(daemon), "match", "start", "random", "random",
               "--length", "1", "--seed", "4", "--watch")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("started match ") and lines[-1].startswith("match over: ")
    assert any(" plays " in line for line in lines)


def test_watch_prints_the_events_of_the_daemon_it_was_pointed_at(daemon: Daemon) -> None:
    client = daemon.client()
    watcher = subprocess.Popen(
        [sys.executable, "-m", "bgbot.cli", "ctl", *by_endpoint(daemon), "watch", "--idle",
         "3"], text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        import time

        time.sleep(1.5)  # its subscription is made
        client.match_start(["random", "random"], length=0, games=3, seed=9)
        out, err = watcher.communicate(timeout=120)
    finally:
        if watcher.poll() is None:
            watcher.kill()
            watcher.wait(5)
    assert watcher.returncode == 0, err
    assert "session over" in out and " plays " in out


@pytest.mark.parametrize("how", ["--config", "BGBOT_CONFIG"])
def test_the_daemons_config_gives_the_endpoints_and_the_key(daemon: Daemon, how: str) -> None:
    config = str(daemon.dirs.config_file)
    argv = ["--config", config] if how == "--config" else []
    env = {"BGBOT_CONFIG": config} if how == "BGBOT_CONFIG" else {}
    status = ctl(daemon, *argv, "status", "--json", **env)
    assert status.returncode == 0, status.stderr
    assert f'"pid": {daemon.proc.pid}' in status.stdout
    watched = ctl(daemon, *argv, "match", "start", "random", "random", "--length", "1",
                  "--watch", **env)
    assert watched.returncode == 0 and "match over" in watched.stdout, watched.stderr


def test_without_config_nor_endpoint_the_defaults_are_not_this_daemon(daemon: Daemon) -> None:
    done = ctl(daemon, "status", "--timeout", "2")
    assert done.returncode == 3 and "does not exist" in done.stderr


def test_a_watch_that_cannot_connect_says_so_and_stops(daemon: Daemon) -> None:
    nowhere = f"ipc://{daemon.dirs.root / 'no-events-here'}"
    for argv in (["watch"], ["match", "start", "random", "random", "--watch"]):
        done = ctl(daemon, *by_endpoint(daemon), "--events-endpoint", nowhere, "--timeout",
                   "2", *argv, timeout=30)
        assert done.returncode == 3, (argv, done.stdout, done.stderr)
        assert "events endpoint" in done.stderr and "no-events-here" in done.stderr
    assert daemon.client().status()["matches"]["active"] == 0  # no match was started


def test_a_tcp_endpoint_needs_its_events_endpoint_named(daemon: Daemon) -> None:
    done = ctl(daemon, "--endpoint", "tcp://127.0.0.1:1", "--key-file",
               str(daemon.dirs.key_file), "--timeout", "2", "watch", timeout=30)
    assert done.returncode in (2, 3) and "--events-endpoint" in done.stderr


def test_a_config_that_cannot_be_read_is_named(daemon: Daemon) -> None:
    done = ctl(daemon, "--config", str(daemon.dirs.root / "nope.toml"), "status")
    assert done.returncode == 2 and "nope.toml" in done.stderr
