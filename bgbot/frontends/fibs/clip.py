"""FIBS's CLIP protocol, read side: a line splitter that copes with FIBS's framing, and a parser
that turns every line into a typed event (reference/online-servers.md §1.2-1.8).

`LineSplitter` takes raw bytes and yields clean lines: CR, trailing spaces, BEL and telnet IAC
triples removed; the ``login:`` prompt (sent without a line end) recognised on the raw buffer;
"spanner" lines split -- a ``board:`` line has exactly 53 fields, so anything glued after the
53rd field's digit starts a new line, as does anything glued after ``... The cube shows N.``
or in front of a ``board:``.  `LineSplitter.flush` hands out a partial line (the caller calls it
after a short silence, for the unterminated lines FIBS and its clones send).

`parse_line` never raises: a line it does not know becomes `Unknown`, a ``board:`` line that
does not parse becomes `BoardLine` with ``board`` None and the `FormatError` in ``error``.
Names in events are as the server wrote them; ``"You"`` in a server sentence is `YOU`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Union

from ...core.errors import FormatError
from ...formats.fibsboard import Dialect, FibsBoard, parse_board

__all__ = [
    "YOU", "MAX_LINE", "LineSplitter", "parse_line", "Event",
    "LoginPrompt", "Welcome", "OwnInfo", "MotdStart", "MotdEnd", "WhoInfo", "WhoEnd",
    "UserLoggedIn", "UserLoggedOut", "Message", "MessageDelivered", "MessageSaved", "Chat",
    "ChatEcho", "SettingValue", "BoardLine", "Invited", "SavedMatchWarning", "JoinHint",
    "MatchStarted", "MatchLoaded", "ResumeInfo", "NewGame", "OpeningRoll", "FirstMove",
    "RollPrompt", "Rolled", "PleaseMove", "Moved", "CantMove", "OnlyMove", "BearingOff",
    "Doubled", "DoubleAccepted", "DoubleRejected", "ResignOffered", "ResignAccepted",
    "ResignRejected", "GameWon", "ScoreLine", "JoinPrompt", "MatchWon", "GameSaved",
    "WaitForJoin", "ServerMessage", "ConnectionTimedOut", "Unknown",
]

YOU = "You"
"""How FIBS names the reader in its sentences."""

BOARD_FIELDS = 53
_IAC = re.compile(rb"\xff[\xf0-\xfe].|\xff\xff", re.DOTALL)
_PROMPTS = ("login:",)
_CUBE_SHOWS = re.compile(r"The cube shows \d+\.")


MAX_LINE = 16 * 1024
"""The longest line read, in bytes (FIBS's longest, a ``who`` or a shout, are far shorter); a
longer one is dropped as it comes, so a server that never ends a line costs neither memory
nor time (the gnubg player reads at most 4 KB a line, the bgammon client 1 MiB)."""


class LineSplitter:
    """Bytes in, clean lines out (see the module docstring). Linear in what it is fed: each
    byte is looked at once, and a line above ``max_line`` bytes is dropped (counted in
    `dropped`) instead of being held."""

    def __init__(self, max_line: int = MAX_LINE) -> None:
        self.max_line = max_line
        self.dropped = 0
        """Lines dropped for being longer than ``max_line``."""
        self._partial = bytearray()
        self._skipping = False

    @property
    def pending(self) -> str:
        """The partial line held back (decoded, cleaned)."""
        return _clean(_IAC.sub(b"", bytes(self._partial)).decode("utf-8", errors="replace"))

    def feed(self, data: bytes) -> list[str]:
        """Add ``data``; return the complete lines it finishes (and a ``login:`` prompt)."""
        lines: list[str] = []
        start = 0
        while True:
            end = data.find(b"\n", start)
            if end < 0:
                break
            piece = data[start:end]
            if self._skipping:
                self._skipping = False
            elif len(self._partial) + len(piece) > self.max_line:
                self.dropped += 1
            else:
                self._partial += piece
                lines.extend(_lines(bytes(self._partial)))
            self._partial.clear()
            start = end + 1
        rest = data[start:]
        if not self._skipping and rest:
            if len(self._partial) + len(rest) > self.max_line:
                self.dropped += 1
                self._skipping = True
                self._partial.clear()
            else:
                self._partial += rest
        if 0 < len(self._partial) <= 64:  # a prompt comes without a line end
            prompt = self.pending
            if prompt in _PROMPTS or prompt.endswith(" login:"):
                lines.append("login:")
                self._partial.clear()
        return [line for line in lines if line]

    def flush(self) -> list[str]:
        """Hand out the partial line (call after a short silence)."""
        rest = "" if self._skipping else self.pending
        self._partial.clear()
        return [line for line in split_glued(rest) if line]


def _lines(raw: bytes) -> list[str]:
    return split_glued(_clean(_IAC.sub(b"", raw).decode("utf-8", errors="replace")))


def _clean(text: str) -> str:
    return text.replace("\r", "").replace("\x07", "").replace("\x00", "").rstrip()


def split_glued(line: str) -> list[str]:
    """Split one received line into the lines FIBS meant (the "spanner" cases)."""
    out: list[str] = []
    while line:
        start = line.find("board:")
        if start > 0:
            out.append(line[:start].rstrip())
            line = line[start:]
            continue
        if start == 0:
            parts = line.split(":", BOARD_FIELDS - 1)
            last = parts[-1]
            match = re.match(r"-?\d+", last)
            if match and match.end() < len(last):
                if len(parts) == BOARD_FIELDS:
                    # The last field (redoubles) is one digit on FIBS; the rest is a new line.
                    cut = len(line) - len(last) + (2 if last.startswith("-") else 1)
                elif not last[match.end()].isdigit():
                    # A short (damaged) board: text glued after its last number.
                    cut = len(line) - len(last) + match.end()
                else:
                    cut = 0
                if cut:
                    out.append(line[:cut])
                    line = line[cut:].lstrip()
                    continue
            out.append(line)
            break
        cube = _CUBE_SHOWS.search(line)
        if cube and cube.end() < len(line):
            out.append(line[: cube.end()])
            line = line[cube.end():].lstrip()
            continue
        out.append(line)
        break
    return [piece for piece in out if piece]


# ------------------------------------------------------------------------------ events


@dataclass(frozen=True)
class LoginPrompt:
    """``login:`` (sent without a line end). A second one after our login line means failure."""


@dataclass(frozen=True)
class Welcome:
    """CLIP 1: ``1 name last_login last_host``."""

    name: str
    last_login: int
    last_host: str


@dataclass(frozen=True)
class OwnInfo:
    """CLIP 2: our own settings, by name (booleans as bool, rating float, rest as text)."""

    name: str
    settings: dict[str, bool]
    experience: int
    rating: float
    redoubles: str
    timezone: str


@dataclass(frozen=True)
class MotdStart:
    """CLIP 3."""


@dataclass(frozen=True)
class MotdEnd:
    """CLIP 4."""


@dataclass(frozen=True)
class WhoInfo:
    """CLIP 5: one user's status (``opponent``/``watching`` None for ``-``)."""

    name: str
    opponent: str | None
    watching: str | None
    ready: bool
    away: bool
    rating: float
    experience: int
    idle: int
    login: int
    hostname: str
    client: str
    email: str


@dataclass(frozen=True)
class WhoEnd:
    """CLIP 6."""


@dataclass(frozen=True)
class UserLoggedIn:
    """CLIP 7."""

    name: str
    text: str


@dataclass(frozen=True)
class UserLoggedOut:
    """CLIP 8."""

    name: str
    text: str


@dataclass(frozen=True)
class Message:
    """CLIP 9: a stored message."""

    sender: str
    time: int
    text: str


@dataclass(frozen=True)
class MessageDelivered:
    """CLIP 10."""

    name: str


@dataclass(frozen=True)
class MessageSaved:
    """CLIP 11."""

    name: str


@dataclass(frozen=True)
class Chat:
    """CLIP 12-15 and 20: someone talks; ``kind`` is say/shout/whisper/kibitz/alert."""

    kind: str
    name: str
    text: str


@dataclass(frozen=True)
class ChatEcho:
    """CLIP 16-19: the echo of what we said; ``name`` only for 16 (say/tell)."""

    kind: str
    name: str | None
    text: str


@dataclass(frozen=True)
class SettingValue:
    """``Value of 'boardstyle' set to 3.``"""

    name: str
    value: str


@dataclass(frozen=True)
class BoardLine:
    """A ``board:`` line; ``board`` None (and ``error`` set) when it does not parse."""

    raw: str
    board: FibsBoard | None
    error: FormatError | None = None


@dataclass(frozen=True)
class Invited:
    """``X wants to play a N point match with you.`` (``length`` None = unlimited), or
    ``X wants to resume a saved match with you.`` (``resume``)."""

    name: str
    length: int | None
    resume: bool = False


@dataclass(frozen=True)
class SavedMatchWarning:
    """``WARNING: Don't accept if you want to continue the saved N point match!`` -- it names
    no one: it belongs to the last invitation."""

    length: int


@dataclass(frozen=True)
class JoinHint:
    """``Type 'join X' to accept.``"""

    name: str


@dataclass(frozen=True)
class MatchStarted:
    """We joined or were joined: ``** You are now playing a N point match with X`` /
    ``** Player X has joined you for a N point match.`` (``length`` None = unlimited)."""

    opponent: str
    length: int | None


@dataclass(frozen=True)
class MatchLoaded:
    """A saved match was resumed with ``opponent``."""

    opponent: str


@dataclass(frozen=True)
class ResumeInfo:
    """The lines after a resume: ``turn: X.``, ``match length: N``, ``points for X: N``."""

    key: str
    name: str | None
    value: str


@dataclass(frozen=True)
class NewGame:
    """``Starting a new game with X.``"""

    opponent: str


@dataclass(frozen=True)
class OpeningRoll:
    """``You rolled 5, X rolled 2`` (or a watched pair of names)."""

    first: str
    first_die: int
    second: str
    second_die: int


@dataclass(frozen=True)
class FirstMove:
    """``It's your turn to move.`` (``name`` = YOU) or ``X makes the first move.``"""

    name: str


@dataclass(frozen=True)
class RollPrompt:
    """``It's your turn. Please roll or double``."""


@dataclass(frozen=True)
class Rolled:
    """``You roll 3 and 1.`` / ``X rolls 6 and 5.``"""

    name: str
    dice: tuple[int, int]


@dataclass(frozen=True)
class PleaseMove:
    """``Please move N pieces.``"""

    count: int


@dataclass(frozen=True)
class Moved:
    """``X moves 24-18 18-13 .`` -- ``text`` is the pairs without the final dot."""

    name: str
    text: str


@dataclass(frozen=True)
class CantMove:
    """``You can't move.`` / ``X can't move.``"""

    name: str


@dataclass(frozen=True)
class OnlyMove:
    """``The only possible move is 24-23 .`` (automove on)."""

    text: str


@dataclass(frozen=True)
class BearingOff:
    """``Bearing off: 6 o 5 o`` (greedy on)."""

    text: str


@dataclass(frozen=True)
class Doubled:
    """``You double. ...`` / ``X doubles. Type 'accept' or 'reject'.`` / ``X redoubles to N. ...``"""

    name: str
    cube: int | None = None


@dataclass(frozen=True)
class DoubleAccepted:
    """``You accept the double. The cube shows 2.`` / ``X accepts the double. ...``"""

    name: str
    cube: int | None


@dataclass(frozen=True)
class DoubleRejected:
    """``X gives up. You win N points.`` / ``You give up. X wins N points.``"""

    name: str
    points: int


@dataclass(frozen=True)
class ResignOffered:
    """``You want to resign. X will win N points.`` / ``X wants to resign. You will win N ...``"""

    name: str
    points: int


@dataclass(frozen=True)
class ResignAccepted:
    """``X accepts and wins N points.`` / ``You accept and win N points.`` -- ``name`` accepted."""

    name: str
    points: int


@dataclass(frozen=True)
class ResignRejected:
    """``X rejects. The game continues.`` / ``You reject. The game continues.``"""

    name: str


@dataclass(frozen=True)
class GameWon:
    """``You win the game and get 1 point. Congratulations!`` / ``X wins the game and gets N points. Sorry.``"""

    name: str
    points: int


@dataclass(frozen=True)
class ScoreLine:
    """``score in 5 point match: a-1 b-0`` (``length`` None for unlimited)."""

    length: int | None
    scores: dict[str, int]


@dataclass(frozen=True)
class JoinPrompt:
    """``Type 'join' if you want to play the next game, type 'leave' if you don't.``"""


@dataclass(frozen=True)
class MatchWon:
    """``You win the 5 point match 5-2 .`` / ``X wins the 5 point match 6-2 .``"""

    name: str
    length: int
    winner_score: int
    loser_score: int


@dataclass(frozen=True)
class GameSaved:
    """The match was interrupted and saved: ``how`` is left/logout/drop/timeout/terminated."""

    name: str
    how: str


@dataclass(frozen=True)
class WaitForJoin:
    """``** Please wait for X to join too.``"""

    name: str


@dataclass(frozen=True)
class ServerMessage:
    """Any other ``** ...`` line (acknowledgement or error); ``text`` without the stars."""

    text: str


@dataclass(frozen=True)
class ConnectionTimedOut:
    """``Connection timed out.`` -- the server closes the connection."""


@dataclass(frozen=True)
class Unknown:
    """A line the parser does not know (logged, never fatal)."""

    text: str


Event = Union[
    LoginPrompt, Welcome, OwnInfo, MotdStart, MotdEnd, WhoInfo, WhoEnd, UserLoggedIn,
    UserLoggedOut, Message, MessageDelivered, MessageSaved, Chat, ChatEcho, SettingValue,
    BoardLine, Invited, SavedMatchWarning, JoinHint, MatchStarted, MatchLoaded, ResumeInfo,
    NewGame, OpeningRoll, FirstMove, RollPrompt, Rolled, PleaseMove, Moved, CantMove, OnlyMove,
    BearingOff, Doubled, DoubleAccepted, DoubleRejected, ResignOffered, ResignAccepted,
    ResignRejected, GameWon, ScoreLine, JoinPrompt, MatchWon, GameSaved, WaitForJoin,
    ServerMessage, ConnectionTimedOut, Unknown,
]

# ------------------------------------------------------------------------------ parsing

_OWN_BOOLS = ("allowpip", "autoboard", "autodouble", "automove", "away", "bell", "crawford",
              "double")
_OWN_BOOLS2 = ("greedy", "moreboards", "moves", "notify")
_CHAT = {12: "say", 13: "shout", 14: "whisper", 15: "kibitz", 20: "alert"}
_ECHO = {17: "shout", 18: "whisper", 19: "kibitz"}
_N = r"(\S+)"
_LEN = r"(?:a (\d+) point|an unlimited)"

_PATTERNS: list[tuple[re.Pattern[str], str]] = [(re.compile(p), k) for p, k in [
    (r"^Value of '(\w+)' set to (.*?)\.?$", "setting"),
    (rf"^{_N} wants to play {_LEN} match with you\.$", "invited"),
    (rf"^{_N} wants to resume a saved match with you\.$", "invited_resume"),
    (r"^WARNING: Don't accept if you want to continue the saved (\d+) point match!?$", "warning"),
    (rf"^Type 'join {_N}' to accept\.$", "join_hint"),
    (rf"^\*\* You are now playing {_LEN} match with {_N}\.?$", "joined"),
    (rf"^(?:\*\* )?Player {_N} has joined you for {_LEN} match\.?$", "was_joined"),
    (rf"^You are now playing with {_N}\. Your running match was loaded\.$", "loaded"),
    (rf"^{_N} has joined you\. Your running match was loaded\.$", "loaded"),
    (rf"^turn: (\S+?)\.?$", "resume_turn"),  # BaldLies writes no dot
    (r"^match length: (\d+)$", "resume_length"),
    (r"^unlimited matchlength$", "resume_unlimited"),
    (rf"^points for (?:user )?{_N}: (\d+)$", "resume_points"),  # BaldLies adds "user"
    (rf"^Starting a new game with {_N}\.$", "new_game"),
    (rf"^{_N} rolled (\d), {_N} rolled (\d)\.?$", "opening"),
    (r"^It's your turn to move\.$", "your_first"),
    (rf"^{_N} makes the first move\.$", "their_first"),
    (r"^It's your turn\. Please roll or double\.?$", "roll_prompt"),
    (r"^You roll (\d) and (\d)\.$", "you_roll"),
    (rf"^{_N} rolls (\d) and (\d)\.$", "rolls"),
    (r"^Please move (\d) pieces?\.$", "please_move"),
    (rf"^{_N} moves (.*?) ?\.$", "moves"),
    (r"^You can't move\.$", "you_cant"),
    (rf"^{_N} can't move\.$", "cant"),
    (r"^The only possible move is (.*?) ?\.$", "only_move"),
    (r"^Bearing off: (.*)$", "bearing_off"),
    (r"^You double\. Please wait for \S+ to accept or reject\.$", "you_double"),
    (rf"^{_N} doubles\.(?: Type 'accept' or 'reject'\.)?$", "doubles"),
    (rf"^{_N} redoubles to (\d+)\..*$", "redoubles"),
    (r"^You accept the double\.(?: The cube shows (\d+)\.)?$", "you_accept_double"),
    (rf"^{_N} accepts the double\.(?: The cube shows (\d+)\.)?$", "accepts_double"),
    (rf"^You give up\. {_N} wins (\d+) points?\.$", "you_give_up"),
    (rf"^{_N} gives up\. You win (\d+) points?\.$", "gives_up"),
    (rf"^You want to resign\. {_N} will win (\d+) points?\.$", "you_resign"),
    (rf"^{_N} wants to resign\. You will win (\d+) points?\..*$", "resigns"),
    (r"^You accept and win (\d+) points?\.$", "you_accept_resign"),
    (rf"^{_N} accepts and wins (\d+) points?\.$", "accepts_resign"),
    (r"^You reject\. The game continues\.$", "you_reject_resign"),
    (rf"^{_N} rejects\. The game continues\.$", "rejects_resign"),
    (r"^You win the game and get (\d+) points?\. Congratulations!$", "you_win_game"),
    (rf"^{_N} wins the game and gets (\d+) points?\. Sorry\.$", "wins_game"),
    (r"^score in (\d+|unlimited) point match: (.*)$", "score"),
    (r"^Type 'join' if you want to play the next game, type 'leave' if you don't\.$", "join_prompt"),
    (r"^You win the (\d+) point match (\d+)-(\d+) ?\.$", "you_win_match"),
    (rf"^{_N} wins the (\d+) point match (\d+)-(\d+) ?\.$", "wins_match"),
    (rf"^\*\* Player {_N} has left the game\. The game was saved\.$", "saved_left"),
    (rf"^{_N} logs out\. The game was saved\.$", "saved_logout"),
    (rf"^{_N} drops connection\. The game was saved\.$", "saved_drop"),
    (rf"^Connection with {_N} timed out\. The game was saved\.$", "saved_timeout"),
    (r"^\*\* You terminated the game\. The game was saved\.$", "saved_terminated"),
    (rf"^\*\* Please wait for {_N} to join too\.$", "wait_join"),
    (r"^Connection timed out\.$", "timed_out"),
]]


def _length(text: str | None) -> int | None:
    return int(text) if text else None


def parse_line(line: str) -> Event:
    """The event a clean line (from `LineSplitter`) stands for; never raises."""
    try:
        return _parse(line)
    except (ValueError, IndexError) as exc:  # a numbered line with bad fields
        return Unknown(f"{line} [{exc}]")


def _parse(line: str) -> Event:
    if line == "login:":
        return LoginPrompt()
    if line.startswith("board:"):
        try:
            return BoardLine(line, parse_board(line, Dialect.FIBS))
        except FormatError as exc:
            return BoardLine(line, None, exc)
    numbered = re.match(r"^(\d{1,2})(?: (.*))?$", line)
    if numbered:
        event = _numbered(int(numbered.group(1)), numbered.group(2) or "")
        if event is not None:
            return event
    for pattern, kind in _PATTERNS:
        match = pattern.match(line)
        if match:
            return _build(kind, match.groups(), line)
    if line.startswith("**"):
        return ServerMessage(line.lstrip("*").strip())
    return Unknown(line)


def _numbered(code: int, rest: str) -> Event | None:
    fields = rest.split()
    if code == 1 and len(fields) >= 2:
        return Welcome(fields[0], int(fields[1]), fields[2] if len(fields) > 2 else "")
    if code == 2 and len(fields) >= 21:
        flags = [f == "1" for f in fields[1:22]]
        settings = dict(zip(_OWN_BOOLS, flags[0:8]))
        settings.update(zip(_OWN_BOOLS2, flags[9:13]))
        settings.update({"ratings": fields[15] == "1", "ready": fields[16] == "1",
                         "report": fields[18] == "1", "silent": fields[19] == "1"})
        return OwnInfo(fields[0], settings, int(fields[9]), float(fields[14]), fields[17],
                       fields[20] if len(fields) > 20 else "")
    if code == 3 and not fields:
        return MotdStart()
    if code == 4 and not fields:
        return MotdEnd()
    if code == 5 and len(fields) >= 9:
        def opt(text: str) -> str | None:
            return None if text == "-" else text
        more = fields + ["-"] * (12 - len(fields))
        return WhoInfo(fields[0], opt(fields[1]), opt(fields[2]), fields[3] == "1",
                       fields[4] == "1", float(fields[5]), int(fields[6]), int(fields[7]),
                       int(fields[8]), more[9], more[10], more[11])
    if code == 6 and not fields:
        return WhoEnd()
    if code in (7, 8) and fields:
        text = rest[len(fields[0]):].strip()
        return UserLoggedIn(fields[0], text) if code == 7 else UserLoggedOut(fields[0], text)
    if code == 9 and len(fields) >= 2:
        return Message(fields[0], int(fields[1]), rest.split(None, 2)[2] if len(fields) > 2 else "")
    if code == 10 and fields:
        return MessageDelivered(fields[0])
    if code == 11 and fields:
        return MessageSaved(fields[0])
    if code in _CHAT and fields:
        return Chat(_CHAT[code], fields[0], rest[len(fields[0]):].strip())
    if code == 16 and fields:
        return ChatEcho("say", fields[0], rest[len(fields[0]):].strip())
    if code in _ECHO:
        return ChatEcho(_ECHO[code], None, rest)
    return None


def _build(kind: str, g: tuple[str | None, ...], line: str) -> Event:
    s = [x or "" for x in g]
    if kind == "setting":
        return SettingValue(s[0], s[1])
    if kind == "invited":
        return Invited(s[0], _length(g[1]))
    if kind == "invited_resume":
        return Invited(s[0], None, resume=True)
    if kind == "warning":
        return SavedMatchWarning(int(s[0]))
    if kind == "join_hint":
        return JoinHint(s[0])
    if kind == "joined":
        return MatchStarted(s[1], _length(g[0]))
    if kind == "was_joined":
        return MatchStarted(s[0], _length(g[1]))
    if kind == "loaded":
        return MatchLoaded(s[0])
    if kind == "resume_turn":
        return ResumeInfo("turn", s[0], s[0])
    if kind == "resume_length":
        return ResumeInfo("match length", None, s[0])
    if kind == "resume_unlimited":
        return ResumeInfo("match length", None, "unlimited")
    if kind == "resume_points":
        return ResumeInfo("points", s[0], s[1])
    if kind == "new_game":
        return NewGame(s[0])
    if kind == "opening":
        return OpeningRoll(s[0], int(s[1]), s[2], int(s[3]))
    if kind == "your_first":
        return FirstMove(YOU)
    if kind == "their_first":
        return FirstMove(s[0])
    if kind == "roll_prompt":
        return RollPrompt()
    if kind == "you_roll":
        return Rolled(YOU, (int(s[0]), int(s[1])))
    if kind == "rolls":
        return Rolled(s[0], (int(s[1]), int(s[2])))
    if kind == "please_move":
        return PleaseMove(int(s[0]))
    if kind == "moves":
        return Moved(s[0], s[1].strip())
    if kind == "you_cant":
        return CantMove(YOU)
    if kind == "cant":
        return CantMove(s[0])
    if kind == "only_move":
        return OnlyMove(s[0].strip())
    if kind == "bearing_off":
        return BearingOff(s[0].strip())
    if kind == "you_double":
        return Doubled(YOU)
    if kind == "doubles":
        return Doubled(s[0])
    if kind == "redoubles":
        return Doubled(s[0], int(s[1]))
    if kind == "you_accept_double":
        return DoubleAccepted(YOU, _length(g[0]))
    if kind == "accepts_double":
        return DoubleAccepted(s[0], _length(g[1]))
    if kind == "you_give_up":
        return DoubleRejected(YOU, int(s[1]))
    if kind == "gives_up":
        return DoubleRejected(s[0], int(s[1]))
    if kind == "you_resign":
        return ResignOffered(YOU, int(s[1]))
    if kind == "resigns":
        return ResignOffered(s[0], int(s[1]))
    if kind == "you_accept_resign":
        return ResignAccepted(YOU, int(s[0]))
    if kind == "accepts_resign":
        return ResignAccepted(s[0], int(s[1]))
    if kind == "you_reject_resign":
        return ResignRejected(YOU)
    if kind == "rejects_resign":
        return ResignRejected(s[0])
    if kind == "you_win_game":
        return GameWon(YOU, int(s[0]))
    if kind == "wins_game":
        return GameWon(s[0], int(s[1]))
    if kind == "score":
        scores: dict[str, int] = {}
        for item in s[1].split():
            name, _, points = item.rpartition("-")
            if not name or not points.isdigit():
                return Unknown(line)
            scores[name] = int(points)
        return ScoreLine(None if s[0] == "unlimited" else int(s[0]), scores)
    if kind == "join_prompt":
        return JoinPrompt()
    if kind == "you_win_match":
        return MatchWon(YOU, int(s[0]), int(s[1]), int(s[2]))
    if kind == "wins_match":
        return MatchWon(s[0], int(s[1]), int(s[2]), int(s[3]))
    if kind.startswith("saved_"):
        how = kind[len("saved_"):]
        return GameSaved(YOU if how == "terminated" else s[0], how)
    if kind == "wait_join":
        return WaitForJoin(s[0])
    if kind == "timed_out":
        return ConnectionTimedOut()
    return Unknown(line)  # pragma: no cover - every kind above is handled
