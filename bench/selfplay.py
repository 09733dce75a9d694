"""Heuristic self-play speed on one core (0-ply unless ``--plies 1``): prints games/s.

Plays the same seeds twice, with the C accelerator (bgbot.players._contact and
bgbot.core._movegen, when built: the evaluation, the move generator and the look-ahead) and
with the pure-Python player, and prints both speeds and their ratio. The games part ways where
the two differ (float rounding breaks near-ties differently; the pure-Python linear player
prefilters large candidate lists with pubeval). ``--mode`` runs one of them only; ``--eval``
and ``--weights`` pick the evaluation (default: the shipped network, else the linear heads).
Issue 14 asks for >= 60 games/s per core at 0-ply.

Usage: python bench/selfplay.py --games 200 --seed 1
       python bench/selfplay.py --plies 1 --games 20 --seed 1
       python bench/selfplay.py --eval linear --mode compiled
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bgbot.core.position import Position  # noqa: E402
from bgbot.players.evaluator import HeuristicEvaluator, extension_status  # noqa: E402
from bgbot.players.heuristic import HeuristicPlayer  # noqa: E402
from bgbot.players.network import WeightsFile  # noqa: E402
from tools.gameloop import play_game  # noqa: E402


def run(args: argparse.Namespace, compiled: bool) -> float:
    """Play the games with one evaluator; print and return CPU games/s."""
    network = WeightsFile.read(args.weights) if args.weights else None
    evaluator = HeuristicEvaluator(compiled=compiled, network=network,
                                   eval=args.eval or ("net" if network else None))
    player = HeuristicPlayer(plies=args.plies, evaluator=evaluator)
    evaluator.evaluate(Position.initial())  # build tables, load the bear-off DB
    plies = 0
    t, cpu = time.perf_counter(), time.process_time()
    for i in range(args.games):
        plies += play_game([player, player], args.seed * 1_000_003 + i, i % 2)[2]
    dt, dcpu = time.perf_counter() - t, time.process_time() - cpu
    label = ("C extension" if compiled else "pure Python") + f", evaluation {evaluator.eval}"
    print(
        f"heuristic {args.plies}-ply self-play ({label}): {args.games} games, "
        f"{plies / args.games:.1f} plies/game\n  CPU time {dcpu:.2f} s = {args.games / dcpu:.1f} "
        f"games/s per core ({1e3 * dcpu / plies:.3f} ms/ply)\n  wall time {dt:.2f} s = "
        f"{args.games / dt:.1f} games/s (lower when other processes share the core)"
    )
    return args.games / dcpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--plies", type=int, default=0)
    parser.add_argument("--mode", choices=("both", "compiled", "pure"), default="both",
                        help="evaluators to measure (default both, compiled first)")
    parser.add_argument("--eval", choices=("net", "linear"), default=None)
    parser.add_argument("--weights", type=Path, default=None, help="a network weights file")
    args = parser.parse_args()
    modes = {"both": (True, False), "compiled": (True,), "pure": (False,)}[args.mode]
    if True in modes and extension_status() != "ok":
        print(f"the C extension is {extension_status()} (pip install -e .): pure Python only")
        modes = (False,)
    speeds = {compiled: run(args, compiled) for compiled in modes}
    if len(speeds) == 2:
        print(f"  C / pure Python: {speeds[True] / speeds[False]:.2f}x games/s per core")


if __name__ == "__main__":
    main()
