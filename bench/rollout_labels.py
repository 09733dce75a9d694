"""What a rollout label costs and how far it is from the truth (issue 29 point 5).

Training labels positions by rollouts of the network's own 0-ply player (`tools/
train_network.py --label-rollout TRUNCATE,TRIALS`). This study takes contact positions of
that player's self-play, rolls each one out long and played to the end (the "truth"), then
with each label setting, and prints per setting: the RMS distance from the truth with the
truth's own noise taken out (so it is the label's error, bias and noise together), the
label's own standard error and its CPU time per position (process time, so the figure holds
on a busy machine). The network's static 0-ply evaluation is the row to beat.

    python3 bench/rollout_labels.py                       # 12 positions, truth 648 trials
    python3 bench/rollout_labels.py --positions 30 --truth 1296 --settings 36x10,72x15,36x0
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rich.progress import Progress  # noqa: E402

from bgbot.core.context import Context  # noqa: E402
from bgbot.core.position import Position  # noqa: E402
from bgbot.players.heuristic import shared_evaluator  # noqa: E402
from bgbot.rollout import RolloutSettings, rollout_position  # noqa: E402

DEFAULT_SETTINGS = "36x0,36x3,36x5,36x7,36x10,72x7,144x5"


def self_play_positions(count: int, seed: int) -> list[Position]:
    """Contact positions (the side on roll before rolling) of the 0-ply player's own games:
    every 7th record, so that one game gives several far apart."""
    from bgbot.players import _selfplay

    evaluator = shared_evaluator()
    boards = _selfplay.selfplay(evaluator._net, evaluator._race_sides, seed,
                                max(10, count // 4))[0]
    positions = []
    for k in range(0, len(boards) // 50, 7):
        board = boards[50 * k:50 * k + 50]
        positions.append(Position(opponent=tuple(board[25:]), mover=tuple(board[:25])))
    return positions[:count]


def roll(position: Position, trials: int, truncate: int, seed: int) -> tuple[float, float, float]:
    """(cubeless equity, its SE, CPU seconds) of a cubeless VR rollout by the 0-ply player."""
    settings = RolloutSettings(trials=trials, truncate=truncate, seed=seed, vr=True,
                               cubeful=False)
    started = time.process_time()
    result = rollout_position(position, Context(), settings)
    estimate = result.estimates["cubeless"]
    return estimate.mean, estimate.se, time.process_time() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--positions", type=int, default=12)
    parser.add_argument("--truth", type=int, default=648,
                        help="trials of the played-out rollout taken as the truth")
    parser.add_argument("--settings", default=DEFAULT_SETTINGS,
                        help="label settings TRIALSxTRUNCATE (0: played out), comma-separated")
    parser.add_argument("--seed", type=int, default=77, help="self-play seed")
    args = parser.parse_args()
    settings = [tuple(int(v) for v in s.split("x")) for s in args.settings.split(",")]
    evaluator = shared_evaluator()
    positions = self_play_positions(args.positions, args.seed)
    truth, truth_se, truth_cpu, static = [], [], [], []
    labels: dict[tuple[int, ...], list[tuple[float, float, float]]] = {s: [] for s in settings}
    with Progress(transient=True) as progress:
        task = progress.add_task("rolling out", total=len(positions))
        for position in positions:
            mean, se, cpu = roll(position, args.truth, 0, 999)
            truth.append(mean), truth_se.append(se), truth_cpu.append(cpu)
            static.append(evaluator.evaluate(position).equity())
            for trials, truncate in settings:
                labels[(trials, truncate)].append(roll(position, trials, truncate, 5))
            progress.advance(task)
    n = len(positions)
    noise = sum(se * se for se in truth_se) / n

    def error(values: list[float]) -> float:
        mse = sum((v - t) ** 2 for v, t in zip(values, truth)) / n
        return math.sqrt(max(0.0, mse - noise))

    print(f"{n} self-play contact positions; truth: {args.truth} played-out VR trials "
          f"(mean SE {math.sqrt(noise):.4f}, {sum(truth_cpu) / n:.0f} s CPU each)")
    print(f"{'label':<28} {'error':>7} {'label SE':>9} {'CPU':>8}")
    print(f"{'0-ply evaluation':<28} {error(static):7.4f} {0.0:9.4f} {0.0:7.2f}s")
    for (trials, truncate), rows in labels.items():
        name = f"{trials} trials, " + (f"cut at {truncate}" if truncate else "played out")
        se = math.sqrt(sum(r[1] ** 2 for r in rows) / n)
        cpu = sum(r[2] for r in rows) / n
        print(f"{name:<28} {error([r[0] for r in rows]):7.4f} {se:9.4f} {cpu:7.2f}s")


if __name__ == "__main__":
    main()
