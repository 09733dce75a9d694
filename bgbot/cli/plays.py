"""`bgbot plays ID DICE`: every legal play of a roll, in gnubg notation (gnubg's hint without
equities); `parse_dice` reads a roll as people type it, for this and `bgbot ctl play`."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Sequence

from ..core.errors import BgbotError
from ..core.position import check_dice


def parse_dice(words: Sequence[str]) -> tuple[int, int]:
    """Dice as ``31``, ``3 1``, ``3-1`` or ``3,1``."""
    text = "".join(words).replace("-", "").replace(",", "").replace(" ", "")
    if len(text) != 2 or not text.isdigit():
        raise BgbotError(
            f"dice: expected two digits 1-6 such as '31' or '3 1', got {' '.join(words)!r}"
        )
    return check_dice((int(text[0]), int(text[1])))


def register(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    plays = sub.add_parser(
        "plays",
        help="list every legal play for a position and a roll, in gnubg notation",
        description="List every legal play, one per distinct resulting position, like gnubg's "
        "hint without equities.",
        epilog="examples:\n  bgbot plays 4HPwATDgc/ABMA 31\n  bgbot plays 4HPwATDgc/ABMA 6 6 --json",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    plays.add_argument("id", metavar="ID", help="Position ID, PosID:MatchID, XGID=... or board:...")
    plays.add_argument("dice", metavar="DICE", nargs="+", help="the roll: 31 or 3 1")
    plays.add_argument("--json", action="store_true",
                       help='print {"plays": [{"move": ..., "position_id": ...}]}; '
                       "position_id is the board after the play, still from the mover's side")
    plays.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..formats.anyid import read_any

    position = read_any(args.id).position
    dice = parse_dice(args.dice)
    plays = position.legal_plays(dice)
    if args.json:
        print(json.dumps({
            "position_id": position.position_id(),
            "dice": list(dice),
            "plays": [{"move": str(play), "position_id": position.apply(play).position_id()}
                      for play in plays],
        }))
        return 0
    if not plays:
        print(f"no legal play with {dice[0]}{dice[1]}", file=sys.stderr)
        return 0
    for play in plays:
        print(play)
    return 0
