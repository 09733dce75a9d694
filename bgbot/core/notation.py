"""A chequer play (`Step`, `Play`) and its gnubg move notation: `Play` to text exactly as gnubg's
``hint`` writes it, and text back to a legal `Play`.

It lives in the core because ``str(play)`` and ``Play.parse`` are part of the core's API (as SAN
is in python-chess); `bgbot.formats.notation` is the public face and adds the FIBS variant.
`Play` is defined here, beside its notation, so that this module needs nothing of
`bgbot.core.position` at run time (positions are only passed in: their ``play_results`` give the
legal plays) and the two modules do not import each other.

Writing (`format_play`): the sub-moves are sorted by source point, then destination, both
descending; a sub-move that starts where an earlier one ended continues that chequer's chain
(``24/18 18/13`` is written ``24/13``), keeping the intermediate point only when a blot was hit
there (``13/10*/5``); identical chains are grouped (``8/5(2)``); a point hit is starred once,
at its first mention; the bar is ``bar`` and borne-off chequers go to ``off``. Hits are read
from the steps' ``hit`` flags (set by the move generator). The text depends only on the
sub-moves and the points hit, which the resulting position fixes, so every way of making the
same play is written the same way.

Reading (`parse_play`): points in the mover's numbering, ``bar``/``b``/``25``, ``off``/``o``/``0``,
``/`` or ``-`` between the points of a move, chains (``24/18/13``), compressed moves
(``24/13``), ``*`` (ignored), ``(n)`` repeats, commas, any case, and slash-less pairs as gnubg
reads them (``24 18 24 21``). The text is checked against the legal plays: the chequers it names
are moved straight from each point to the next written one, and the legal play with the same
resulting position is returned. If none has it, a compressed move that could only be made by
hitting on the way is still accepted when exactly one legal play matches it.
"""

from __future__ import annotations

import re
from functools import lru_cache
from itertools import groupby
from typing import Callable, Iterable, NamedTuple, Protocol, Sequence

from .errors import FormatError, IllegalAction

BAR_POINT = 25
OFF_POINT = 0

MAX_DIGITS = 18
"""Significant digits a written count may have: more is out of every range a codec reads, and
Python's ``int`` refuses over 4,300 digits with a bare `ValueError` (not a `FormatError`)."""


def read_int(field: str, text: str) -> int:
    """The integer ``text`` writes (decimal digits, an optional sign), for codecs; raises
    `FormatError` naming ``field`` for a number too long to mean anything or for non-digits."""
    significant = text.strip().lstrip("+-").lstrip("0")
    if len(significant) > MAX_DIGITS:
        raise FormatError(field, text, f"a number of {len(significant)} digits is out of range")
    try:
        return int(text)
    except ValueError:
        raise FormatError(field, text, "must be a decimal integer") from None


class Step(NamedTuple):
    """One chequer moved by one die: points in the mover's numbering, 25 = bar, 0 = off."""

    from_point: int
    to_point: int
    hit: bool = False


RawStep = tuple[int, int, bool]


class Board(Protocol):
    """What the notation needs of a position (`bgbot.core.position.Position` is one): its two
    sides and its legal plays with their results. Typed structurally, so that this module
    does not import `bgbot.core.position`, which imports it."""

    @property
    def mover(self) -> tuple[int, ...]: ...

    @property
    def opponent(self) -> tuple[int, ...]: ...

    def play_results(self, dice: Sequence[int]) -> Sequence[tuple[Play, Board]]: ...

    def __hash__(self) -> int: ...


class Play(tuple[RawStep, ...]):
    """A whole turn's chequer play: up to four steps, in the order they are made.

    Immutable and hashable: a tuple of plain ``(from, to, hit)`` triples (cheap to build in the
    move generator); `steps` gives them as `Step`s. `legal_plays` returns one play per distinct
    resulting position, so two plays from that list differ exactly when their results differ.
    """

    __slots__ = ()

    def __new__(cls, steps: Iterable[Step | tuple[int, int] | tuple[int, int, bool]] = ()) -> Play:
        raw = tuple(
            (int(s[0]), int(s[1]), bool(s[2]) if len(s) > 2 else False) for s in steps
        )
        if len(raw) > 4:
            raise IllegalAction(f"a play has at most four steps, got {len(raw)}")
        return tuple.__new__(cls, raw)

    @classmethod
    def _trusted(cls, steps: tuple[RawStep, ...]) -> Play:
        """Build without checks from raw ``(from, to, hit)`` triples (int, int, bool) that a
        move generator made, as `legal_plays` does (a compiled twin of it too)."""
        return tuple.__new__(cls, steps)

    @property
    def steps(self) -> tuple[Step, ...]:
        """The steps in the order they are made."""
        return tuple(Step(*s) for s in self)

    def __repr__(self) -> str:
        return f"Play({str(self)!r})"

    def __str__(self) -> str:
        return format_play(self)

    @classmethod
    def parse(cls, text: str, position: Board, dice: Sequence[int]) -> Play:
        """Read gnubg/FIBS move text and return the matching legal play (raises if illegal)."""
        return parse_play(text, position, dice)


BAR = BAR_POINT
OFF = OFF_POINT

_MAX_LISTED = 20  # legal plays named in an IllegalAction message

Chain = tuple[int, ...]
"""One written move: the points a chequer (or several, see ``(n)``) passes, e.g. (24, 18, 13)."""


# --------------------------------------------------------------------------------- writing


_NAMES = ("off", *(str(point) for point in range(1, 25)), "bar")


def format_play(play: Play) -> str:
    """gnubg's text for ``play`` (e.g. ``"bar/21*/18 13/8(2)"``); ``""`` for the empty play."""
    names = _NAMES
    if len(play) == 1:
        source, target, hit = play[0]
        return f"{names[source]}/{names[target]}*" if hit else f"{names[source]}/{names[target]}"
    if not play:
        return ""
    hit_points = {target for _, target, hit in play if hit}
    if len(play) == 2:  # most plays: the general rule below, unrolled
        (s0, t0, _), (s1, t1, _) = play
        if (s1, t1) > (s0, t0):
            s0, t0, s1, t1 = s1, t1, s0, t0
        end = "*" if t1 in hit_points else ""
        if s1 == t0:
            if t0 in hit_points:
                return f"{names[s0]}/{t0}*/{names[t1]}{end}"
            return f"{names[s0]}/{names[t1]}{end}"
        start = "*" if t0 in hit_points else ""
        if s0 == s1 and t0 == t1:
            return f"{names[s0]}/{names[t0]}{start}(2)"
        if t1 == t0:
            end = ""
        return f"{names[s0]}/{names[t0]}{start} {names[s1]}/{names[t1]}{end}"
    moves = sorted(((source, target) for source, target, _ in play), reverse=True)
    chains: list[list[int]] = []
    used = [False] * len(moves)
    for i, (source, target) in enumerate(moves):
        if used[i]:
            continue
        chain = [source, target]
        for j in range(i + 1, len(moves)):
            if not used[j] and moves[j][0] == chain[-1]:
                if chain[-1] in hit_points:
                    chain.append(moves[j][1])  # keep the point where the blot was hit
                else:
                    chain[-1] = moves[j][1]
                used[j] = True
        chains.append(chain)

    parts: list[str] = []
    starred: set[int] = set()
    # Equal chains are adjacent: sorting put equal first sub-moves together, and the chains that
    # start with them were extended by the same rule, each as far as the one before or less.
    for chain, same in groupby(chains):
        text = names[chain[0]]
        for point in chain[1:-1]:
            text += f"/{point}*"
            starred.add(point)
        target = chain[-1]
        text += "/" + names[target]
        if target in hit_points and target not in starred:
            text += "*"
            starred.add(target)
        count = len(list(same))
        if count > 1:
            text += f"({count})"
        parts.append(text)
    return " ".join(parts)


# --------------------------------------------------------------------------------- reading

_TOKEN = re.compile(
    r"""\s*(?:
        (?P<num>\d+)
      | (?P<bar>bar|ba|b)(?![a-z])
      | (?P<off>off|of|o)(?![a-z])
      | (?P<sep>[/-])
      | (?P<star>\*)
      | \((?P<rep>\s*\d*\s*)\)
      | (?P<comma>,)
      | (?P<bad>\S[a-z]*)
    )""",
    re.VERBOSE,
)

# gnubg's own output ("bar/21*/18 13/8(2)"): read without the general tokenizer.
_PLAIN_PART = r"(?:bar|\d\d?)(?:/\d\d?\*?)*/(?:off|\d\d?)\*?(?:\([1-4]\))?"
_PLAIN = re.compile(rf"{_PLAIN_PART}(?: {_PLAIN_PART})*")
_PLAIN_POINTS = {"bar": BAR, "off": OFF, **{str(n): n for n in range(26)}}


def _identity(number: int) -> int:
    return number


def _plain_chains(text: str, point: Callable[[int], int]) -> list[Chain] | None:
    """Chains of text written exactly as gnubg writes moves, or None to use the full reader."""
    if not _PLAIN.fullmatch(text):
        return None
    lookup = _PLAIN_POINTS.get
    mapped = point is not _identity
    chains: list[Chain] = []
    for part in text.split(" "):
        count = 1
        if part[-1] == ")":
            count = ord(part[-2]) - 48
            part = part[:-3]
        names = part.replace("*", "").split("/")
        points = [lookup(name, -1) for name in names]
        if -1 in points:
            return None  # a number over 25 or with a leading zero: let the full reader judge
        if mapped:
            points = [point(p) if name.isdigit() else p for name, p in zip(names, points)]
        if OFF in points[:-1] or BAR in points[1:]:
            return None
        chains.extend([tuple(points)] * count)
    return chains


def parse_chains(text: str, point: Callable[[int], int] = _identity) -> list[Chain]:
    """Read move text into chains of points (mover's numbering), repeats expanded.

    ``point`` maps a written number (0..25) to the mover's numbering; the FIBS reader passes
    its absolute-to-mover conversion. The words bar/off are always the mover's bar and off.
    Raises `FormatError` naming the bad part; legality is not checked here.
    """
    plain = _plain_chains(text, point)
    if plain is not None:
        return plain
    source = text.lower()
    # Groups of points joined by separators, each with its repeat count.
    groups: list[tuple[list[int], int]] = []
    current: list[int] | None = None
    repeat = 1
    joined = False  # a separator was read after the current group's last point
    last = ""  # kind of the previous token, for placement checks

    def close() -> None:
        nonlocal current, repeat
        if current is not None:
            groups.append((current, repeat))
        current, repeat = None, 1

    position = 0
    end = len(source.rstrip())
    while position < end:
        match = _TOKEN.match(source, position)
        if match is None:  # pragma: no cover - the pattern's last branch matches anything
            raise FormatError("move", text, "cannot be read")
        position = match.end()
        kind = match.lastgroup or ""
        value = match.group(kind) if kind else ""
        if kind in ("num", "bar", "off"):
            if kind == "num":
                number = read_int("point", value)
                if number > BAR:
                    raise FormatError("point", value,
                                      f"points run from 0 (off) to 25 (bar), in {text!r}")
                mapped = point(number)
            else:
                mapped = BAR if kind == "bar" else OFF
            if joined and current is not None:
                current.append(mapped)
            else:
                close()
                current = [mapped]
            joined = False
        elif kind == "sep":
            if current is None or joined or last == "rep":
                raise FormatError("move", text, f"'{value}' must stand between two points")
            joined = True
        elif kind == "star":
            if last not in ("num", "bar", "off", "star"):
                raise FormatError("move", text, "'*' must follow a point")
        elif kind == "rep":
            count_text = value.strip()
            if not count_text.isdecimal() or not 1 <= read_int("repeat count", count_text) <= 4:
                raise FormatError("repeat count", f"({count_text})",
                                  f"must be (1) to (4), in {text!r}")
            if current is None or joined or last == "rep" or len(current) < 2:
                raise FormatError("move", text, "a repeat count (n) must follow a move such as 8/5")
            repeat = read_int("repeat count", count_text)
        elif kind == "comma":
            if joined:
                raise FormatError("move", text, "a move cannot end with a separator")
            close()
        else:
            raise FormatError("move", value, f"unexpected text in {text!r}")
        last = kind
    if joined:
        raise FormatError("move", text, "a move cannot end with a separator")
    close()

    chains: list[Chain] = []
    pending: int | None = None  # a lone point waiting for its partner (gnubg reads "24 18")
    for points, count in groups:
        if len(points) == 1:
            if pending is None:
                pending = points[0]
            else:
                chains.append((pending, points[0]))
                pending = None
            continue
        if pending is not None:
            break
        chains.extend([tuple(points)] * count)
    if pending is not None:
        raise FormatError("move", text, f"point {_NAMES[pending]} has no destination")

    for chain in chains:
        if OFF in chain[:-1]:
            raise FormatError("point", "off", f"off can only end a move, in {text!r}")
        if BAR in chain[1:]:
            raise FormatError("point", "bar", f"bar can only start a move, in {text!r}")
    return chains


_Board = tuple[tuple[int, ...], tuple[int, ...]]


class _Index:
    """The legal plays of one (position, dice), keyed by their resulting boards."""

    __slots__ = ("plays", "results", "by_result")

    def __init__(self, position: Board, dice: tuple[int, int]) -> None:
        self.results = position.play_results(dice)
        self.plays: list[Play] = [play for play, _ in self.results]
        self.by_result: dict[_Board, Play] = {
            (after.opponent, after.mover): play for play, after in self.results
        }

    def by_mover(self, mover: tuple[int, ...]) -> list[tuple[tuple[int, ...], Play]]:
        """(opponent after, play) for the plays that leave the mover's chequers as ``mover``."""
        return [(after.opponent, play) for play, after in self.results if after.mover == mover]


@lru_cache(maxsize=128)
def _index(position: Board, d1: int, d2: int) -> _Index:
    return _Index(position, (d1, d2))


def _legal_list(plays: Sequence[Play], describe: Callable[[Play], str]) -> str:
    shown = ", ".join(describe(play) for play in plays[:_MAX_LISTED])
    if len(plays) > _MAX_LISTED:
        shown += f", ... ({len(plays) - _MAX_LISTED} more)"
    return shown


def play_from_chains(
    chains: Sequence[Chain],
    position: Board,
    dice: Sequence[int],
    *,
    text: str | None = None,
    describe: Callable[[Play], str] = format_play,
) -> Play:
    """The legal play (the object `Position.legal_plays` returns) that ``chains`` describe.

    Each chain moves one chequer straight from each of its points to the next; the legal play
    with the same resulting position is the answer. Raises `IllegalAction` saying what is wrong
    and listing the legal plays, written with ``describe``; ``text`` is the move as written.
    """
    if len(dice) != 2:
        raise IllegalAction(f"a roll is two dice, got {list(dice)!r}")
    d1, d2 = int(dice[0]), int(dice[1])
    index = _index(position, d1, d2)
    if not chains:
        if not index.plays:
            return Play(())
        raise _refuse(index, (d1, d2), describe,
                      f"an empty move is not allowed: the roll {d1}-{d2} can be played")

    mover = list(position.mover)
    landings: set[int] = set()
    pips = moves = 0
    for chain in chains:
        source = chain[0]
        for target in chain[1:]:
            if target >= source:
                raise _refuse(index, (d1, d2), describe,
                              f"{_shown(text, chains)!r}: {_NAMES[source]}/{_NAMES[target]} "
                              "does not move forward")
            mover[source - 1] -= 1
            if target:
                mover[target - 1] += 1
                landings.add(target)
            pips += source - target
            moves += 1
            source = target
    if moves > (4 if d1 == d2 else 2):
        raise _refuse(index, (d1, d2), describe,
                      f"{_shown(text, chains)!r} makes {moves} moves, more than {d1}-{d2} allows")
    if min(mover) < 0:
        empty = next(p for p in range(25, 0, -1) if mover[p - 1] < 0)
        raise _refuse(index, (d1, d2), describe,
                      f"{_shown(text, chains)!r}: no chequer left to move from {_NAMES[empty]}")
    opponent = list(position.opponent)
    hits: list[int] = []
    for target in landings:
        held = opponent[24 - target]
        if held == 1:
            opponent[24 - target] = 0
            opponent[24] += 1
            hits.append(target)
        elif held:
            raise _refuse(index, (d1, d2), describe,
                          f"{_shown(text, chains)!r}: point {target} is held by the opponent")
    after = tuple(mover)
    play = index.by_result.get((tuple(opponent), after))
    if play is not None:
        return play

    # A compressed move whose only route hits on the way: accept it when it names one play.
    candidates = [
        candidate
        for opponent_after, candidate in index.by_mover(after)
        if all(opponent_after[24 - target] == 0 for target in hits)
    ]
    if len(candidates) == 1:
        return candidates[0]
    if candidates:
        raise _refuse(index, (d1, d2), describe,
                      f"{_shown(text, chains)!r} can be played in more than one way: "
                      + " or ".join(describe(candidate) for candidate in candidates))
    legal_pips = [sum(source - target for source, target, _ in p) for p in index.plays]
    if legal_pips and pips < min(legal_pips):
        reason = "leaves dice unplayed that can be played"
    elif legal_pips and pips > max(legal_pips):
        reason = f"moves {pips} pips, more than {d1}-{d2} allows"
    else:
        reason = "is not a legal play"
    raise _refuse(index, (d1, d2), describe, f"{_shown(text, chains)!r} {reason}")


def _shown(text: str | None, chains: Sequence[Chain]) -> str:
    if text is not None and text.strip():
        return text.strip()
    return " ".join("/".join(_NAMES[p] for p in chain) for chain in chains)


def _refuse(index: _Index, dice: tuple[int, int], describe: Callable[[Play], str],
            reason: str) -> IllegalAction:
    if not index.plays:
        return IllegalAction(f"{reason}; no play is possible with {dice[0]}-{dice[1]}, so the "
                             "only answer is an empty move")
    return IllegalAction(f"{reason}; legal plays with {dice[0]}-{dice[1]}: "
                         f"{_legal_list(index.plays, describe)}")


def parse_play(text: str, position: Board, dice: Sequence[int]) -> Play:
    """The legal play that gnubg/FIBS move ``text`` names, for ``position`` and ``dice``.

    Returns the canonical object from ``position.legal_plays(dice)``; an empty text is the
    answer only when no play is possible. Raises `FormatError` for text that is not move
    notation and `IllegalAction` for a well-formed move that is not legal here.
    """
    return play_from_chains(parse_chains(text), position, dice, text=text)
