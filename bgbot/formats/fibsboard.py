"""The FIBS ``board:`` line (CLIP "boardstyle 3"), read and written in its two dialects.

A line is ``board`` then 52 more ``:``-separated tokens: two names, then 50 integers
(reference/gnubg-interfaces.md §1, reference/online-servers.md §1.7). Two programs write it
with different meanings, so every call names its `Dialect`:

* `Dialect.FIBS` — what a FIBS server sends: centred on the first player ("You", or the
  player watched). Token 42 (colour) is the sign of that player's chequers, token 43
  (direction) the way they move in the line's slot numbering; scores, dice, borne-off and bar
  counts come in (player, opponent) order. Token 4 = 9999 means an unlimited (money) match.
* `Dialect.GNUBG` — what gnubg 1.07 sends to an external player (``set player N external``):
  always player 1's orientation (player 1 positive, moving slot 24 -> 1, bar in slot 25;
  player 0 negative, bar in slot 0), colour/direction the constants 1/-1, names and scores in
  seat order (player 0 first) **except** when the side asked is not the side on roll (a take
  request after a normal double, or a raccoon), when player 1 comes first. Token 33 is the
  side on roll (the doubler, in a take request); both dice pairs hold the roller's dice;
  token 52 = post-Crawford game, token 53 = 0 in the Crawford game (1 otherwise, also in money
  play); money is match length 0. On the wire gnubg adds ``"\\n\\0"``; the reader strips it.

Both decode to one `FibsBoard` seen from "me": the first player in FIBS, our seat in GNUBG
(``my_seat``; inferred from the line when it can be, see `parse_board`). `format_board` writes
a `FibsBoard` back in either dialect, byte for byte as the program it imitates.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum

from ..core.context import Context, CubeOwner
from ..core.errors import FormatError
from ..core.notation import MAX_DIGITS
from ..core.position import CHEQUERS, Position
from ..core.rules import Rules

__all__ = [
    "Dialect",
    "FibsBoard",
    "Request",
    "Side",
    "field_name",
    "format_board",
    "parse_board",
]

TOKENS = 53
MONEY_FIBS = 9999
"""FIBS writes an unlimited match (money play) as match length 9999; gnubg writes 0."""

_NAMES = {
    1: "board",
    2: "player name",
    3: "opponent name",
    4: "match length",
    5: "player's score",
    6: "opponent's score",
    33: "turn",
    34: "player's die 1",
    35: "player's die 2",
    36: "opponent's die 1",
    37: "opponent's die 2",
    38: "cube value",
    39: "player may double",
    40: "opponent may double",
    41: "was doubled",
    42: "colour",
    43: "direction",
    44: "home",
    45: "bar",
    46: "player's chequers borne off",
    47: "opponent's chequers borne off",
    48: "player's chequers on bar",
    49: "opponent's chequers on bar",
    50: "can move",
    51: "forced move",
    52: "did Crawford",
    53: "redoubles",
}
_INT = re.compile(r"-?[0-9]+")
_BAD_NAME_CHARS = re.compile(r"[\x00\r\n]")


def field_name(token: int) -> str:
    """The name a `FormatError` gives token ``token`` (1-based), e.g. ``token 38 (cube value)``."""
    if 7 <= token <= 32:
        return f"token {token} (board slot {token - 7})"
    return f"token {token} ({_NAMES[token]})"


class Dialect(Enum):
    """Who wrote the line (see the module docstring)."""

    FIBS = "fibs"
    GNUBG = "gnubg"


class Side(Enum):
    """A player relative to "me" (the first player in FIBS, our seat in GNUBG)."""

    ME = "me"
    OPPONENT = "opponent"

    def other(self) -> Side:
        return Side.OPPONENT if self is Side.ME else Side.ME


class Request(Enum):
    """What the line asks of the side to act."""

    ROLL_OR_DOUBLE = "roll_or_double"
    """The side on roll has not rolled: roll, or double first (gnubg asks only when it may)."""
    MOVE = "move"
    """The side on roll has rolled ``dice`` and must play them."""
    TAKE = "take"
    """A double is pending: the side to act must take, drop or (money) beaver."""
    GAME_OVER = "game_over"
    """FIBS turn 0: the game is over, or between games."""


@dataclass(frozen=True, slots=True)
class FibsBoard:
    """One board line, decoded, from "me"'s side. Also the input of `format_board`.

    ``position`` is seen from the side on roll (``on_roll``): in a take request after a normal
    double that is the doubler; while a beaver is pending (GNUBG) it is me, the original doubler.
    Construction checks that the fields fit together (raising `FormatError`), so a board that
    exists can be written.
    """

    position: Position
    kind: Request
    on_roll: Side = Side.ME
    dice: tuple[int, int] | None = None
    """The roller's dice in the order rolled; None unless ``kind`` is MOVE."""
    dialect: Dialect = Dialect.FIBS
    my_name: str = "You"
    opponent_name: str = "Opponent"
    match_length: int = 0
    """0 = money (written 9999 in FIBS)."""
    my_score: int = 0
    opponent_score: int = 0
    cube_value: int = 1
    """The cube as it stands; in a take request the pending (re)double is to twice this."""
    cube_owner: Side | None = None
    """None = centred."""
    crawford: bool | None = False
    """This game is the Crawford game; None = the line cannot tell (FIBS at N-1)."""
    post_crawford: bool | None = False
    my_seat: int | None = None
    """GNUBG: our gnubg seat, 0 or 1. FIBS: None."""
    colour: int = 1
    """Token 42. FIBS: my colour (+1 O, positive chequers; -1 X). GNUBG: always 1."""
    direction: int = -1
    """Token 43. FIBS: -1 = I move from slot 24 to slot 1, +1 = from 1 to 24. GNUBG: always -1."""
    can_move: int | None = None
    """Token 50 (FIBS: how many chequers I can move). None = work it out when constructed."""
    forced_move: int = 0
    """Token 51, kept as written (FIBS: "do not use")."""
    did_crawford: int = 0
    """Token 52 in FIBS, kept as written ("do not use"); 0 in GNUBG (there it is post-Crawford)."""
    redoubles: int = 0
    """Token 53 in FIBS (instant redoubles allowed); 0 in GNUBG (there it is the Crawford flag)."""

    def __post_init__(self) -> None:
        _check_board(self)
        if self.can_move is None:
            object.__setattr__(self, "can_move", _default_can_move(self))

    # ----------------------------------------------------------------- facts

    @property
    def to_act(self) -> Side | None:
        """Who must answer: the side asked to take in a take request, else the side on roll.

        None when the game is over. In GNUBG every request is addressed to me.
        """
        if self.kind is Request.GAME_OVER:
            return None
        if self.kind is Request.TAKE:
            return Side.ME if self.dialect is Dialect.GNUBG else self.on_roll.other()
        return self.on_roll

    @property
    def doubled(self) -> bool:
        """Token 41: a double (or beaver / raccoon) is pending."""
        return self.kind is Request.TAKE

    @property
    def is_money(self) -> bool:
        return self.match_length == 0

    @property
    def my_borne_off(self) -> int:
        return CHEQUERS - sum(self._my_counts())

    @property
    def opponent_borne_off(self) -> int:
        return CHEQUERS - sum(self._opponent_counts())

    @property
    def my_bar(self) -> int:
        return self._my_counts()[24]

    @property
    def opponent_bar(self) -> int:
        return self._opponent_counts()[24]

    def my_view(self) -> Position:
        """The board seen from me, as if I were on roll (``position`` or its swap)."""
        return self.position if self.on_roll is Side.ME else self.position.swapped()

    def _my_counts(self) -> tuple[int, ...]:
        return self.position.mover if self.on_roll is Side.ME else self.position.opponent

    def _opponent_counts(self) -> tuple[int, ...]:
        return self.position.opponent if self.on_roll is Side.ME else self.position.mover

    def context(
        self,
        *,
        rules: Rules | None = None,
        crawford: bool | None = None,
        post_crawford: bool | None = None,
        side: Side | None = None,
    ) -> Context:
        """The decision `Context` for ``side`` (default: the side to act; me once the game is over).

        ``rules`` (default `Rules()`) is narrowed to the match with `Rules.for_match`: a board
        line does not say whether Jacoby or beavers are in force. ``crawford`` and
        ``post_crawford`` override the line; they are needed for a FIBS line at a score of N-1,
        which cannot tell the Crawford game from a later one.
        """
        crawford_game = self.crawford if crawford is None else crawford
        post = self.post_crawford if post_crawford is None else post_crawford
        if crawford_game is None or post is None:
            raise FormatError(
                "crawford",
                (self.my_score, self.opponent_score, self.match_length),
                "a FIBS board at a score of N-1 does not say whether this is the Crawford game;"
                " pass crawford= and post_crawford= from the game's history",
            )
        who = side or self.to_act or Side.ME
        mine = who is Side.ME
        owner = {
            None: CubeOwner.CENTRE,
            who: CubeOwner.ME,
            who.other(): CubeOwner.OPPONENT,
        }[self.cube_owner]
        return Context(
            cube_value=self.cube_value,
            cube_owner=owner,
            match_length=self.match_length,
            my_score=self.my_score if mine else self.opponent_score,
            opponent_score=self.opponent_score if mine else self.my_score,
            crawford=crawford_game,
            post_crawford=post,
            rules=(rules or Rules()).for_match(self.match_length),
        )

    def to_line(self) -> str:
        """This board as a line of its dialect (see `format_board`)."""
        return format_board(self)


# --------------------------------------------------------------------- checks


def _fail(token: int, value: object, reason: str) -> FormatError:
    return FormatError(field_name(token), value, reason)


def _check_board(b: FibsBoard) -> None:
    """The cross-field rules every board obeys (the parser checks single tokens before this)."""
    if not isinstance(b.position, Position):
        raise FormatError("position", b.position, "must be a Position")
    gnubg = b.dialect is Dialect.GNUBG
    for token, name in ((2, b.my_name), (3, b.opponent_name)):
        if _BAD_NAME_CHARS.search(name):
            raise _fail(token, name, "a name cannot hold a newline or a NUL byte")
    if b.match_length < 0:
        raise _fail(4, b.match_length, "must be 0 (money) or a positive match length")
    for token, score in ((5, b.my_score), (6, b.opponent_score)):
        if score < 0:
            raise _fail(token, score, "a score cannot be negative")
        if b.match_length and b.kind is not Request.GAME_OVER and score >= b.match_length:
            raise _fail(token, score, f"a game is in progress, so the score is below the match "
                                      f"length {b.match_length}")
    if b.cube_value < 1 or b.cube_value & (b.cube_value - 1):
        raise _fail(38, b.cube_value, "the cube is a power of two")
    # Dice: only a MOVE has them.
    if b.kind is Request.MOVE:
        if b.dice is None or len(b.dice) != 2 or not all(1 <= d <= 6 for d in b.dice):
            raise _fail(34, b.dice, "a move request needs two dice 1..6")
    elif b.dice is not None:
        raise _fail(34, b.dice, f"a {b.kind.value} request has no dice (0:0)")
    # Crawford flags.
    for flag in (b.crawford, b.post_crawford):
        if flag is None and (gnubg or b.is_money):
            raise _fail(53 if gnubg else 52, flag, "the Crawford state is known here")
    if b.crawford and b.post_crawford:
        raise _fail(53, (b.crawford, b.post_crawford), "a game cannot be both Crawford and "
                                                       "post-Crawford")
    if (b.crawford or b.post_crawford) and b.kind is not Request.GAME_OVER:
        away = b.match_length - 1
        if b.is_money or away not in (b.my_score, b.opponent_score):
            raise _fail(52 if b.post_crawford else 53, (b.my_score, b.opponent_score),
                        "(post-)Crawford games happen only in a match with a player at N-1")
        if b.crawford and b.my_score == b.opponent_score:
            raise _fail(53, (b.my_score, b.opponent_score), "in the Crawford game only one "
                                                            "player is at N-1")
    if gnubg:
        if b.my_seat not in (0, 1):
            raise FormatError("my_seat", b.my_seat, "a GNUBG board needs our seat, 0 or 1")
        if b.colour != 1 or b.direction != -1:
            raise _fail(42, (b.colour, b.direction), "gnubg always writes colour 1, direction -1")
        if b.kind is Request.GAME_OVER:
            raise _fail(33, 0, "gnubg sends no game-over boards")
        if b.kind is not Request.TAKE and b.on_roll is not Side.ME:
            raise _fail(33, b.on_roll.value, "gnubg sends roll and move requests only to the "
                                             "side on roll")
        if b.kind is Request.TAKE and b.on_roll is Side.ME and b.cube_owner is not Side.OPPONENT:
            raise _fail(39, b.cube_owner, "a take request to the side on roll answers a beaver, "
                                          "after which the beaverer owns the cube")
        if b.did_crawford or b.redoubles:
            raise _fail(52, (b.did_crawford, b.redoubles), "tokens 52/53 are the Crawford flags "
                                                           "in GNUBG; leave these 0")
    else:
        if b.my_seat is not None:
            raise FormatError("my_seat", b.my_seat, "only GNUBG boards have gnubg seats")
        if b.colour not in (-1, 1):
            raise _fail(42, b.colour, "colour is -1 (X) or 1 (O)")
        if b.direction not in (-1, 1):
            raise _fail(43, b.direction, "direction is -1 (24 to 1) or 1 (1 to 24)")
        if b.kind is Request.TAKE and b.on_roll is not Side.OPPONENT:
            raise _fail(41, 1, "a FIBS line only says that the opponent has doubled me")
        if b.kind is Request.GAME_OVER and b.on_roll is not Side.ME:
            raise _fail(33, 0, "a game-over board is read from my side (on_roll=ME)")


def _default_can_move(b: FibsBoard) -> int:
    """FIBS's token 50: how many chequers I can move with my dice (gnubg writes 0)."""
    if b.dialect is Dialect.GNUBG or b.kind is not Request.MOVE or b.on_roll is not Side.ME:
        return 0
    assert b.dice is not None
    return max((len(play) for play in b.position.legal_plays(b.dice)), default=0)


# --------------------------------------------------------------------- geometry


def _slot_of(point: int, direction: int) -> int:
    """The line slot of ``point`` (1..24, 25 = bar) of the side moving in ``direction``."""
    if point == 25:
        return 25 if direction == -1 else 0
    return point if direction == -1 else 25 - point


def _my_geometry(b: FibsBoard) -> tuple[int, int]:
    """(sign of my chequers in the line, my direction in the line's slot numbering)."""
    if b.dialect is Dialect.GNUBG:
        sign = 1 if b.my_seat == 1 else -1
        return sign, -sign
    return b.colour, b.direction


# --------------------------------------------------------------------- parsing


def parse_board(line: str | bytes, dialect: Dialect, *, my_seat: int | None = None) -> FibsBoard:
    """Decode one ``board:`` line of ``dialect`` into a `FibsBoard` seen from me.

    Leading/trailing whitespace and NUL bytes (gnubg frames each request as ``line\\n\\0``, so
    a line reader sees the NUL at the start of the next line) are dropped.

    ``my_seat`` (GNUBG only) is our gnubg seat when already known. Without it the seat is read
    from the line: every roll or move request (token 41 = 0) goes to the side on roll, so token
    33 is us; a take request after a normal double (cube centred or owned by the doubler) goes
    to the side not on roll. A take request after a beaver (the side not on roll owns the cube)
    may be ours either way — we beavered and the doubler raccooned, or we doubled and must
    answer the beaver — so it raises `FormatError`: pass ``my_seat`` (learnt from any earlier
    request on the connection, it never changes).

    Raises `FormatError` naming the token (1-based, with its FIBS name) for any malformed or
    inconsistent line.
    """
    if isinstance(line, bytes):
        line = line.decode("utf-8", errors="replace")
    text = line.strip().strip("\x00").strip()
    tokens = text.split(":")
    if len(tokens) != TOKENS:
        raise FormatError("board line", text, f"expected {TOKENS} ':'-separated tokens, "
                                              f"got {len(tokens)}")
    if tokens[0] != "board":
        raise _fail(1, tokens[0], "a board line starts with the word 'board'")
    n = [0] * 4 + [_integer(tokens[k - 1], k) for k in range(4, TOKENS + 1)]
    _check_ranges(n, dialect)
    if dialect is Dialect.GNUBG:
        return _parse_gnubg(tokens, n, my_seat)
    if my_seat is not None:
        raise FormatError("my_seat", my_seat, "only GNUBG lines have gnubg seats")
    return _parse_fibs(tokens, n)


def _integer(token: str, k: int) -> int:
    if not _INT.fullmatch(token):
        raise _fail(k, token, "expected an integer")
    if len(token.lstrip("-").lstrip("0")) > MAX_DIGITS:
        raise _fail(k, token, "a number out of range")
    return int(token)


def _check_ranges(n: list[int], dialect: Dialect) -> None:
    """Per-token ranges, before any token is combined with another."""

    def need(k: int, ok: bool, reason: str) -> None:
        if not ok:
            raise _fail(k, n[k], reason)

    need(4, n[4] >= 0, "the match length is 0, 9999 (money) or positive")
    need(5, n[5] >= 0, "a score cannot be negative")
    need(6, n[6] >= 0, "a score cannot be negative")
    for k in range(7, 33):
        need(k, abs(n[k]) <= CHEQUERS, f"a point holds at most {CHEQUERS} chequers")
    need(33, n[33] in (-1, 0, 1), "turn is -1 (X), 1 (O) or 0 (game over)")
    for k in range(34, 38):
        need(k, 0 <= n[k] <= 6, "a die is 1..6, or 0 when not rolled")
    need(38, n[38] >= 1 and not n[38] & (n[38] - 1), "the cube is a power of two")
    for k in (39, 40, 41):
        need(k, n[k] in (0, 1), "must be 0 or 1")
    need(42, n[42] in (-1, 1), "colour is -1 (X) or 1 (O)")
    need(43, n[43] in (-1, 1), "direction is -1 (24 to 1) or 1 (1 to 24)")
    for k in range(46, 50):
        need(k, 0 <= n[k] <= CHEQUERS, f"must be 0..{CHEQUERS}")
    if dialect is Dialect.GNUBG:
        need(42, n[42] == 1, "gnubg always writes colour 1 (is this a FIBS line?)")
        need(43, n[43] == -1, "gnubg always writes direction -1 (is this a FIBS line?)")
        need(33, n[33] != 0, "gnubg's requests always name the side on roll")
        for k in (52, 53):
            need(k, n[k] in (0, 1), "gnubg writes 0 or 1 here (Crawford flags)")
    for pair in ((34, 35), (36, 37)):
        if (n[pair[0]] == 0) != (n[pair[1]] == 0):
            raise _fail(pair[1], (n[pair[0]], n[pair[1]]), "both dice are rolled, or neither")


def _sides(n: list[int], sign: int, direction: int) -> tuple[list[int], list[int]]:
    """(my 25 counts, opponent's 25 counts) from slots 0..25 (tokens 7..32)."""
    mine, theirs = [0] * 25, [0] * 25
    my_bar = _slot_of(25, direction)
    their_bar = 25 - my_bar
    for slot in range(26):
        value = n[7 + slot]
        if not value:
            continue
        count = abs(value)
        if (value > 0) == (sign > 0):
            if slot == their_bar:
                raise _fail(7 + slot, value, "this slot is the opponent's bar")
            mine[24 if slot == my_bar else (slot if direction == -1 else 25 - slot) - 1] = count
        else:
            if slot == my_bar:
                raise _fail(7 + slot, value, "this slot is my bar")
            index = 24 if slot == their_bar else (25 - slot if direction == -1 else slot) - 1
            theirs[index] = count
    return mine, theirs


def _check_totals(side: list[int], off: int, token: int, who: str) -> None:
    total = sum(side) + off
    if total != CHEQUERS:
        raise _fail(token, off, f"{who} {sum(side)} chequers on the board and bar plus {off} "
                                f"borne off make {total}, not {CHEQUERS}")


def _position(on_roll: Side, mine: list[int], theirs: list[int]) -> Position:
    return Position(theirs, mine) if on_roll is Side.ME else Position(mine, theirs)


def _dice(first: int, second: int) -> tuple[int, int] | None:
    return (first, second) if first else None


def _parse_gnubg(tokens: list[str], n: list[int], my_seat: int | None) -> FibsBoard:
    turn, doubled = n[33], n[41] == 1
    if (n[34], n[35]) != (n[36], n[37]):
        raise _fail(36, (n[36], n[37]), f"gnubg writes the roller's dice twice; tokens 34/35 "
                                         f"hold {(n[34], n[35])}")
    flags = (n[39], n[40])
    if flags == (0, 0):
        raise _fail(39, flags, "gnubg clears one flag only: the cube has one owner")
    owner_sign = {(1, 1): 0, (1, 0): 1, (0, 1): -1}[flags]  # +1 player 1, -1 player 0
    if my_seat is not None:
        if my_seat not in (0, 1):
            raise FormatError("my_seat", my_seat, "a gnubg seat is 0 or 1")
        mine = 1 if my_seat == 1 else -1
        if not doubled and turn != mine:
            raise _fail(33, turn, f"gnubg sends roll and move requests to the side on roll, "
                                  f"but we are seat {my_seat} (sign {mine})")
    elif not doubled:
        mine = turn
    elif owner_sign in (0, turn):
        mine = -turn  # a normal double: the side on roll doubled us
    else:
        raise _fail(41, 1, "a take request after a beaver (the side not on roll owns the cube) "
                           "may be either seat's: we doubled and must answer the beaver, or we "
                           "beavered and must answer the raccoon; pass my_seat")
    seat = 1 if mine == 1 else 0
    on_roll = Side.ME if turn == mine else Side.OPPONENT
    mine_counts, their_counts = _sides(n, mine, -mine)
    my_off, their_off = (n[46], n[47]) if mine == 1 else (n[47], n[46])
    _check_totals(mine_counts, my_off, 46 if mine == 1 else 47, "we have")
    _check_totals(their_counts, their_off, 47 if mine == 1 else 46, "the opponent has")
    # Names and scores in seat order, except when the side asked is not on roll.
    first, second = (tokens[1], n[5]), (tokens[2], n[6])
    player0, player1 = (second, first) if on_roll is Side.OPPONENT else (first, second)
    me, them = (player1, player0) if seat == 1 else (player0, player1)
    length = 0 if n[4] == MONEY_FIBS else n[4]
    if not length and (n[53] != 1 or n[52] != 0):
        raise _fail(53, (n[52], n[53]), "gnubg writes 0:1 here in money play")
    if doubled:
        kind = Request.TAKE
    else:
        kind = Request.MOVE if n[34] else Request.ROLL_OR_DOUBLE
    owner = None if not owner_sign else (Side.ME if owner_sign == mine else Side.OPPONENT)
    return FibsBoard(
        position=_position(on_roll, mine_counts, their_counts),
        kind=kind,
        on_roll=on_roll,
        dice=_dice(n[34], n[35]),
        dialect=Dialect.GNUBG,
        my_name=me[0],
        opponent_name=them[0],
        match_length=length,
        my_score=me[1],
        opponent_score=them[1],
        cube_value=n[38],
        cube_owner=owner,
        crawford=bool(length) and n[53] == 0,
        post_crawford=n[52] == 1,
        my_seat=seat,
        colour=n[42],
        direction=n[43],
        can_move=n[50],
        forced_move=n[51],
    )


def _parse_fibs(tokens: list[str], n: list[int]) -> FibsBoard:
    sign, direction, turn = n[42], n[43], n[33]
    mine_counts, their_counts = _sides(n, sign, direction)
    _check_totals(mine_counts, n[46], 46, "I have")
    _check_totals(their_counts, n[47], 47, "the opponent has")
    if n[48] != mine_counts[24]:
        raise _fail(48, n[48], f"my bar slot holds {mine_counts[24]}")
    if n[49] != their_counts[24]:
        raise _fail(49, n[49], f"the opponent's bar slot holds {their_counts[24]}")
    dice: tuple[int, int] | None = None
    if turn == 0:
        kind, on_roll = Request.GAME_OVER, Side.ME
    elif n[41]:
        kind, on_roll = Request.TAKE, Side.OPPONENT
        if n[34] or n[36]:
            raise _fail(34 if n[34] else 36, n[34] or n[36], "a double is answered before the "
                                                             "doubler rolls")
    else:
        on_roll = Side.ME if turn == sign else Side.OPPONENT
        own, other = (34, 36) if on_roll is Side.ME else (36, 34)
        if n[other]:
            raise _fail(other, n[other], f"token 33 puts the other player on roll: only tokens "
                                         f"{own}/{own + 1} may hold dice")
        dice = _dice(n[own], n[own + 1])
        kind = Request.MOVE if dice else Request.ROLL_OR_DOUBLE
    flags = (n[39], n[40])
    owner: Side | None
    if flags == (1, 1):
        owner = None
    elif flags == (1, 0):
        owner = Side.ME
    elif flags == (0, 1):
        owner = Side.OPPONENT
    elif n[38] == 1:
        owner = None
    elif kind is Request.TAKE:
        owner = Side.OPPONENT  # only the owner of a cube above 1 can have doubled
    else:
        raise _fail(39, flags, f"neither player may double a cube of {n[38]}: its owner is "
                               "unknown")
    length = 0 if n[4] == MONEY_FIBS else n[4]
    crawford: bool | None
    post: bool | None
    away = length - 1
    if not length or kind is Request.GAME_OVER or away not in (n[5], n[6]):
        crawford, post = False, False
    elif n[5] == n[6]:
        crawford, post = False, True  # both at N-1: the Crawford game has been played
    else:
        crawford, post = None, None  # FIBS does not say which game this is
    return FibsBoard(
        position=_position(on_roll, mine_counts, their_counts),
        kind=kind,
        on_roll=on_roll,
        dice=dice,
        dialect=Dialect.FIBS,
        my_name=tokens[1],
        opponent_name=tokens[2],
        match_length=length,
        my_score=n[5],
        opponent_score=n[6],
        cube_value=n[38],
        cube_owner=owner,
        crawford=crawford,
        post_crawford=post,
        colour=sign,
        direction=direction,
        can_move=n[50],
        forced_move=n[51],
        did_crawford=n[52],
        redoubles=n[53],
    )


# --------------------------------------------------------------------- writing


def format_board(board: FibsBoard) -> str:
    """Write ``board`` as a line of its dialect, without line end.

    GNUBG lines are what gnubg 1.07 sends its external players (append ``"\\n\\0"`` to frame
    them as gnubg does); FIBS lines are what a FIBS server sends "You". A ``:`` in a name is
    written ``_``, as gnubg does.
    """
    gnubg = board.dialect is Dialect.GNUBG
    sign, direction = _my_geometry(board)
    slots = [0] * 26
    mine, theirs = board._my_counts(), board._opponent_counts()
    for index in range(25):
        if mine[index]:
            slots[_slot_of(index + 1, direction)] = sign * mine[index]
        if theirs[index]:
            slots[_slot_of(index + 1, -direction)] = -sign * theirs[index]
    names = [_clean(board.my_name), _clean(board.opponent_name)]
    scores = [board.my_score, board.opponent_score]
    dice = board.dice or (0, 0)
    turn_sign = sign if board.on_roll is Side.ME else -sign
    if gnubg:
        # Seat order (player 0 first), swapped when the side asked is not on roll.
        if (board.my_seat == 1) == (board.on_roll is Side.ME):
            names.reverse()
            scores.reverse()
        player1_owns = board.cube_owner is (Side.ME if sign == 1 else Side.OPPONENT)
        player0_owns = board.cube_owner is (Side.OPPONENT if sign == 1 else Side.ME)
        tail = [
            turn_sign, *dice, *dice, board.cube_value,
            int(not player0_owns), int(not player1_owns), int(board.doubled),
            1, -1, 0, 25,
            board.my_borne_off if sign == 1 else board.opponent_borne_off,
            board.opponent_borne_off if sign == 1 else board.my_borne_off,
            0, 0, board.can_move or 0, board.forced_move,
            int(bool(board.post_crawford)), 0 if board.crawford else 1,
        ]
        length = board.match_length
    else:
        turn = 0 if board.kind is Request.GAME_OVER else turn_sign
        mine_dice, their_dice = (dice, (0, 0)) if board.on_roll is Side.ME else ((0, 0), dice)
        tail = [
            turn, *mine_dice, *their_dice, board.cube_value,
            int(board.cube_owner is not Side.OPPONENT), int(board.cube_owner is not Side.ME),
            int(board.doubled), board.colour, board.direction,
            0 if direction == -1 else 25, 25 if direction == -1 else 0,
            board.my_borne_off, board.opponent_borne_off, board.my_bar, board.opponent_bar,
            board.can_move or 0, board.forced_move, board.did_crawford, board.redoubles,
        ]
        length = board.match_length or MONEY_FIBS
    numbers = [length, *scores, *slots, *tail]
    return ":".join(["board", *names, *(str(x) for x in numbers)])


def _clean(name: str) -> str:
    return name.replace(":", "_")
