"""How fast bgbot can ask gnubg: GnubgEngine round trips (external server mode).

Engine half: ``choose_play`` at the given look-ahead over a few hundred positions from gnubg's
legal-moves.jsonl that have a real choice (two or more legal plays), one request at a time, as
a match asks. Prints requests per second and the p50/p99 latency of one request (board line
written, gnubg's answer read and checked against the legal plays), then the same for
``evaluate``. gnubg's start-up is timed separately and not included.

    python bench/gnubg_protocols.py [--positions 400] [--plies 0] [--data PATH]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
import random
import statistics
import time
from pathlib import Path
from typing import Awaitable, Callable

from bgbot.core.context import Context
from bgbot.core.position import Position
from bgbot.engines.gnubg import GnubgEngine

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "testdata" / "legal-moves.jsonl"


def _percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


async def _timed(calls: list[Callable[[], Awaitable[object]]]) -> tuple[float, list[float]]:
    latencies = []
    start = time.perf_counter()
    for call in calls:
        begin = time.perf_counter()
        await call()
        latencies.append(time.perf_counter() - begin)
    return time.perf_counter() - start, latencies


def _report(what: str, total: float, latencies: list[float]) -> None:
    print(f"{what:<22} {len(latencies):5d} requests  {len(latencies) / total:8.0f} req/s  "
          f"p50 {_percentile(latencies, 0.50) * 1e3:6.2f} ms  "
          f"p99 {_percentile(latencies, 0.99) * 1e3:6.2f} ms  "
          f"mean {statistics.fmean(latencies) * 1e3:6.2f} ms")


async def main_async(positions: int, plies: int, data: Path) -> None:
    records = [json.loads(line) for line in data.open()]
    rng = random.Random(1)
    chosen = rng.sample([r for r in records if r["n_plays"] > 1], positions)
    cases = [(Position.from_board(r["board"]), (r["dice"][0], r["dice"][1])) for r in chosen]
    context = Context()
    engine = GnubgEngine(plies=plies)
    try:
        begin = time.perf_counter()
        await engine.start()
        startup = time.perf_counter() - begin
        print(f"gnubg {engine.process.version} started in {startup * 1e3:.0f} ms "
              f"(pid {engine.pid}); {plies}-ply")
        total, latencies = await _timed(
            [lambda p=p, d=d: engine.choose_play(p, d, context) for p, d in cases])
        _report("choose_play", total, latencies)
        total, latencies = await _timed(
            [lambda p=p: engine.evaluate(p, context) for p, _ in cases])
        _report("evaluate (cubeless)", total, latencies)
        print(f"engine stats: {engine.stats}")
    finally:
        await engine.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--positions", type=int, default=400)
    parser.add_argument("--plies", type=int, default=0)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    args = parser.parse_args()
    print(f"python {platform.python_version()} ({platform.python_implementation()}), "
          f"{platform.machine()}")
    asyncio.run(main_async(args.positions, args.plies, args.data))


if __name__ == "__main__":
    main()
