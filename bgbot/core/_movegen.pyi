"""Type stub of the optional C extension bgbot/core/_movegen.c (see _movegen.h)."""

from typing import Sequence, TypeVar

_Side = tuple[int, ...]
_Steps = tuple[tuple[int, int, bool], ...]
_P = TypeVar("_P", bound=tuple[tuple[int, int, bool], ...])

def results(mover: Sequence[int], opponent: Sequence[int], d1: int, d2: int,
            /) -> list[tuple[_Steps, _Side, _Side]]:
    """(steps, mover after, opponent after) of each distinct result of the legal plays of
    (d1, d2), in `Position.play_results` order (empty: the roll cannot be played)."""

def plays(mover: Sequence[int], opponent: Sequence[int], d1: int, d2: int, play_type: type[_P],
          /) -> list[_P]:
    """The same plays as `results`, each as a ``play_type`` of its steps."""
