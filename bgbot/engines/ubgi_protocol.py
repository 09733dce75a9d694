"""The vocabulary of the Universal Backgammon Interface, shared by both sides of it.

UBGI v0.2 (``bungogood/bgci: docs/ubgi-v0.2-spec.md``) is a UCI-like line protocol on the
engine's stdin/stdout: ``ubgi`` -> ``id ...``, ``key ...``, ``ubgiok``; ``set``/``get``/``keys``;
``isready`` -> ``readyok``; ``newgame``; ``position gnubgid <id>`` (or ``position xgid``);
``dice d1 d2``; ``go [chequer|cube|turn]`` -> ``bestmove 24/18 13/12`` (``bar``, ``off``,
``pass``), ``bestcube double|nodouble``, ``bestturn cube=... move=...``; failures are
``error bad_command|bad_value|bad_state|unsupported <detail>``.

The controller side (`bgbot.engines.ubgi`) and the engine side (`bgbot.frontends.ubgi`) both
use what is here: `KeySpec` (the ``key`` lines, parsed and validated the way python-chess's
``Option`` validates UCI options), `format_ubgi_play` / `parse_ubgi_play` (move payloads,
checked against the rules core), `match_state_for` (a decision's gnubg Match ID state),
`ErrorCode` and `error_parts`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum
from typing import Sequence

from ..core.context import Context, CubeOwner
from ..core.errors import FormatError, IllegalAction
from ..core.notation import parse_play
from ..core.position import BAR_POINT, OFF_POINT, Play, Position
from ..formats.gnubgid import GameState, MatchState

__all__ = [
    "KEY_NAME",
    "PROTOCOL_VERSION",
    "RESIGN_WORDS",
    "ErrorCode",
    "KeySpec",
    "error_parts",
    "format_ubgi_play",
    "match_state_for",
    "parse_ubgi_play",
]

PROTOCOL_VERSION = "0.2"
RESIGN_WORDS = ("none", "single", "gammon", "backgammon")
"""``bestresign`` / ``go accept`` words, indexed by resignation value 0..3."""


class ErrorCode(str, Enum):
    """The four error codes UBGI v0.2 standardises (spec §5)."""

    BAD_COMMAND = "bad_command"
    """Unknown command or malformed syntax."""
    BAD_VALUE = "bad_value"
    """A parsed value is invalid for its key or argument."""
    BAD_STATE = "bad_state"
    """A valid command that cannot be applied in the current state."""
    UNSUPPORTED = "unsupported"
    """A feature, key or format the engine does not implement."""


# --------------------------------------------------------------------------- keys


_RANGE = re.compile(r"^(-?\d+)\.\.(-?\d+)$")
KEY_NAME = re.compile(r"^[A-Za-z0-9_.-]+$")


@dataclass(frozen=True)
class KeySpec:
    """One ``key`` line: an option an engine declares (spec §4, "Key Discovery").

    ``kind`` is ``int``, ``bool``, ``enum`` or ``string``; ``low``/``high`` bound an int (None
    for ``*`` or a bare default); ``choices`` are an enum's values; ``minor`` is the ``!``
    marker (not part of a rating identity).
    """

    name: str
    kind: str
    default: str
    low: int | None = None
    high: int | None = None
    choices: tuple[str, ...] = ()
    minor: bool = False
    description: str = ""

    def line(self) -> str:
        """The ``key ...`` line declaring this key."""
        if self.kind == "int":
            shape = f"{self.low}..{self.high} " if self.low is not None and self.high is not None else "* "
        elif self.kind == "enum":
            shape = "|".join(self.choices) + " "
        elif self.kind == "string":
            shape = "* "
        else:
            shape = ""
        tail = (" !" if self.minor else "") + (f" {self.description}" if self.description else "")
        return f"key {self.name} {self.kind} {shape}{self.default}{tail}"

    def parse(self, value: str) -> str:
        """``value`` in canonical form, or `FormatError` naming the key and what it must be."""
        text = value.strip()
        if self.kind == "int":
            try:
                number = int(text)
            except ValueError:
                raise FormatError(self.name, value, "must_be an integer") from None
            if self.low is not None and self.high is not None and not self.low <= number <= self.high:
                raise FormatError(self.name, value, f"must_be {self.low}..{self.high}")
            return str(number)
        if self.kind == "bool":
            lowered = text.lower()
            if lowered in ("true", "1", "on", "yes"):
                return "true"
            if lowered in ("false", "0", "off", "no"):
                return "false"
            raise FormatError(self.name, value, "must_be true|false")
        if self.kind == "enum":
            if text not in self.choices:
                raise FormatError(self.name, value, "must_be " + "|".join(self.choices))
            return text
        if not text or "\n" in text or "\r" in text:
            raise FormatError(self.name, value, "must_be one non-empty line")
        return text

    @classmethod
    def from_line(cls, line: str) -> KeySpec:
        """Read a ``key`` line; `FormatError` if it does not follow the spec's grammar."""
        words = line.split()
        if len(words) < 4 or words[0] != "key" or not KEY_NAME.match(words[1]):
            raise FormatError("key line", line, "expected: key <name> <type> ...")
        name, kind, rest = words[1], words[2], words[3:]
        low = high = None
        choices: tuple[str, ...] = ()
        if kind == "int":
            match = _RANGE.match(rest[0])
            if match or rest[0] == "*":
                if match:
                    low, high = int(match.group(1)), int(match.group(2))
                rest = rest[1:]
        elif kind == "enum":
            choices = tuple(rest[0].split("|"))
            rest = rest[1:]
        elif kind == "string":
            if rest[0] != "*":
                raise FormatError("key line", line, "a string key reads: string * <default>")
            rest = rest[1:]
        elif kind != "bool":
            raise FormatError("key line", line, "type must be int, bool, enum or string")
        if not rest:
            raise FormatError("key line", line, "no default value")
        default, rest = rest[0], rest[1:]
        minor = bool(rest) and rest[0] == "!"
        if minor:
            rest = rest[1:]
        spec = cls(name, kind, default, low, high, choices, minor, " ".join(rest))
        spec.parse(default)  # the default must be a valid value itself
        return spec


# --------------------------------------------------------------------------- moves


def _point_name(point: int) -> str:
    if point == BAR_POINT:
        return "bar"
    if point == OFF_POINT:
        return "off"
    return str(point)


def format_ubgi_play(play: Play) -> str:
    """The ``bestmove`` payload of ``play``: every step as ``from/to`` in the order made, ``bar``
    and ``off`` by name, no ``*`` and no ``(n)`` (spec §6); ``pass`` for the empty play."""
    if not play:
        return "pass"
    return " ".join(f"{_point_name(step[0])}/{_point_name(step[1])}" for step in play)


def parse_ubgi_play(payload: str, position: Position, dice: Sequence[int]) -> Play:
    """The legal play a ``bestmove`` payload names, checked with the rules core.

    ``pass`` (or nothing, as the 0.01 draft answered) is the empty play and is legal only when
    no chequer can move. Anything else is read by the core's move parser (so ``25``/``0`` and
    gnubg's forms are tolerated) and must be one of ``position.legal_plays(dice)``; otherwise
    `IllegalAction` or `FormatError`.
    """
    text = payload.strip()
    if text in ("", "pass"):
        legal = position.legal_plays(dice)
        if legal and legal[0]:
            raise IllegalAction(f"'pass' with {dice[0]}{dice[1]}, but chequers can move "
                                f"(e.g. {format_ubgi_play(legal[0])})")
        return Play()
    return parse_play(text, position, dice)


# --------------------------------------------------------------------------- match state


def match_state_for(context: Context, *, dice: Sequence[int] | None = None,
                    doubled: bool = False, resigned: int = 0) -> MatchState:
    """The gnubg Match ID state of a decision: the side on roll sits in seat 0.

    ``context`` is the side on roll's (for a take, the doubler's: pass ``context.swapped()`` of
    the taker's). ``doubled`` / ``resigned`` make seat 1 the one to act. Raises `FormatError`
    when the context does not fit a Match ID (a score above the match length).
    """
    owner = {CubeOwner.CENTRE: -1, CubeOwner.ME: 0, CubeOwner.OPPONENT: 1}[context.cube_owner]
    rules = context.rules
    return MatchState(
        cube=context.cube_value,
        cube_owner=owner,
        on_roll=0,
        crawford=context.crawford and not context.is_money,
        game_state=GameState.PLAYING,
        turn=1 if doubled or resigned else 0,
        doubled=doubled,
        resigned=resigned,
        dice=(int(dice[0]), int(dice[1])) if dice else (0, 0),
        match_length=context.match_length,
        score=(context.my_score, context.opponent_score),
        jacoby=context.is_money and rules.jacoby and rules.cube,
    )


def error_parts(line: str) -> tuple[str, str]:
    """The code and the detail of an ``error <code> <detail>`` line."""
    words = line.split(maxsplit=2)
    code = words[1] if len(words) > 1 else ""
    return code, words[2] if len(words) > 2 else ""
