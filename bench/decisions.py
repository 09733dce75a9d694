"""Chequer-play decision latency of the heuristic player at 0, 1 and 2 plies, on one core.

Collects the real decisions (two or more legal plays) of a few seeded self-play games, then
times ``HeuristicPlayer.choose_play`` on each at every depth asked and prints p50 / p90 / p99
and the mean in milliseconds, with the C extension (or pure Python, ``--pure``). Issue 14
asks for 1-ply p50 <= 15 ms and 2-ply p50 <= 400 ms.

    python bench/decisions.py [--games 6] [--plies 0,1,2] [--eval net|linear] [--weights PATH]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", type=int, default=6, help="self-play games to take decisions from")
    parser.add_argument("--limit", type=int, default=120, help="decisions timed at most per depth")
    parser.add_argument("--plies", default="0,1,2")
    parser.add_argument("--eval", choices=("net", "linear"), default=None)
    parser.add_argument("--weights", type=Path, default=None, help="a network weights file")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--pure", action="store_true", help="time the pure-Python player")
    args = parser.parse_args()
    if args.pure:
        os.environ["BGBOT_PURE_PYTHON"] = "1"
    from bgbot.core.position import Position
    from bgbot.players.base import Context
    from bgbot.players.evaluator import HeuristicEvaluator
    from bgbot.players.heuristic import HeuristicPlayer
    from bgbot.players.network import WeightsFile
    from tools.gameloop import play_game

    network = WeightsFile.read(args.weights) if args.weights else None
    evaluator = HeuristicEvaluator(eval=args.eval or ("net" if network else None),
                                   network=network)
    record: list[tuple[Position, int]] = []
    player0 = HeuristicPlayer(evaluator=evaluator)
    for game in range(args.games):
        play_game([player0, player0], args.seed * 7919 + game, game % 2, record=record)
    rng = random.Random(args.seed)
    decisions = []
    for position, _ in record:
        dice = (rng.randint(1, 6), rng.randint(1, 6))
        if len(position.legal_plays(dice)) >= 2:
            decisions.append((position, dice))
    rng.shuffle(decisions)
    print(f"{len(decisions)} decisions from {args.games} self-play games; evaluation "
          f"{evaluator.eval}, {'C extension' if evaluator.compiled else 'pure Python'}")
    for plies in (int(p) for p in args.plies.split(",")):
        player = HeuristicPlayer(plies=plies, evaluator=evaluator)
        times = []
        for position, dice in decisions[:args.limit]:
            start = time.process_time()
            player.choose_play(position, dice, Context())
            times.append(1000.0 * (time.process_time() - start))
        times.sort()

        def quantile(q: float) -> float:
            return times[min(len(times) - 1, int(q * len(times)))]

        print(f"  {plies}-ply: {len(times)} decisions, p50 {quantile(0.5):.2f} ms, "
              f"p90 {quantile(0.9):.2f} ms, p99 {quantile(0.99):.2f} ms, "
              f"mean {statistics.fmean(times):.2f} ms")


if __name__ == "__main__":
    main()
