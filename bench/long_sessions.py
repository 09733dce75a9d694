"""Long money sessions: does a game cost the same for the 10,000th game as for the first?

Runs the real command, ``bgbot play heuristic pubeval --money --cubeless --games N`` with the
.mat log on (into a temporary directory), once per N, and prints the wall time, the CPU time
and the peak RSS of each run (from wait4's rusage), then the two figures issue 16 asks for:
time(1,600) / time(400) (constant cost: 4; the target is <= 4.5) and the peak-RSS growth from
400 to the largest N (flat memory: the target is <= 20 MB). The machine's load average is
printed before and after, since a busy machine stretches the wall times (CPU times less so).

Usage: python bench/long_sessions.py                    N = 400, 1600, 10000
       python bench/long_sessions.py --games 400 1600   a shorter check
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def run(games: int, seed: int) -> tuple[float, float, float, int]:
    """(wall seconds, CPU seconds, peak RSS in MB, .mat files) of one session."""
    with tempfile.TemporaryDirectory(prefix="bgbot-long-") as out:
        argv = [sys.executable, "-m", "bgbot.cli", "play", "heuristic", "pubeval", "--money",
                "--cubeless", "--games", str(games), "--seed", str(seed), "--out", out,
                "--quiet"]
        start = time.perf_counter()
        child = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - start
        child.returncode = os.waitstatus_to_exitcode(status)
        if child.returncode != 0:
            assert child.stderr is not None
            raise SystemExit(f"bgbot play failed: {child.stderr.read().decode()}")
        files = len(list(Path(out).glob("*.mat")))
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, files


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, nargs="+", default=[400, 1600, 10000])
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())} "
          f"on {os.cpu_count()} cores")
    results: dict[int, tuple[float, float, float, int]] = {}
    for games in args.games:
        results[games] = run(games, args.seed)
        wall, cpu, rss, files = results[games]
        print(f"  {games:>6} games: {wall:8.1f} s wall, {cpu:8.1f} s CPU, "
              f"{1000 * wall / games:6.1f} ms/game, peak RSS {rss:6.1f} MB, {files} .mat files",
              flush=True)
    print(f"load average after:  {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if 400 in results and 1600 in results:
        wall = results[1600][0] / results[400][0]
        cpu = results[1600][1] / results[400][1]
        print(f"time(1600) / time(400): {wall:.2f} wall, {cpu:.2f} CPU (target <= 4.5)")
    largest = max(results)
    if 400 in results and largest > 400:
        growth = results[largest][2] - results[400][2]
        print(f"peak RSS growth 400 -> {largest}: {growth:+.1f} MB (target <= 20)")


if __name__ == "__main__":
    main()
