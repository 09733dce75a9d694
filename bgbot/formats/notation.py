"""Move notation: gnubg's (``24/18 13/10*``, ``bar/22``, ``6/off``, ``8/5(2)``) and FIBS's
``move`` command text (``8-5 6-5``, ``bar-22``, in the board line's absolute numbering).

The gnubg codec lives in the core (``str(play)``, ``Play.parse``); it is re-exported here so
every text format can be found under `bgbot.formats`.

FIBS numbering. A FIBS board line numbers the points 1..24 once for both players, and each
player's ``direction`` (field 43 of the board line, as seen by that player) says which way they
move:

* ``direction == -1``: the player moves 24 -> 1, so the absolute numbers are the mover's own
  (absolute p == mover's point p); their bar is 25 and their off is 0.
* ``direction == +1``: the player moves 1 -> 24, so the mover's point p is absolute ``25 - p``;
  their bar is absolute 0 and their off is 25.

The bar and off are written ``bar`` and ``off`` (numbers 0 and 25 are also read, converted like
any point). FIBS move text is one space-separated ``from-to`` pair per die, e.g. ``move 8-5 6-5``
or ``move bar-22``; the ``move`` word itself is the caller's (it is accepted when reading).
"""

from __future__ import annotations

import re
from typing import Callable, Sequence

from ..core.errors import FormatError
from ..core.notation import format_play, parse_chains, parse_play, play_from_chains
from ..core.position import BAR_POINT, OFF_POINT, Play, Position

__all__ = ["format_fibs_move", "format_play", "parse_fibs_move", "parse_play"]

_COMMAND = re.compile(r"\s*(?:move|m)(?:\s+|$)", re.IGNORECASE)


def _check_direction(direction: int) -> int:
    if direction not in (1, -1):
        raise FormatError("direction", direction, "must be +1 (moves 1->24) or -1 (moves 24->1)")
    return int(direction)


def _to_absolute(direction: int) -> Callable[[int], int]:
    """Mover's point -> absolute FIBS point (the conversion is its own inverse)."""
    if direction == 1:
        return lambda point: 25 - point
    return lambda point: point


def format_fibs_move(play: Play, direction: int) -> str:
    """FIBS ``move`` arguments for ``play``: one ``from-to`` pair per die.

    The pairs come in gnubg's order (source, then destination, highest first in the mover's
    numbering), which is also an order they can be played in: bar first, chains in sequence.

    Example: the opening 3-1 ``8/5 6/5`` is ``"8-5 6-5"`` for direction -1 and ``"17-20 19-20"``
    for direction +1; an empty play gives ``""``.
    """
    absolute = _to_absolute(_check_direction(direction))

    def name(point: int) -> str:
        if point == BAR_POINT:
            return "bar"
        if point == OFF_POINT:
            return "off"
        return str(absolute(point))

    steps = sorted(((source, target) for source, target, _ in play), reverse=True)
    return " ".join(f"{name(source)}-{name(target)}" for source, target in steps)


def parse_fibs_move(text: str, position: Position, dice: Sequence[int], direction: int) -> Play:
    """The legal play named by FIBS move text (``"move 17-20 19-20"``, ``"bar-3"``, ...).

    Numbers are absolute FIBS points, converted with ``direction`` (see the module docstring);
    ``bar``/``off`` are the mover's. Anything the gnubg reader accepts is accepted too (``/``,
    chains, ``(n)``, ``*``). Raises `FormatError` for malformed text or a bad direction, and
    `IllegalAction` (listing the legal plays in FIBS notation) when the move is not legal.
    """
    absolute = _to_absolute(_check_direction(direction))
    body = _COMMAND.sub("", text, count=1) if _COMMAND.match(text) else text
    chains = parse_chains(body, absolute)
    return play_from_chains(
        chains, position, dice, text=text, describe=lambda play: format_fibs_move(play, direction)
    )
