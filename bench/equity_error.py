"""How far bgbot's static evaluation is from gnubg's, by position class (gnubg as the judge).

Reads ../shared/testdata/equities.jsonl (1,000 positions with gnubg 0-ply cubeless chances,
classed contact / crashed / race / bearoff1 / bearoff2 by gnubg) and prints, per class, the RMS
and mean difference of bgbot's cubeless equity and win chance from gnubg's, and the largest
equity difference (a saturated output, e.g. a "certain backgammon", shows there first).
gnubg is only measured against here, never trained on (issue 14).

    python bench/equity_error.py [--eval net|linear] [--weights PATH] [--crashed PATH] [--race PATH]

``--crashed``: a network for crashed positions (``tools/train_network.py --phase crashed``),
as ``heuristic:crashed=PATH`` uses it (bgbot's own class decides where it applies);
``--race``: a race network (``tools/train_network.py --phase race``, ``tools/rollout_fit.py``
race labels), as ``heuristic:race=PATH`` uses it, for the races outside the bear-off database.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

DATA = Path(__file__).resolve().parents[2] / "shared" / "testdata" / "equities.jsonl"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--eval", choices=("net", "linear"), default=None)
    parser.add_argument("--weights", type=Path, default=None)
    parser.add_argument("--crashed", type=Path, default=None,
                        help="a network for crashed positions")
    parser.add_argument("--race", type=Path, default=None,
                        help="a network for races outside the bear-off database")
    parser.add_argument("--data", type=Path, default=DATA)
    args = parser.parse_args()
    from bgbot.core.position import Position
    from bgbot.players.evaluator import HeuristicEvaluator
    from bgbot.players.network import WeightsFile

    network = WeightsFile.read(args.weights) if args.weights else None
    crashed = WeightsFile.read(args.crashed, phase="crashed") if args.crashed else None
    race = WeightsFile.read(args.race, phase="race") if args.race else None
    evaluator = HeuristicEvaluator(eval=args.eval or ("net" if network else None),
                                   network=network, crashed_network=crashed,
                                   race_network=race)
    errors: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for line in args.data.open():
        record = json.loads(line)
        position = Position.from_board(record["board"])
        ours = evaluator.evaluate(position)
        errors[record["class"]].append((ours.equity() - record["equity"],
                                        ours.win - record["win"]))
        errors["all"].append(errors[record["class"]][-1])
    print(f"evaluation {evaluator.eval}"
          + (f" ({args.weights})" if args.weights else "")
          + (f", crashed {args.crashed}" if args.crashed else "")
          + (f", race {args.race}" if args.race else "")
          + ": bgbot - gnubg 0-ply, cubeless")
    print(f"{'class':10} {'n':>5} {'equity RMS':>11} {'mean':>8} {'max':>7} {'win RMS':>9} "
          f"{'mean':>8}")
    for name in ("contact", "crashed", "race", "bearoff1", "bearoff2", "all"):
        rows = errors.get(name, [])
        if not rows:
            continue
        n = len(rows)
        eq_rms = math.sqrt(sum(e * e for e, _ in rows) / n)
        win_rms = math.sqrt(sum(w * w for _, w in rows) / n)
        worst = max(abs(e) for e, _ in rows)
        print(f"{name:10} {n:5} {eq_rms:11.4f} {sum(e for e, _ in rows) / n:+8.4f} "
              f"{worst:7.3f} {win_rms:9.4f} {sum(w for _, w in rows) / n:+8.4f}")


if __name__ == "__main__":
    main()
