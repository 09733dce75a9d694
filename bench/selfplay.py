"""Heuristic self-play speed at 0-ply on one core: prints games/s.

Usage: python bench/selfplay.py --games 200 --seed 1
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bgbot.core.position import Position  # noqa: E402
from bgbot.players.heuristic import HeuristicPlayer  # noqa: E402
from tools.gameloop import play_game  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--plies", type=int, default=0)
    args = parser.parse_args()
    player = HeuristicPlayer(plies=args.plies)
    player.evaluator.evaluate(Position.initial())  # build tables, load the bear-off DB
    plies = 0
    t, cpu = time.perf_counter(), time.process_time()
    for i in range(args.games):
        plies += play_game([player, player], args.seed * 1_000_003 + i, i % 2)[2]
    dt, dcpu = time.perf_counter() - t, time.process_time() - cpu
    print(
        f"heuristic {args.plies}-ply self-play: {args.games} games, {plies / args.games:.1f} "
        f"plies/game\n  CPU time {dcpu:.2f} s = {args.games / dcpu:.1f} games/s per core "
        f"({1e3 * dcpu / plies:.3f} ms/ply)\n  wall time {dt:.2f} s = {args.games / dt:.1f} "
        "games/s (lower when other processes share the core)"
    )


if __name__ == "__main__":
    main()
