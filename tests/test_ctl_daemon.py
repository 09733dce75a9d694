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


# ------------------------------------------------------------------ bgbot ctl rollout (1.3)


ROLLOUT = ("4HPwATDgc/ABMA", "--trials", "72", "--truncate", "6", "--cubeless", "--seed", "3")


def local_rollout(*argv: str) -> subprocess.CompletedProcess[str]:
    """`bgbot rollout ARGV` in this machine's process, the reference."""
    return subprocess.run([sys.executable, "-m", "bgbot.cli", "rollout", *argv], text=True,
                          capture_output=True, timeout=300, stdin=subprocess.DEVNULL,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})


def without_speed(table: str) -> list[str]:
    """A rollout table without how long it took (its last line ends with the time and speed)."""
    lines = table.rstrip("\n").splitlines()
    return lines[:-1] + [lines[-1].split(" plies a trial")[0]]


def test_ctl_rollout_prints_the_table_bgbot_rollout_prints(daemon: Daemon) -> None:
    done = ctl(daemon, *by_endpoint(daemon), "rollout", *ROLLOUT, timeout=300)
    here = local_rollout(*ROLLOUT)
    assert done.returncode == 0 and here.returncode == 0, (done.stderr, here.stderr)
    assert without_speed(done.stdout) == without_speed(here.stdout)
    assert "rollout of 4HPwATDgc/ABMA (money, cube 1 centred): 72 trials" in done.stdout


def test_ctl_rollout_of_a_roll_watches_its_progress(daemon: Daemon) -> None:
    argv = ("4HPwATDgc/ABMA", "--dice", "31", "--trials", "36", "--truncate", "4",
            "--candidates", "3")
    done = ctl(daemon, *by_endpoint(daemon), "rollout", *argv, "--watch", timeout=300)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    table = lines.index(next(line for line in lines if line.startswith("rollout of the plays")))
    assert table >= 1 and lines[table - 1].endswith("; stopped: trials")
    assert all(" trials" in line and line.split("/")[0].isdigit() for line in lines[:table])
    here = local_rollout(*argv)
    assert without_speed("\n".join(lines[table:])) == without_speed(here.stdout)


def test_ctl_rollout_json_is_the_reply_with_the_figures_of_bgbot_rollout(daemon: Daemon
                                                                         ) -> None:
    import json

    done = ctl(daemon, *by_endpoint(daemon), "rollout", *ROLLOUT, "--json", timeout=300)
    here = local_rollout(*ROLLOUT, "--json")
    assert done.returncode == 0, done.stderr
    reply, mine = json.loads(done.stdout), json.loads(here.stdout)
    for figures in (reply["result"], mine):
        for key in ("seconds", "trials_per_second", "context"):
            figures.pop(key, None)
    assert reply["result"] == mine
    assert reply["rollout_id"] and reply["context"]["cube_owner"] == "centre"


def test_ctl_rollout_errors_name_the_field(daemon: Daemon) -> None:
    done = ctl(daemon, *by_endpoint(daemon), "rollout", "4HPwATDgc/ABMA", "--trials", "100")
    assert done.returncode == 1 and "(field: trials)" in done.stderr and "108" in done.stderr
    done = ctl(daemon, *by_endpoint(daemon), "rollout", "4HPwATDgc/ABMA", "--player",
               "ubgi:command=/bin/true", "--trials", "36")
    assert done.returncode == 1 and "(field: player)" in done.stderr
