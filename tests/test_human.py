"""The ``human`` agent: a real `bgbot play human ...` process on a pseudo-terminal, answered by
a driver that reads what a person would see (the board's Position ID, the dice, the prompts)
and types what a person would type; and the same process with piped stdin."""

from __future__ import annotations

import os
import pty
import re
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bgbot import Position
from bgbot.formats.mat import parse_match
from bgbot.core.game import Doubled, Dropped, Moved, Taken

PROMPT = re.compile(r"(your move \((\d)(\d)\): |roll or double\? \[[^\]]*\]: |"
                    r"take, drop(?: or beaver)?\? |accept\? \[y/n\]: )$")


def bgbot(*args: str) -> list[str]:
    return [sys.executable, "-m", "bgbot.cli", *args]


class Terminal:
    """A child process on a pty: everything it writes, and typing into it."""

    def __init__(self, argv: list[str], cwd: Path) -> None:
        master, slave = pty.openpty()
        self.master = master
        env = {**os.environ, "COLUMNS": "100", "TERM": "dumb"}
        self.process = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave,
                                        cwd=cwd, env=env, close_fds=True)
        os.close(slave)
        self.text = ""

    def read_until_prompt(self, timeout: float = 60.0) -> re.Match[str] | None:
        """Read until the output ends in a prompt (returned) or the process is gone (None)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = PROMPT.search(self.text)
            if found:
                return found
            ready, _, _ = select.select([self.master], [], [], 0.5)
            if ready:
                try:
                    chunk = os.read(self.master, 65536)
                except OSError:  # the child closed the terminal
                    return None
                if not chunk:
                    return None
                self.text += chunk.decode("utf-8", "replace").replace("\r\n", "\n")
            elif self.process.poll() is not None:
                return None
        raise AssertionError(f"no prompt within {timeout} s; output ends {self.text[-800:]!r}")

    def type(self, line: str) -> None:
        self.text = ""
        os.write(self.master, (line + "\n").encode())

    def close(self) -> int:
        try:
            return self.process.wait(timeout=60)
        finally:
            os.close(self.master)


def test_a_person_plays_a_match_at_the_terminal(tmp_path: Path) -> None:
    terminal = Terminal(bgbot("play", "human", "random:seed=4,cube=on", "--length",
                              "3", "--seed", "2", "--out", str(tmp_path / "logs")), tmp_path)
    typed_moves = 0
    refused = 0
    transcript = ""
    try:
        while True:
            prompt = terminal.read_until_prompt()
            transcript += terminal.text
            if prompt is None:
                break
            if prompt.group(2):  # a move: the board above shows the Position ID
                position = Position.from_position_id(
                    re.findall(r"Position ID (\S+)", terminal.text)[-1])
                dice = (int(prompt.group(2)), int(prompt.group(3)))
                plays = position.legal_plays(dice)
                assert len(plays) > 1  # a forced play is made without asking
                if not refused:  # a move that breaks the rules is refused, with the reason
                    terminal.type("25/1")
                    again = terminal.read_until_prompt()
                    assert again is not None and again.group(2)
                    assert "illegal move '25/1'" in terminal.text
                    refused += 1
                text = str(plays[typed_moves % len(plays)])
                if typed_moves % 2:  # FIBS notation as well as gnubg's
                    text = text.replace("/", "-")
                terminal.type(text)
                typed_moves += 1
            elif prompt.group(0).startswith("roll or double"):
                terminal.type("double" if "cube 1," in terminal.text else "")
            elif prompt.group(0).startswith("take"):
                terminal.type("take")
            else:
                terminal.type("n")
    finally:
        code = terminal.close()
    assert code == 0, transcript[-2000:]
    assert refused == 1 and typed_moves > 3
    assert "Traceback" not in transcript
    (mat,) = (tmp_path / "logs").iterdir()
    record = parse_match(mat.read_text())
    assert record.names[0] == "human"
    assert max(record.final_score) >= 3
    human_moves = [a for g in record.games for a in g.actions
                   if isinstance(a, Moved) and a.seat == 0
                   and len(a.before.legal_plays(a.dice)) > 1]
    assert len(human_moves) == typed_moves
    assert "games won" in transcript  # the table at the end
    # the other side's turns are told, not silent: every roll and play, every cube action
    bot = "random:seed=4,cube=on"
    actions = [a for g in record.games for a in g.actions]
    told = re.findall(rf"^game \d+: {re.escape(bot)} rolls (\d\d) and (?:plays (.+)|cannot "
                      r"move)$", transcript, re.M)
    played = [a for a in actions if isinstance(a, Moved) and a.seat == 1]
    assert [(f"{max(a.dice)}{min(a.dice)}", str(a.play)) for a in played] == told
    for kind, verb in ((Doubled, "doubles to"), (Taken, "takes"), (Dropped, "drops")):
        count = sum(isinstance(a, kind) and a.seat == 1 for a in actions)
        assert len(re.findall(rf"^game \d+: {re.escape(bot)} {verb}", transcript, re.M)) == count
    assert any(isinstance(a, (Taken, Dropped)) and a.seat == 1 for a in actions)
    # every game's result with the score after it, and the match's
    ends = re.findall(r"^game (\d+): (\S+) wins (\d+) points? \((.+)\); 3-point match, score "
                      rf"human (\d+), {re.escape(bot)} (\d+)$", transcript, re.M)
    assert len(ends) == len(record.games)
    assert [int(n) for n, *_ in ends] == list(range(1, len(record.games) + 1))
    assert tuple(int(x) for x in ends[-1][4:]) == record.final_score
    assert re.search(rf"^({re.escape(bot)}|human) wins the 3-point match \d+-\d+$", transcript,
                     re.M)


def test_the_end_of_the_input_ends_the_session_with_one_clear_line(tmp_path: Path) -> None:
    done = subprocess.run(bgbot("play", "human", "pubeval", "--money", "--cubeless", "--games",
                                "2", "--out", str(tmp_path)), input="plays\n", capture_output=True,
                          text=True, timeout=120, cwd=tmp_path)
    assert done.returncode == 2
    assert "legal plays: " in done.stderr
    assert done.stderr.strip().splitlines()[-1].startswith(
        "bgbot play: human: the input ended")
    assert "Traceback" not in done.stderr and done.stdout == ""


def test_human_is_a_registered_agent_kind() -> None:
    listed = subprocess.run(bgbot("play", "--help"), capture_output=True, text=True, timeout=60)
    assert re.search(r"^\s+human\s+you, at the terminal", listed.stdout, re.M)


@pytest.mark.parametrize("spec", ["human:nosuch=1"])
def test_a_bad_human_option_is_refused(spec: str, tmp_path: Path) -> None:
    done = subprocess.run(bgbot("play", spec, "pubeval", "--out", str(tmp_path)),
                          capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert done.returncode == 2 and "nosuch" in done.stderr


def test_a_resignation_and_its_answer_are_told(tmp_path: Path) -> None:
    """The person resigns a backgammon at the first chance; the bot's answer and the game's
    result (with the points so far) appear on the terminal."""
    terminal = Terminal(bgbot("play", "human", "heuristic", "--money", "--games", "1",
                              "--seed", "3", "--out", str(tmp_path / "logs")), tmp_path)
    transcript = ""
    resigned = False
    try:
        while True:
            prompt = terminal.read_until_prompt()
            transcript += terminal.text
            if prompt is None:
                break
            if prompt.group(2):
                if not resigned:
                    terminal.type("resign 3")  # at a move: offered before the next roll
                    assert terminal.read_until_prompt() is not None
                    transcript += terminal.text
                    resigned = True
                position = Position.from_position_id(
                    re.findall(r"Position ID (\S+)", transcript)[-1])
                dice = (int(prompt.group(2)), int(prompt.group(3)))
                terminal.type(str(position.legal_plays(dice)[0]))
            elif prompt.group(0).startswith("roll or double"):
                terminal.type("" if resigned else "resign 3")
                resigned = True
            else:
                terminal.type("take" if prompt.group(0).startswith("take") else "n")
    finally:
        code = terminal.close()
    assert code == 0, transcript[-2000:]
    assert "game 1: human offers to resign a backgammon" in transcript
    assert "game 1: heuristic accepts the resignation" in transcript
    assert ("game 1: heuristic wins 3 points (human resigned a backgammon); money, points so "
            "far human 0, heuristic 3") in transcript
