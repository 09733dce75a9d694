"""Legal-play generation speed over the positions of gnubg's legal-moves.jsonl.

Prints positions per second on one core (the best of several rounds, so a busy machine
disturbs the figure less), the machine's Python, and the reference rates the project compares
against (measured on this kind of machine, see shared/reference/performance-anchors.md).

    python bench/movegen.py [--rounds 5] [--data PATH]
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from pathlib import Path

from bgbot.core.position import Position

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "testdata" / "legal-moves.jsonl"
BGSAGE_CPP = 51_000  # positions/s, bgsage's C++ generator (performance-anchors.md)
GNUBG_C = 220_000  # positions/s, gnubg's C generator via Python; the goal is half of it


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    args = parser.parse_args()
    records = [json.loads(line) for line in args.data.open()]
    cases = [(Position.from_board(r["board"]), tuple(r["dice"])) for r in records]
    plays = sum(len(p.legal_plays(d)) for p, d in cases)
    rates = []
    for _ in range(args.rounds):
        start = time.process_time()
        for position, dice in cases:
            position.legal_plays(dice)
        rates.append(len(cases) / (time.process_time() - start))
    best = max(rates)
    print(f"python {platform.python_version()} ({platform.python_implementation()}), {platform.machine()}")
    print(f"positions: {len(cases)}  plays returned: {plays}  rounds: {args.rounds}")
    print(f"legal_plays: {best:,.0f} positions/s (best round; all: {', '.join(f'{r:,.0f}' for r in rates)})")
    print(f"ratio to bgsage C++ ({BGSAGE_CPP:,}/s): {best / BGSAGE_CPP:.2f}; "
          f"to half of gnubg C ({GNUBG_C // 2:,}/s): {best / (GNUBG_C / 2):.3f}")


if __name__ == "__main__":
    main()
