"""README.md's commands, run as a reader would run them.

Every command of the README (`tests.readme_commands`: the lines of its ``sh`` blocks and the
commands named inline) is accounted for here: run in a private home and a copy of the
clone's layout (real processes: the daemon, the gnubg listener, the server commands), made
small where it would take long (`shrink`: fewer pairs, games, matches and plies, no delays;
the options themselves stay), or named with what runs it instead (the set-up and test
commands: `.ci/run` and `.ci/fresh-debian12`; systemd's own commands). A command added to the
README that this file does not know fails `test_every_command_is_accounted_for`.

The online servers are the in-repository stand-ins (`tests/fibs_standin.py`,
`tests/bgammon_standin.py`): FIBS and bgammon.org cannot be reached from the test machines.
"""

from __future__ import annotations

import asyncio
import os
import re
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Iterator

import pytest

from .conftest import GNUBG, TESTDATA
from .readme_commands import Command, block_commands, inline_commands

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
needs_bgbot = pytest.mark.skipif(not (BIN / "bgbot").exists(),
                                 reason=f"bgbot is not installed beside {sys.executable}")
needs_gnubg = pytest.mark.skipif(GNUBG is None, reason="GNU Backgammon is not installed")

# ------------------------------------------------------------------ what is not run here

COVERED = {
    # the set-up command: a stock Debian 12, followed as written
    r"apt-get update && apt-get install -y python3-venv python3-dev gcc && python3 -m venv "
    r"\.venv && \. \.venv/bin/activate && pip install \. && bgbot play": ".ci/fresh-debian12",
    # the test command: what CI runs (and the fresh Debian 12 too)
    r"apt-get install -y gnubg && \. \.venv/bin/activate && pip install -e '\.\[test\]' && "
    r"python -m pytest": ".ci/run",
    # the daemon's install under /opt and /etc: on the fresh Debian 12, then verified
    r"python3 -m venv /opt/bgbot && /opt/bgbot/bin/pip install \.": ".ci/fresh-debian12",
    r"install -m 644 /opt/bgbot/share/bgbot/systemd/bgbot\.service /etc/systemd/system/":
        ".ci/fresh-debian12",
    r"install -d /etc/bgbot && install -m 644 /opt/bgbot/share/bgbot/bgbot\.toml /etc/bgbot/":
        ".ci/fresh-debian12",
    r"/opt/bgbot/bin/bgbot ctl keygen /etc/bgbot/control\.key": ".ci/fresh-debian12",
    # systemd's own commands need systemd running as PID 1; the unit they start is checked by
    # tests/test_daemon_systemd.py (systemd-analyze verify in the layout the install makes)
    r"systemctl daemon-reload && systemctl enable --now bgbot": "systemd",
    r"/opt/bgbot/bin/bgbot ctl status": "systemd",
    r"systemctl reload bgbot": "systemd",
    r"journalctl -u bgbot": "systemd",
    r"systemctl edit bgbot": "systemd",
    r"systemctl enable --now bgbot@NAME": "systemd",
    # the CI's own steps (.ci/run runs them)
    r"python -m pytest": ".ci/run",
    r"python -m mypy --strict bgbot": ".ci/run",
    # the long checks: the slow marker (pyproject.toml), run by hand
    r"python -m pytest -m slow": "slow",
}

# commands named inline that are run here as they are, or as a concrete instance
INLINE_RUN = {
    "bgbot ubgi --player SPEC": "printf 'ubgi\\nquit\\n' | bgbot ubgi --player heuristic:plies=1",
    "bgbot ctl keygen FILE": "bgbot ctl keygen another.key && test \"$(stat -c %a another.key)\" "
                             "= 600",
    "bgbot duel heuristic:level=NAME X --pairs N --concurrency 2":
        "bgbot duel heuristic:level=beginner pubeval --pairs 1 --concurrency 2",
    "bgbot duel heuristic pubeval --pairs 10000 --concurrency 2": None,
    "bgbot duel heuristic:plies=1 gnubg:plies=0 --pairs 2500 --concurrency 2": None,
    "bgbot duel heuristic:plies=2 heuristic:plies=1 --pairs 700 --concurrency 2 --seed 15 --luck":
        None,
    "bgbot duel heuristic:plies=2 heuristic:plies=1 --pairs 5000 --concurrency 2 --seed 20 --luck":
        None,
    "bgbot play heuristic:plies=1 gnubg:plies=0 --length 7 --matches 16 --seed 21": None,
    "bgbot analyze FILE --plies 2 --json": None,
    "python3 bench/decisions.py": "python3 bench/decisions.py --games 1 --limit 5 --plies 0,1",
    "python3 bench/protocol.py --agent heuristic:plies=2 --window 4 --skip-rss --skip-tcp":
        "python3 bench/protocol.py --agent heuristic:plies=2 --window 4 --skip-rss --skip-tcp "
        "--requests 8 --workers 1",
    "python3 bench/selfplay.py --mode compiled": "python3 bench/selfplay.py --games 2 --mode compiled",
    "python3 bench/movegen.py": "python3 bench/movegen.py --rounds 1",
    "python3 bench/fuzz.py --inputs 1000000": "python3 bench/fuzz.py --inputs 20 --targets "
                                              "'position id'",
    "python -m tests.ubgi_conformance.replay -- bgbot ubgi": None,
    "python3 bench/protocol.py": "python3 bench/protocol.py --requests 8 --matches 2 --workers 1 "
                                 "--skip-tcp",
    "python3 bench/rollout_vs_gnubg.py": "python3 bench/rollout_vs_gnubg.py --help",
    "python3 bench/rollout.py": "python3 bench/rollout.py --smoke --no-gnubg",
    "python3 bench/rollout_benchmark.py score bench/data/rollout-benchmark.jsonl heuristic "
    "heuristic:plies=1": "python3 bench/rollout_benchmark.py score "
                         "bench/data/rollout-benchmark.jsonl heuristic heuristic:plies=1 "
                         "--limit 20",
}
"""None: run as written, made small by `shrink`."""

NEEDS_DATA = {"python3 bench/movegen.py", "python3 bench/fuzz.py --inputs 1000000"}
NEEDS_GNUBG = re.compile(r"gnubg:|bgbot analyze|bench/movegen")


def _covered(command: str) -> str | None:
    for pattern, by in COVERED.items():
        if re.fullmatch(pattern, command):
            return by
    return None


def _is_reference(command: Command, blocks: list[Command]) -> bool:
    """An inline span that names a command the blocks run (``bgbot serve``, ``bgbot play A
    B``: capitals are placeholders)."""
    words = [r"\S+" if re.fullmatch(r"[A-Z]+", w) else re.escape(w) for w in command.text.split()]
    pattern = re.compile(r"(?:^|[\s=\"'])" + r" ".join(words) + r"(?=[\s\"']|$)")
    return any(pattern.search(block.text) for block in blocks)


def shrink(command: str) -> str:
    """The command made quick, its options kept: 1 pair (2 with --resume: one more than the
    duel before), 2 games, 1 match of 1 point (`bgbot play`), analysis at 0-ply, no delay."""
    small = re.sub(r"--pairs \d+", "--pairs 2" if "--resume" in command else "--pairs 1",
                   command)
    if "--sprt" in small and "--pairs" not in small:
        small += " --pairs 2"
    small = re.sub(r"--games \d+", "--games 2", small)
    small = re.sub(r"--matches \d+", "--matches 1", small)
    small = re.sub(r"--delay [\d.]+", "--delay 0.001", small)
    if small.startswith("bgbot play"):
        small = re.sub(r"--length \d+", "--length 1", small)
    if small.startswith("bgbot analyze"):
        small = re.sub(r"--plies \d+", "--plies 0", small)
    if small.startswith(("bgbot rollout", "bgbot ctl rollout")) or "--rollout" in small:
        # one block of 36 trials, cut short (gnubg plays over a socket: a few plies)
        small = re.sub(r"--trials \d+", "", small) + " --trials 36"
        if "--truncate" not in small:
            small += " --truncate 4"
        small = re.sub(r"--truncate \d+", "--truncate 4", small)
    return small


# ------------------------------------------------------------------ the accounting


def test_every_command_is_accounted_for() -> None:
    blocks = block_commands()
    assert len(blocks) > 30 and blocks[0].section == "Set-up"
    for command in blocks:
        if _covered(command.text) is None:
            assert command.text.startswith(("bgbot ", "BGBOT_", "mkdir -p ~/.config/bgbot")), \
                f"README command run by nothing: {command.text!r} (tests/test_readme.py)"
    for command in inline_commands():
        known = (_covered(command.text) is not None or command.text in INLINE_RUN
                 or _is_reference(command, blocks))
        assert known, f"README inline command run by nothing: {command.text!r}"
    for name in INLINE_RUN:
        assert name in {c.text for c in inline_commands()}, f"no longer in the README: {name}"


def test_the_scripts_that_run_the_setup_run_it_as_written() -> None:
    """.ci/run ends in the README's test command, in the virtual environment the README
    makes; .ci/fresh-debian12 takes the set-up, test and install commands from the README."""
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    steps = [line.strip() for line in ci if line.strip() and not line.lstrip().startswith("#")]
    assert steps[-1] == "python -m pytest"
    assert "python -m mypy --strict bgbot" in steps
    assert "pip install -q --disable-pip-version-check -e '.[test]'" in steps
    assert ". .venv/bin/activate" in steps and "python3 -m venv .venv" in steps
    fresh = (ROOT / ".ci" / "fresh-debian12").read_text()
    for which in ("setup", "test", "daemon-install"):
        assert f"/tests/readme_commands.py\" {which}" in fresh
    assert os.access(ROOT / ".ci" / "fresh-debian12", os.X_OK)


# ------------------------------------------------------------------ running them


class Reader:
    """A process's stderr (or stdout), read without blocking: `until` waits for a line."""

    def __init__(self, process: subprocess.Popen[bytes], stream: str = "stderr") -> None:
        pipe = getattr(process, stream)
        assert pipe is not None
        self.fd = pipe.fileno()
        self.text = ""

    def until(self, pattern: str, timeout: float = 90) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if re.search(pattern, self.text, re.M):
                return self.text
            ready, _, _ = select.select([self.fd], [], [], 0.5)
            if ready:
                chunk = os.read(self.fd, 65536)
                if not chunk:
                    break
                self.text += chunk.decode("utf-8", "replace")
        raise AssertionError(f"no {pattern!r} within {timeout} s; got {self.text[-2000:]!r}")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


class Workspace:
    """A reader's machine in miniature: a home of their own (the user's places for the
    daemon, even when the tests run as root), a folder laid out as the clone (config/,
    bench/, tests/), and bgbot of this checkout first on the PATH."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.home = root / "home"
        self.clone = root / "clone"
        self.home.mkdir()
        self.clone.mkdir()
        for name in ("config", "bench", "tests"):
            (self.clone / name).symlink_to(ROOT / name)
        state = self.home / ".local" / "state" / "bgbot"
        self.env = {
            **os.environ,
            "HOME": str(self.home),
            "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '/usr/bin:/bin')}",
            "PYTHONPATH": str(ROOT),
            "XDG_CONFIG_HOME": str(self.home / ".config"),
            "XDG_STATE_HOME": str(self.home / ".local" / "state"),
            "XDG_RUNTIME_DIR": str(root / "run"),
            # the places `bgbot serve` takes for a user (as root it would take /etc, /run...)
            "CONFIGURATION_DIRECTORY": str(self.home / ".config" / "bgbot"),
            "STATE_DIRECTORY": str(state),
            "LOGS_DIRECTORY": str(state / "logs"),
            "RUNTIME_DIRECTORY": str(root / "run" / "bgbot"),
            "COLUMNS": "120",
        }
        for name in ("BGBOT_CONFIG", "BGBOT_SHARED", "CREDENTIALS_DIRECTORY"):
            self.env.pop(name, None)

    def run(self, command: str, *, cwd: Path | None = None, stdin: str = "", code: int = 0,
            timeout: float = 300, env: dict[str, str] | None = None
            ) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(["bash", "-c", command], cwd=cwd or self.clone,
                              env={**self.env, **(env or {})}, input=stdin, text=True,
                              capture_output=True, timeout=timeout)
        assert done.returncode == code, (command, done.returncode, done.stderr[-3000:])
        assert "Traceback" not in done.stderr, (command, done.stderr[-3000:])
        return done

    def start(self, command: str, *, env: dict[str, str] | None = None
              ) -> subprocess.Popen[bytes]:
        return subprocess.Popen(["bash", "-c", f"exec env {command}"], cwd=self.clone,
                                env={**self.env, **(env or {})}, stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)

    def match_file(self, *, games: int = 1) -> str:
        """A .mat file the README's `bgbot play` wrote, with at least ``games`` games."""
        for path in sorted((self.clone / "matches").glob("*.mat")):
            if path.read_text().count(" Game ") >= games:
                return str(path.relative_to(self.clone))
        raise AssertionError(f"no match file of {games} games in matches/")


@pytest.fixture(scope="module")
def workspace() -> Iterator[Workspace]:
    root = Path(tempfile.mkdtemp(prefix="rd-", dir="/tmp"))  # short: ipc:// socket paths
    try:
        yield Workspace(root)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def stop(process: subprocess.Popen[bytes]) -> int:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
    return process.wait(timeout=60)


def section(name: str) -> list[str]:
    return [c.text for c in block_commands() if c.section == name and _covered(c.text) is None]


@needs_bgbot
def test_play_and_analyse(workspace: Workspace) -> None:
    commands = section("Play and analyse") + section("Positions: show, plays, hint") + \
        section("Rollouts") + section("Matches: analyze")
    assert "bgbot play" in commands
    for command in commands:
        if "gnubg" in command and GNUBG is None:
            continue
        text = shrink(command)
        if "FILE.mat" in text:
            text = text.replace("matches/FILE.mat", workspace.match_file(
                games=2 if "--game 2" in text else 1))
        if text.startswith("bgbot play human"):  # at a terminal: the board, then a prompt
            done = workspace.run(text, code=2)
            assert "Position ID" in done.stderr and "the input ended" in done.stderr
        elif text.startswith("bgbot gnubg-player"):
            port = free_port()
            process = workspace.start(text.replace("127.0.0.1:4321", f"127.0.0.1:{port}"))
            try:
                said = Reader(process).until("listening on")
            finally:
                assert stop(process) == 0
            assert f"set player 1 external 127.0.0.1:{port}" in said
        else:
            done = workspace.run(text)
            assert done.stdout.strip() or text.endswith("--quiet"), text
    assert list((workspace.clone / "matches").glob("*.mat"))


@needs_bgbot
def test_duels(workspace: Workspace) -> None:
    commands = section("Duels and regression")
    assert any("--resume" in c for c in commands)
    for command in commands:
        if "gnubg" in command and GNUBG is None:
            continue
        text = shrink(command)
        done = workspace.run(text, timeout=600)
        assert "ppg" in done.stdout or "match wins" in done.stdout, (text, done.stdout)
        if "--report" in text:
            assert (workspace.clone / "out" / "index.html").exists()
        if "--resume" in text:
            assert "pairs played" in done.stdout or "2 pairs" in done.stdout


@needs_bgbot
def test_the_daemon_step_by_step(workspace: Workspace) -> None:
    commands = section("The daemon, step by step")
    assert commands[0] == "bgbot serve"
    daemon = workspace.start("bgbot serve")
    try:
        deadline = time.monotonic() + 60
        while subprocess.run(["bash", "-c", "bgbot ctl status"], env=workspace.env,
                             capture_output=True).returncode != 0:
            assert daemon.poll() is None, daemon.communicate()[1][-2000:]
            assert time.monotonic() < deadline, "the daemon did not answer within 60 s"
            time.sleep(0.3)
        key = workspace.home / ".config" / "bgbot" / "control.key"
        assert key.exists() and key.stat().st_mode & 0o777 == 0o600  # the first start made it
        for command in commands[1:]:
            done = workspace.run(shrink(command), timeout=300)
            if command.startswith("mkdir"):
                assert (workspace.home / ".config" / "bgbot" / "bgbot.toml").exists()
            elif command.startswith("bgbot config check"):
                assert done.stdout.strip().endswith(": OK"), done.stdout
            elif command.startswith("bgbot ctl rollout"):
                assert "rollout of the plays of 31" in done.stdout, done.stdout
            elif "--watch" in command:
                assert re.search(r"wins \d+ point", done.stdout), done.stdout[-2000:]
        workspace.run(INLINE_RUN["bgbot ctl keygen FILE"] or "")  # the inline one, here
    finally:
        assert stop(daemon) == 0


class BgammonStandIn:
    """The bgammon stand-in server on its own event loop in a thread."""

    def __init__(self) -> None:
        from .bgammon_standin import StandInServer

        self.loop = asyncio.new_event_loop()
        self.server = StandInServer()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.port = asyncio.run_coroutine_threadsafe(self.server.start(), self.loop).result(30)

    def close(self) -> None:
        asyncio.run_coroutine_threadsafe(self.server.close(), self.loop).result(30)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


@needs_bgbot
def test_online_servers(workspace: Workspace) -> None:
    """Against the stand-ins (the real servers cannot be reached from here)."""
    commands = section("Online servers")
    password = "s3cret-Pw"
    port = free_port()
    fibs = subprocess.Popen([sys.executable, str(ROOT / "tests" / "fibs_standin.py"), "--port",
                             str(port)], stdout=subprocess.PIPE, text=True,
                            env={**workspace.env})
    bgammon = BgammonStandIn()
    try:
        assert fibs.stdout is not None and "listening" in fibs.stdout.readline()
        config = workspace.home / ".config" / "bgbot" / "bgbot.toml"
        config.parent.mkdir(parents=True, exist_ok=True)
        with config.open("a") as handle:  # the account a reader adds to the template
            handle.write(f'\n[[fibs.accounts]]\nuser = "configbot"\nhost = "127.0.0.1"\n'
                         f'port = {port}\n')
        for command in commands:
            text = command.replace("BGBOT_FIBS_PASSWORD=...", f"BGBOT_FIBS_PASSWORD={password}")
            text = text.replace("BGBOT_BGAMMON_PASSWORD=...", "BGBOT_BGAMMON_PASSWORD=")
            text = text.replace("--port 4321", f"--port {port}")
            if " bgammon " in text:
                text += f" --host 127.0.0.1 --port {bgammon.port}"
            process = workspace.start(text, env={"BGBOT_FIBS_PASSWORD": password})
            try:
                said = Reader(process).until(r": logged in as ")
            finally:
                assert stop(process) == 0
            assert "Traceback" not in said
    finally:
        fibs.terminate()
        fibs.wait(10)
        bgammon.close()


@needs_bgbot
@pytest.mark.parametrize("name", sorted(set(INLINE_RUN) - {"bgbot ctl keygen FILE"}))
def test_the_commands_named_in_the_text(workspace: Workspace, name: str) -> None:
    if name in NEEDS_DATA and not TESTDATA.is_dir():
        pytest.skip(f"needs the reference data {TESTDATA} (set BGBOT_SHARED)")
    if NEEDS_GNUBG.search(name) and GNUBG is None:
        pytest.skip("needs GNU Backgammon")
    here = workspace.root / "measure"  # a folder of its own: its duels are new ones
    here.mkdir(exist_ok=True)
    for link in ("bench", "tests", "config"):
        if not (here / link).exists():
            (here / link).symlink_to(ROOT / link)
    if name == "bgbot analyze FILE --plies 2 --json":
        if not list((here / "matches").glob("*.mat")):
            workspace.run(shrink("bgbot play heuristic:plies=1 gnubg:plies=0 --length 7 "
                                 "--matches 16 --seed 21"), cwd=here)
        (path,) = list((here / "matches").glob("*.mat"))[:1]
        command = shrink(name).replace("FILE", str(path))
    else:
        command = INLINE_RUN[name] or shrink(name)
    workspace.run(command, cwd=here, timeout=600)
