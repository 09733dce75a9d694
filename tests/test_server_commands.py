"""The server commands as a person runs them: `bgbot fibs`, `bgbot bgammon` and `bgbot
gnubg-player` share one set of options (--config, --agent, --logs, -v; the old spellings
--player and --log-dir still work), write their logs to one default place (the daemon's
logs directory, here set by $LOGS_DIRECTORY as systemd would), and say on stderr, at the
default log level, when a server cannot be reached and when they try again.

Real processes throughout; the "unreachable server" is a local port nothing listens on.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bgbot.cli import build_parser

from .plugins import ROOT

COMMANDS = ("fibs", "bgammon", "gnubg-player")


def free_port() -> int:
    """A local TCP port nothing listens on (bound and released at once)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


def environment(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT), "LOGS_DIRECTORY": str(tmp_path / "logs"),
            "STATE_DIRECTORY": str(tmp_path / "state"), "BGBOT_FIBS_PASSWORD": "secret",
            "BGBOT_BGAMMON_PASSWORD": ""}


def start(tmp_path: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "bgbot.cli", *args], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True, env=environment(tmp_path),
                            stdin=subprocess.DEVNULL, cwd=tmp_path)


def stderr_until(process: subprocess.Popen[str], pattern: str, timeout: float = 60) -> str:
    """What the process wrote on stderr up to the first line matching ``pattern`` (a failure
    after ``timeout`` seconds without one: a silent process fails, it does not hang)."""
    import select

    assert process.stderr is not None
    fd = process.stderr.fileno()
    seen = ""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.5)
        if not ready:
            continue
        chunk = os.read(fd, 65536).decode("utf-8", "replace")
        if not chunk:
            break
        seen += chunk
        for line in seen.splitlines():
            if re.search(pattern, line):
                return seen
    raise AssertionError(f"no line matching {pattern!r} within {timeout} s; stderr: {seen!r}")


def stop(process: subprocess.Popen[str]) -> tuple[int, str]:
    process.send_signal(signal.SIGTERM)
    assert process.stderr is not None
    process.wait(timeout=30)
    rest = os.read(process.stderr.fileno(), 1 << 20).decode("utf-8", "replace")
    return process.returncode, rest


@pytest.mark.parametrize("command, args", [
    ("fibs", ("--user", "mybot")),
    ("bgammon", ("--user", "bot_mybot")),
])
def test_an_unreachable_server_is_said_at_the_default_log_level(tmp_path: Path, command: str,
                                                                args: tuple[str, ...]) -> None:
    """It was silent: the reason needed -vv."""
    port = free_port()
    process = start(tmp_path, command, "--host", "127.0.0.1", "--port", str(port), *args)
    try:
        said = stderr_until(process, r"trying again in \d+ s")
    finally:
        code, rest = stop(process)
    assert re.search(rf"^bgbot {command}: {command}-\S+: cannot connect to 127\.0\.0\.1:{port} "
                     r"\(.*(refused|failed).*\)$", said, re.M | re.I), said
    assert code == 0 and "Traceback" not in said + rest


@pytest.mark.parametrize("command", COMMANDS)
def test_every_server_command_has_the_same_options(command: str) -> None:
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command").choices[command]  # type: ignore[union-attr]
    text = sub.format_help()
    for option in ("--config FILE", "--agent SPEC", "--logs DIR", "-v, --verbose"):
        assert option in text, (command, option)
    assert "--player" not in text and "--log-dir" not in text  # old spellings: accepted, unlisted
    required = {"fibs": ["--user", "x"], "bgammon": ["--user", "bot_x"],
                "gnubg-player": ["--listen", "127.0.0.1:0"]}[command]
    old = parser.parse_args([command, *required, "--player", "pubeval", "--log-dir", "/tmp/l"])
    new = parser.parse_args([command, *required, "--agent", "pubeval", "--logs", "/tmp/l"])
    assert (old.agent, old.logs) == (new.agent, new.logs) == ("pubeval", Path("/tmp/l"))


@pytest.mark.parametrize("command, args, logs", [
    ("fibs", ("--host", "127.0.0.1", "--user", "mybot"), "fibs"),
    ("bgammon", ("--host", "127.0.0.1", "--user", "bot_mybot"), "bgammon"),
    ("gnubg-player", ("--listen", "127.0.0.1:0"), "gnubg-player"),
])
def test_logs_go_to_one_default_place(tmp_path: Path, command: str, args: tuple[str, ...],
                                      logs: str) -> None:
    """<logs dir>/COMMAND for each (bgammon's was ./logs/bgammon, gnubg-player's nowhere)."""
    port = ("--port", str(free_port())) if command != "gnubg-player" else ()
    process = start(tmp_path, command, *args, *port)
    try:
        first = stderr_until(process, rf"^bgbot {command}: ")
    finally:
        stop(process)
    assert re.search(rf"logs in {re.escape(str(tmp_path / 'logs' / logs))}(;|$)", first, re.M), \
        first


def test_config_runs_the_configured_bgammon_accounts(tmp_path: Path) -> None:
    port = free_port()
    config = tmp_path / "bgbot.toml"
    config.write_text(f'[[bgammon.accounts]]\nuser = "bot_fromconfig"\nhost = "127.0.0.1"\n'
                      f'port = {port}\nagent = "pubeval"\n')
    process = start(tmp_path, "bgammon", "--config", str(config))
    try:
        said = stderr_until(process, "cannot connect")
    finally:
        stop(process)
    assert f"bgbot bgammon: bgammon-bot_fromconfig on 127.0.0.1:{port} with pubeval" in said


def test_config_runs_the_configured_gnubg_listeners(tmp_path: Path) -> None:
    config = tmp_path / "bgbot.toml"
    config.write_text('[[gnubg_player]]\nname = "one"\nlisten = "127.0.0.1:0"\nagent = "pubeval"\n'
                      '[[gnubg_player]]\nname = "two"\nlisten = "127.0.0.1:0"\n'
                      'agent = "random"\n')
    process = start(tmp_path, "gnubg-player", "--config", str(config), "--name", "two")
    try:
        said = stderr_until(process, "listening on")
    finally:
        code, rest = stop(process)
    assert re.search(r"listening on 127\.0\.0\.1:\d+ with random; no logs;", said), said
    assert "with pubeval" not in said + rest and code == 0
