"""Mirrored cubeless money games, heuristic vs pubeval: ppg ± 95 % CI (pairs as the unit).

Usage: python bench/strength.py --pairs 2000 --plies 0 --workers 2 --seed 1

Each pair plays the same dice twice with the seats swapped (tools/gameloop.py). Prints points
per game for the heuristic, its 95 % confidence interval over pairs, win %, and the gammon and
backgammon rates each way.
"""

from __future__ import annotations

import argparse
import math
import multiprocessing
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bgbot.players.heuristic import HeuristicPlayer  # noqa: E402
from bgbot.players.pubeval import PubevalPlayer  # noqa: E402
from bgbot.players.random_player import RandomPlayer  # noqa: E402
from tools.gameloop import mirrored_pair  # noqa: E402


def _opponent(name: str, seed: int) -> object:
    if name == "pubeval":
        return PubevalPlayer()
    if name == "random":
        return RandomPlayer(seed)
    if name.startswith("heuristic"):
        return HeuristicPlayer(plies=0)
    raise SystemExit(f"unknown opponent {name}")


def _work(args: tuple[int, int, int, str, str | None]) -> list[list[int]]:
    start, count, plies, opponent, weights = args
    from bgbot.players.evaluator import HeuristicEvaluator, load_weights

    evaluator = HeuristicEvaluator(load_weights(Path(weights))) if weights else None
    me = HeuristicPlayer(plies=plies, evaluator=evaluator)
    other = _opponent(opponent, start)
    out = []
    for seed in range(start, start + count):
        _, _, results = mirrored_pair([me, other], seed)  # type: ignore[list-item]
        out.append(results)
    return out


def run(pairs: int, plies: int, workers: int, seed: int, opponent: str,
        weights: str | None = None) -> dict[str, float]:
    chunk = max(1, min(250, pairs // (workers * 4) or 1))
    jobs = []
    s = seed * 1_000_003
    remaining = pairs
    while remaining > 0:
        n = min(chunk, remaining)
        jobs.append((s, n, plies, opponent, weights))
        s += n
        remaining -= n
    with multiprocessing.Pool(workers) as pool:
        parts = pool.map(_work, jobs)
    results = [r for part in parts for r in part]
    pair_means = [(a + b) / 2.0 for a, b in results]
    games = [x for pair in results for x in pair]
    n = len(pair_means)
    mean = sum(pair_means) / n
    var = sum((x - mean) ** 2 for x in pair_means) / max(1, n - 1)
    ci = 1.96 * math.sqrt(var / n)
    g = len(games)
    return {
        "pairs": n,
        "ppg": mean,
        "ci95": ci,
        "win": sum(x > 0 for x in games) / g,
        "win_gammon": sum(x >= 2 for x in games) / g,
        "win_backgammon": sum(x == 3 for x in games) / g,
        "lose_gammon": sum(x <= -2 for x in games) / g,
        "lose_backgammon": sum(x == -3 for x in games) / g,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=1000)
    parser.add_argument("--plies", type=int, default=0)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--opponent", default="pubeval")
    parser.add_argument("--weights", default=None, help="a weights JSON instead of the shipped one")
    args = parser.parse_args()
    t = time.perf_counter()
    r = run(args.pairs, args.plies, args.workers, args.seed, args.opponent, args.weights)
    dt = time.perf_counter() - t
    print(
        f"heuristic {args.plies}-ply vs {args.opponent}: {2 * r['pairs']:.0f} games "
        f"({r['pairs']:.0f} mirrored pairs, seed {args.seed})\n"
        f"  ppg {r['ppg']:+.3f} ± {r['ci95']:.3f} (95 % CI, pairs as unit)\n"
        f"  wins {100 * r['win']:.1f} %  gammons won {100 * r['win_gammon']:.1f} % "
        f"(bg {100 * r['win_backgammon']:.2f} %)  gammons lost {100 * r['lose_gammon']:.1f} % "
        f"(bg {100 * r['lose_backgammon']:.2f} %)\n"
        f"  {dt:.1f} s wall, {2 * r['pairs'] / dt:.1f} games/s"
    )


if __name__ == "__main__":
    main()
