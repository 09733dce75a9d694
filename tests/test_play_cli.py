"""`bgbot play` as a process: signals, stdout, file modes, bad options, watching a game.

Every test runs the real command in a child process (signals and stdout are about a process);
`slow` is the test agent of `tests/slow_agent.py`, named in ``$BGBOT_AGENT_MODULES``.
"""

from __future__ import annotations

import json
import os
import re
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from bgbot.core.game import Doubled, Dropped, Moved, Taken
from bgbot.formats.mat import parse_match

from .plugins import ROOT

FAST = ("random:seed=1", "random:seed=2")


def command(*args: str) -> list[str]:
    return [sys.executable, "-m", "bgbot.cli", "play", *args]


def environment() -> dict[str, str]:
    path = os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return {**os.environ, "PYTHONPATH": path, "BGBOT_AGENT_MODULES": "tests.slow_agent"}


def run(*args: str, umask: int | None = None, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command(*args), capture_output=True, text=True, timeout=timeout,
                          env=environment(), stdin=subprocess.DEVNULL,
                          preexec_fn=(lambda: os.umask(umask)) if umask is not None else None)


def start(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(command(*args), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=environment(), stdin=subprocess.DEVNULL)


def wait_for(check: Any, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting")
        time.sleep(0.05)


def mat_games(directory: Path) -> int:
    """Games in every .mat file of ``directory``, each read whole by our reader."""
    return sum(len(parse_match(path.read_text()).games) for path in directory.glob("*.mat"))


def leftovers(directory: Path) -> list[Path]:
    return [p for p in directory.iterdir() if p.suffix != ".mat"]


# ============================================================================ stdout


def test_json_puts_one_json_object_on_stdout_and_nothing_else(tmp_path: Path) -> None:
    done = run(*FAST, "--money", "--cubeless", "--games", "4", "--out", str(tmp_path), "--json")
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)  # the whole of stdout
    assert summary["games"] == 4 and summary["mode"] == "cubeless money"
    assert summary["rules"]["cube"] is False
    assert "games won" in done.stderr  # the table went to stderr


def test_a_cubeful_match_says_what_it_is(tmp_path: Path) -> None:
    done = run(*FAST, "--length", "3", "--out", str(tmp_path), "--json", "--quiet")
    assert json.loads(done.stdout)["mode"] == "3-point match"
    assert "over 1 games" not in run(*FAST, "--length", "1", "--out", str(tmp_path)).stdout


# ============================================================================ signals


def test_ctrl_c_stops_after_the_game_in_play_and_prints_what_was_played(tmp_path: Path) -> None:
    log = tmp_path / "decisions.log"
    child = start("slow:seconds=0.02,log=" + str(log), "random:seed=2", "--money", "--cubeless",
                  "--games", "50", "--out", str(tmp_path / "m"), "--json")
    wait_for(lambda: log.exists() and log.read_text().count("begin") >= 3)
    child.send_signal(signal.SIGINT)
    out, err = child.communicate(timeout=300)
    assert child.returncode == 130, err
    summary = json.loads(out)
    assert summary["games"] == 1 and summary["stopped"] == "Ctrl-C"  # the game in play
    assert mat_games(tmp_path / "m") == 1
    assert err.count("interrupted") == 1 and "Traceback" not in err


def test_a_second_ctrl_c_stops_at_once(tmp_path: Path) -> None:
    log = tmp_path / "decisions.log"
    child = start("slow:seconds=0.3,log=" + str(log), "slow:seconds=0.3", "--length", "1",
                  "--out", str(tmp_path / "m"), "--json")
    wait_for(lambda: log.exists() and "begin" in log.read_text())
    child.send_signal(signal.SIGINT)
    time.sleep(0.2)
    child.send_signal(signal.SIGINT)
    asked = time.monotonic()
    out, err = child.communicate(timeout=300)
    # a game of 0.3 s decisions takes many seconds; stopping at once takes one decision
    assert time.monotonic() - asked < 5.0
    assert child.returncode == 130, err
    assert json.loads(out)["games"] == 0
    assert mat_games(tmp_path / "m") == 0 and "Traceback" not in err


def test_sigterm_during_the_writes_leaves_whole_files_and_no_litter(tmp_path: Path) -> None:
    out_dir = tmp_path / "m"
    child = start(*FAST, "--money", "--games", "100000", "--out", str(out_dir), "--json")
    wait_for(lambda: out_dir.exists() and any(out_dir.glob("*-part003.mat")))
    child.send_signal(signal.SIGTERM)  # a file is being written every few milliseconds
    out, err = child.communicate(timeout=300)
    assert child.returncode == 143, err
    summary = json.loads(out)
    assert summary["stopped"] == "terminated"
    assert mat_games(out_dir) == summary["games"] > 200
    assert leftovers(out_dir) == []


def test_sigkill_never_leaves_a_torn_file(tmp_path: Path) -> None:
    out_dir = tmp_path / "m"
    for seed in range(3):
        child = start(*FAST, "--money", "--games", "100000", "--seed", str(seed), "--out",
                      str(out_dir), "--quiet")
        wait_for(lambda: out_dir.exists() and any(out_dir.glob(f"*seed{seed}-001-part002.mat")))
        child.kill()
        child.communicate(timeout=60)
    mats = list(out_dir.glob("*.mat"))
    assert len(mats) >= 6
    for path in mats:
        parse_match(path.read_text())  # whole: the reader accepts every file


# ============================================================================ files


@pytest.mark.parametrize("umask, mode", [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_log_files_get_the_umasks_mode(tmp_path: Path, umask: int, mode: int) -> None:
    done = run(*FAST, "--length", "1", "--out", str(tmp_path / "m"), umask=umask)
    assert done.returncode == 0, done.stderr
    (path,) = (tmp_path / "m").glob("*.mat")
    assert stat.S_IMODE(path.stat().st_mode) == mode


def test_chouette_files_get_the_umasks_mode(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "bgbot.cli", "chouette", "random", "random",
                           "random", "--games", "1", "--out", str(tmp_path)],
                          capture_output=True, text=True, timeout=300,
                          preexec_fn=lambda: os.umask(0o022))
    assert done.returncode == 0, done.stderr
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert {p.suffix for p in files} >= {".mat", ".json"}
    assert {stat.S_IMODE(p.stat().st_mode) for p in files} == {0o644}


@pytest.mark.parametrize("where, reason", [("file", "is not a directory"),
                                           ("/proc/nope", "cannot write there")])
def test_an_unusable_out_is_refused_before_playing(tmp_path: Path, where: str,
                                                   reason: str) -> None:
    target = tmp_path / "a-file" if where == "file" else Path(where)
    if where == "file":
        target.write_text("not a directory")
    done = run("slow:seconds=5", "random", "--out", str(target), timeout=30)
    assert done.returncode == 2
    assert done.stderr.strip() == f"bgbot play: --out {target}: {reason}" + (
        " (No such file or directory)" if where != "file" else "")
    assert done.stdout == ""


@pytest.fixture
def small_disk(tmp_path: Path) -> Any:
    """A 64 KiB tmpfs (root only: skipped where mounting is not allowed)."""
    mount = tmp_path / "disk"
    mount.mkdir()
    made = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mount)],
                          capture_output=True, text=True)
    if made.returncode != 0:
        pytest.skip(f"cannot mount a small file system here: {made.stderr.strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def test_a_full_disk_ends_the_session_with_the_files_name(small_disk: Path) -> None:
    done = run(*FAST, "--money", "--games", "100000", "--out", str(small_disk), "--json")
    assert done.returncode == 2
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith(f"bgbot play: cannot write the match file {small_disk}/")
    assert last.endswith(": No space left on device")
    assert "Traceback" not in done.stderr
    summary = json.loads(done.stdout)
    assert 0 < summary["games"] < 100000


def test_a_read_only_folder_is_refused_before_playing(small_disk: Path) -> None:
    subprocess.run(["mount", "-o", "remount,ro", str(small_disk)], check=True)
    done = run(*FAST, "--out", str(small_disk / "logs"), timeout=60)
    assert done.returncode == 2
    assert done.stderr.strip().startswith(f"bgbot play: --out {small_disk}/logs: cannot write")
    assert "Read-only file system" in done.stderr


# ============================================================================ options


@pytest.mark.parametrize("args, message", [
    (("--games", "50"), "--games counts money games: add --money"),
    (("--jacoby",), "--jacoby and --beavers are money rules"),
    (("--money", "--matches", "3"), "--matches counts matches"),
    (("--matches", "3", "--mirror"), "--matches must be even (got 3: use 2 or 4)"),
    (("--money", "--games", "5", "--mirror"), "--games must be even (got 5: use 4 or 6)"),
    (("--money", "--cubeless", "--beavers"), "need the cube"),
    (("--delay", "1"), "add --watch"),
    (("--watch", "--json"), "choose one"),
])
def test_options_that_would_be_ignored_or_rounded_are_refused(args: tuple[str, ...],
                                                               message: str) -> None:
    done = run(*FAST, *args, timeout=60)
    assert done.returncode == 2 and message in done.stderr, done.stderr


def test_mirrored_counts_are_what_is_played(tmp_path: Path) -> None:
    done = run(*FAST, "--matches", "4", "--mirror", "--length", "1", "--out", str(tmp_path),
               "--json", "--quiet")
    assert json.loads(done.stdout)["matches"] == 4


# ============================================================================ watching


def test_watch_draws_the_board_after_every_move(tmp_path: Path) -> None:
    done = run(*FAST, "--length", "3", "--watch", "--out", str(tmp_path))
    assert done.returncode == 0, done.stderr
    (path,) = tmp_path.glob("*.mat")
    record = parse_match(path.read_text())
    moves = sum(isinstance(a, Moved) for g in record.games for a in g.actions)
    frames = done.stdout.count("; Position ID ")
    assert frames == moves > 10
    assert done.stdout.count(" rolls ") == moves


def test_a_reader_that_stops_early_gets_no_traceback(tmp_path: Path) -> None:
    done = subprocess.run(" ".join([*command(*FAST, "--money", "--games", "20", "--watch",
                                             "--out", str(tmp_path))]) + " | head -3",
                          shell=True, capture_output=True, text=True, timeout=300,
                          env=environment())
    assert len(done.stdout.splitlines()) == 3
    assert "Traceback" not in done.stderr and "BrokenPipe" not in done.stderr


def _on_a_terminal(argv: list[str], cwd: Path, timeout: float = 300) -> tuple[int, str]:
    """Run ``argv`` on a pseudo-terminal (stdout, stderr and stdin), as a person would see it:
    (exit status, everything it wrote)."""
    import pty
    import select

    master, slave = pty.openpty()
    process = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, cwd=cwd,
                               env={**environment(), "COLUMNS": "120", "TERM": "dumb"},
                               close_fds=True)
    os.close(slave)
    chunks: list[bytes] = []
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.5)
            if ready:
                try:
                    chunk = os.read(master, 65536)
                except OSError:  # the child closed the terminal
                    break
                if not chunk:
                    break
                chunks.append(chunk)
            elif process.poll() is not None:
                break
        code = process.wait(timeout=60)
    finally:
        os.close(master)
    return code, b"".join(chunks).decode("utf-8", "replace").replace("\r\n", "\n")


def test_watch_tells_the_cube_and_puts_the_score_under_every_board(tmp_path: Path) -> None:
    """Doubles, takes and drops were never shown, and the boards had no score or cube."""
    a, b = "random:seed=1,cube=on", "random:seed=2,cube=on"
    code, text = _on_a_terminal(command(a, b, "--length", "5", "--watch", "--out",
                                        str(tmp_path)), tmp_path)
    assert code == 0, text[-2000:]
    (path,) = tmp_path.glob("*.mat")
    record = parse_match(path.read_text())
    actions = [(g.number, x) for g in record.games for x in g.actions]
    lines = text.splitlines()
    for kind, verb in ((Doubled, "doubles to"), (Taken, "takes"), (Dropped, "drops")):
        told = [line for line in lines if f" {verb}" in line and line.startswith("game ")]
        made = [(n, x) for n, x in actions if isinstance(x, kind)]
        assert len(told) == len(made) > 0, kind
        for line, (number, action) in zip(told, made):
            assert line.startswith(f"game {number}: {(a, b)[action.seat]} {verb}")
    # under every board: the score and the cube, as they are after the move
    frames = [i for i, line in enumerate(lines) if "; Position ID " in line]
    assert len(frames) == sum(isinstance(x, Moved) for _, x in actions)
    for i in frames:
        assert re.fullmatch(rf" 5-point match, score {re.escape(a)} \d+, {re.escape(b)} \d+"
                            r"(, Crawford game)?; (cube \d+, (centred|owned by .+)|no cube "
                            r"\(Crawford game\))", lines[i + 1]), lines[i + 1]
    assert any("; cube 2, owned by" in lines[i + 1] for i in frames)
    ends = [line for line in lines if re.match(r"game \d+: .+ wins \d+ points? \(", line)]
    assert len(ends) == len(record.games)
    assert ends[-1].endswith(f"5-point match, score {a} {record.final_score[0]}, {b} "
                             f"{record.final_score[1]}")
