"""A position drawn in ASCII for people, as gnubg draws it (`draw_board`).

One drawing for every place that shows a board: ``bgbot show``, ``bgbot play --watch`` and the
``human`` agent's terminal.
"""

from __future__ import annotations

from ..core.position import Position

__all__ = ["draw_board"]

_ROWS = 5


def _column(count: int, mark: str) -> list[str]:
    """A point's column from the edge inwards: up to five marks, a count when there are more."""
    cells = [mark if i < count else " " for i in range(_ROWS)]
    if count > _ROWS:
        cells[_ROWS - 1] = str(count) if count < 10 else "+"
    return cells


def draw_board(position: Position, *, mover_name: str = "X", opponent_name: str = "O",
               notes: list[str] | None = None, on_roll: bool = True) -> str:
    """Draw ``position`` as gnubg does: its mover (X) at the bottom, moving to the right.

    Points are numbered from X's side; the opponent's chequers are ``O``. ``on_roll`` False
    draws a position whose O is to play next (a board shown after X's move).
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
    mover_mark, opponent_mark = (" (on roll)", "") if on_roll else ("", " (on roll)")
    lines.append(
        f" O {opponent_name}{opponent_mark}: pips {opponent_pips}, off {opponent_off}"
        f"    X {mover_name}{mover_mark}: pips {mover_pips}, off {mover_off}"
    )
    lines.append(
        f" {'race' if position.is_race() else 'contact'}; Position ID {position.position_id()}"
    )
    for note in notes or []:
        lines.append(f" {note}")
    return "\n".join(lines)
