"""Replay the UBGI conformance exchanges (exchanges.txt) against an engine.

In tests: `run_exchanges(send)` with an async ``send(lines) -> replies`` callable. From the shell,
against any UBGI engine (ours or a third party's)::

    python -m tests.ubgi_conformance.replay -- python -m bgbot.cli ubgi
    python -m tests.ubgi_conformance.replay -- /path/to/engine

It prints one PASS/FAIL line per exchange and exits 1 if any failed.
"""

from __future__ import annotations

import asyncio
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Awaitable, Callable

EXCHANGES = Path(__file__).with_name("exchanges.txt")
Send = Callable[[list[str]], Awaitable[list[str]]]
"""Send lines and then ``isready``; return the reply lines before that last ``readyok``."""


@dataclass
class Exchange:
    name: str
    sent: list[str] = field(default_factory=list)
    expected: list[tuple[str, str]] = field(default_factory=list)
    """(kind, text): kind ``<`` exact, ``~`` one regex line, ``*`` any number of regex lines."""


def load(path: Path = EXCHANGES) -> list[Exchange]:
    """Read the exchanges file (format described at its top)."""
    exchanges: list[Exchange] = []
    for raw in path.read_text(encoding="utf-8").splitlines():
        if raw.startswith("== "):
            exchanges.append(Exchange(raw[3:].strip()))
        elif raw[:2] in ("> ", "< ", "~ ", "* ") or raw in (">", "<"):
            current = exchanges[-1]
            kind, text = raw[0], raw[2:]
            if kind == ">":
                current.sent.append(text)
            else:
                current.expected.append((kind, text))
    return exchanges


def check(exchange: Exchange, lines: list[str]) -> str | None:
    """None when ``lines`` are what the exchange expects, else why not."""
    i = 0
    for kind, text in exchange.expected:
        if kind == "*":
            while i < len(lines) and re.fullmatch(text, lines[i]):
                i += 1
            continue
        if i >= len(lines):
            return f"missing a line for {kind} {text!r}; got {lines!r}"
        ok = lines[i] == text if kind == "<" else re.fullmatch(text, lines[i]) is not None
        if not ok:
            return f"line {lines[i]!r} does not match {kind} {text!r}; got {lines!r}"
        i += 1
    if i < len(lines):
        return f"unexpected lines {lines[i:]!r}"
    return None


async def run_exchanges(send: Send, exchanges: list[Exchange] | None = None) -> dict[str, str | None]:
    """Every exchange's result, in order: None = pass, else the failure."""
    results: dict[str, str | None] = {}
    for exchange in exchanges if exchanges is not None else load():
        results[exchange.name] = check(exchange, await send(exchange.sent))
    return results


async def _subprocess_sender(command: list[str], timeout: float) -> tuple[Send, Callable[[], Awaitable[int]]]:
    process = await asyncio.create_subprocess_exec(
        *command, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE)
    assert process.stdin is not None and process.stdout is not None
    stdin, stdout = process.stdin, process.stdout

    async def send(lines: list[str]) -> list[str]:
        stdin.write("".join(f"{line}\n" for line in [*lines, "isready"]).encode())
        await stdin.drain()
        replies: list[str] = []
        pending = lines.count("isready")  # the exchange's own readyok lines are replies
        while True:
            raw = await asyncio.wait_for(stdout.readline(), timeout)
            if not raw:
                replies.append("<end of output>")
                return replies
            line = raw.decode("utf-8", "replace").strip()
            if line == "readyok" and not pending:
                return replies
            pending -= line == "readyok"
            replies.append(line)

    async def finish() -> int:
        stdin.write(b"quit\n")
        await stdin.drain()
        return await asyncio.wait_for(process.wait(), timeout)

    return send, finish


async def replay_command(command: list[str], timeout: float = 30.0) -> tuple[dict[str, str | None], int]:
    """Run every exchange against the engine ``command``; (results, its exit status after quit)."""
    send, finish = await _subprocess_sender(command, timeout)
    results = await run_exchanges(send)
    return results, await finish()


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args[:1] == ["--"]:
        args = args[1:]
    if not args:
        print("usage: python -m tests.ubgi_conformance.replay -- ENGINE [ARGS...]", file=sys.stderr)
        return 2
    results, status = asyncio.run(replay_command(args))
    for name, failure in results.items():
        print(f"{'PASS' if failure is None else 'FAIL'}  {name}" + (f"\n      {failure}" if failure else ""))
    failed = sum(failure is not None for failure in results.values())
    print(f"{len(results) - failed} passed, {failed} failed (engine exit status {status} after quit)")
    return 1 if failed or status else 0


if __name__ == "__main__":
    raise SystemExit(main())
