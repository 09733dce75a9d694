"""Jellyfish ``.mat`` match files: gnubg's exact layout when writing, the wild variants when reading.

Records (`MatchRecord`, `GameRecord`) hold what a .mat file knows: the length (0 = money), the
names (seat 0 = the left column, seat 1 = the right one), the rules in so far as the header says
(gnubg assumes Crawford; XG's tags may say more), the header tags and comment lines, and per game
the score before it, whether it is the Crawford game, the actions (the core `Game`'s history
types; `Moved.play` keeps the sub-moves in the order they were written or played) and the
`GameOutcome`.

Writing (`format_match`, `write_match`) reproduces gnubg 1.07's ``export match mat`` byte for
byte (reference §5.1-5.3, and gnubg's own output for beavers, raccoons and resignations):
``%3d) `` move numbers, the left entry padded to 27 columns plus one space, dice larger first,
sub-moves ``from/to`` in the order played with ``*`` on the first landing on a blot, a space after
each sub-move but the fourth, `` Doubles => N``, `` Takes``, `` Drops``, `` Beavers => N`` (for a
raccoon too; the take of a beaver is not written, the take of a raccoon is two spaces), and the
``Wins N point(s)`` placements of gnubg. Four deliberate differences, where gnubg's output is
wrong or unreadable: ``Wins`` always carries the points actually scored (gnubg counts a pending
double when the doubled player resigns, and ignores the Jacoby rule on played-out gammons);
``Doubles => N`` carries the real cube (gnubg ignores automatic doubles); a resignation
right after winning the opening roll with seat 1 leaves the left column empty (gnubg writes the
roll in the left column, which reads as seat 0's); and a score line whose left cell
(``name : score``) fills its 31 columns gets one space before the right name (gnubg glues the
two, cuts names at 31 characters, and reads its own glued line back with the wrong names).

Names are sanitised when written (`sanitize_name`): control characters (newlines, tabs) become
spaces, ``:`` ``,`` and ``"`` become ``_`` (a colon ends the name on the score line, a comma
starts a GridGammon rating, a quote ends a tag value), runs of spaces become one, and leading and
trailing spaces go; an empty name becomes ``Player 1`` / ``Player 2``.

Reading is visitor based, like python-chess's ``pgn``: `walk_match` splits the text into
header, games and entries and calls a `MatVisitor`; `read_match` / `parse_match` use
`MatchRecordVisitor`, which replays every move through the core `Game` and raises
`MatFormatError` (a `FormatError`) naming the game, move number, column and text of the first
entry it cannot accept. Accepted variants (reference §5.4): ``;`` or ``#`` headers, a UTF-8 BOM,
``N point match`` in any case and ``Match of N points``, ``Takes``/``Accepts``,
``Drops``/``Passes``/``Rejects``, ``Resigns``/``Resigned Game`` lines (ignored, as gnubg does:
the ``Wins`` line says it), dice without a colon or with spaces around it, dice in either order,
``bar``/``off``, compressed moves, ``(2)`` repeats, XG's ``Cannot Move`` and ``???``,
GridGammon ``name,1600`` ratings, CRLF line ends, trailing spaces, ``Wins N point(s) and the
match``, ``Game N`` with or without the leading space.

As gnubg's import does, a ``Wins`` line while the game is still in progress is a resignation by
the other seat (worth 1, 2 or 3 times the cube: the smallest value that reaches the points
written); an empty move is a roll before a resignation when that seat's resignation follows,
else a dance, or the only legal play when it is forced (an error when several plays exist); the
take of a beaver (not written) or of a raccoon (blanks) is implied by the next entry of the seat
on roll; and the Crawford game is the first game whose score line has exactly one player at
length - 1. Money files are replayed with beavers and raccoons allowed, up to gnubg's default
chain of three redoubles after a double (unless a ``Beaver "Off"`` tag says otherwise) and the Jacoby rule off unless a tag turns it on; a played-out game's
``Wins`` may count a gammon either way.
"""

from __future__ import annotations

import datetime as _dt
import re
from dataclasses import dataclass, field, replace
from typing import IO, Generic, Mapping, Sequence, TextIO, TypeVar

from ..core.errors import FormatError, IllegalAction
from ..core.game import (
    Action,
    AutoDoubled,
    Beavered,
    Doubled,
    Dropped,
    Game,
    GameOutcome,
    Moved,
    OpeningRolled,
    Phase,
    Raccooned,
    Resigned,
    ResignationAccepted,
    ResignationRejected,
    Rolled,
    Taken,
)
from ..core.notation import parse_chains, play_from_chains, read_int
from ..core.position import Play, Position
from ..core.rules import Rules
from .gnubgid import LONGEST_MATCH

__all__ = [
    "GameRecord",
    "MatFormatError",
    "MatLocation",
    "MatVisitor",
    "MatchRecord",
    "MatchRecordVisitor",
    "format_game",
    "format_header",
    "format_match",
    "game_record",
    "join_games",
    "parse_match",
    "read_match",
    "record_names",
    "rule_tags",
    "sanitize_name",
    "walk_match",
    "write_match",
]

Dice = tuple[int, int]
T = TypeVar("T")

# ============================================================================ records


@dataclass
class GameRecord:
    """One game of a match file.

    ``actions`` are the core `Game` history records in order (`OpeningRolled`, `Rolled`,
    `Moved`, `Doubled`, `Taken`, `Dropped`, `Beavered`, `Raccooned`, `Resigned`,
    `ResignationAccepted`, ...); `Moved.play` lists the sub-moves in the order played (as
    written in the file when read). ``outcome`` is None for an unfinished game; its ``points``
    are the ``Wins N`` of the file when read.
    """

    number: int
    score: tuple[int, int]
    """The score before this game, (seat 0, seat 1)."""
    crawford: bool = False
    """This game is the Crawford game (no doubling)."""
    post_crawford: bool = False
    actions: list[Action] = field(default_factory=list)
    outcome: GameOutcome | None = None

    @property
    def winner(self) -> int | None:
        return None if self.outcome is None else self.outcome.winner

    @property
    def points(self) -> int:
        """Points won in this game (0 while unfinished)."""
        return 0 if self.outcome is None else self.outcome.points

    @property
    def ending(self) -> str | None:
        """``normal`` (played out), ``drop``, ``resign``, or None while unfinished."""
        return None if self.outcome is None else self.outcome.ending


@dataclass
class MatchRecord:
    """A whole match file: length (0 = money), names, rules, header tags, comments, games."""

    length: int
    names: tuple[str, str] = ("Player 1", "Player 2")
    rules: Rules = field(default_factory=Rules)
    """The rules as far as the file knows them (gnubg assumes Crawford; XG tags say more)."""
    tags: dict[str, str] = field(default_factory=dict)
    """Header tags in file order, e.g. ``{"EventDate": "2026.11.29"}`` (values without quotes)."""
    comments: list[str] = field(default_factory=list)
    """The match comment, one entry per ``; ...`` line."""
    games: list[GameRecord] = field(default_factory=list)
    ratings: tuple[str | None, str | None] = (None, None)
    """GridGammon ``name,1600`` ratings of the first score line, if any."""

    @classmethod
    def create(
        cls,
        length: int,
        names: tuple[str, str],
        rules: Rules | None = None,
        *,
        when: _dt.datetime | _dt.date | None = None,
        tags: Mapping[str, str] | None = None,
    ) -> MatchRecord:
        """A new, empty record stamped like gnubg's ``new match``: ``EventDate`` (and
        ``EventTime`` when ``when`` has a time) from ``when`` (default: now), the rules'
        tags (`rule_tags`), then ``tags``."""
        stamp = _dt.datetime.now() if when is None else when
        rules = rules if rules is not None else Rules()
        header = {"EventDate": f"{stamp.year:04d}.{stamp.month:02d}.{stamp.day:02d}"}
        if isinstance(stamp, _dt.datetime):
            header["EventTime"] = f"{stamp.hour:02d}.{stamp.minute:02d}"
        header.update(rule_tags(rules, length))
        header.update(tags or {})
        return cls(length, (names[0], names[1]), rules, header)

    @property
    def final_score(self) -> tuple[int, int]:
        """(seat 0, seat 1): the uncapped sums of the points of the games each side won."""
        score = [0, 0]
        for game in self.games:
            if game.outcome is not None:
                score[game.outcome.winner] += game.outcome.points
        return score[0], score[1]

    def add_game(
        self,
        game: Game,
        score_before: Sequence[int] | None = None,
        crawford: bool | None = None,
    ) -> GameRecord:
        """Append ``game`` (finished or not) from its history and outcome, and return it.

        The score and the Crawford flag default to the game's own; the number is the next one.
        """
        record = game_record(game, len(self.games) + 1, score_before, crawford)
        self.games.append(record)
        return record


def game_record(game: Game, number: int, score_before: Sequence[int] | None = None,
                crawford: bool | None = None) -> GameRecord:
    """Game ``number`` of a match file from a core ``game`` (finished or not): its history and
    outcome; the score before it and the Crawford flag default to the game's own."""
    score = game.score if score_before is None else (int(score_before[0]), int(score_before[1]))
    return GameRecord(
        number=number,
        score=(score[0], score[1]),
        crawford=game.crawford if crawford is None else crawford,
        post_crawford=game.post_crawford,
        actions=list(game.history),
        outcome=game.outcome,
    )


# ============================================================================ errors


@dataclass(frozen=True, slots=True)
class MatLocation:
    """Where a reader is in a match file: line (1-based), game, move number, seat, entry text."""

    line: int = 0
    game: int | None = None
    move: int | None = None
    seat: int | None = None
    text: str | None = None

    def describe(self) -> str:
        parts: list[str] = []
        if self.game is not None:
            parts.append(f"game {self.game}")
        if self.move is not None:
            parts.append(f"move {self.move}")
        if self.seat is not None:
            side = "left" if self.seat == 0 else "right"
            parts.append(f"{side} column (seat {self.seat})")
        if self.line:
            parts.append(f"line {self.line}")
        return ", ".join(parts) or "match file"


class MatFormatError(FormatError):
    """A .mat file that cannot be read: the message names game, move, column, line and text."""

    def __init__(self, reason: str, location: MatLocation | None = None,
                 value: object | None = None) -> None:
        self.location = location if location is not None else MatLocation()
        shown = value if value is not None else (self.location.text or "")
        super().__init__(self.location.describe(), shown, reason)

    @property
    def game(self) -> int | None:
        return self.location.game

    @property
    def move(self) -> int | None:
        return self.location.move

    @property
    def seat(self) -> int | None:
        return self.location.seat

    @property
    def line(self) -> int:
        return self.location.line

    @property
    def text(self) -> str | None:
        return self.location.text


# ============================================================================ writing

_UNSAFE = re.compile(r'[\x00-\x1f\x7f:,"]')
_TAG_ORDER = (
    "Site", "Event", "Round", "Match ID", "Player 1", "Player 2", "Player 1 Elo",
    "Player 2 Elo", "TimeControl", "EventDate", "EventTime", "Variation", "Jacoby", "Beaver",
    "Unrated", "Crawford", "CubeLimit", "Transcriber",
)
"""gnubg's tag order (Site, Event, Round, EventDate, Variation, Transcriber) merged with XG's."""
_XG_NO_LIMIT = 1024
_GNUBG_BEAVERS = 3
"""gnubg's default ``set beavers``: beavers and raccoons allowed after one double."""


def sanitize_name(name: str, seat: int = 0) -> str:
    """``name`` made safe for the score line and the tags (rule in the module docstring)."""
    text = _UNSAFE.sub(lambda m: " " if m.group() < " " or m.group() == "\x7f" else "_", name)
    text = " ".join(text.split())
    return text or f"Player {seat + 1}"


def rule_tags(rules: Rules, length: int) -> dict[str, str]:
    """XG's header tags for the rules that a game record cannot show and gnubg would otherwise
    assume (gnubg ignores these tags; `bgbot analyze` and XG read them): a money session
    always says ``Jacoby`` and ``Beaver`` (gnubg assumes both on, bgbot plays both off by
    default); a match says ``Crawford "Off"`` when so; ``CubeLimit`` gives a cube limit, and
    ``"1"`` (no double possible) for cubeless play."""
    tags: dict[str, str] = {}
    if length:
        if not rules.crawford:
            tags["Crawford"] = "Off"
    else:
        tags["Jacoby"] = "On" if rules.jacoby and rules.cube else "Off"
        tags["Beaver"] = "On" if rules.beavers and rules.cube else "Off"
    if not rules.cube:
        tags["CubeLimit"] = "1"
    elif rules.cube_limit:
        tags["CubeLimit"] = str(rules.cube_limit)
    return tags


def _tag_value(value: str) -> str:
    return " ".join(re.sub(r"[\x00-\x1f\x7f]", " ", value).replace('"', "'").split())


def _points_text(points: int) -> str:
    return f"Wins {points} point{'' if points == 1 else 's'}"


def _move_text(dice: Dice, play: Play, before: Position) -> str:
    """gnubg's ``DD: from/to ...``: larger die first, ``*`` on the first landing on a blot."""
    high, low = max(dice), min(dice)
    out = [f"{high}{low}: "]
    opponent = before.opponent
    landed: set[int] = set()
    for index, (source, target, _hit) in enumerate(play):
        star = "*" if target > 0 and opponent[24 - target] and target not in landed else ""
        landed.add(target)
        out.append(f"{source}/{target}{star}" + (" " if index < 3 else ""))
    return "".join(out)


class _Entry:
    """One thing gnubg's exporter writes in a column: a move record of its own kind."""

    __slots__ = ("kind", "seat", "text", "points", "ends_game")

    def __init__(self, kind: str, seat: int, text: str = "", points: int = 0,
                 ends_game: bool = False) -> None:
        self.kind = kind  # move, setdice, double, take, drop, resign
        self.seat = seat
        self.text = text
        self.points = points
        self.ends_game = ends_game


def _entries(game: GameRecord) -> list[_Entry]:
    """The column entries of ``game``, as gnubg's move records would give them."""
    actions = game.actions
    outcome = game.outcome
    entries: list[_Entry] = []
    redoubles = 0  # beavers and raccoons since the last double
    for index, action in enumerate(actions):
        if isinstance(action, (AutoDoubled, Resigned, ResignationRejected)):
            continue
        if isinstance(action, (Rolled, OpeningRolled)):
            # A roll shows with its move; a roll never played (the game ended by a resignation,
            # or is unfinished) shows alone, as gnubg writes its "dice rolled" record.
            if isinstance(action, OpeningRolled):
                if action.winner is None:
                    continue
                seat, dice = action.winner, (action.die0, action.die1)
            else:
                seat, dice = action.seat, action.dice
            following = next(
                (a for a in actions[index + 1:]
                 if not isinstance(a, (Resigned, ResignationRejected))),
                None,
            )
            if not isinstance(following, (Moved, Rolled, Doubled)):
                entries.append(_Entry("setdice", seat, f"{max(dice)}{min(dice)}: "))
        elif isinstance(action, Moved):
            points = outcome.points if outcome is not None and outcome.ending == "normal" else 0
            ends = bool(points) and index == len(actions) - 1  # the last chequer borne off
            entries.append(_Entry(
                "move", action.seat, _move_text(action.dice, action.play, action.before),
                points, ends,
            ))
        elif isinstance(action, Doubled):
            redoubles = 0
            entries.append(_Entry("double", action.seat, f" Doubles => {action.cube}"))
        elif isinstance(action, (Beavered, Raccooned)):
            redoubles += 1
            entries.append(_Entry("double", action.seat, f" Beavers => {action.cube}"))
        elif isinstance(action, Taken):
            # gnubg writes no take after a beaver (or any odd number of redoubles: the doubler
            # takes) and two spaces after a raccoon (an even number: the beaverer takes).
            if redoubles % 2:
                continue
            entries.append(_Entry("take", action.seat, "  " if redoubles else " Takes"))
        elif isinstance(action, Dropped):
            points = outcome.points if outcome is not None else action.cube // 2
            entries.append(_Entry("drop", action.seat, points=points))
        elif isinstance(action, ResignationAccepted):
            points = outcome.points if outcome is not None else action.value
            entries.append(_Entry("resign", 1 - action.seat, points=points))
    return entries


def _score_line(names: tuple[str, str], score: tuple[int, int]) -> str:
    """A game's score line: the left cell padded to 31 columns, as gnubg writes it, and at
    least one space after a longer one (gnubg glues the cells there, and then reads its own
    file back with the wrong names; it reads the spaced line right, cutting names at 31)."""
    left = f"{names[0]} : {score[0]}"
    return f" {left:<31}{' ' if len(left) >= 31 else ''}{names[1]} : {score[1]}\n"


def format_game(game: GameRecord, names: tuple[str, str]) -> str:
    """One game in gnubg's layout (the column machine of its exporter, entry by entry), for
    names already sanitised (`sanitize_name`); `format_match` is the header and these."""
    out = [f" Game {game.number}\n", _score_line(names, game.score)]
    column = 0  # even: the next entry goes in the left column, odd: in the right one
    dice_rolled = False
    for entry in _entries(game):
        kind = entry.kind
        if kind == "move":
            dice_rolled = False
        elif kind == "setdice":
            dice_rolled = True
        text = entry.text
        if kind == "drop":
            gap = "\n      " if column & 1 else " " * 23
            text = f" Drops{gap}{_points_text(entry.points)}"
        elif kind == "resign":
            wins = _points_text(entry.points) + "\n"
            flip = bool(column & 1) ^ dice_rolled
            if entry.seat == 1:  # seat 1 resigned: seat 0 wins
                text = ("\n" if flip else "") + "      " + wins
            elif column & 1:
                text = (" " if flip else " " * 24) + wins
            else:
                text = (" " if flip else " " * 34) + wins
        if column == 0 and entry.seat == 1 and kind != "resign":
            out.append("  1)" + " " * 29)  # seat 1 opens: the left column stays empty
            column = 1
        if column & 1 or kind == "resign":
            out.append(text)
            if kind != "setdice":
                out.append("\n")
        elif kind != "setdice":
            out.append(f"{column // 2 + 1:3d}) {text:<27} ")
        else:
            out.append(f"{column // 2 + 1:3d}) {text}")
        if kind == "drop":
            out.append("\n" if column & 1 else "\n\n")
        if entry.ends_game:
            lead = " " * 34 if column & 1 else "\n      "
            out.append(f"{lead}{_points_text(entry.points)}\n\n")
        column += 1
    return "".join(out)


def _header_tags(record: MatchRecord, xg_tags: bool) -> dict[str, str]:
    tags = {key: _tag_value(value) for key, value in record.tags.items()}
    if xg_tags:
        rules = record.rules
        tags["Player 1"] = sanitize_name(record.names[0], 0)
        tags["Player 2"] = sanitize_name(record.names[1], 1)
        tags.setdefault("Variation", "Backgammon")
        if record.length:
            tags["Crawford"] = "On" if rules.crawford else "Off"
        else:
            tags["Jacoby"] = "On" if rules.jacoby else "Off"
            tags["Beaver"] = "On" if rules.beavers else "Off"
        tags["CubeLimit"] = str(rules.cube_limit or _XG_NO_LIMIT) if rules.cube else "1"
    ordered = {key: tags[key] for key in _TAG_ORDER if key in tags}
    ordered.update((key, value) for key, value in tags.items() if key not in ordered)
    return ordered


def _plain(text: str) -> str:
    """A header line's text as it is written and read: control characters are spaces, runs of
    spaces one, none at the ends. Reader and writer both use it, so a tag line that ends in a
    control character is a tag, not a comment that the next reading would take for a tag."""
    return " ".join(_CONTROL.sub(" ", text).split())


_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def format_header(record: MatchRecord, *, xg_tags: bool = False) -> str:
    """What comes before the first game: the tags, the comment lines and ``N point match``
    (the games of ``record`` are not looked at, but for the XG tags' names)."""
    out: list[str] = []
    for key, value in _header_tags(record, xg_tags).items():
        out.append(f'; [{key} "{value}"]\n')
    if record.comments:
        lines = [_plain(c) for c in record.comments]
        out.append("\n" + "\n".join(f"; {line}" for line in lines))
    out.append("\n")
    out.append(f" {record.length} point match\n\n")
    return "".join(out)


def record_names(record: MatchRecord) -> tuple[str, str]:
    """The names as the score lines show them (`sanitize_name`)."""
    return sanitize_name(record.names[0], 0), sanitize_name(record.names[1], 1)


def join_games(texts: Sequence[str]) -> str:
    """`format_game` texts one after the other: an unfinished game followed by another gets
    the blank line a finished game ends with."""
    out = list(texts)
    for index, text in enumerate(out[:-1]):
        if not text.endswith("\n\n"):
            out[index] = text + ("\n" if text.endswith("\n") else "\n\n")
    return "".join(out)


def format_match(record: MatchRecord, *, xg_tags: bool = False) -> str:
    """The match as gnubg's ``export match mat`` writes it (see the module docstring).

    With ``xg_tags`` the header also carries XG's tags: ``Player 1``/``Player 2``, ``Variation``,
    ``Crawford`` (matches) or ``Jacoby`` and ``Beaver`` (money), ``CubeLimit`` (1024 = none);
    ``EventTime`` is written when the record has it (`MatchRecord.create` stamps it).
    """
    names = record_names(record)
    return format_header(record, xg_tags=xg_tags) + join_games(
        [format_game(game, names) for game in record.games])


def write_match(record: MatchRecord, handle: TextIO, *, xg_tags: bool = False) -> None:
    """Write `format_match` to a text handle (open it with ``newline="\\n"`` for LF files)."""
    handle.write(format_match(record, xg_tags=xg_tags))


# ============================================================================ reading: visitor


class MatVisitor(Generic[T]):
    """Callbacks for `walk_match`, in file order. Seat 0 = left column, seat 1 = right column.

    The parser sets `location` before each call. A callback may raise `IllegalAction` or
    `FormatError`: the parser turns it into a `MatFormatError` at the current location and
    passes it to `handle_error`, which raises it (override it to log and go on).
    """

    location: MatLocation = MatLocation()

    def begin_match(self, length: int, tags: Mapping[str, str], comments: Sequence[str]) -> None:
        """The ``N point match`` line (0 = money), with the header read before it."""

    def begin_game(self, number: int, names: tuple[str, str], scores: tuple[int, int],
                   ratings: tuple[str | None, str | None] = (None, None)) -> None:
        """A ``Game N`` line and its score line."""

    def move(self, seat: int, dice: Dice, text: str) -> None:
        """A roll and its move text (``""``: no move written); dice as written."""

    def double(self, seat: int, cube: int | None) -> None:
        """``Doubles => N`` (``cube`` None when no value is written)."""

    def take(self, seat: int) -> None:
        """``Takes`` / ``Accepts``."""

    def drop(self, seat: int) -> None:
        """``Drops`` / ``Passes`` / ``Rejects``."""

    def beaver(self, seat: int, cube: int | None) -> None:
        """``Beavers => N`` (gnubg writes it for raccoons too)."""

    def raccoon(self, seat: int, cube: int | None) -> None:
        """``Raccoons => N``."""

    def wins(self, seat: int, points: int, and_match: bool) -> None:
        """``Wins N point(s)`` in ``seat``'s column: that seat won the game."""

    def resign(self, seat: int, text: str) -> None:
        """A ``Resigns`` / ``Resigned Game`` line (gnubg ignores them: ``Wins`` follows)."""

    def end_game(self) -> None:
        """The game's last line was read."""

    def end_match(self) -> None:
        """The end of the file."""

    def handle_error(self, error: MatFormatError) -> None:
        """Called with every error; the default raises it."""
        raise error

    def result(self) -> T:
        """What `walk_match` returns."""
        raise NotImplementedError


# ============================================================================ reading: parser

_MATCH_LINE = re.compile(r"\s*(\d+)\s+point\s+match\b", re.IGNORECASE)
_MATCH_OF = re.compile(r"\s*match\s+of\s+(\d+)\s+points?\b", re.IGNORECASE)
_GAME_LINE = re.compile(r"\s*game\s+(\d+)\s*$", re.IGNORECASE)
_SCORE_LINE = re.compile(r"\s*([^:]*?)\s*:\s*(\d+)\s+([^:]*?)\s*:\s*(\d+)\s*$")
_TAG = re.compile(r'\[\s*([^"\]]+?)\s+"(.*)"\s*\]\s*$')
_NUMBER = re.compile(r"\s*(\d+)\)")
_KEYWORDS = (
    r"(?:re)?doubles?|beavers?|raccoons?|takes?|accepts?|drops?|pass(?:es)?|rejects?"
    r"|refuses?|wins?|resign\w*"
)
_STARTS = re.compile(rf"(?<!\S)(?:\d\d\s?:|(?:{_KEYWORDS})\b)", re.IGNORECASE)
_BARE_DICE = re.compile(
    r"\d\d(?=\s+(?:bar|b|\d{1,2})\s*[/-]|\s*$|\s{2,}|\s+(?:cannot|\?\?\?))", re.IGNORECASE)
_DICE_CELL = re.compile(r"(\d)(\d)\s*:?\s*(.*)$", re.DOTALL)
_CUBE = re.compile(r"(?:(?:re)?doubles?|beavers?|raccoons?)\s*(?:=>?\s*(\d+))?\s*\.?$",
                   re.IGNORECASE)
_WINS = re.compile(r"wins?\s+(\d+)\s+points?\s*(and\s+the\s+match)?\s*\.?$", re.IGNORECASE)
_SIMPLE = re.compile(r"(takes?|accepts?|drops?|pass(?:es)?|rejects?|refuses?)\s*\.?$",
                     re.IGNORECASE)
_RIGHT_COLUMN = 15
"""A lone entry starting at this column or later is in the right column (gnubg splits there)."""
_QUIRK_WINS_COLUMN = 25
_ROLL_ONLY = re.compile(r"\d\d\s*:?\s*$")


class _Parser(Generic[T]):
    """Walks the lines of a match file and calls the visitor."""

    def __init__(self, text: str, visitor: MatVisitor[T]) -> None:
        if text.startswith("\ufeff"):
            text = text[1:]
        self.lines = re.split(r"\r\n|\r|\n", text)
        self.visitor = visitor
        self.index = 0
        self.game: int | None = None
        self.move: int | None = None

    # ---------------------------------------------------------------- plumbing

    def where(self, seat: int | None = None, text: str | None = None) -> MatLocation:
        return MatLocation(self.index, self.game, self.move, seat, text)

    def fail(self, reason: str, seat: int | None = None, text: str | None = None) -> None:
        self.visitor.handle_error(MatFormatError(reason, self.where(seat, text)))

    def number(self, digits: str, what: str, seat: int | None = None,
               text: str | None = None) -> int | None:
        """The count a pattern's run of digits writes, or None (the error reported) for one too
        long to mean anything."""
        try:
            return read_int(what, digits)
        except FormatError as exc:
            self.fail(f"{what}: {exc.reason}", seat, text)
            return None

    def call(self, seat: int | None, text: str | None, name: str, *args: object) -> None:
        location = self.where(seat, text)
        self.visitor.location = location
        error: MatFormatError | None = None
        try:
            getattr(self.visitor, name)(*args)
        except MatFormatError as exc:
            error = exc
        except (IllegalAction, FormatError) as exc:
            error = MatFormatError(str(exc), location)
        if error is not None:
            self.visitor.handle_error(error)

    def next_line(self) -> str | None:
        if self.index >= len(self.lines):
            return None
        line = self.lines[self.index]
        self.index += 1
        return line.expandtabs(8).rstrip()

    # ---------------------------------------------------------------- header

    def run(self) -> T:
        tags: dict[str, str] = {}
        comments: list[str] = []
        length: int | None = None
        while length is None:
            line = self.next_line()
            if line is None:
                self.index = 0
                self.fail("no 'N point match' line found", text="")
                return self.visitor.result()
            stripped = line.strip()
            if not stripped:
                continue
            if stripped[0] in ";#":
                body = _plain(stripped[1:])
                tag = _TAG.match(body)
                if tag:
                    tags[tag.group(1)] = tag.group(2)
                elif body:
                    comments.append(body)
                continue
            found = _MATCH_LINE.match(line) or _MATCH_OF.match(line)
            if found:
                length = self.number(found.group(1), "match length", text=stripped)
                if length is not None and length > LONGEST_MATCH:
                    self.fail(f"matches are at most {LONGEST_MATCH} points long (gnubg's limit)",
                              text=stripped)
            # gnubg skips anything else before the match line
        self.call(None, None, "begin_match", length, tags, comments)
        self.body()
        self.call(None, None, "end_match")
        return self.visitor.result()

    # ---------------------------------------------------------------- body

    def body(self) -> None:
        in_game = False
        while True:
            line = self.next_line()
            if line is None:
                break
            stripped = line.strip()
            if not stripped or stripped[0] in ";#":
                continue
            game_line = _GAME_LINE.match(line)
            if game_line:
                if in_game:
                    self.call(None, None, "end_game")
                number = self.number(game_line.group(1), "game number", text=stripped)
                in_game = number is not None and self.begin_game(number)
                continue
            if not in_game:
                self.fail("expected 'Game N' before the moves", text=stripped)
                continue
            self.entries(line)
        if in_game:
            self.call(None, None, "end_game")

    def begin_game(self, number: int) -> bool:
        self.game, self.move = number, None
        line = self.next_line()
        while line is not None and not line.strip():
            line = self.next_line()
        found = _SCORE_LINE.match(line or "")
        if line is None or not found:
            self.fail("expected the score line 'name : score   name : score'", text=line or "")
            return False
        names: list[str] = []
        ratings: list[str | None] = []
        for group in (1, 3):
            name, comma, rating = found.group(group).partition(",")
            names.append(" ".join(name.split()))
            ratings.append(rating.strip() if comma else None)
        first = self.number(found.group(2), "score", text=line)
        second = self.number(found.group(4), "score", text=line)
        if first is None or second is None:
            return False
        scores = (first, second)
        self.call(None, None, "begin_game", number, (names[0], names[1]), scores,
                  (ratings[0], ratings[1]))
        return True

    def entries(self, line: str) -> None:
        numbered = _NUMBER.match(line)
        start = 0
        if numbered:
            self.move = self.number(numbered.group(1), "move number", text=line.strip())
            if self.move is None:
                return
            start = numbered.end()
        body = line[start:]
        starts = sorted({m.start() for m in _STARTS.finditer(body)} | self.bare_dice(body))
        if not starts:
            if body.strip():
                self.fail("unrecognised line", text=line.strip())
            return
        if body[: starts[0]].strip():
            self.fail("unrecognised text before the first entry", text=line.strip())
            return
        cells = [(p, body[p:q].strip()) for p, q in zip(starts, [*starts[1:], len(body)])]
        if len(cells) > 2 or (len(cells) == 2 and start + cells[0][0] >= _RIGHT_COLUMN):
            self.fail("more than one entry in a column", text=line.strip())
            return
        if len(cells) == 1:
            seats = [1 if start + cells[0][0] >= _RIGHT_COLUMN else 0]
        elif (
            start + cells[1][0] < _QUIRK_WINS_COLUMN
            and _ROLL_ONLY.match(cells[0][1])
            and cells[1][1].lower().startswith("win")
        ):
            # gnubg's own layout when seat 1 wins the opening roll and resigns at once:
            # "  1) 63:       Wins 1 point" (the roll is seat 1's, the win seat 0's).
            seats = [1, 0]
        else:
            seats = [0, 1]
        for seat, (_, text) in zip(seats, cells):
            self.entry(seat, text)

    @staticmethod
    def bare_dice(body: str) -> set[int]:
        """Dice written without a colon, at the start of a column only."""
        found: set[int] = set()
        for match in _BARE_DICE.finditer(body):
            p = match.start()
            if (not body[:p].strip() or body[max(0, p - 2):p] == "  ") and (
                p + 2 >= len(body) or body[p + 2] != ":"
            ):
                found.add(p)
        return found

    def entry(self, seat: int, text: str) -> None:
        dice = _DICE_CELL.match(text)
        if dice and text[:2].isdigit():
            d1, d2 = int(dice.group(1)), int(dice.group(2))
            if not (1 <= d1 <= 6 and 1 <= d2 <= 6):
                self.fail(f"dice must be 1..6, got {d1} and {d2}", seat, text)
                return
            rest = dice.group(3).strip()
            if rest.lower().startswith("cannot move") or rest.startswith("???"):
                rest = ""
            self.call(seat, text, "move", seat, (d1, d2), rest)
            return
        word = text.split()[0].lower()
        if word.startswith(("double", "redouble", "beaver", "raccoon")):
            cube = _CUBE.match(text)
            if not cube:
                self.fail("unreadable cube action", seat, text)
                return
            value = self.number(cube.group(1), "cube value", seat, text) if cube.group(1) else None
            if cube.group(1) and value is None:
                return
            name = "double" if word.startswith(("double", "redouble")) else (
                "beaver" if word.startswith("beaver") else "raccoon")
            self.call(seat, text, name, seat, value)
        elif word.startswith("win"):
            wins = _WINS.match(text)
            if not wins:
                self.fail("unreadable 'Wins N points' entry", seat, text)
                return
            points = self.number(wins.group(1), "points won", seat, text)
            if points is not None:
                self.call(seat, text, "wins", seat, points, bool(wins.group(2)))
        elif word.startswith("resign"):
            self.call(seat, text, "resign", seat, text)
        elif _SIMPLE.match(text):
            name = "take" if word.startswith(("take", "accept")) else "drop"
            self.call(seat, text, name, seat)
        else:
            self.fail("unrecognised entry", seat, text)


def _decode(data: bytes) -> str:
    """UTF-8 (with or without BOM), else Latin-1 as older Windows programs wrote."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("latin-1")


def walk_match(source: str | bytes | IO[str] | IO[bytes], visitor: MatVisitor[T]) -> T:
    """Read a match file (text, bytes or a handle), calling ``visitor``; return its `result`."""
    data = source if isinstance(source, (str, bytes)) else source.read()
    text = _decode(data) if isinstance(data, bytes) else data
    return _Parser(text, visitor).run()


# ============================================================================ reading: records


def _resign_value(points: int, cube: int) -> int:
    """gnubg's reading of ``Wins N`` as a resignation: single, gammon or backgammon."""
    if points <= cube:
        return 1
    return 2 if points <= 2 * cube else 3


def _die_steps(pairs: Sequence[tuple[int, int]], dice: Dice) -> bool:
    """Each sub-move uses one die (a bear-off may use a larger die than its distance)."""
    left = [dice[0]] * 4 if dice[0] == dice[1] else [dice[0], dice[1]]
    for source, target in pairs:
        distance = source - target
        if distance in left:
            left.remove(distance)
            continue
        larger = [die for die in left if target == 0 and die > distance]
        if not larger:
            return False
        left.remove(min(larger))
    return True


def _written_play(before: Position, pairs: Sequence[tuple[int, int]], canonical: Play,
                  dice: Dice) -> Play:
    """The legal play in the order and the steps the text wrote (one die per sub-move), or the
    canonical play when the text compressed or regrouped them."""
    if not _die_steps(pairs, dice):
        return canonical
    try:
        if before.apply(pairs) != before.apply(canonical):
            return canonical
    except IllegalAction:
        return canonical
    opponent = list(before.opponent)
    steps: list[tuple[int, int, bool]] = []
    for source, target in pairs:
        hit = target > 0 and opponent[24 - target] == 1
        if hit:
            opponent[24 - target] = 0
        steps.append((source, target, hit))
    return Play(steps)


class MatchRecordVisitor(MatVisitor[MatchRecord]):
    """Builds a `MatchRecord`, replaying every entry through the core `Game`.

    ``rules`` overrides what the header says. For money sessions beavers and raccoons are
    allowed while replaying (a file only has them if they were played), at least gnubg's
    default chain of three after a double (``set beavers 3``), unless a ``Beaver`` tag says
    ``Off``.
    """

    def __init__(self, rules: Rules | None = None) -> None:
        self._rules_override = rules
        self.record = MatchRecord(0)
        self._replay_rules = Rules()
        self._post_crawford = False
        self._current: GameRecord | None = None
        self._game: Game | None = None
        self._synced = 0
        self._pending: tuple[MatLocation, int] | None = None
        self._points_written: int | None = None
        self._resign_noted = False
        self._log: list[tuple[str, tuple[object, ...], MatLocation]] = []
        self._initial_cube = 1
        self._replaying = False

    # ---------------------------------------------------------------- match

    def begin_match(self, length: int, tags: Mapping[str, str], comments: Sequence[str]) -> None:
        rules = self._rules_override or _rules_from_tags(tags)
        self.record = MatchRecord(length, rules=rules, tags=dict(tags), comments=list(comments))
        replay = rules.for_match(length)
        if not length and tags.get("Beaver", "").lower() != "off":
            replay = replace(replay, beavers=True, raccoons=True,
                             beaver_limit=max(replay.beaver_limit, _GNUBG_BEAVERS))
        self._replay_rules = replay

    def begin_game(self, number: int, names: tuple[str, str], scores: tuple[int, int],
                   ratings: tuple[str | None, str | None] = (None, None)) -> None:
        record = self.record
        if not record.games and self._current is None:
            record.names = names
            record.ratings = ratings
        length = record.length
        crawford = (
            bool(length)
            and record.rules.crawford
            and not self._post_crawford
            and ((scores[0] == length - 1) != (scores[1] == length - 1))
        )
        post = self._post_crawford and bool(length) and record.rules.crawford
        if crawford:
            self._post_crawford = True
        self._current = GameRecord(number, scores, crawford, post)
        self._reset_game()
        self._log = []
        self._initial_cube = 1

    def _reset_game(self) -> None:
        self._game = None
        self._synced = 0
        self._pending = None
        self._points_written = None
        self._resign_noted = False

    def end_game(self) -> None:
        current = self._current
        if current is None:
            return
        game = self._game
        if self._pending is not None and game is not None and not game.is_over:
            self._pending = None
            plays = game.legal_plays()
            if len(plays) <= 1:  # else the game stops on the roll, unfinished
                game.move(plays[0] if plays else Play())
                self._sync()
        if game is not None and game.outcome is not None and current.outcome is None:
            current.outcome = game.outcome
        if current.outcome is not None and self._points_written is not None:
            current.outcome = replace(current.outcome, points=self._points_written)
        self.record.games.append(current)
        self._current = None
        self._game = None

    def result(self) -> MatchRecord:
        return self.record

    # ---------------------------------------------------------------- helpers

    def _new_game(self, seat: int, dice: Dice | None) -> Game:
        """The game, created at its first entry: an opening roll won by ``seat`` with ``dice``,
        or (first entry not a non-double roll) ``seat`` on roll from the start."""
        current = self._current
        if current is None:
            raise IllegalAction("an entry before the game's score line")
        cube = self._initial_cube
        if dice is not None and dice[0] != dice[1]:
            game = Game(
                self._replay_rules, self.record.length, current.score, current.crawford,
                cube_value=cube, post_crawford=current.post_crawford,
            )
            high, low = max(dice), min(dice)
            game.opening_roll(*((high, low) if seat == 0 else (low, high)))
        else:
            game = Game.start_from(
                Position.initial(), seat, rules=self._replay_rules,
                match_length=self.record.length, score=current.score,
                crawford=current.crawford, post_crawford=current.post_crawford, cube_value=cube,
            )
        value = 2
        while value <= cube:  # automatic doubles the file can only show through cube values
            current.actions.append(AutoDoubled(value))
            value *= 2
        self._game = game
        self._synced = 0
        self._sync()
        return game

    def _sync(self, written: Play | None = None) -> None:
        assert self._game is not None and self._current is not None
        history = self._game.history
        for action in history[self._synced:]:
            if written is not None and isinstance(action, Moved):
                action = replace(action, play=written)
            self._current.actions.append(action)
        self._synced = len(history)

    def _note(self, name: str, *args: object) -> None:
        """Remember an entry of the current game, to replay it after `_restart`."""
        if not self._replaying:
            self._log.append((name, args, self.location))

    def _restart(self, factor: int) -> bool:
        """The file's cube values are ``factor`` times ours: in a money game that means
        automatic doubles (which a .mat cannot show). Replay the game from a larger cube."""
        if (
            self.record.length
            or factor < 2
            or factor & (factor - 1)
            or self._replaying
            or self._current is None
        ):
            return False
        self._initial_cube *= factor
        self._current.actions.clear()
        self._current.outcome = None
        self._reset_game()
        self._replaying = True
        try:
            for name, args, location in self._log:
                self.location = location
                getattr(self, name)(*args)
        finally:
            self._replaying = False
        return True

    def _settle(self, resigner: int | None = None) -> None:
        """Resolve an empty move read earlier: a roll before ``resigner``'s resignation, the
        forced play, or an error at that move."""
        if self._pending is None:
            return
        location, seat = self._pending
        self._pending = None
        if resigner == seat:
            return
        game = self._game
        assert game is not None
        plays = game.legal_plays()
        if len(plays) <= 1:  # a dance, or gnubg's reading of an empty forced move
            game.move(plays[0] if plays else Play())
            self._sync()
            return
        raise MatFormatError(
            f"no move written although {len(plays)} legal plays exist "
            f"(only a roll before a resignation may stay unplayed)", location)

    def _acting(self, seat: int, what: str) -> Game:
        game = self._game
        if game is None:
            raise IllegalAction(f"{what} before any move of the game")
        if game.is_over:
            raise IllegalAction(f"{what} after the end of the game")
        acting = game.seat_to_act
        if acting is not None and acting != seat:
            raise IllegalAction(
                f"{what} in the wrong column: seat {acting} is to act, not seat {seat}")
        return game

    # ---------------------------------------------------------------- entries

    def move(self, seat: int, dice: Dice, text: str) -> None:
        self._note("move", seat, dice, text)
        self._settle()
        game = self._game
        if game is None:
            game = self._new_game(seat, dice)
            if game.phase is Phase.ROLL:
                game.roll(dice)
                self._sync()
        else:
            if game.phase is Phase.BEAVER_TAKE and seat == game.seat_on_roll:
                game.take()  # the take of a beaver or raccoon is implied by the next roll
                self._sync()
            game = self._acting(seat, "a roll")
            game.roll(dice)  # raises, saying what the game waits for, unless in phase ROLL
            self._sync()
        before = game.position
        if not text:
            # A dance, a forced play, or a roll before a resignation: the next entry says.
            self._pending = (self.location, seat)
            return
        chains = parse_chains(text)
        dice_now = game.dice
        assert dice_now is not None
        pairs = [(chain[k], chain[k + 1]) for chain in chains for k in range(len(chain) - 1)]
        canonical: Play | None = None
        if 0 < len(pairs) <= 4:
            try:  # the common case: the Game finds the legal play with the same result
                canonical = game.move(Play(pairs))
            except IllegalAction:
                canonical = None
        if canonical is None:
            # Compressed moves that hit on the way, and precise errors for illegal text.
            canonical = play_from_chains(chains, before, dice_now, text=text)
            game.move(canonical)
        self._sync(_written_play(before, pairs, canonical, dice_now))

    def double(self, seat: int, cube: int | None) -> None:
        self._note("double", seat, cube)
        self._settle()
        game = self._acting(seat, "a double")
        if game.phase in (Phase.TAKE, Phase.BEAVER_TAKE):
            self._redouble(game, cube)
            return
        game.double()
        self._sync()
        self._check_cube(game, cube)

    def beaver(self, seat: int, cube: int | None) -> None:
        self._note("beaver", seat, cube)
        self._settle()
        self._redouble(self._acting(seat, "a beaver"), cube)

    def raccoon(self, seat: int, cube: int | None) -> None:
        self._note("raccoon", seat, cube)
        self._settle()
        self._redouble(self._acting(seat, "a raccoon"), cube)

    def _redouble(self, game: Game, cube: int | None) -> None:
        if game.phase is Phase.TAKE:
            game.beaver()
        else:
            game.raccoon()
        self._sync()
        self._check_cube(game, cube)

    def _check_cube(self, game: Game, cube: int | None) -> None:
        offered = game.offered_cube
        if cube is None or offered is None or cube == offered:
            return
        if cube % offered or not self._restart(cube // offered):
            raise IllegalAction(f"the cube offered is {offered}, not {cube}")

    def take(self, seat: int) -> None:
        self._note("take", seat)
        self._settle()
        game = self._game
        if game is not None and game.phase not in (Phase.TAKE, Phase.BEAVER_TAKE) and (
            self._resign_noted
        ):
            return  # "Accepts" answering a resignation line
        self._acting(seat, "a take").take()
        self._sync()

    def drop(self, seat: int) -> None:
        self._note("drop", seat)
        self._settle()
        game = self._game
        if game is not None and game.phase not in (Phase.TAKE, Phase.BEAVER_TAKE) and (
            self._resign_noted
        ):
            return  # "Rejects" answering a resignation line
        self._acting(seat, "a drop").drop()
        self._sync()

    def resign(self, seat: int, text: str) -> None:
        self._note("resign", seat, text)
        self._resign_noted = True

    def wins(self, seat: int, points: int, and_match: bool) -> None:
        if points < 1:
            raise IllegalAction(f"a game is won by at least 1 point, not {points}")
        self._note("wins", seat, points, and_match)
        resigner = 1 - seat
        self._settle(resigner)
        game = self._game
        current = self._current
        if current is None:
            raise IllegalAction("'Wins' before the game's score line")
        if current.outcome is not None:
            raise IllegalAction("a second 'Wins' line for this game")
        if game is None:
            game = self._new_game(resigner, None)
        if game.is_over:
            outcome = game.outcome
            assert outcome is not None
            if outcome.winner != seat:
                raise IllegalAction(f"'Wins' in the wrong column: seat {outcome.winner} won")
            # Money files may or may not apply the Jacoby rule to a played-out gammon.
            jacoby_reading = (
                not self.record.length
                and outcome.ending == "normal"
                and points in (outcome.cube, outcome.cube * outcome.kind)
            )
            if points != outcome.points and not jacoby_reading:
                if points % outcome.points or not self._restart(points // outcome.points):
                    raise IllegalAction(
                        f"the game was won for {outcome.points} points, not {points}")
                return
            self._points_written = points
            return
        if game.phase is Phase.BEAVER_TAKE and resigner == game.seat_on_roll:
            # gnubg writes nothing for the take of a beaver and blanks for the take of a
            # raccoon: a resignation by the seat on roll may come after that take.
            offered = game.offered_cube
            assert offered is not None
            multipliers = (1, 2, game.rules.backgammon_value)
            after_take = points in [offered * m for m in multipliers]
            before_take = points in [game.cube_value * m for m in multipliers]
            if resigner != game.seat_to_act or (after_take and not before_take):
                game.take()
                self._sync()
        value = _resign_value(points, game.cube_value)
        if game.may_resign(resigner, value):
            game.resign(resigner, value)
            game.accept_resignation()
            self._sync()
        else:
            # A resignation the Game cannot place (not that seat's turn): record it as written.
            current.actions.append(Resigned(resigner, value))
            current.actions.append(ResignationAccepted(seat, value))
            current.outcome = GameOutcome(seat, points, value, "resign", game.cube_value)
        self._points_written = points


def _on_off(value: str | None) -> bool | None:
    if value is None:
        return None
    word = value.strip().lower()
    if word in ("on", "yes", "true", "1"):
        return True
    if word in ("off", "no", "false", "0"):
        return False
    return None


def _rules_from_tags(tags: Mapping[str, str]) -> Rules:
    """The rules the header states (XG's Crawford, Jacoby, Beaver, CubeLimit tags)."""
    crawford = _on_off(tags.get("Crawford"))
    jacoby = _on_off(tags.get("Jacoby"))
    beavers = _on_off(tags.get("Beaver"))
    limit = 0
    text = tags.get("CubeLimit", "").strip()
    if text.isdecimal() and len(text) <= 18:
        value = int(text)
        if value >= 1 and not value & (value - 1) and value != _XG_NO_LIMIT:
            limit = value
    return Rules(
        crawford=True if crawford is None else crawford,
        jacoby=bool(jacoby),
        beavers=bool(beavers),
        cube_limit=limit,
    )


def read_match(handle: IO[str] | IO[bytes], *, rules: Rules | None = None) -> MatchRecord:
    """Read and replay a whole .mat file from a handle (see `MatchRecordVisitor`)."""
    return walk_match(handle, MatchRecordVisitor(rules))


def parse_match(text: str | bytes, *, rules: Rules | None = None) -> MatchRecord:
    """`read_match` for a string."""
    return walk_match(text, MatchRecordVisitor(rules))
