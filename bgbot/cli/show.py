"""`bgbot show ID`: draw a position in ASCII, as gnubg does, for people.

`draw_board` is the drawing; the command reads any position text (`bgbot.formats.anyid`).
"""

from __future__ import annotations

import argparse

from ..core.position import Position

_ROWS = 5


def _column(count: int, mark: str) -> list[str]:
    """A point's column from the edge inwards: up to five marks, a count when there are more."""
    cells = [mark if i < count else " " for i in range(_ROWS)]
    if count > _ROWS:
        cells[_ROWS - 1] = str(count) if count < 10 else "+"
    return cells


def draw_board(position: Position, *, mover_name: str = "X", opponent_name: str = "O",
               notes: list[str] | None = None) -> str:
    """Draw ``position`` as gnubg does: the player on roll (X) at the bottom, moving to the right.

    Points are numbered from the player on roll's side; the opponent's chequers are ``O``.
    """
    top_points = list(range(13, 25))
    bottom_points = list(range(12, 0, -1))

    def cell(point: int) -> tuple[int, str]:
        mover = position.mover[point - 1]
        opponent = position.opponent[24 - point]
        if mover:
            return mover, "X"
        if opponent:
            return opponent, "O"
        return 0, " "

    def header(points: list[int]) -> str:
        left = "".join(f"{p:>3}" for p in points[:6])
        right = "".join(f"{p:>3}" for p in points[6:])
        return f" +{left} |BAR|{right} +"

    def row(cols: list[list[str]], bar: list[str], index: int) -> str:
        left = "".join(f"{cols[i][index]:>3}" for i in range(6))
        right = "".join(f"{cols[i][index]:>3}" for i in range(6, 12))
        return f" |{left} | {bar[index]} |{right} |"

    lines = [header(top_points)]
    top_cols = [_column(*cell(p)) for p in top_points]
    bottom_cols = [_column(*cell(p)) for p in bottom_points]
    opponent_bar = _column(position.opponent[24], "O")
    mover_bar = _column(position.mover[24], "X")
    lines.extend(row(top_cols, opponent_bar, i) for i in range(_ROWS))
    lines.append(" |" + " " * 18 + " |   |" + " " * 18 + " |")
    lines.extend(row(bottom_cols, mover_bar, i) for i in reversed(range(_ROWS)))
    lines.append(header(bottom_points))
    mover_pips, opponent_pips = position.pip_counts()
    mover_off, opponent_off = position.borne_off()
    lines.append(
        f" O {opponent_name}: pips {opponent_pips}, off {opponent_off}"
        f"    X {mover_name} (on roll): pips {mover_pips}, off {mover_off}"
    )
    lines.append(
        f" {'race' if position.is_race() else 'contact'}; Position ID {position.position_id()}"
    )
    for note in notes or []:
        lines.append(f" {note}")
    return "\n".join(lines)


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
