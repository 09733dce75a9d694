"""Test harness: a headless gnubg, driven over stdin, that hosts games against an external player.

gnubg reads its next command only when automatic play stops: at the end of a match (or of a
game, with ``set automatic game off``) or when play stalls (after the original doubler takes a
beaver, or after an ``Error:`` reply). `GnubgHost.sync` sends ``show bgbotsyncN`` and waits for
gnubg's "Unknown keyword `bgbotsyncN'": when that line appears gnubg is waiting for a command,
and everything printed before it is the output of the play so far. `GnubgHost.play_until`
repeats sync + ``play`` until the output says the match (or game) is over, counting the stalls.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from pathlib import Path
from typing import Callable, Sequence

MATCH_OVER = re.compile(r"\S+ has won the match\.")
GAME_OVER = re.compile(r"wins (?:a single game|a gammon|a backgammon) and \d+ points?\.")
SCORE = re.compile(r"The score \(after (\d+) games?\) is: (\S+) (\d+), (\S+) (\d+)")


class GnubgError(RuntimeError):
    pass


class GnubgHost:
    """One gnubg process: `start`, `commands`, `play_until`, `quit`."""

    def __init__(self, binary: str, workdir: Path) -> None:
        self.binary = binary
        self.workdir = Path(workdir)
        self.process: asyncio.subprocess.Process | None = None
        self.output = ""
        self._seen = 0
        self._changed = asyncio.Event()
        self._reader: asyncio.Task[None] | None = None
        self._syncs = 0

    async def start(self) -> None:
        prefs = self.workdir / "gnubg-prefs"
        prefs.mkdir(parents=True, exist_ok=True)
        self.process = await asyncio.create_subprocess_exec(
            self.binary, "-t", "-q", "-r", "-s", str(prefs),
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT, cwd=self.workdir,
        )
        self._reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        assert self.process is not None and self.process.stdout is not None
        while True:
            chunk = await self.process.stdout.read(65536)
            if not chunk:
                self._changed.set()
                return
            self.output += chunk.decode("utf-8", "replace")
            self._changed.set()

    async def commands(self, lines: Sequence[str]) -> None:
        assert self.process is not None and self.process.stdin is not None
        for line in lines:
            self.process.stdin.write(line.encode() + b"\n")
        await self.process.stdin.drain()

    async def sync(self, timeout: float = 60.0) -> str:
        """Wait until gnubg reads a command; returns the output since the previous sync."""
        self._syncs += 1
        marker = f"Unknown keyword `bgbotsync{self._syncs}'"
        await self.commands([f"show bgbotsync{self._syncs}"])
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while marker not in self.output:
            assert self.process is not None
            if self.process.returncode is not None or (self._reader and self._reader.done()):
                raise GnubgError(f"gnubg exited ({self.process.returncode}); output tail:\n"
                                 f"{self.output[-3000:]}")
            self._changed.clear()
            remaining = deadline - loop.time()
            if remaining <= 0:
                raise GnubgError(f"gnubg did not answer within {timeout} s; output tail:\n"
                                 f"{self.output[-3000:]}")
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._changed.wait(), min(remaining, 1.0))
        end = self.output.index(marker)
        text = self.output[self._seen:end]
        self._seen = end + len(marker)
        return text

    async def play_until(self, done: Callable[[str], bool], *, max_stalls: int = 30,
                         timeout: float = 120.0) -> tuple[str, int]:
        """Sync, and send ``play`` while ``done(output)`` is false; (all output, stalls)."""
        text = await self.sync(timeout)
        stalls = 0
        while not done(text):
            stalls += 1
            if stalls > max_stalls:
                raise GnubgError(f"gnubg stalled {max_stalls} times; output tail:\n"
                                 f"{text[-3000:]}")
            await self.commands(["play"])
            text += await self.sync(timeout)
        return text, stalls

    async def quit(self) -> int:
        if self.process is None:
            return 0
        with contextlib.suppress(Exception):
            await self.commands(["quit", "y", "y"])
            if self.process.stdin is not None:
                self.process.stdin.close()
        try:
            code = await asyncio.wait_for(self.process.wait(), 10.0)
        except asyncio.TimeoutError:
            self.process.kill()
            code = await self.process.wait()
        if self._reader is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._reader, 5.0)
        return code


def match_script(*, seed: int, length: int, external: str, gnubg_plies: int = 0,
                 names: tuple[str, str] = ("gnubg", "bgbot"), external_seat: int = 1,
                 extra: Sequence[str] = ()) -> list[str]:
    """The set-up commands for gnubg (0-ply) against an external player in ``external_seat``."""
    gnubg_seat = 1 - external_seat
    lines = [
        "set rng mersenne",
        f"set seed {seed}",
        "set display off",
        f"set defaultnames {names[0]} {names[1]}",
        f"set player {gnubg_seat} gnubg",
        f"set player {gnubg_seat} chequerplay evaluation plies {gnubg_plies}",
        f"set player {gnubg_seat} cubedecision evaluation plies {gnubg_plies}",
        *extra,
        f"set player {external_seat} external {external}",
    ]
    return lines
