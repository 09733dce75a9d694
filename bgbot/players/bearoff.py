"""Our own one-sided bear-off database: exact roll-count distributions for home-board positions.

Every position of up to 15 chequers on points 1-6 (C(21, 6) = 54,264 of them, "all off"
included) gets two distributions (reference heuristic-player.md §5.1):

* the number of rolls to bear off all chequers, under the play that minimises the expected
  number of rolls, and
* the number of rolls until the *first* chequer is off, under the play that minimises the
  expected number of rolls until then (for gammons: a side that still has 15 on the board).

Built in pure Python, no gnubg data. Positions are ranked with the combinatorial number system
(a position of ``n`` chequers is a 6-subset of bar positions among ``n + 6`` slots), so a
database of up to ``k`` chequers is the prefix of length C(k + 6, 6) of the full one.

Build: positions are visited in increasing pip order (every move lowers the pip count). A roll's
best play is found by a small dynamic programme over single dice: ``best1[d][q]`` is the best
position reachable from ``q`` with one die ``d``; doubles chain it four times and a non-double
roll takes the better of its two die orders. In a bear-off every die can always be played, so
the set of final positions is exactly that of the legal plays. Distributions are carried as
exact integers (the number of dice sequences of ``n`` rolls, out of 36**n) packed into one big
Python integer per position, so the convolution costs one big-integer add per roll.

The result is cached as a versioned, checksummed binary file in the user's cache directory and
rebuilt when it is missing, stale or corrupt.
"""

from __future__ import annotations

import logging
import math
import os
import struct
import sys
import tempfile
import threading
import time
import zlib
from array import array
from dataclasses import dataclass
from itertools import accumulate
from pathlib import Path
from typing import Any, Callable, Sequence

from ..core.position import Play, Position
from .base import Probabilities
from .features import ROLLS  # the 21 distinct rolls with their weights out of 36

MAX_CHEQUERS = 15
POINTS = 6
FORMAT_VERSION = 1
_MAGIC = b"BGBOTBO\x00"
_HEADER = struct.Struct("<8sIIIQI")  # magic, version, max chequers, positions, payload bytes, crc32
_FIELD_BITS = 256  # bits per roll-count field in the packed big integers (36**40 < 2**207)
_MAX_ROLLS = 40

log = logging.getLogger(__name__)


def _binomials(limit: int) -> list[list[int]]:
    table = [[0] * (POINTS + 2) for _ in range(limit + 1)]
    for n in range(limit + 1):
        for k in range(min(n, POINTS + 1) + 1):
            table[n][k] = math.comb(n, k)
    return table


_BINOM = _binomials(MAX_CHEQUERS + POINTS + 1)


def position_count(max_chequers: int) -> int:
    """How many one-sided positions have at most ``max_chequers`` chequers on points 1-6."""
    return math.comb(max_chequers + POINTS, POINTS)


def rank(counts: Sequence[int]) -> int:
    """Dense index of a home-board side (counts on points 1..6) in the combinatorial system."""
    total = 0
    running = 0
    for k in range(POINTS):
        running += counts[k]
        total += _BINOM[running + k][k + 1]
    return total


def unrank(index: int, max_chequers: int = MAX_CHEQUERS) -> tuple[int, ...]:
    """The counts on points 1..6 of the position with rank ``index`` (inverse of `rank`)."""
    if not 0 <= index < position_count(max_chequers):
        raise ValueError(f"rank {index} is outside 0..{position_count(max_chequers) - 1}")
    bars = []
    slot = max_chequers + POINTS - 1
    for k in range(POINTS, 0, -1):
        while _BINOM[slot][k] > index:
            slot -= 1
        bars.append(slot)
        index -= _BINOM[slot][k]
        slot -= 1
    bars.reverse()  # bars[k] = s_{k+1} + k, with s the running totals
    running = [bars[k] - k for k in range(POINTS)]
    return tuple(running[k] - (running[k - 1] if k else 0) for k in range(POINTS))


def home_counts(side: Sequence[int]) -> tuple[int, ...]:
    """Counts on points 1..6 of a side given as 25 counts (bar last) or as up to 6 counts.

    Raises ValueError when a chequer lies outside the home board.
    """
    values = tuple(int(c) for c in side)
    if len(values) == 25:
        if any(values[POINTS:]):
            raise ValueError("the side has chequers outside its home board")
        values = values[:POINTS]
    elif len(values) > POINTS:
        raise ValueError(f"a side is 25 counts or at most 6 home-board counts, got {len(values)}")
    if any(c < 0 for c in values):
        raise ValueError(f"negative chequer count in {values}")
    return values + (0,) * (POINTS - len(values))


def _single_die_moves(counts: tuple[int, ...], die: int) -> list[tuple[int, ...]]:
    """Every position reachable by playing one die in a bear-off (all chequers home)."""
    highest = POINTS - 1
    while highest >= 0 and not counts[highest]:
        highest -= 1
    if highest < 0:
        return [counts]
    out = []
    for i in range(highest, -1, -1):
        if not counts[i]:
            continue
        target = i - die
        if target >= 0:
            after = list(counts)
            after[i] -= 1
            after[target] += 1
            out.append(tuple(after))
        elif target == -1 or i == highest:
            after = list(counts)
            after[i] -= 1
            out.append(tuple(after))
    return out


@dataclass(frozen=True, slots=True)
class _Table:
    """One distribution table: expected rolls and the packed nonzero range of each distribution."""

    expected: array[float]  # 'd', per rank
    low: array[int]  # 'B', first roll count with nonzero probability
    length: array[int]  # 'B', number of stored probabilities
    offsets: array[int]  # 'I', start of each distribution in `data` (len = positions + 1)
    data: array[float]  # 'f', probabilities

    def distribution(self, index: int) -> tuple[float, ...]:
        low = self.low[index]
        start = self.offsets[index]
        values: tuple[float, ...] = tuple(self.data[start : start + self.length[index]])
        return (0.0,) * low + values


def _build_table(
    positions: list[tuple[int, ...]], index_of: dict[tuple[int, ...], int], goal: int
) -> tuple[list[float], list[int]]:
    """Expected rolls and packed exact distributions, finishing when fewer than ``goal`` remain.

    ``goal = 1`` is the full bear-off; ``goal = 15`` is "the first chequer off".
    """
    n = len(positions)
    expected = [0.0] * n
    packed = [1] * n  # terminal positions: 1 sequence of 0 rolls
    sizes = [sum(c) for c in positions]
    order = sorted(
        (i for i in range(n) if sizes[i] >= goal),
        key=lambda i: sum((k + 1) * c for k, c in enumerate(positions[i])),
    )
    # best[d][q]: best position reachable from q with one die d (q itself when q is terminal);
    # best2/best3: with two / three steps of the same die (for doubles).
    best1 = [list(range(n)) for _ in range(7)]
    best2 = [list(range(n)) for _ in range(7)]
    best3 = [list(range(n)) for _ in range(7)]
    key = expected.__getitem__
    shift = _FIELD_BITS
    for p in order:
        counts = positions[p]
        successors: list[list[int]] = [[]] + [
            [index_of[q] for q in _single_die_moves(counts, die)] for die in range(1, 7)
        ]
        finals: dict[int, int] = {}
        for die in range(1, 7):
            succ = successors[die]
            b1 = best1[die]
            b2 = best2[die]
            b3 = best3[die]
            one = min(succ, key=key)
            two = min([b1[q] for q in succ], key=key)
            three = min([b2[q] for q in succ], key=key)
            four = min([b3[q] for q in succ], key=key)
            b1[p] = one
            b2[p] = two
            b3[p] = three
            finals[four] = finals.get(four, 0) + 1
        for d1 in range(1, 7):
            succ1 = successors[d1]
            b1_of_d1 = best1[d1]
            for d2 in range(d1 + 1, 7):
                b1_of_d2 = best1[d2]
                candidates = [b1_of_d2[q] for q in succ1]
                candidates += [b1_of_d1[q] for q in successors[d2]]
                final = min(candidates, key=key)
                finals[final] = finals.get(final, 0) + 2
        total = 0.0
        acc = 0
        for q, weight in finals.items():
            total += weight * expected[q]
            acc += weight * packed[q]
        expected[p] = 1.0 + total / 36.0
        packed[p] = acc << shift
    return expected, packed


def _table_from_packed(expected: list[float], packed: list[int]) -> _Table:
    """Unpack the exact integer distributions into float32 probability ranges."""
    mask = (1 << _FIELD_BITS) - 1
    low = array("B")
    length = array("B")
    data = array("f")
    powers = [36**k for k in range(_MAX_ROLLS + 1)]
    for big in packed:
        lo = ((big & -big).bit_length() - 1) // _FIELD_BITS
        hi = (big.bit_length() - 1) // _FIELD_BITS
        if hi > _MAX_ROLLS:
            raise AssertionError(f"bear-off distribution runs to {hi} rolls")
        low.append(lo)
        length.append(hi - lo + 1)
        data.extend(((big >> (k * _FIELD_BITS)) & mask) / powers[k] for k in range(lo, hi + 1))
    offsets = array("I", accumulate(length, initial=0))
    return _Table(array("d", expected), low, length, offsets, data)


def _win_against(mine: Sequence[float], theirs_at_least: Sequence[float]) -> float:
    """Σ_n P_mine(n) · P(T_theirs >= n), with ``theirs_at_least[n]`` = P(T >= n): added in
    order, one term at a time (the C kernels' `bearoff_win_against` adds the same terms in the
    same order; ``sum`` of floats is compensated from Python 3.12 on)."""
    total = 0.0
    for n in range(min(len(mine), len(theirs_at_least))):
        p = mine[n]
        if p:
            total += p * theirs_at_least[n]
    return total


def _at_least(distribution: Sequence[float]) -> list[float]:
    """Survival function: P(T >= n) for n = 0..len; P(T >= 0) = 1."""
    out = [0.0] * (len(distribution) + 1)
    running = 0.0
    for n in range(len(distribution) - 1, -1, -1):
        running += distribution[n]
        out[n] = running
    first = next((n for n, p in enumerate(distribution) if p), len(distribution))
    for n in range(first + 1):  # exactly 1, whatever the float32 rounding of the terms
        out[n] = 1.0
    return out


_SideTables = tuple[tuple[float, ...], list[float], "list[float] | None"]


class BearoffDatabase:
    """Exact one-sided bear-off tables for up to ``max_chequers`` chequers on points 1-6."""

    def __init__(self, max_chequers: int, full: _Table, first: _Table) -> None:
        self.max_chequers = max_chequers
        self._full = full
        self._first = first
        self._sides: dict[tuple[int, ...], _SideTables] = {}

    # ------------------------------------------------------------------ construction

    @classmethod
    def build(cls, max_chequers: int = MAX_CHEQUERS) -> BearoffDatabase:
        """Compute the database in memory (about ten seconds for the full 15 chequers)."""
        if not 0 <= max_chequers <= MAX_CHEQUERS:
            raise ValueError(f"max_chequers must be 0..{MAX_CHEQUERS}, got {max_chequers}")
        positions = [unrank(i, max_chequers) for i in range(position_count(max_chequers))]
        index_of = {counts: i for i, counts in enumerate(positions)}
        full = _table_from_packed(*_build_table(positions, index_of, 1))
        if max_chequers == MAX_CHEQUERS:
            first = _table_from_packed(*_build_table(positions, index_of, MAX_CHEQUERS))
        else:  # no side can have 15 chequers on the board: the first is always "already off"
            first = _table_from_packed([0.0] * len(positions), [1] * len(positions))
        return cls(max_chequers, full, first)

    def to_bytes(self) -> bytes:
        """The versioned, checksummed binary form written to the cache file."""
        parts = []
        for table in (self._full, self._first):
            parts += [table.expected.tobytes(), table.low.tobytes(), table.length.tobytes()]
            parts.append(struct.pack("<I", len(table.data)))
            parts.append(table.data.tobytes())
        payload = b"".join(parts)
        header = _HEADER.pack(
            _MAGIC,
            FORMAT_VERSION,
            self.max_chequers,
            position_count(self.max_chequers),
            len(payload),
            zlib.crc32(payload),
        )
        return header + payload

    @classmethod
    def from_bytes(cls, raw: bytes, max_chequers: int | None = None) -> BearoffDatabase:
        """Read `to_bytes` output; raises ValueError on any mismatch or corruption."""
        if len(raw) < _HEADER.size:
            raise ValueError("bear-off file too short for its header")
        magic, version, chequers, count, size, crc = _HEADER.unpack_from(raw)
        if magic != _MAGIC:
            raise ValueError("not a bgbot bear-off file (bad magic)")
        if version != FORMAT_VERSION:
            raise ValueError(f"bear-off file version {version}, expected {FORMAT_VERSION}")
        if max_chequers is not None and chequers != max_chequers:
            raise ValueError(f"bear-off file holds {chequers} chequers, wanted {max_chequers}")
        if not 0 <= chequers <= MAX_CHEQUERS or count != position_count(chequers):
            raise ValueError(f"bear-off file header is inconsistent ({chequers}, {count})")
        payload = memoryview(raw)[_HEADER.size :]
        if len(payload) != size or zlib.crc32(payload) != crc:
            raise ValueError("bear-off file is truncated or corrupt (checksum)")
        tables = []
        pos = 0

        def take(typecode: str, items: int) -> array[Any]:
            nonlocal pos
            out: array[Any] = array(typecode)
            nbytes = items * out.itemsize
            if pos + nbytes > len(payload):
                raise ValueError("bear-off file payload is shorter than its tables")
            out.frombytes(payload[pos : pos + nbytes])
            pos += nbytes
            return out

        for _ in range(2):
            expected = take("d", count)
            low = take("B", count)
            length = take("B", count)
            (items,) = struct.unpack_from("<I", payload, pos)
            pos += 4
            data = take("f", items)
            offsets = array("I", accumulate(length, initial=0))
            if offsets[-1] != items:
                raise ValueError("bear-off file tables disagree with their lengths")
            tables.append(_Table(expected, low, length, offsets, data))
        if pos != len(payload):
            raise ValueError("bear-off file has trailing bytes")
        if sys.byteorder != "little":  # the file is little-endian
            for table in tables:
                table.expected.byteswap()
                table.data.byteswap()
        return cls(chequers, tables[0], tables[1])

    @staticmethod
    def cache_path(max_chequers: int = MAX_CHEQUERS, cache_dir: Path | None = None) -> Path:
        """Where the database of ``max_chequers`` is cached."""
        directory = cache_dir if cache_dir is not None else cache_directory()
        return directory / f"bearoff-v{FORMAT_VERSION}-{max_chequers}.bin"

    @classmethod
    def load_or_build(
        cls, max_chequers: int = MAX_CHEQUERS, cache_dir: Path | None = None
    ) -> BearoffDatabase:
        """Load the cached file, or build the database and write the file atomically."""
        path = cls.cache_path(max_chequers, cache_dir)
        directory = path.parent
        try:
            return cls.from_bytes(path.read_bytes(), max_chequers)
        except FileNotFoundError:
            pass
        except (OSError, ValueError) as exc:
            log.warning("bear-off database %s is unreadable (%s); rebuilding it", path, exc)
        log.info("building the one-sided bear-off database (%d chequers) into %s; "
                 "this happens once and takes about 10 s", max_chequers, path)
        started = time.perf_counter()
        database = cls.build(max_chequers)
        log.info("bear-off database built in %.1f s", time.perf_counter() - started)
        try:
            directory.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".bearoff-", suffix=".tmp", dir=directory)
            try:
                with os.fdopen(fd, "wb") as handle:
                    handle.write(database.to_bytes())
                    handle.flush()
                    os.fsync(handle.fileno())
                os.replace(tmp, path)
            except BaseException:
                os.unlink(tmp)
                raise
        except OSError:
            pass  # an unwritable cache only costs a rebuild next time
        return database

    # ------------------------------------------------------------------ one side

    def _index(self, side: Sequence[int]) -> int:
        counts = home_counts(side)
        if sum(counts) > self.max_chequers:
            raise ValueError(
                f"{sum(counts)} chequers: this database holds at most {self.max_chequers}"
            )
        return rank(counts)

    def covers(self, side: Sequence[int]) -> bool:
        """True if ``side`` (25 counts or home counts) is all home and within this database."""
        try:
            self._index(side)
        except ValueError:
            return False
        return True

    def expected_rolls(self, side: Sequence[int]) -> float:
        """Expected rolls to bear off every chequer of ``side`` with the best play."""
        return float(self._full.expected[self._index(side)])

    def rolls_distribution(self, side: Sequence[int]) -> tuple[float, ...]:
        """``d[n]`` = P(the side needs exactly ``n`` rolls to bear off all), best play."""
        return self._full.distribution(self._index(side))

    def first_off_distribution(self, side: Sequence[int]) -> tuple[float, ...]:
        """``d[n]`` = P(the first chequer is off after exactly ``n`` rolls); (1.0,) if one is."""
        index = self._index(side)
        if sum(home_counts(side)) < MAX_CHEQUERS:
            return (1.0,)
        return self._first.distribution(index)

    def expected_rolls_first_off(self, side: Sequence[int]) -> float:
        """Expected rolls until the side's first chequer is off (0 if one already is)."""
        index = self._index(side)
        if sum(home_counts(side)) < MAX_CHEQUERS:
            return 0.0
        return float(self._first.expected[index])

    def max_rolls(self, side: Sequence[int]) -> int:
        """The most rolls the side can need with the database's play (worst dice)."""
        index = self._index(side)
        return int(self._full.low[index] + self._full.length[index] - 1)

    # ------------------------------------------------------------------ two sides

    def probabilities(self, position: Position) -> Probabilities | None:
        """Exact cubeless chances for the player on roll in a two-sided bear-off, else None.

        Both sides must have every chequer in their home board (none on the bar) and no more
        chequers than the database holds. Win = Σ P_A(n)·P(T_B >= n) (the side on roll wins
        ties); a gammon needs the loser to have no chequer off when the winner finishes, read
        from the loser's first-off table. Backgammons are impossible here.
        """
        mover, opponent = position.mover, position.opponent
        if any(mover[POINTS:]) or any(opponent[POINTS:]):
            return None
        if sum(mover) > self.max_chequers or sum(opponent) > self.max_chequers:
            return None
        mine, _, my_first_after = self._side_tables(mover)
        theirs, theirs_at_least, their_first_after = self._side_tables(opponent)
        win = _win_against(mine, theirs_at_least)
        win_gammon = 0.0
        lose_gammon = 0.0
        if their_first_after is not None:  # I win a gammon if I finish before their first off
            win_gammon = _win_against(mine, their_first_after)
        if my_first_after is not None:  # they finish at their roll m, my first off after m
            lose_gammon = _win_against(theirs, my_first_after[1:])
        win = min(max(win, 0.0), 1.0)
        return Probabilities(win, min(win_gammon, win), 0.0, min(lose_gammon, 1.0 - win), 0.0)

    SIDE_CACHE_LIMIT = 10_000
    """Home boards whose tables `_side_tables` keeps (about 400 bytes each)."""

    def _side_tables(self, side: tuple[int, ...]) -> _SideTables:
        """One side's rolls distribution, its P(T >= n), and P(first off after >= n) when no
        chequer is off yet (else None); cached per home board (races revisit the same sides)."""
        key = side[:POINTS]
        found = self._sides.get(key)
        if found is None:
            distribution = self.rolls_distribution(key)
            first = (_at_least(self.first_off_distribution(key))
                     if sum(key) == MAX_CHEQUERS else None)
            if len(self._sides) > self.SIDE_CACHE_LIMIT:
                self._sides.clear()
            found = self._sides[key] = (distribution, _at_least(distribution), first)
        return found

    def c_tables(self) -> tuple[Any, ...]:
        """What ``_contact``'s evaluators read in place (their ``set_bearoff``): the chequers
        held, then ``expected, low, length, offsets, data`` of the full table and of the
        first-off table."""
        return (self.max_chequers,
                *(getattr(table, part) for table in (self._full, self._first)
                  for part in ("expected", "low", "length", "offsets", "data")))

    def best_play(self, position: Position, dice: Sequence[int]) -> Play:
        """The legal play that minimises the mover's expected rolls to bear off (races).

        The mover's chequers must all be in its home board; the opponent is ignored.
        """
        if any(position.mover[POINTS:]):
            raise ValueError("best_play needs the mover's chequers all in its home board")
        results = position.play_results(dice)
        if not results:
            raise ValueError(f"no legal play for {tuple(dice)}")
        table = self._full.expected
        return min(results, key=lambda item: table[self._index(item[1].mover)])[0]


# ---------------------------------------------------------------------- cache and default


def cache_directory() -> Path:
    """``$BGBOT_CACHE_DIR``, else ``$XDG_CACHE_HOME/bgbot``, else ``~/.cache/bgbot``."""
    explicit = os.environ.get("BGBOT_CACHE_DIR")
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg else Path.home() / ".cache"
    return base / "bgbot"


_default: BearoffDatabase | None = None
_default_lock = threading.Lock()


def default_max_chequers() -> int:
    """``$BGBOT_BEAROFF_MAX_CHEQUERS`` (for small test builds), else 15."""
    raw = os.environ.get("BGBOT_BEAROFF_MAX_CHEQUERS", "")
    if not raw:
        return MAX_CHEQUERS
    try:
        value = int(raw)
    except ValueError:
        raise ValueError(f"BGBOT_BEAROFF_MAX_CHEQUERS must be an integer, got {raw!r}") from None
    if not 0 <= value <= MAX_CHEQUERS:
        raise ValueError(f"BGBOT_BEAROFF_MAX_CHEQUERS must be 0..{MAX_CHEQUERS}, got {value}")
    return value


def default_database() -> BearoffDatabase:
    """The process-wide database, loaded from the cache (or built) on first use."""
    global _default
    with _default_lock:
        if _default is None:
            _default = BearoffDatabase.load_or_build(default_max_chequers())
        return _default


def warm_default_database(report: Callable[[str], None] | None = None) -> None:
    """Load (or build and cache, 7-15 s the first time) the default database now, for programs
    that play against a clock (online servers): not in the middle of their first bear-off.
    ``report`` is told when a build happened."""
    start = time.perf_counter()
    default_database()
    spent = time.perf_counter() - start
    if report is not None and spent > 1.0:
        report(f"built the bear-off database in {spent:.1f} s (cached in {cache_directory()} "
               "for later runs)")


def _main() -> None:  # pragma: no cover - manual timing aid: python -m bgbot.players.bearoff
    start = time.perf_counter()
    database = BearoffDatabase.build()
    built = time.perf_counter()
    raw = database.to_bytes()
    start_load = time.perf_counter()
    BearoffDatabase.from_bytes(raw)
    loaded = time.perf_counter()
    load_ms = 1000 * (loaded - start_load)
    print(f"build {built - start:.1f} s, {len(raw)} bytes, load {load_ms:.1f} ms")


if __name__ == "__main__":  # pragma: no cover
    _main()
