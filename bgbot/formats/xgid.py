"""eXtreme Gammon's XGID, both ways, read as gnubg 1.07 reads it (``set xgid``).

``XGID=<position>:<cube exp>:<cube pos>:<turn>:<dice>:<score A>:<score B>:<rules>:<length>:<max cube>``

* position (26 characters): character 0 is the lowercase player's bar, characters 1..24 are
  points 1..24 counted from the **uppercase** player's home, character 25 is the uppercase
  player's bar; ``-`` empty, ``A``..``O`` uppercase chequers, ``a``..``o`` lowercase ones.
* cube exp: log2 of the cube value; cube pos: 0 centred, 1 uppercase owns it, -1 lowercase.
* turn: 1 = uppercase on roll, -1 = lowercase; dice: ``00`` to roll, two digits rolled, ``D`` the
  player on roll has doubled and the other must answer (XG's ``B``/``R`` beaver states are
  refused, as gnubg refuses them).
* score A is the uppercase player's, score B the lowercase player's.
* rules: in a match 1 = this is the Crawford game; in money bit 0 = Jacoby, bit 1 = beavers.
* max cube: log2 of XG's cube limit (gnubg ignores it).

Seats: **uppercase = gnubg player 1 (bottom, "X"), lowercase = gnubg player 0**, which is how
gnubg maps them (score A goes to player 1, cube pos 1 to player 1, turn 1 to player 1).

`XgidState` keeps the text's own terms (upper/lower, dice as written, the Crawford flag as
written) so `encode_xgid(decode_xgid(s)) == s` for every canonical XGID. `xgid_to_gnubg` and
`gnubg_to_xgid` convert to and from a ``(Position, MatchState)`` pair, with gnubg's reading:

* the Crawford flag survives only in a match longer than 1 point where somebody is 1-away
  (gnubg's ``set matchid`` clears it otherwise: the "Crawford flag quirk");
* Jacoby is off in match play (Match ID bit 66 set, as gnubg writes it);
* a pending double (``D``) is kept as ``doubled=True`` with ``turn`` = the other player. gnubg
  itself cannot install that state and steps back to before the double (same player on roll,
  no double offered);
* with the lowercase player on roll gnubg asks whether to swap the players so the player on
  roll is at the bottom; scripted gnubg answers yes, which moves every seat-dependent field
  (names, scores, cube owner, player on roll). ``swap_to_bottom=True`` reproduces that answer;
  by default the seats stay fixed (uppercase = player 1). The Position, seen from the player
  on roll, is the same either way.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..core.errors import FormatError, InvalidPosition
from ..core.notation import read_int
from ..core.position import Position
from .gnubgid import (
    MAX_CUBE,
    MAX_LENGTH,
    GameState,
    MatchState,
    decode_gnubgid,
    validate_cube,
    validate_dice,
    validate_flag,
    validate_int,
)

__all__ = [
    "XgidState",
    "DEFAULT_MAX_CUBE",
    "decode_xgid",
    "encode_xgid",
    "xgid_to_gnubg",
    "decode_any_id_with_xgid",
    "gnubg_to_xgid",
    "decode_any_id",
]

DEFAULT_MAX_CUBE = 1 << 10
"""XG's usual cube limit (max cube field 10)."""

_FIELDS = 10
_INT = re.compile(r"[+-]?\d+")
_PREFIX = re.compile(r"^xgid\s*=\s*", re.IGNORECASE)


@dataclass(frozen=True)
class XgidState:
    """An XGID's content in its own terms, validated on construction.

    ``position`` is seen from the player on roll (uppercase when ``turn`` is 1). ``cube`` and
    ``max_cube`` are values (powers of two; ``max_cube`` 1 = cubeless in XG). ``cube_owner``
    is XG's: 0 centred, 1 uppercase, -1 lowercase. ``dice`` is ``(0, 0)`` (to roll, or a
    double offered when ``doubled``) or the two dice in the order written. ``crawford`` only
    in a match; ``jacoby`` and ``beavers`` only in money (``match_length`` 0).
    """

    position: Position
    turn: int = 1
    cube: int = 1
    cube_owner: int = 0
    dice: tuple[int, int] = (0, 0)
    doubled: bool = False
    score_upper: int = 0
    score_lower: int = 0
    match_length: int = 0
    crawford: bool = False
    jacoby: bool = False
    beavers: bool = False
    max_cube: int = DEFAULT_MAX_CUBE

    def __post_init__(self) -> None:
        put = object.__setattr__
        if not isinstance(self.position, Position):
            raise FormatError("position", self.position, "must be a Position")
        if self.turn not in (1, -1) or isinstance(self.turn, bool):
            raise FormatError("turn", self.turn, "must be 1 (uppercase on roll) or -1 (lowercase)")
        validate_cube("cube", self.cube)
        validate_cube("max_cube", self.max_cube)
        if self.cube_owner not in (-1, 0, 1) or isinstance(self.cube_owner, bool):
            raise FormatError("cube_owner", self.cube_owner, "must be 0 (centred), 1 (uppercase) or -1 (lowercase)")
        put(self, "dice", validate_dice("dice", self.dice))
        for name in ("doubled", "crawford", "jacoby", "beavers"):
            put(self, name, validate_flag(name, getattr(self, name)))
        if self.doubled and self.dice != (0, 0):
            raise FormatError("dice", self.dice, "no dice can be showing while a double is offered")
        length = validate_int("match_length", self.match_length, 0, MAX_LENGTH)
        for name in ("score_upper", "score_lower"):
            score = validate_int(name, getattr(self, name), 0, MAX_LENGTH)
            if length and score > length:
                raise FormatError(name, score, f"exceeds the match length {length}")
        if length and (self.jacoby or self.beavers):
            raise FormatError("rules", (self.jacoby, self.beavers), "Jacoby and beavers are money-play rules")
        if not length and self.crawford:
            raise FormatError("crawford", self.crawford, "there is no Crawford game in money play")

    @property
    def is_money(self) -> bool:
        """A money game (match length 0)."""
        return self.match_length == 0

    @property
    def rules(self) -> int:
        """The XGID rules field: Crawford (match) or Jacoby + 2 * beavers (money)."""
        if self.match_length:
            return int(self.crawford)
        return int(self.jacoby) | int(self.beavers) << 1


# ----------------------------------------------------------------------------- position


def _position_text(position: Position, turn: int) -> str:
    upper, lower = (position.mover, position.opponent) if turn == 1 else (position.opponent, position.mover)
    cells = ["-"] * 26
    for index, count in enumerate(upper):
        if count:
            cells[index + 1] = chr(ord("A") + count - 1)
    for index, count in enumerate(lower):
        if count:
            cells[24 - index] = chr(ord("a") + count - 1)
    return "".join(cells)


def _read_position(text: str, turn: int) -> Position:
    if len(text) != 26:
        raise FormatError("position", text, "must be 26 characters")
    upper = [0] * 25
    lower = [0] * 25
    for cell, char in enumerate(text):
        if char == "-":
            continue
        if "A" <= char <= "P":
            if cell == 0:
                raise FormatError("position", text, "character 0 is the lowercase bar, got an uppercase chequer")
            upper[cell - 1] = ord(char) - ord("A") + 1
        elif "a" <= char <= "p":
            if cell == 25:
                raise FormatError("position", text, "character 25 is the uppercase bar, got a lowercase chequer")
            lower[24 - cell] = ord(char) - ord("a") + 1
        else:
            raise FormatError("position", text, f"bad character {char!r} at {cell} (want '-', A-P or a-p)")
    try:
        return Position(lower, upper) if turn == 1 else Position(upper, lower)
    except InvalidPosition as exc:
        raise FormatError("position", text, str(exc)) from None


# ----------------------------------------------------------------------------- text


def encode_xgid(state: XgidState) -> str:
    """The XGID text of ``state``, with the ``XGID=`` prefix and all ten fields."""
    if state.doubled:
        dice = "D"
    else:
        dice = f"{state.dice[0]}{state.dice[1]}"
    fields = (
        _position_text(state.position, state.turn),
        state.cube.bit_length() - 1,
        state.cube_owner,
        state.turn,
        dice,
        state.score_upper,
        state.score_lower,
        state.rules,
        state.match_length,
        state.max_cube.bit_length() - 1,
    )
    return "XGID=" + ":".join(str(f) for f in fields)


def decode_xgid(text: str) -> XgidState:
    """Read an XGID (``XGID=`` prefix optional, surrounding whitespace ignored).

    All ten fields are required, as gnubg requires them. Raises `FormatError` naming the field:
    ``xgid`` (shape), ``position``, ``cube``, ``cube_owner``, ``turn``, ``dice``,
    ``score_upper``, ``score_lower``, ``rules``, ``match_length``, ``max_cube``.
    """
    if not isinstance(text, str):
        raise FormatError("xgid", text, "must be a string")
    body = _PREFIX.sub("", text.strip())
    parts = body.split(":")
    if len(parts) != _FIELDS:
        raise FormatError("xgid", text, f"must have {_FIELDS} ':'-separated fields, got {len(parts)}")
    names = ("cube", "cube_owner", "turn", None, "score_upper", "score_lower", "rules", "match_length", "max_cube")
    numbers: dict[str, int] = {}
    for name, raw in zip(names, parts[1:]):
        if name is None:
            continue
        if not _INT.fullmatch(raw):
            raise FormatError(name, raw, "must be an integer")
        numbers[name] = read_int(name, raw)
    turn = numbers["turn"]
    if turn not in (1, -1):
        raise FormatError("turn", turn, "must be 1 (uppercase on roll) or -1 (lowercase)")
    position = _read_position(parts[0], turn)
    for name in ("cube", "max_cube"):
        validate_int(name, numbers[name], 0, MAX_CUBE.bit_length() - 1)
    dice_text = parts[4]
    doubled = dice_text == "D"
    if doubled:
        dice = (0, 0)
    elif len(dice_text) == 2 and dice_text.isdigit() and dice_text.isascii():
        dice = (int(dice_text[0]), int(dice_text[1]))
    elif dice_text in ("B", "R"):
        raise FormatError("dice", dice_text, "beaver/raccoon states cannot be read (gnubg refuses them too)")
    else:
        raise FormatError("dice", dice_text, "must be '00', two dice 1..6 or 'D'")
    length = validate_int("match_length", numbers["match_length"], 0, MAX_LENGTH)
    rules = numbers["rules"]
    if length:
        validate_int("rules", rules, 0, 1)
    else:
        validate_int("rules", rules, 0, 3)
    return XgidState(
        position=position,
        turn=turn,
        cube=1 << numbers["cube"],
        cube_owner=numbers["cube_owner"],
        dice=dice,
        doubled=doubled,
        score_upper=numbers["score_upper"],
        score_lower=numbers["score_lower"],
        match_length=length,
        crawford=bool(length and rules),
        jacoby=bool(not length and rules & 1),
        beavers=bool(not length and rules & 2),
        max_cube=1 << numbers["max_cube"],
    )


# ----------------------------------------------------------------------------- conversions


def xgid_to_gnubg(state: XgidState, *, swap_to_bottom: bool = False) -> tuple[Position, MatchState]:
    """The gnubg view of an XGID: (Position seen from the player on roll, MatchState).

    Uppercase is player 1 unless ``swap_to_bottom`` puts the player on roll in seat 1 (what
    scripted gnubg does after ``set xgid`` with the lowercase player on roll). See the module
    docstring for the Crawford, Jacoby and pending-double handling. ``beavers`` and
    ``max_cube`` have no place in a Match ID and are dropped.
    """
    on_roll = 1 if state.turn == 1 else 0
    length = state.match_length
    one_away = length - 1 in (state.score_upper, state.score_lower)
    match = MatchState(
        cube=state.cube,
        cube_owner={0: -1, 1: 1, -1: 0}[state.cube_owner],
        on_roll=on_roll,
        crawford=state.crawford and length > 1 and one_away,
        game_state=GameState.PLAYING,
        turn=1 - on_roll if state.doubled else on_roll,
        doubled=state.doubled,
        dice=state.dice,
        match_length=length,
        score=(state.score_lower, state.score_upper),
        jacoby=state.jacoby if not length else False,
    )
    if swap_to_bottom and on_roll == 0:
        match = match.swapped()
    return state.position, match


def gnubg_to_xgid(
    position: Position,
    state: MatchState,
    *,
    beavers: bool = False,
    max_cube: int = DEFAULT_MAX_CUBE,
) -> XgidState:
    """The XGID of a gnubg (Position, MatchState); player 1 becomes uppercase.

    An XGID holds a game in progress only: a finished game (`GameState` OVER, RESIGNED,
    DROPPED), a pending resignation, or a player to act other than the one on roll without a
    double offered raise `FormatError` naming the field. `GameState.NONE` is written as a game
    in progress. ``beavers`` (money only) and ``max_cube`` fill what a Match ID lacks.
    """
    if state.game_state not in (GameState.NONE, GameState.PLAYING):
        raise FormatError("game_state", state.game_state, "an XGID holds a game in progress only")
    if state.resigned:
        raise FormatError("resigned", state.resigned, "an XGID cannot hold a pending resignation")
    if state.doubled == (state.turn == state.on_roll):
        raise FormatError(
            "turn",
            state.turn,
            "must be the player on roll, or the other one while a double is offered",
        )
    return XgidState(
        position=position,
        turn=1 if state.on_roll == 1 else -1,
        cube=state.cube,
        cube_owner={-1: 0, 1: 1, 0: -1}[state.cube_owner],
        dice=state.dice,
        doubled=state.doubled,
        score_upper=state.score[1],
        score_lower=state.score[0],
        match_length=state.match_length,
        crawford=state.crawford,
        jacoby=state.jacoby if state.is_money else False,
        beavers=beavers if state.is_money else False,
        max_cube=max_cube,
    )


def decode_any_id(text: str) -> tuple[Position, MatchState]:
    """Read an XGID or a GNU BG ID, as gnubg's ``set gnubgid`` does (XGID tried first).

    An XGID is converted with `xgid_to_gnubg` (fixed seats: uppercase = player 1).
    """
    position, state, _ = decode_any_id_with_xgid(text)
    return position, state


def decode_any_id_with_xgid(text: str) -> tuple[Position, MatchState, XgidState | None]:
    """`decode_any_id`, and the XGID itself when the text is one (for what a Match ID has no
    place for: the beavers bit of a money game, the cube limit)."""
    if not isinstance(text, str):
        raise FormatError("id", text, "must be a string")
    stripped = text.strip()
    if _PREFIX.match(stripped) or stripped.count(":") == _FIELDS - 1:
        xgid = decode_xgid(stripped)
        position, state = xgid_to_gnubg(xgid)
        return position, state, xgid
    position, state = decode_gnubgid(stripped)
    return position, state, None
