"""A fuzz campaign over every parser reachable from outside (the targets of tests/fuzz_targets.py).

A seeded mutation generator turns the valid inputs of the test data into hostile ones
(`fuzz_targets.mutate`); each input must be accepted or rejected with the documented error
type, in under 100 ms, and where the parser has a formatter parse(format(parse(x))) must equal
parse(x). Prints one table row per parser: inputs, rejected, accepted (non-zero, or the
campaign proves nothing), other exceptions, slow, round-trip failures; and the first few
failures of each kind. Exit status 1 if anything failed.

The targets include the daemon's side (protocol messages nested deep in every field, every
decision on ids of matches over 64 points, `bgbot hint`), the stream readers (FIBS lines of
megabytes) and the daemon's configuration file (tests/fuzz_targets.py lists them).

    python bench/fuzz.py --inputs 1000000            # ids and notation: 1e6; the others: 2e5
    python bench/fuzz.py --inputs 20000 --targets xgid ".mat"
    python bench/fuzz.py --inputs 1000000 --jobs 2   # one process per target, two at a time
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.fuzz_targets import (  # noqa: E402
    ACCEPTED,
    OTHER,
    REJECTED,
    ROUND_TRIP,
    mutate,
    target,
    targets,
    timed_check,
)

SLOW = 0.1
"""Seconds: an input that takes longer is counted slow (the issue's campaign figure)."""
BIG_GROUPS = ("id", "notation")


def campaign(name: str, inputs: int, seed: int) -> dict[str, Any]:
    """Run ``inputs`` mutated inputs through target ``name``; the counts and first failures."""
    t = target(name)
    seeds = t.seeds()
    rng = random.Random(f"bgbot-fuzz:{seed}:{name}")
    counts = {ACCEPTED: 0, REJECTED: 0, OTHER: 0, ROUND_TRIP: 0}
    slow: list[tuple[float, str]] = []
    started = time.perf_counter()
    for example in seeds:  # warm-up, not counted: caches and tables built once
        timed_check(t, example)
    t.notes.clear()
    for example in t.regressions:
        outcome, _ = timed_check(t, example)
        counts[outcome] += 1
    for _ in range(inputs - len(t.regressions)):
        text = mutate(rng.choice(seeds), rng, t.alphabet, seeds)
        outcome, seconds = timed_check(t, text)
        counts[outcome] += 1
        if seconds > SLOW:  # timed again: a one-time table build or a busy machine is not slow
            seconds = min(seconds, timed_check(t, text)[1])
            if seconds > SLOW:
                slow.append((seconds, text[:160]))
    return {"name": name, "inputs": inputs, "counts": counts, "slow": len(slow),
            "slowest": sorted(slow, reverse=True)[:3],
            "failures": {k: v[:3] for k, v in t.notes.items()},
            "seconds": time.perf_counter() - started}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--inputs", type=int, default=100_000,
                        help="inputs per id / notation parser (default 100000)")
    parser.add_argument("--others", type=int, default=None,
                        help="inputs per other parser (default: a fifth of --inputs)")
    parser.add_argument("--seed", type=int, default=1, help="mutation seed (default 1)")
    parser.add_argument("--targets", nargs="*", default=None, metavar="NAME",
                        help="only these targets (names as in the table)")
    parser.add_argument("--jobs", type=int, default=1, help="targets run at once (processes)")
    args = parser.parse_args(argv)
    others = args.others if args.others is not None else max(1, args.inputs // 5)
    chosen = [t for t in targets() if not args.targets or t.name in args.targets]
    plan = [(t.name, args.inputs if t.group in BIG_GROUPS else others, args.seed) for t in chosen]
    began = time.perf_counter()
    results: list[dict[str, Any]] = []

    def done(result: dict[str, Any]) -> None:
        results.append(result)
        print(f"done: {result['name']} ({result['inputs']:,} inputs, {result['seconds']:.0f} s)",
              file=sys.stderr, flush=True)

    if args.jobs > 1:
        with ProcessPoolExecutor(args.jobs) as pool:
            for future in as_completed([pool.submit(campaign, *item) for item in plan]):
                done(future.result())
    else:
        for item in plan:
            done(campaign(*item))
    order = [name for name, _, _ in plan]
    results.sort(key=lambda r: order.index(r["name"]))
    header = (f"{'parser':<24} {'inputs':>9} {'rejected':>9} {'accepted':>9} {'other exc':>9} "
              f"{'slow':>5} {'round-trip':>10} {'seconds':>8}")
    print(header)
    print("-" * len(header))
    bad = False
    for r in results:
        c = r["counts"]
        print(f"{r['name']:<24} {r['inputs']:>9,} {c[REJECTED]:>9,} {c[ACCEPTED]:>9,} "
              f"{c[OTHER]:>9,} {r['slow']:>5} {c[ROUND_TRIP]:>10,} {r['seconds']:>8.0f}")
        bad |= bool(c[OTHER] or c[ROUND_TRIP] or r["slow"] or not c[ACCEPTED])
    print(f"\nseed {args.seed}, {time.perf_counter() - began:.0f} s in all; slow = over "
          f"{SLOW * 1000:.0f} ms")
    for r in results:
        for kind, messages in r["failures"].items():
            for message in messages:
                print(f"{r['name']} {kind}: {message[:400]}")
        for seconds, text in r["slowest"]:
            print(f"{r['name']} slow {seconds * 1000:.0f} ms: {text!r}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
