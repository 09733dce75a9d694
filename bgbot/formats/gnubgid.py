"""gnubg's Match ID and the combined GNU BG ID (``PositionID:MatchID``), both ways.

The Position ID half is `Position.position_id` / `Position.from_position_id` from the core; this
module adds the 12-character Match ID: 9 bytes (72 bits, least significant bit of byte 0 first)
in standard base64 without padding. Bit offsets, as gnubg 1.07 writes them
(reference/gnubg-interfaces.md §4.2):

====  =====  ==============================================================
bits  width  field
====  =====  ==============================================================
0     4      log2 of the cube value
4     2      cube owner: 0, 1 = seat, 3 = centred (decoded as -1)
6     1      player on roll (gnubg's ``fMove``)
7     1      Crawford game
8     3      game state (`GameState`)
11    1      player who must act now (``fTurn``)
12    1      double offered
13    2      resignation offered: 0, 1 single, 2 gammon, 3 backgammon
15    3      higher die (0 = not rolled)
18    3      lower die
21    15     match length (0 = money)
36    15     player 0's score
51    15     player 1's score
66    1      1 = the Jacoby rule is NOT in use (Debian's 1.07 sets it in every match)
====  =====  ==============================================================

Seats are gnubg's: player 0 and player 1. The Position of a GNU BG ID is seen from the player on
roll (``MatchState.on_roll``), as in gnubg, even while the other player must answer a double or
a resignation.
"""

from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass, replace
from enum import IntEnum

from ..core.errors import FormatError
from ..core.position import Position

__all__ = [
    "GameState",
    "MatchState",
    "MAX_CUBE",
    "MAX_LENGTH",
    "LONGEST_MATCH",
    "check_match_length",
    "check_playable",
    "decode_match_id",
    "encode_match_id",
    "decode_gnubgid",
    "encode_gnubgid",
    "validate_cube",
    "validate_dice",
    "validate_flag",
    "validate_int",
]

MAX_CUBE = 1 << 15
"""The largest cube a Match ID can hold (4 bits of log2)."""
MAX_LENGTH = (1 << 15) - 1
"""The largest match length or score a Match ID can hold (15 bits)."""
LONGEST_MATCH = 64
"""The longest match bgbot plays: gnubg's own limit (its MAXSCORE) and the length of the longest
match equity table; every boundary that takes a match length refuses more."""


def check_match_length(field: str, length: object) -> int:
    """``length`` if it is 0 (money) .. `LONGEST_MATCH`; else a `FormatError` naming ``field``."""
    if isinstance(length, bool) or not isinstance(length, int) or length < 0:
        raise FormatError(field, length, "a match length is 0 (money) or a whole number of points")
    if length > LONGEST_MATCH:
        raise FormatError(field, length, f"matches are at most {LONGEST_MATCH} points long "
                                         "(gnubg's limit)")
    return length

_MATCH_ID_CHARS = 12
_MATCH_ID_BYTES = 9
_USED_BITS = 67
_CENTRED_RAW = 3


class GameState(IntEnum):
    """gnubg's game state (bits 8-10 of the Match ID)."""

    NONE = 0
    PLAYING = 1
    OVER = 2
    RESIGNED = 3
    DROPPED = 4


def validate_int(field: str, value: object, low: int, high: int) -> int:
    """An int (not a bool) in ``low..high``, else `FormatError` naming ``field``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise FormatError(field, value, "must be an integer")
    if not low <= value <= high:
        raise FormatError(field, value, f"must be {low}..{high}")
    return value


def validate_flag(field: str, value: object) -> bool:
    """A bool, or 0/1 turned into one, else `FormatError` naming ``field``."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    raise FormatError(field, value, "must be a bool (or 0/1)")


def _check_pair(field: str, value: object) -> tuple[int, int]:
    if not isinstance(value, (tuple, list)) or len(value) != 2:
        raise FormatError(field, value, "must be a pair of integers")
    return validate_int(field, value[0], 0, MAX_LENGTH), validate_int(field, value[1], 0, MAX_LENGTH)


def validate_cube(field: str, value: object) -> int:
    """Validate a cube value: a power of two from 1 to `MAX_CUBE`."""
    cube = validate_int(field, value, 1, MAX_CUBE)
    if cube & (cube - 1):
        raise FormatError(field, value, "must be a power of two")
    return cube


def validate_dice(field: str, value: object) -> tuple[int, int]:
    """Validate dice: ``(0, 0)`` (not rolled) or two values 1..6; returned in the given order."""
    if not isinstance(value, (tuple, list)) or len(value) != 2:
        raise FormatError(field, value, "must be a pair (0, 0) or two dice 1..6")
    d1, d2 = value
    if isinstance(d1, bool) or isinstance(d2, bool) or not isinstance(d1, int) or not isinstance(d2, int):
        raise FormatError(field, value, "must be integers")
    if (d1, d2) != (0, 0) and not (1 <= d1 <= 6 and 1 <= d2 <= 6):
        raise FormatError(field, value, "each die must be 1..6 (or both 0: not rolled yet)")
    return d1, d2


@dataclass(frozen=True)
class MatchState:
    """Everything a gnubg Match ID carries, validated on construction.

    ``cube_owner`` is -1 (centred), 0 or 1 (gnubg seats); ``on_roll`` is the player whose turn
    it is (who rolled or is about to roll); ``turn`` is who must act now (the other player while
    a double or resignation is pending); ``dice`` is ``(high, low)`` or ``(0, 0)`` (a low-first
    pair is reordered, as gnubg stores it); ``score`` is ``(player 0, player 1)``;
    ``match_length`` 0 means a money session. Checks follow gnubg's own decoder: scores may not
    exceed the match length and there is no Crawford game in money play.
    """

    cube: int = 1
    cube_owner: int = -1
    on_roll: int = 0
    crawford: bool = False
    game_state: GameState = GameState.PLAYING
    turn: int = 0
    doubled: bool = False
    resigned: int = 0
    dice: tuple[int, int] = (0, 0)
    match_length: int = 0
    score: tuple[int, int] = (0, 0)
    jacoby: bool = False

    def __post_init__(self) -> None:
        put = object.__setattr__
        validate_cube("cube", self.cube)
        validate_int("cube_owner", self.cube_owner, -1, 1)
        validate_int("on_roll", self.on_roll, 0, 1)
        validate_int("turn", self.turn, 0, 1)
        put(self, "crawford", validate_flag("crawford", self.crawford))
        put(self, "doubled", validate_flag("doubled", self.doubled))
        put(self, "jacoby", validate_flag("jacoby", self.jacoby))
        put(self, "game_state", GameState(validate_int("game_state", self.game_state, 0, 4)))
        validate_int("resigned", self.resigned, 0, 3)
        d1, d2 = validate_dice("dice", self.dice)
        put(self, "dice", (max(d1, d2), min(d1, d2)))
        length = validate_int("match_length", self.match_length, 0, MAX_LENGTH)
        score = _check_pair("score", self.score)
        put(self, "score", score)
        if length and max(score) > length:
            raise FormatError("score", score, f"exceeds the match length {length}")
        if not length and self.crawford:
            raise FormatError("crawford", self.crawford, "there is no Crawford game in money play")

    @property
    def is_money(self) -> bool:
        """A money session (match length 0)."""
        return self.match_length == 0

    @property
    def rolled(self) -> bool:
        """The dice have been rolled (the player on roll must move)."""
        return self.dice != (0, 0)

    def swapped(self) -> MatchState:
        """The same state with gnubg's seats 0 and 1 exchanged (as gnubg's ``swap players``)."""
        return replace(
            self,
            cube_owner=self.cube_owner if self.cube_owner < 0 else 1 - self.cube_owner,
            on_roll=1 - self.on_roll,
            turn=1 - self.turn,
            score=(self.score[1], self.score[0]),
        )


def encode_match_id(state: MatchState) -> str:
    """The 12-character gnubg Match ID of ``state`` (higher die first, as gnubg writes)."""
    owner = _CENTRED_RAW if state.cube_owner < 0 else state.cube_owner
    bits = (
        (state.cube.bit_length() - 1)
        | owner << 4
        | state.on_roll << 6
        | int(state.crawford) << 7
        | int(state.game_state) << 8
        | state.turn << 11
        | int(state.doubled) << 12
        | state.resigned << 13
        | state.dice[0] << 15
        | state.dice[1] << 18
        | state.match_length << 21
        | state.score[0] << 36
        | state.score[1] << 51
        | int(not state.jacoby) << 66
    )
    return base64.b64encode(bits.to_bytes(_MATCH_ID_BYTES, "little")).decode("ascii")


def check_playable(state: MatchState, field: str = "position") -> None:
    """Refuse (`FormatError` naming ``field``) a match state no player can be asked about: a
    match longer than `LONGEST_MATCH` (the Match ID holds up to 32767 points, an XGID or a
    FIBS board line 99; the match equity tables end at gnubg's 64), or one already over (a
    score at the match length)."""
    length = state.match_length
    if length > LONGEST_MATCH:
        raise FormatError(field, length, f"a {length}-point match is longer than bgbot plays "
                                         f"({LONGEST_MATCH} points, gnubg's limit)")
    if length and max(state.score) >= length:
        raise FormatError(field, f"{state.score[0]}-{state.score[1]}",
                          f"the {length}-point match is over at this score")


def decode_match_id(text: str) -> MatchState:
    """Read a gnubg Match ID (12 base64 characters; surrounding whitespace ignored).

    Raises `FormatError` naming the field at fault: ``match id`` for the text itself (length,
    alphabet, bits beyond 66), else the `MatchState` field (e.g. ``cube_owner`` for the unused
    owner value 2, ``dice`` for a die 7).
    """
    if not isinstance(text, str):
        raise FormatError("match id", text, "must be a string")
    stripped = text.strip()
    if len(stripped) != _MATCH_ID_CHARS:
        raise FormatError("match id", text, f"must be {_MATCH_ID_CHARS} base64 characters")
    try:
        raw = base64.b64decode(stripped, validate=True)
    except (binascii.Error, ValueError):
        raise FormatError("match id", text, "is not valid base64") from None
    if len(raw) != _MATCH_ID_BYTES:
        raise FormatError("match id", text, "is not valid base64 (padding inside the id)")
    bits = int.from_bytes(raw, "little")
    if bits >> _USED_BITS:
        raise FormatError("match id", text, "has bits set beyond bit 66")

    def get(offset: int, width: int) -> int:
        return (bits >> offset) & ((1 << width) - 1)

    owner = get(4, 2)
    if owner == 2:
        raise FormatError("cube_owner", owner, f"raw value 2 is unused (0, 1 or 3 = centred) in match id {text!r}")
    game_state = get(8, 3)
    if game_state > GameState.DROPPED:
        raise FormatError("game_state", game_state, f"must be 0..4 (in match id {text!r})")
    try:
        return MatchState(
            cube=1 << get(0, 4),
            cube_owner=-1 if owner == _CENTRED_RAW else owner,
            on_roll=get(6, 1),
            crawford=bool(get(7, 1)),
            game_state=GameState(game_state),
            turn=get(11, 1),
            doubled=bool(get(12, 1)),
            resigned=get(13, 2),
            dice=(get(15, 3), get(18, 3)),
            match_length=get(21, 15),
            score=(get(36, 15), get(51, 15)),
            jacoby=not get(66, 1),
        )
    except FormatError as exc:
        raise FormatError(exc.field, exc.value, f"{exc.reason} (in match id {text!r})") from None


_ID_PREFIX = re.compile(r"^gnubgid\s*[:=]?\s*", re.IGNORECASE)
_B64_RUN = re.compile(r"[A-Za-z0-9+/]+")
_POSITION_ID_CHARS = 14


def encode_gnubgid(position: Position, state: MatchState) -> str:
    """``PositionID:MatchID``; ``position`` is seen from ``state.on_roll``, as in gnubg."""
    return f"{position.position_id()}:{encode_match_id(state)}"


def decode_gnubgid(text: str) -> tuple[Position, MatchState]:
    """Read a GNU BG ID: ``PositionID:MatchID``, with or without a ``GNUBGID`` prefix.

    Like gnubg's ``set gnubgid``, text that is not of that form is scanned for runs of base64
    characters and the first run of 14 (Position ID) and of 12 (Match ID) are taken, so gnubg's
    own ``Position ID: ... Match ID : ...`` lines paste in too. Unlike gnubg both ids are
    required. The Position is seen from the player on roll (``state.on_roll``).
    """
    if not isinstance(text, str):
        raise FormatError("gnubgid", text, "must be a string")
    body = _ID_PREFIX.sub("", text.strip())
    parts = body.split(":")
    if len(parts) == 2 and all(_B64_RUN.fullmatch(p.strip()) for p in parts):
        return Position.from_position_id(parts[0].strip()), decode_match_id(parts[1])
    position_id = match_id = None
    for run in _B64_RUN.findall(body):
        if len(run) == _POSITION_ID_CHARS and position_id is None:
            position_id = run
        elif len(run) == _MATCH_ID_CHARS and match_id is None:
            match_id = run
    if position_id is None or match_id is None:
        raise FormatError("gnubgid", text, "expected 'PositionID:MatchID' (14 and 12 base64 characters)")
    return Position.from_position_id(position_id), decode_match_id(match_id)
