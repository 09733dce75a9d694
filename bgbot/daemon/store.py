"""The daemon's crash-safe store: SQLite ``state.db`` (stdlib sqlite3, WAL).

Tables: ``matches`` (what to play and where it stands), ``games`` (one row per game started,
with its outcome once over), ``journal`` (every action of every game, in order, committed
before anyone outside the match sees it) and ``results`` (finished matches).

A hosted match can always be rebuilt from its row and its journal: `replay` feeds the actions
into core `Game`s (which check every one of them again), and the dice of the unfinished game
are the first ones of that game's stream, so the referee can continue with the same stream
(`ResumedDice`) and the match ends exactly as an uninterrupted one would, as long as the
agents decide from the position alone (no hidden noise state).

Durability: the connection runs ``synchronous=NORMAL`` for journal commits (in WAL mode a
commit survives a killed process; ``journal_sync="full"`` syncs them too), and every commit
that matters beyond a crash of the process (match creation, game ends, state changes,
results) is made with ``synchronous=FULL``, which also syncs every journal commit before it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import sqlite3
import time
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any, Iterator, Mapping, Sequence

from ..core.dice import DiceSource, GameDice
from ..core.errors import BgbotError, IllegalAction
from ..core.game import Game, GameOutcome
from ..core.match import Match
from ..core.position import Play
from ..core.rules import Rules
from ..referee import events as ev

SCHEMA_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS matches (
    id        TEXT PRIMARY KEY,
    state     TEXT NOT NULL,
    agent_a   TEXT NOT NULL,
    agent_b   TEXT NOT NULL,
    name_a    TEXT NOT NULL,
    name_b    TEXT NOT NULL,
    length    INTEGER NOT NULL,
    games     INTEGER NOT NULL,
    rules     TEXT NOT NULL,
    seed      INTEGER NOT NULL,
    mat_path  TEXT NOT NULL,
    started   TEXT NOT NULL,
    created   REAL NOT NULL,
    updated   REAL NOT NULL,
    score_a   INTEGER NOT NULL DEFAULT 0,
    score_b   INTEGER NOT NULL DEFAULT 0,
    played    INTEGER NOT NULL DEFAULT 0,
    error     TEXT
);
CREATE INDEX IF NOT EXISTS matches_state ON matches(state);
CREATE TABLE IF NOT EXISTS games (
    match_id      TEXT NOT NULL REFERENCES matches(id),
    number        INTEGER NOT NULL,
    score_a       INTEGER NOT NULL,
    score_b       INTEGER NOT NULL,
    crawford      INTEGER NOT NULL,
    post_crawford INTEGER NOT NULL,
    started       REAL NOT NULL,
    ended         REAL,
    winner        INTEGER,
    points        INTEGER,
    kind          INTEGER,
    ending        TEXT,
    cube          INTEGER,
    PRIMARY KEY (match_id, number)
);
CREATE TABLE IF NOT EXISTS journal (
    match_id TEXT NOT NULL REFERENCES matches(id),
    seq      INTEGER NOT NULL,
    game     INTEGER NOT NULL,
    kind     TEXT NOT NULL,
    data     TEXT NOT NULL,
    at       REAL NOT NULL,
    PRIMARY KEY (match_id, seq)
);
CREATE TABLE IF NOT EXISTS frontend_events (
    seq      INTEGER PRIMARY KEY AUTOINCREMENT,
    frontend TEXT NOT NULL,
    kind     TEXT NOT NULL,
    event    TEXT NOT NULL,
    data     TEXT NOT NULL,
    at       REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS frontend_events_by_name ON frontend_events(frontend, seq);
CREATE TABLE IF NOT EXISTS results (
    match_id TEXT PRIMARY KEY REFERENCES matches(id),
    score_a  INTEGER NOT NULL,
    score_b  INTEGER NOT NULL,
    winner   INTEGER,
    games    INTEGER NOT NULL,
    finished REAL NOT NULL
);
"""


class StoreError(BgbotError):
    """The store is unusable or a journal does not replay."""


class MatchState(str, Enum):
    """Where a hosted match stands. QUEUED, RUNNING and SUSPENDED resume on start."""

    QUEUED = "queued"
    RUNNING = "running"
    SUSPENDED = "suspended"
    FINISHED = "finished"
    ABORTED = "aborted"
    FAILED = "failed"


RESUMABLE = (MatchState.QUEUED, MatchState.RUNNING, MatchState.SUSPENDED)


@dataclass(frozen=True)
class MatchSpec:
    """What to play: two agent specs, a length (0 = money session of ``games`` games)."""

    agent_a: str
    agent_b: str
    length: int = 7
    games: int = 1
    rules: Rules = dataclasses.field(default_factory=Rules)
    seed: int = 1
    names: tuple[str, str] = ("", "")
    """Display names (the .mat columns); "" = derived from the agents."""


@dataclass(frozen=True)
class MatchRow:
    """A ``matches`` row."""

    id: str
    state: MatchState
    spec: MatchSpec
    mat_path: Path
    started: str
    """ISO time the match was created: the .mat header date, stable across resumes."""
    created: float
    updated: float
    score: tuple[int, int]
    played: int
    """Games finished."""
    error: str | None


@dataclass(frozen=True)
class JournalEntry:
    """One action of one game, as journalled."""

    seq: int
    game: int
    kind: str
    data: dict[str, Any]


@dataclass(frozen=True)
class GameRow:
    """A game started (``outcome`` None) or ended, to write with a journal batch."""

    number: int
    score: tuple[int, int]
    """Score before the game (started) or after it (ended)."""
    crawford: bool = False
    post_crawford: bool = False
    outcome: GameOutcome | None = None


def rules_to_json(rules: Rules) -> str:
    return json.dumps(dataclasses.asdict(rules), sort_keys=True)


def rules_from_json(text: str) -> Rules:
    return Rules(**json.loads(text))


class Store:
    """One connection to ``state.db``; one per process (SQLite's locks share the file)."""

    def __init__(self, path: Path | str, *, journal_sync: str = "normal",
                 busy_timeout: float = 30.0, read_only: bool = False) -> None:
        """``read_only``: a connection that only reads an existing store (a daemon's helper
        thread reading a long history while the daemon writes)."""
        if journal_sync not in ("normal", "full"):
            raise ValueError(f"journal_sync must be normal or full, got {journal_sync!r}")
        self.path = Path(path)
        self._sync = journal_sync.upper()
        self._busy_timeout = busy_timeout
        try:
            if read_only:
                self._db = sqlite3.connect(f"{self.path.absolute().as_uri()}?mode=ro",
                                           uri=True, timeout=busy_timeout,
                                           isolation_level=None, check_same_thread=False)
                return
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.path, timeout=busy_timeout, isolation_level=None,
                                       check_same_thread=False)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute(f"PRAGMA synchronous={self._sync}")
            self._db.execute("PRAGMA foreign_keys=ON")
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open {self.path}: {exc}") from None
        self._create_schema()

    def _create_schema(self) -> None:
        try:
            self._db.executescript(_SCHEMA)
            with self._transaction(durable=True):
                row = self._db.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
                if row is None:
                    self._db.execute("INSERT INTO meta VALUES ('schema', ?)",
                                     (str(SCHEMA_VERSION),))
                elif int(row[0]) != SCHEMA_VERSION:
                    raise StoreError(f"{self.path}: schema version {row[0]}, this bgbot knows "
                                     f"{SCHEMA_VERSION}")
        except sqlite3.Error as exc:
            raise StoreError(f"cannot use {self.path}: {exc}") from None

    def close(self) -> None:
        self._db.close()

    def _begin(self) -> None:
        """BEGIN IMMEDIATE, retried every fraction of a millisecond while another process
        writes: SQLite's own busy handler sleeps 1, 2, 5, 10... ms between tries, which
        serialises several match workers far more than their short transactions need."""
        db = self._db
        db.execute("PRAGMA busy_timeout=0")
        try:
            deadline = time.monotonic() + self._busy_timeout
            pause = 0.0002
            while True:
                try:
                    db.execute("BEGIN IMMEDIATE")
                    return
                except sqlite3.OperationalError as exc:
                    text = str(exc)
                    if ("locked" not in text and "busy" not in text) or \
                            time.monotonic() > deadline:
                        raise
                time.sleep(pause)
                pause = min(pause * 1.5, 0.002)
        finally:
            db.execute(f"PRAGMA busy_timeout={int(self._busy_timeout * 1000)}")

    @contextlib.contextmanager
    def _transaction(self, *, durable: bool = False) -> Iterator[sqlite3.Connection]:
        """BEGIN IMMEDIATE ... COMMIT; ``durable`` commits with synchronous=FULL.

        SQLite's failures to write (a full disk, a read-only file or folder, an I/O error)
        become a `StoreError` naming the file; the transaction is rolled back, so the store
        holds what it held before it."""
        db = self._db
        try:
            if durable and self._sync != "FULL":
                db.execute("PRAGMA synchronous=FULL")
            try:
                self._begin()
                try:
                    yield db
                except BaseException:
                    with contextlib.suppress(sqlite3.Error):
                        db.execute("ROLLBACK")
                    raise
                try:
                    db.execute("COMMIT")
                except sqlite3.Error:
                    with contextlib.suppress(sqlite3.Error):
                        db.execute("ROLLBACK")
                    raise
            finally:
                if durable and self._sync != "FULL":
                    with contextlib.suppress(sqlite3.Error):
                        db.execute(f"PRAGMA synchronous={self._sync}")
        except (sqlite3.OperationalError, sqlite3.DatabaseError) as exc:
            if isinstance(exc, sqlite3.IntegrityError):
                raise
            raise StoreError(f"cannot write the journal {self.path}: {exc}") from None

    # ----------------------------------------------------------------- the daemon's notes

    def get_meta(self, key: str) -> str | None:
        """A value the daemon keeps for itself (``meta`` table), or None."""
        row = self._db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str) -> None:
        """Keep ``value`` under ``key``, synced to disk before this returns."""
        with self._transaction(durable=True) as db:
            db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value))

    # ----------------------------------------------------------------- matches

    def create_match(self, match_id: str, spec: MatchSpec, mat_path: Path,
                     started: str) -> MatchRow:
        now = time.time()
        with self._transaction(durable=True) as db:
            db.execute(
                "INSERT INTO matches (id, state, agent_a, agent_b, name_a, name_b, length, "
                "games, rules, seed, mat_path, started, created, updated) "
                "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (match_id, MatchState.QUEUED.value, spec.agent_a, spec.agent_b, spec.names[0],
                 spec.names[1], spec.length, spec.games, rules_to_json(spec.rules), spec.seed,
                 str(mat_path), started, now, now),
            )
        row = self.get_match(match_id)
        assert row is not None
        return row

    def get_match(self, match_id: str) -> MatchRow | None:
        found = self._db.execute(_SELECT_MATCH + " WHERE id = ?", (match_id,)).fetchone()
        return None if found is None else _match_row(found)

    def list_matches(self, states: Sequence[MatchState] | None = None, limit: int = 100,
                     ) -> list[MatchRow]:
        """Newest first."""
        if states:
            marks = ",".join("?" for _ in states)
            rows = self._db.execute(
                _SELECT_MATCH + f" WHERE state IN ({marks}) ORDER BY created DESC, id LIMIT ?",
                (*[s.value for s in states], limit),
            ).fetchall()
        else:
            rows = self._db.execute(
                _SELECT_MATCH + " ORDER BY created DESC, id LIMIT ?", (limit,)
            ).fetchall()
        return [_match_row(r) for r in rows]

    def count_by_state(self) -> dict[str, int]:
        rows = self._db.execute("SELECT state, COUNT(*) FROM matches GROUP BY state").fetchall()
        return {str(state): int(count) for state, count in rows}

    def resumable(self) -> list[MatchRow]:
        """Matches to (re)start, oldest first."""
        marks = ",".join("?" for _ in RESUMABLE)
        rows = self._db.execute(
            _SELECT_MATCH + f" WHERE state IN ({marks}) ORDER BY created, id",
            tuple(s.value for s in RESUMABLE),
        ).fetchall()
        return [_match_row(r) for r in rows]

    def set_state(self, match_id: str, state: MatchState, error: str | None = None) -> None:
        with self._transaction(durable=True) as db:
            db.execute("UPDATE matches SET state = ?, error = ?, updated = ? WHERE id = ?",
                       (state.value, error, time.time(), match_id))

    # ----------------------------------------------------------------- journal and games

    def record(self, match_id: str, entries: Sequence[JournalEntry] = (),
               games: Sequence[GameRow] = (), *, durable: bool = False) -> None:
        """Commit journal entries and game rows of one match in one transaction."""
        self.record_many([(match_id, entries, games)], durable=durable)

    def record_many(self, batches: Sequence[tuple[str, Sequence[JournalEntry], Sequence[GameRow]]],
                    *, durable: bool = False) -> None:
        """`record` for several matches in one transaction (a worker's group commit)."""
        now = time.time()
        with self._transaction(durable=durable) as db:
            for match_id, entries, games in batches:
                if entries:
                    db.executemany(
                        "INSERT INTO journal (match_id, seq, game, kind, data, at) "
                        "VALUES (?,?,?,?,?,?)",
                        [(match_id, e.seq, e.game, e.kind,
                          json.dumps(e.data, separators=(",", ":")), now) for e in entries],
                    )
                for game in games:
                    if game.outcome is None:
                        db.execute(
                            "INSERT OR IGNORE INTO games (match_id, number, score_a, score_b, "
                            "crawford, post_crawford, started) VALUES (?,?,?,?,?,?,?)",
                            (match_id, game.number, game.score[0], game.score[1],
                             int(game.crawford), int(game.post_crawford), now),
                        )
                        continue
                    out = game.outcome
                    db.execute(
                        "UPDATE games SET ended = ?, winner = ?, points = ?, kind = ?, "
                        "ending = ?, cube = ? WHERE match_id = ? AND number = ?",
                        (now, out.winner, out.points, out.kind, out.ending, out.cube, match_id,
                         game.number),
                    )
                    db.execute(
                        "UPDATE matches SET score_a = ?, score_b = ?, played = ?, updated = ? "
                        "WHERE id = ?",
                        (game.score[0], game.score[1], game.number, now, match_id),
                    )

    def journal(self, match_id: str) -> list[JournalEntry]:
        rows = self._db.execute(
            "SELECT seq, game, kind, data FROM journal WHERE match_id = ? ORDER BY seq",
            (match_id,),
        ).fetchall()
        return [JournalEntry(int(s), int(g), str(k), json.loads(d)) for s, g, k, d in rows]

    def journal_counts(self, match_id: str) -> list[tuple[int, int]]:
        """(game, journal entries of that game) for every game with entries, in order."""
        rows = self._db.execute(
            "SELECT game, COUNT(*) FROM journal WHERE match_id = ? GROUP BY game ORDER BY game",
            (match_id,)).fetchall()
        return [(int(g), int(n)) for g, n in rows]

    def journal_range(self, match_id: str, first: int, last: int) -> list[JournalEntry]:
        """The journal entries ``first`` to ``last`` (their ``seq``) of a match, in order."""
        rows = self._db.execute(
            "SELECT seq, game, kind, data FROM journal WHERE match_id = ? AND seq BETWEEN ? "
            "AND ? ORDER BY seq", (match_id, first, last)).fetchall()
        return [JournalEntry(int(s), int(g), str(k), json.loads(d)) for s, g, k, d in rows]

    def games(self, match_id: str) -> list[dict[str, Any]]:
        rows = self._db.execute(
            "SELECT number, score_a, score_b, crawford, post_crawford, winner, points, kind, "
            "ending, cube FROM games WHERE match_id = ? ORDER BY number", (match_id,)
        ).fetchall()
        return [
            {"number": r[0], "score": [r[1], r[2]], "crawford": bool(r[3]),
             "post_crawford": bool(r[4]), "winner": r[5], "points": r[6], "kind": r[7],
             "ending": r[8], "cube": r[9]}
            for r in rows
        ]

    # ----------------------------------------------------------------- results

    def finish_match(self, match_id: str, score: tuple[int, int], winner: int | None,
                     games: int) -> None:
        now = time.time()
        with self._transaction(durable=True) as db:
            db.execute("INSERT OR REPLACE INTO results VALUES (?,?,?,?,?,?)",
                       (match_id, score[0], score[1], winner, games, now))
            db.execute(
                "UPDATE matches SET state = ?, score_a = ?, score_b = ?, played = ?, "
                "updated = ?, error = NULL WHERE id = ?",
                (MatchState.FINISHED.value, score[0], score[1], games, now, match_id),
            )

    # ----------------------------------------------------------------- server frontends

    def record_frontend_event(self, frontend: str, kind: str, event: str,
                              data: Mapping[str, Any], at: float | None = None) -> None:
        """Keep one event of a server frontend (a login, an invitation, a game action)."""
        with self._transaction() as db:
            db.execute("INSERT INTO frontend_events (frontend, kind, event, data, at) "
                       "VALUES (?, ?, ?, ?, ?)",
                       (frontend, kind, event, json.dumps(data, default=str),
                        time.time() if at is None else at))

    def frontend_events(self, frontend: str, limit: int = 1000) -> list[dict[str, Any]]:
        """The newest ``limit`` events of ``frontend``, oldest first."""
        rows = self._db.execute(
            "SELECT seq, event, data, at FROM frontend_events WHERE frontend = ? "
            "ORDER BY seq DESC LIMIT ?", (frontend, limit)).fetchall()
        return [{"seq": r[0], "event": r[1], "data": json.loads(r[2]), "at": r[3]}
                for r in reversed(rows)]

    def result(self, match_id: str) -> dict[str, Any] | None:
        row = self._db.execute(
            "SELECT score_a, score_b, winner, games, finished FROM results WHERE match_id = ?",
            (match_id,),
        ).fetchone()
        if row is None:
            return None
        return {"score": [row[0], row[1]], "winner": row[2], "games": row[3], "finished": row[4]}


_SELECT_MATCH = (
    "SELECT id, state, agent_a, agent_b, name_a, name_b, length, games, rules, seed, mat_path, "
    "started, created, updated, score_a, score_b, played, error FROM matches"
)


def _match_row(r: Sequence[Any]) -> MatchRow:
    spec = MatchSpec(agent_a=r[2], agent_b=r[3], length=int(r[6]), games=int(r[7]),
                     rules=rules_from_json(r[8]), seed=int(r[9]), names=(r[4], r[5]))
    return MatchRow(id=r[0], state=MatchState(r[1]), spec=spec, mat_path=Path(r[10]),
                    started=r[11], created=float(r[12]), updated=float(r[13]),
                    score=(int(r[14]), int(r[15])), played=int(r[16]), error=r[17])


# ============================================================================ the journal codec


def journal_action(event: ev.Event) -> tuple[str, dict[str, Any]] | None:
    """The journal entry (kind, data) of a referee event: its action's `ev.action_record`;
    None for events that are not game actions (game started/ended and match ended go to the
    games and results tables) and for actions without a record of their own."""
    return ev.action_record(event.action) if isinstance(event, ev.Acted) else None


def apply_action(game: Game, kind: str, data: dict[str, Any]) -> None:
    """Replay one journalled action; the core checks it (IllegalAction if it does not fit)."""
    if kind == "opening":
        die0, die1 = data["dice"]
        game.opening_roll(int(die0), int(die1))
    elif kind == "roll":
        _expect_seat(game, data)
        game.roll(tuple(data["dice"]))
    elif kind == "move":
        _expect_seat(game, data)
        game.move(Play((int(f), int(t), bool(h)) for f, t, h in data["play"]))
    elif kind == "double":
        _expect_seat(game, data)
        game.double()
    elif kind == "take":
        game.take()
    elif kind == "drop":
        game.drop()
    elif kind == "beaver":
        game.beaver()
    elif kind == "raccoon":
        game.raccoon()
    elif kind == "resign":
        game.resign(int(data["seat"]), int(data["value"]))
        if data["accepted"]:
            game.accept_resignation()
        else:
            game.reject_resignation()
    else:
        raise IllegalAction(f"unknown journal action {kind!r}")


def _expect_seat(game: Game, data: dict[str, Any]) -> None:
    if int(data["seat"]) != game.seat_on_roll:
        raise IllegalAction(f"journal says seat {data['seat']} acts, but seat "
                            f"{game.seat_on_roll} is on roll")


@dataclass
class Replay:
    """A match rebuilt from its journal."""

    match: Match
    finished: list[Game]
    """Finished games, in order (already recorded in ``match``)."""
    current: Game | None
    """The unfinished game (number ``len(finished) + 1``), or None between games."""
    openings: list[tuple[int, int]]
    """Opening dice drawn so far in the current game."""
    rolls: list[tuple[int, int]]
    """Rolls drawn so far in the current game."""
    next_seq: int

    @property
    def number(self) -> int:
        """Games started so far."""
        return len(self.finished) + (1 if self.current is not None else 0)


def replay(spec: MatchSpec, entries: Sequence[JournalEntry],
           outcomes: Sequence[dict[str, Any]] = ()) -> Replay:
    """Feed ``entries`` into core Games; ``outcomes`` (the games table) are cross-checked."""
    match = Match(spec.length, spec.rules)
    finished: list[Game] = []
    current: Game | None = None
    openings: list[tuple[int, int]] = []
    rolls: list[tuple[int, int]] = []
    number = 0
    next_seq = 1
    for entry in entries:
        if entry.seq != next_seq:
            raise StoreError(f"journal gap: expected entry {next_seq}, found {entry.seq}")
        next_seq += 1
        if current is None or entry.game != number:
            if current is not None or entry.game != number + 1:
                raise StoreError(f"journal entry {entry.seq} belongs to game {entry.game}, "
                                 f"expected game {number if current else number + 1}")
            number += 1
            current = match.new_game()
            openings, rolls = [], []
        try:
            apply_action(current, entry.kind, entry.data)
        except (IllegalAction, KeyError, TypeError, ValueError) as exc:
            raise StoreError(f"journal entry {entry.seq} (game {entry.game}, {entry.kind}) "
                             f"does not replay: {exc}") from None
        if entry.kind == "opening":
            openings.append((int(entry.data["dice"][0]), int(entry.data["dice"][1])))
        elif entry.kind == "roll":
            rolls.append((int(entry.data["dice"][0]), int(entry.data["dice"][1])))
        if current.is_over:
            assert current.outcome is not None
            match.record(current.outcome)
            finished.append(current)
            current = None
    for row in outcomes:
        index = int(row["number"]) - 1
        if row.get("winner") is None or index >= len(finished):
            continue
        outcome = finished[index].outcome
        assert outcome is not None
        if (outcome.winner, outcome.points) != (row["winner"], row["points"]):
            raise StoreError(f"game {row['number']}: the journal replays to {outcome.winner} "
                             f"winning {outcome.points}, the games table says {row['winner']} "
                             f"winning {row['points']}")
    return Replay(match, finished, current, openings, rolls, next_seq)


class ResumedDice(DiceSource):
    """``source`` with the dice already drawn in game ``game`` (0-based) skipped, after
    checking that they are the ones the journal recorded (same seed, same stream)."""

    def __init__(self, source: DiceSource, game: int, openings: Sequence[tuple[int, int]],
                 rolls: Sequence[tuple[int, int]]) -> None:
        self.source = source
        self.game = game
        self.openings = list(openings)
        self.rolls = list(rolls)

    def for_game(self, game: int) -> GameDice:
        stream = self.source.for_game(game)
        if game != self.game:
            return stream
        for recorded in self.openings:
            drawn = stream.opening()
            if drawn != recorded:
                raise StoreError(f"game {game + 1}: the dice stream gives opening {drawn}, the "
                                 f"journal recorded {recorded} (was the seed changed?)")
        for recorded in self.rolls:
            drawn = stream.roll()
            if drawn != recorded:
                raise StoreError(f"game {game + 1}: the dice stream gives {drawn}, the journal "
                                 f"recorded {recorded} (was the seed changed?)")
        return stream
