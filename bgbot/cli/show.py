"""`bgbot show ID`: draw a position in ASCII, as gnubg does, for people.

The drawing is `bgbot.formats.display.draw_board`; the command reads any position text
(`bgbot.formats.anyid`).
"""

from __future__ import annotations

import argparse

from ..formats.display import draw_board

def register(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    show = sub.add_parser(
        "show",
        help="draw a position from a Position ID, gnubg id, XGID or FIBS board line",
        description="Draw a position in ASCII with pip counts and match information.",
        epilog="examples:\n  bgbot show 4HPwATDgc/ABMA\n  bgbot show 4HPwATDgc/ABMA:cAkAAAAAAAAA\n"
        "  bgbot show 'XGID=-b----E-C---eE---c-e----AA:0:0:1:00:6:3:1:7:10'\n"
        "  bgbot show 'board:You:someplayer:3:0:0:0:-2:0:0:0:0:5:0:3:0:0:0:-5:5:0:0:0:-3:0:-5:"
        "0:0:0:0:2:0:1:6:2:0:0:1:1:1:0:1:-1:0:25:0:0:0:0:2:0:0:0'",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    show.add_argument("id", metavar="ID", help="Position ID, PosID:MatchID, XGID=... or board:...")
    show.add_argument("--gnubg", action="store_true",
                      help="read a board: line as gnubg writes it for external players "
                      "(default: as a FIBS server writes it)")
    show.add_argument("--seat", type=int, choices=(0, 1), default=None,
                      help="with --gnubg: our gnubg seat when one line cannot tell")
    show.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..formats.anyid import read_any

    shown = read_any(args.id, gnubg_dialect=args.gnubg, my_seat=args.seat)
    print(draw_board(shown.position, mover_name=shown.mover_name,
                     opponent_name=shown.opponent_name, notes=shown.notes))
    return 0
