"""`bgbot plays ID DICE`: every legal play of a roll in gnubg notation, best first (gnubg's
hint without equities: `bgbot hint` shows them); `parse_dice` reads a roll as people type
it, for this and `bgbot ctl play`."""

from __future__ import annotations

import argparse
import json
import sys

from ..core.errors import BgbotError
from ._position import dice_for, heuristic_player, parse_dice, ranked_plays, read_situation

__all__ = ["parse_dice", "register", "run"]


def register(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    plays = sub.add_parser(
        "plays",
        help="list every legal play for a position and a roll, in gnubg notation",
        description="List every legal play, one per distinct resulting position, best first "
        "as the heuristic player ranks them (like gnubg's hint without equities; `bgbot hint` "
        "adds them).",
        epilog="examples:\n  bgbot plays 4HPwATDgc/ABMA 31\n  bgbot plays 4HPwATDgc/ABMA 6 6 --json",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    plays.add_argument("id", metavar="ID", help="Position ID, PosID:MatchID, XGID=... or board:...")
    plays.add_argument("dice", metavar="DICE", nargs="*",
                       help="the roll: 31 or 3 1 (default: the dice the id says were rolled)")
    plays.add_argument("--json", action="store_true",
                       help='print {"plays": [{"move": ..., "position_id": ...}]}; '
                       "position_id is the board after the play, still from the mover's side")
    plays.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    situation = read_situation(args.id)
    dice = dice_for(situation, args.dice)
    if dice is None:
        raise BgbotError("dice: give the roll, e.g. 31 or 3 1 (the position text has none "
                         "rolled)")
    ranked = ranked_plays(heuristic_player("heuristic"), situation, dice)
    if args.json:
        print(json.dumps({
            "position_id": situation.position.position_id(),
            "dice": list(dice),
            "plays": [{"move": str(r.play), "position_id": r.after.position_id()}
                      for r in ranked],
        }))
        return 0
    if not ranked:
        print(f"no legal play with {dice[0]}{dice[1]}", file=sys.stderr)
        return 0
    for entry in ranked:
        print(entry.play)
    return 0
