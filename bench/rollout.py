"""Rollout speed: trials per second of bgbot's rollout, cubeless, bgbot's 0-ply player (or with
``--plies 1`` its 1-ply player) with variance reduction, on one core and on two; and GNU
Backgammon's own rollout of the same position at the same settings in the same run
(`gnubg_rollout`: cubeless chequer play at the same plies,
cubeless, variance reduction, quasi-random dice, the same trials and truncation, no bear-off
database truncation; one gnubg process with one thread, timed by the driver from its last
setting to the end of the rollout, so its start-up is not counted).

Measures, on each position (a contact position after an opening 3-1, a race):

* truncated rollouts (``--truncate``, default 10 plies) of ``--trials`` trials (default 1296):
  the issue's goal is a 1,296-trial truncated rollout of one position in under 60 s on the
  machine's 2 cores;
* full rollouts (games played out) of ``--full-trials`` trials (default 144);

each inline (one core) and on a process pool of ``--workers`` (default 2), with the equity,
its SE and the SE gain of VR, and gnubg's trials/s and equity. Goal (issue 29): ours at least
gnubg's trials/s per core (``vs gnubg per core`` = our trials/s / workers / gnubg's, >= 1).
On one core the ratio is also given per CPU second (ours: this process's CPU time; gnubg's:
its process's, start-up included), which a loaded machine distorts far less than wall time.
The equities differ by design: each is its own player's rollout. With ``--plies 1`` gnubg
values a truncated trial's last position at 1-ply, bgbot's player (as its rollouts do) at 0-ply,
so there gnubg does a little more work a trial.

The machine is shared: run it when it is quiet; ``--smoke`` runs tiny sizes to check the
script; ``--no-gnubg`` skips gnubg (or it is skipped when gnubg is not installed).

Usage:
  python bench/rollout.py
  python bench/rollout.py --trials 2592 --truncate 7 --workers 2
  python bench/rollout.py --plies 1 --trials 288 --full-trials 36   # both players at 1-ply
  python bench/rollout.py --smoke --json
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import resource
import sys
import time
from concurrent.futures import Executor, ProcessPoolExecutor
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bgbot.core.context import Context  # noqa: E402
from bgbot.core.position import Position  # noqa: E402
from bgbot.engines import gnubg_rollout as gnubg  # noqa: E402
from bgbot.engines.gnubg import find_gnubg  # noqa: E402
from bgbot.players.evaluator import extension_status  # noqa: E402
from bgbot.rollout import RolloutResult, RolloutSettings, rollout_position  # noqa: E402

GOAL_TRUNCATED_SECONDS = 60.0
"""A 1,296-trial truncated rollout of one position on 2 cores (issue 29)."""


def positions() -> dict[str, Position]:
    opening = Position.initial()
    after_31 = opening.apply(opening.legal_plays((3, 1))[0]).swapped()
    race = Position.from_position_id("zD2cAwC4O5sBAA")  # 8 pips behind, contact gone
    return {"contact (after 31: 8/5 6/5)": after_31, f"race ({race.position_id()})": race}


def gnubg_rollout(position: Position, settings: RolloutSettings, plies: int
                  ) -> tuple[gnubg.GnubgRollout, float, float]:
    """(gnubg's rollout, its wall seconds, its CPU seconds) of ``position`` at ``settings``'
    trials, truncation, seed and VR, cubeless with cubeless chequer play at ``plies`` (bgbot's
    player's look-ahead), quasi-random dice, games played out past the
    bear-off databases: one gnubg process, one thread. The wall time excludes gnubg's start-up
    (`gnubg_rollout.rollout_speed`); the CPU time (what gnubg's process used, from the
    kernel's accounting of finished children) includes it, a fraction of a second, and is the
    fairer figure on a loaded machine."""
    reference = gnubg.RolloutSettings(
        trials=settings.trials, seed=settings.seed, plies=plies, cubeful=False,
        truncate=settings.truncate or None, variance_reduction=settings.vr, quasi_random=True,
        bearoff_truncation=False, chequer_cubeful=False)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    _, result = gnubg.rollout_speed(position, Context(), reference)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    return result, result.seconds, cpu


def plies_text(truncate: int, plies: float) -> str:
    return f" x {truncate} plies" if truncate else f" ({plies:.0f} plies)"


def measure(position: Position, settings: RolloutSettings, workers: int) -> tuple[RolloutResult,
                                                                                  float, float]:
    """(result, wall seconds, CPU seconds of this process) of one rollout."""
    executor: Executor | None = None
    window = 1
    if workers > 1:
        executor = ProcessPoolExecutor(workers,
                                       mp_context=multiprocessing.get_context("forkserver"))
        window = 2 * workers
        # warm the workers (imports, the network, the bear-off database) outside the clock
        warm = RolloutSettings(trials=36 * workers, truncate=1, cubeful=False, chunk=36,
                               player=settings.player)
        rollout_position(position, Context(), warm, executor=executor, window=window)
    else:
        rollout_position(position, Context(), RolloutSettings(trials=36, truncate=1,
                                                              cubeful=False,
                                                              player=settings.player))
    try:
        started, cpu = time.perf_counter(), time.process_time()
        result = rollout_position(position, Context(), settings, executor=executor,
                                  window=window)
        return result, time.perf_counter() - started, time.process_time() - cpu
    finally:
        if executor is not None:
            executor.shutdown()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=1296, help="truncated rollouts' trials")
    parser.add_argument("--truncate", type=int, default=10, help="plies of a truncated trial")
    parser.add_argument("--full-trials", type=int, default=144,
                        help="trials of the full rollouts (0: skip them)")
    parser.add_argument("--workers", type=int, default=2, help="processes of the pool run")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--plies", type=int, choices=(0, 1), default=0,
                        help="the look-ahead of both players' chequer play (bgbot's 1-ply "
                        "player is hosted by the referee, its look-ahead in C)")
    parser.add_argument("--smoke", action="store_true", help="tiny sizes: check the script")
    parser.add_argument("--no-gnubg", action="store_true",
                        help="do not measure gnubg's own rollouts")
    parser.add_argument("--json", action="store_true", help="end with one JSON line")
    args = parser.parse_args()
    with_gnubg = not args.no_gnubg and find_gnubg() is not None
    if args.smoke:
        args.trials, args.truncate, args.full_trials = 72, 3, 36
    player = "heuristic" if args.plies == 0 else f"heuristic:plies={args.plies}"
    print(f"bgbot rollout speed; C extension: {extension_status()}; cubeless, {args.plies}-ply, "
          f"VR, seed {args.seed}", flush=True)
    runs: list[dict[str, Any]] = []
    kinds = [("truncated", args.trials, args.truncate)]
    if args.full_trials:
        kinds.append(("full", args.full_trials, 0))
    for name, position in positions().items():
        for kind, trials, truncate in kinds:
            settings = RolloutSettings(trials=trials, truncate=truncate, seed=args.seed,
                                       cubeful=False, player=player)
            reference = None
            if with_gnubg:
                try:
                    reference = gnubg_rollout(position, settings, args.plies)
                except gnubg.GnubgRolloutError as exc:
                    print(f"{name:<34} {kind:<9} gnubg's rollout failed: {exc}", flush=True)
            gnubg_rate = (reference[0].trials / reference[1]) if reference else None
            gnubg_cpu_rate = (reference[0].trials / reference[2]
                              if reference and reference[2] > 0 else None)
            if reference is not None:
                theirs = reference[0]
                print(f"{name:<34} {kind:<9} {theirs.trials:5d} trials"
                      f"{plies_text(truncate, 0) if truncate else '':<14} gnubg 1 core: "
                      f"{reference[1]:7.1f} s {gnubg_rate:7.1f} trials/s "
                      f"({gnubg_cpu_rate or 0:.1f} per CPU second); equity "
                      f"{theirs.equity.value:+.4f} ± {theirs.equity.se:.4f}", flush=True)
            for workers in sorted({1, args.workers}):
                result, wall, cpu = measure(position, settings, workers)
                rate = result.trials / wall
                row = {"position": name, "kind": kind, "plies": args.plies,
                       "trials": result.trials,
                       "truncate": truncate, "workers": workers, "seconds": round(wall, 2),
                       "trials_per_second": round(rate, 2),
                       "trials_per_cpu_second": round(result.trials / cpu, 2)
                       if workers == 1 and cpu > 0 else None,
                       "mean_plies": round(result.plies, 1),
                       "equity": round(result.equity.mean, 4), "se": round(result.equity.se, 4),
                       "se_gain_of_vr": result.se_gain(),
                       "gnubg_trials_per_second": round(gnubg_rate, 2) if gnubg_rate else None,
                       "gnubg_trials_per_cpu_second": round(gnubg_cpu_rate, 2)
                       if gnubg_cpu_rate else None,
                       "gnubg_equity": list(reference[0].equity) if reference else None,
                       "vs_gnubg_per_core": round(rate / workers / gnubg_rate, 2)
                       if gnubg_rate else None}
                if workers == 1 and cpu > 0 and gnubg_cpu_rate:
                    row["vs_gnubg_per_cpu_second"] = round(result.trials / cpu / gnubg_cpu_rate, 2)
                runs.append(row)
                gain = row["se_gain_of_vr"]
                print(f"{name:<34} {kind:<9} {result.trials:5d} trials"
                      f"{plies_text(truncate, result.plies):<14}"
                      f" {workers} core{'s' if workers > 1 else ' '}: {wall:7.1f} s "
                      f"{rate:7.1f} trials/s; equity {result.equity.mean:+.4f} "
                      f"± {result.equity.se:.4f}"
                      + (f", VR {gain:.1f}x" if gain else "")
                      + (f"; gnubg {gnubg_rate:.1f} trials/s on 1 core, ours "
                         f"{row['vs_gnubg_per_core']}x per core" if gnubg_rate else
                         "; gnubg: not measured")
                      + (f" ({row['vs_gnubg_per_cpu_second']}x per CPU second)"
                         if "vs_gnubg_per_cpu_second" in row else ""), flush=True)
                if (kind == "truncated" and workers == 2 and trials == 1296):
                    verdict = "met" if wall < GOAL_TRUNCATED_SECONDS else "NOT met"
                    print(f"  goal: a 1,296-trial truncated rollout under "
                          f"{GOAL_TRUNCATED_SECONDS:.0f} s on 2 cores: {verdict}", flush=True)
    if args.json:
        print(json.dumps({"runs": runs}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
