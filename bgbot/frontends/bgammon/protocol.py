"""bgammon.org's wire protocol: typed events from its JSON lines, commands to send, name rules.

Pure: no I/O. Facts from the server's ``PROTOCOL.md`` and Go source (tslocum/bgammon,
``event.go``, ``gamestate.go``, ``pkg/server``), restated in
``shared/reference/online-servers.md`` §2:

- Newline-separated text both ways over TCP (port 1337). Before login the server writes one
  plain line ``hello Welcome to bgammon.org! ...``; after ``loginjson`` every event is one JSON
  object a line with ``Type`` and ``Player`` fields.
- Every client sees the game as player 1: ``Board`` has 28 spaces, 1..24 numbered from the
  client's own home (it moves 24 -> 1), 0 = its borne-off chequers, 25 = the opponent's,
  26 = its bar, 27 = the opponent's bar; positive counts are the client's chequers, negative
  the opponent's. ``Turn`` 0 = opening roll, 1 = us, 2 = the opponent. ``Player1`` is us.
- Moves are sent as ``move 24/18 13/11`` in the same numbering, ``bar`` and ``off`` for the
  bar and bearing off; ``ok`` ends the turn (or accepts a double), ``resign`` declines a double
  or resigns the game.

Parsing is strict about what the client relies on (types and ranges of the board fields) and
lenient about the rest (unknown event types and extra fields are kept, not rejected); every
failure is a `FormatError` naming the field and the value.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Mapping, Union

from ...core.errors import FormatError, InvalidPosition
from ...core.position import BAR_POINT, OFF_POINT, Play, Position

__all__ = [
    "BOARD_SPACES",
    "BoardState",
    "Event",
    "Failed",
    "Hello",
    "Joined",
    "Left",
    "Listing",
    "ListEvent",
    "Moved",
    "Notice",
    "Other",
    "Ping",
    "PlayerInfo",
    "Rolled",
    "Say",
    "ServerEvent",
    "Welcome",
    "Win",
    "check_bot_name",
    "create_command",
    "display_name",
    "login_command",
    "move_command",
    "parse_event",
    "position_from_board",
    "resign_points",
]

BOARD_SPACES = 28
HOME_ME, HOME_OPP, BAR_ME, BAR_OPP = 0, 25, 26, 27
NAME_RE = re.compile(r"^[A-Za-z0-9_]+$")
MAX_NAME = 18
"""The server's ``maxUsernameLength``."""


# ============================================================================ names


def display_name(user: str, *, guest: bool) -> str:
    """The name the server will show for login name ``user`` (lower-cased; ``bot_`` -> ``BOT_``;
    guests without a ``bot_``/``guest_`` prefix get ``Guest_``)."""
    name = user.lower()
    if name.startswith("bot_"):
        return "BOT_" + name[4:]
    if guest:
        return "Guest_" + name[6:] if name.startswith("guest_") else "Guest_" + name
    return name


def check_bot_name(user: str) -> str:
    """Check ``user`` against bgammon.org's rules for bots and return it.

    bgammon.org admits a bot or engine only under a name starting with ``BOT_`` (sent as
    ``bot_...``, any case); names are letters, digits and ``_``, at least one non-digit, at
    most 18 characters.
    """
    if not NAME_RE.match(user):
        raise FormatError("user", user, "bgammon names contain only letters, digits and _")
    if user.isdigit():
        raise FormatError("user", user, "bgammon names need at least one non-digit")
    if len(user) > MAX_NAME:
        raise FormatError("user", user, f"bgammon names have at most {MAX_NAME} characters")
    if not user.lower().startswith("bot_") or len(user) == 4:
        raise FormatError("user", user, "bots on bgammon.org must log in as bot_NAME (shown as BOT_NAME)")
    return user


# ============================================================================ commands


def _no_newline(field_name: str, text: str, shown: str | None = None) -> None:
    if "\n" in text or "\r" in text:
        raise FormatError(field_name, text if shown is None else shown, "must not contain a line break")


def login_command(client: str, user: str, password: str | None) -> str:
    """``loginjson <client> <user> [password]``; spaces in the password become ``_`` as the
    protocol asks. The password never appears in an error message."""
    _no_newline("client", client)
    _no_newline("user", user)
    if " " in client or not client:
        raise FormatError("client", client, "one word, like bgbot-0.1/en")
    parts = ["loginjson", client, user]
    if password:
        _no_newline("password", password, "<hidden>")
        parts.append(password.replace(" ", "_"))
    return " ".join(parts)


def create_command(length: int, name: str = "", password: str | None = None) -> str:
    """``create public <points> 0 [name]`` (or private with a password): a backgammon match."""
    if not 1 <= length <= 127:
        raise FormatError("length", length, "bgammon match lengths are 1 to 127 points")
    _no_newline("match name", name)
    if password:
        _no_newline("match password", password, "<hidden>")
        head = f"create private {password.replace(' ', '_')} {length} 0"
    else:
        head = f"create public {length} 0"
    return f"{head} {name}".rstrip()


def _space_text(point: int) -> str:
    if point == BAR_POINT:
        return "bar"
    if point == OFF_POINT:
        return "off"
    return str(point)


def move_command(play: Play) -> str:
    """``move 24/18 18/13 bar/22 6/off``: one ``from/to`` per die, in the order played."""
    if not play.steps:
        raise FormatError("play", str(play), "an empty play is sent as 'ok', not as a move")
    return "move " + " ".join(f"{_space_text(s.from_point)}/{_space_text(s.to_point)}" for s in play.steps)


# ============================================================================ events


@dataclass(frozen=True)
class PlayerInfo:
    """``Player1`` / ``Player2`` of a board event: name ("" while the seat is empty), rating,
    match points won so far."""

    name: str
    rating: int
    points: int
    inactive: int = 0


@dataclass(frozen=True)
class BoardState:
    """A ``board`` event: the whole game state from our side (we are always player 1)."""

    me: PlayerInfo
    opponent: PlayerInfo
    board: tuple[int, ...]
    turn: int
    roll: tuple[int, int]
    moves: tuple[tuple[int, int], ...]
    winner: int
    length: int
    crawford: int
    cube_value: int
    cube_player: int
    double_offered: bool
    available: tuple[tuple[int, int], ...]
    variant: int = 0
    started: int = 0
    ended: int = 0
    forced: bool = False
    spectating: bool = False

    @property
    def dice(self) -> tuple[int, int] | None:
        """The dice of the turn under way, or None before the roll (and in the opening)."""
        if self.turn == 0 or not self.roll[0] or not self.roll[1]:
            return None
        return self.roll

    @property
    def opponent_present(self) -> bool:
        return bool(self.opponent.name)

    def position(self) -> Position:
        """The board as a core `Position` with *us* as the mover (raises `FormatError`)."""
        return position_from_board(self.board)

    def position_for(self, player: int) -> Position:
        """The board seen from ``player`` (1 = us, 2 = the opponent) as the mover."""
        pos = self.position()
        return pos if player == 1 else pos.swapped()

    def may_double(self) -> bool:
        """The server's ``GameState.MayDouble`` for us."""
        if self.spectating or self.winner or self.variant != 0 or self.cube_value >= 64 or self.crawford == 1:
            return False
        return (self.length != 1 and self.turn == 1 and self.roll[0] == 0 and not self.double_offered
                and self.cube_player in (0, 1))

    def may_roll_opening(self) -> bool:
        """The server's ``MayRoll`` during the opening (each side rolls one die)."""
        return (self.turn == 0 and not self.winner and self.opponent_present
                and (self.roll[0] == 0 or self.roll[0] == self.roll[1]))


def position_from_board(board: tuple[int, ...] | list[int]) -> Position:
    """Our side of a bgammon ``Board`` (28 spaces, see the module docstring) as a `Position`."""
    if len(board) != BOARD_SPACES:
        raise FormatError("Board", list(board), f"expected {BOARD_SPACES} spaces, got {len(board)}")
    mover = [0] * 25
    opponent = [0] * 25
    for space in range(1, 25):
        count = board[space]
        if count > 0:
            mover[space - 1] = count
        elif count < 0:
            opponent[24 - space] = -count
    mover[24] = abs(board[BAR_ME])
    opponent[24] = abs(board[BAR_OPP])
    try:
        pos = Position(opponent, mover)
    except InvalidPosition as exc:
        raise FormatError("Board", list(board), str(exc)) from None
    off_me, off_opp = abs(board[HOME_ME]), abs(board[HOME_OPP])
    if sum(mover) + off_me != 15 or sum(opponent) + off_opp != 15:
        raise FormatError("Board", list(board), "each side must have 15 chequers (on the board, "
                          "on the bar and borne off)")
    return pos


def resign_points(position: Position) -> int:
    """What bgammon scores (times the cube) when the *mover* of ``position`` loses now by
    resigning or by declining a double: 3 if it has a chequer on the bar or in the winner's home
    board, else 2 if it has borne off none, else 1 (``serverGame.winPoints``; note that this
    applies to a declined double too, unlike the usual rules)."""
    loser = position.mover
    if loser[24] or any(loser[i] for i in range(18, 24)):
        return 3
    if sum(loser) == 15:
        return 2
    return 1


@dataclass(frozen=True)
class Hello:
    """The plain ``hello ...`` line the TCP server sends before login."""

    message: str


@dataclass(frozen=True)
class Welcome:
    player_name: str
    clients: int
    games: int


@dataclass(frozen=True)
class Ping:
    message: str


@dataclass(frozen=True)
class Notice:
    message: str


@dataclass(frozen=True)
class Say:
    player: str
    message: str


@dataclass(frozen=True)
class Listing:
    game_id: int
    password: bool
    points: int
    players: int
    rating: int
    name: str


@dataclass(frozen=True)
class ListEvent:
    games: tuple[Listing, ...]


@dataclass(frozen=True)
class Failed:
    """``failedcreate`` / ``failedjoin`` / ``failedleave`` / ``failedroll`` / ``failedmove`` /
    ``failedok``: ``kind`` is the part after ``failed``."""

    kind: str
    reason: str


@dataclass(frozen=True)
class Joined:
    player: str
    game_id: int
    player_number: int


@dataclass(frozen=True)
class Left:
    player: str


@dataclass(frozen=True)
class Rolled:
    player: str
    roll1: int
    roll2: int


@dataclass(frozen=True)
class Moved:
    player: str
    moves: tuple[tuple[int, int], ...]


@dataclass(frozen=True)
class Win:
    player: str
    points: int
    rating: int
    resigned: str


@dataclass(frozen=True)
class Other:
    """An event type the bot does not use (settings, achievements, history, ...)."""

    type: str
    data: Mapping[str, Any] = field(default_factory=dict)


Event = Union[Hello, Welcome, Ping, Notice, Say, ListEvent, Failed, Joined, Left, BoardState,
              Rolled, Moved, Win, Other]
ServerEvent = Event


def _get(data: Mapping[str, Any], key: str, kind: type, default: Any = None) -> Any:
    value = data.get(key, default)
    if value is None and default is not None:
        return default
    if kind is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise FormatError(key, value, "expected an integer")
    elif kind is bool:
        if not isinstance(value, bool):
            raise FormatError(key, value, "expected true or false")
    elif kind is str:
        if not isinstance(value, str):
            raise FormatError(key, value, "expected a string")
    return value


def _pairs(data: Mapping[str, Any], key: str) -> tuple[tuple[int, int], ...]:
    value = data.get(key)
    if value is None:
        return ()
    if not isinstance(value, list):
        raise FormatError(key, value, "expected a list of [from, to] pairs")
    out: list[tuple[int, int]] = []
    for item in value:
        if (not isinstance(item, list) or len(item) != 2
                or not all(isinstance(x, int) and not isinstance(x, bool) and 0 <= x < BOARD_SPACES
                           for x in item)):
            raise FormatError(key, value, f"bad move {item!r}: expected [from, to] with spaces 0..27")
        out.append((item[0], item[1]))
    return tuple(out)


def _player(data: Mapping[str, Any], key: str) -> PlayerInfo:
    value = data.get(key)
    if not isinstance(value, dict):
        raise FormatError(key, value, "expected an object")
    return PlayerInfo(
        name=_get(value, "Name", str, ""),
        rating=_get(value, "Rating", int, 0),
        points=_get(value, "Points", int, 0),
        inactive=_get(value, "Inactive", int, 0),
    )


def _board(data: Mapping[str, Any]) -> BoardState:
    raw = data.get("Board")
    if (not isinstance(raw, list) or len(raw) != BOARD_SPACES
            or not all(isinstance(x, int) and not isinstance(x, bool) and -15 <= x <= 15 for x in raw)):
        raise FormatError("Board", raw, f"expected {BOARD_SPACES} chequer counts between -15 and 15")
    state = BoardState(
        me=_player(data, "Player1"),
        opponent=_player(data, "Player2"),
        board=tuple(raw),
        turn=_get(data, "Turn", int),
        roll=(_get(data, "Roll1", int, 0), _get(data, "Roll2", int, 0)),
        moves=_pairs(data, "Moves"),
        winner=_get(data, "Winner", int, 0),
        length=_get(data, "Points", int),
        crawford=_get(data, "Crawford", int, 0),
        cube_value=_get(data, "DoubleValue", int, 1),
        cube_player=_get(data, "DoublePlayer", int, 0),
        double_offered=_get(data, "DoubleOffered", bool, False),
        available=_pairs(data, "Available"),
        variant=_get(data, "Variant", int, 0),
        started=_get(data, "Started", int, 0),
        ended=_get(data, "Ended", int, 0),
        forced=_get(data, "Forced", bool, False),
        spectating=_get(data, "Spectating", bool, False),
    )
    for name, value, allowed in (("Turn", state.turn, (0, 1, 2)), ("Winner", state.winner, (0, 1, 2)),
                                 ("DoublePlayer", state.cube_player, (0, 1, 2)),
                                 ("Crawford", state.crawford, (0, 1, 2))):
        if value not in allowed:
            raise FormatError(name, value, f"expected one of {allowed}")
    for name, die in (("Roll1", state.roll[0]), ("Roll2", state.roll[1])):
        if not 0 <= die <= 6:
            raise FormatError(name, die, "expected a die 0..6")
    if state.length < 1:
        raise FormatError("Points", state.length, "expected a match length >= 1")
    if state.cube_value < 1 or state.cube_value & (state.cube_value - 1):
        raise FormatError("DoubleValue", state.cube_value, "expected a power of two")
    if state.variant == 0:
        state.position()  # checks the chequer counts
    return state


def parse_event(line: str) -> Event:
    """One server line -> a typed event. Raises `FormatError` for malformed JSON, a missing or
    ill-typed field the bot relies on, or an impossible board."""
    text = line.strip()
    if text.startswith("hello"):
        return Hello(text[5:].strip())
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise FormatError("event", text[:200], f"not JSON: {exc}") from None
    except RecursionError:  # arrays or objects nested deeper than the interpreter's stack
        raise FormatError("event", text[:200], "nested too deeply to be an event") from None
    if not isinstance(data, dict):
        raise FormatError("event", text[:200], "expected a JSON object")
    kind = data.get("Type")
    if not isinstance(kind, str):
        raise FormatError("Type", kind, "every event has a Type string")
    player = data.get("Player", "")
    if not isinstance(player, str):
        raise FormatError("Player", player, "expected a string")
    if kind == "board":
        return _board(data)
    if kind == "welcome":
        return Welcome(_get(data, "PlayerName", str), _get(data, "Clients", int, 0), _get(data, "Games", int, 0))
    if kind == "ping":
        return Ping(_get(data, "Message", str, ""))
    if kind == "notice":
        return Notice(_get(data, "Message", str, ""))
    if kind == "say":
        return Say(player, _get(data, "Message", str, ""))
    if kind == "list":
        games = data.get("Games") or []
        if not isinstance(games, list):
            raise FormatError("Games", games, "expected a list")
        listings = []
        for g in games:
            if not isinstance(g, dict):
                raise FormatError("Games", g, "expected an object")
            listings.append(Listing(_get(g, "ID", int), bool(g.get("Password", False)),
                                    _get(g, "Points", int, 0), _get(g, "Players", int, 0),
                                    _get(g, "Rating", int, 0), _get(g, "Name", str, "")))
        return ListEvent(tuple(listings))
    if kind.startswith("failed"):
        return Failed(kind[6:], _get(data, "Reason", str, ""))
    if kind == "joined":
        return Joined(player, _get(data, "GameID", int), _get(data, "PlayerNumber", int, 0))
    if kind == "left":
        return Left(player)
    if kind == "rolled":
        return Rolled(player, _get(data, "Roll1", int, 0), _get(data, "Roll2", int, 0))
    if kind == "moved":
        return Moved(player, _pairs(data, "Moves"))
    if kind == "win":
        return Win(player, _get(data, "Points", int, 0), _get(data, "Rating", int, 0),
                   _get(data, "Resigned", str, ""))
    return Other(kind, data)
