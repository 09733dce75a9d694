"""Legal-play generation speed over the positions of gnubg's legal-moves.jsonl.

Measures, in the same run and on one core, ``Position.legal_plays`` through bgbot's public API
(with the core's C generator when it is built, and the pure-Python definition for reference)
and gnubg's own C generator through PyPI's ``gnubg-nn`` (``gnubg_nn.moves``: the
bench-only yardstick, never a dependency of bgbot; ``pip install gnubg-nn`` to include it).
Prints positions per second (the best of several rounds, so a busy machine disturbs the figure
less) and the ratios. Issue 14 asks the public API for at least 0.25x gnubg's generator.

    python bench/movegen.py [--rounds 5] [--data PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "testdata" / "legal-moves.jsonl"


def best_rate(cases: list[Any], generate: Callable[[Any], object], rounds: int) -> float:
    """Positions per second (CPU time) of the best of ``rounds`` passes over ``cases``."""
    rates = []
    for _ in range(rounds):
        start = time.process_time()
        for case in cases:
            generate(case)
        rates.append(len(cases) / (time.process_time() - start))
    return max(rates)


def bgbot_rate(data: Path, rounds: int) -> tuple[float, int]:
    """bgbot's public API in this process: (positions/s, plays returned)."""
    from bgbot.core.position import Position

    records = [json.loads(line) for line in data.open()]
    cases = [(Position.from_board(r["board"]), tuple(r["dice"])) for r in records]
    plays = sum(len(p.legal_plays(d)) for p, d in cases)
    return best_rate(cases, lambda case: case[0].legal_plays(case[1]), rounds), plays


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--only-bgbot", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.only_bgbot:  # the pure-Python run, in a child with BGBOT_PURE_PYTHON=1
        print(json.dumps(bgbot_rate(args.data, args.rounds)))
        return
    from bgbot.core import position

    records = [json.loads(line) for line in args.data.open()]
    compiled = position._MOVEGEN is not None
    ours, plays = bgbot_rate(args.data, args.rounds)
    pure_out = subprocess.run(
        [sys.executable, __file__, "--only-bgbot", "--rounds", str(max(1, args.rounds // 2)),
         "--data", str(args.data)], env={**os.environ, "BGBOT_PURE_PYTHON": "1"},
        capture_output=True, text=True, check=True).stdout
    pure = json.loads(pure_out)[0]
    print(f"python {platform.python_version()} ({platform.python_implementation()}), "
          f"{platform.machine()}")
    print(f"positions: {len(records)}  plays returned: {plays}  rounds: {args.rounds}")
    print(f"bgbot Position.legal_plays ({'C generator' if compiled else 'pure Python'}): "
          f"{ours:,.0f} positions/s")
    print(f"bgbot Position.legal_plays (pure Python, BGBOT_PURE_PYTHON=1): {pure:,.0f} "
          f"positions/s ({ours / pure:.1f}x slower than the public API)")
    try:
        import gnubg_nn
    except ImportError:
        print("gnubg's C generator: not measured (pip install gnubg-nn to compare)")
        return
    boards = [(r["board"], r["dice"][0], r["dice"][1]) for r in records]
    theirs = best_rate(boards, lambda case: gnubg_nn.moves(*case), args.rounds)
    print(f"gnubg's C generator (gnubg_nn.moves, PyPI gnubg-nn): {theirs:,.0f} positions/s")
    print(f"ratio bgbot public API / gnubg: {ours / theirs:.2f} (issue 14 asks >= 0.25)")


if __name__ == "__main__":
    main()
