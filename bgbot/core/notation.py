"""gnubg move notation (placeholder until the notation module lands)."""
from __future__ import annotations
from typing import TYPE_CHECKING, Sequence
if TYPE_CHECKING:
    from .position import Play, Position

def format_play(play: "Play") -> str:
    return " ".join(f"{s.from_point}/{s.to_point}{'*' if s.hit else ''}" for s in play.steps)

def parse_play(text: str, position: "Position", dice: Sequence[int]) -> "Play":
    raise NotImplementedError
