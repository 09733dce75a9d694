"""The SQLite results file of a duel: its configuration and every game, pair by pair.

Raw games are the truth: the standings are always computed again from the ``games`` table.
A pair's games are written in one transaction, so a killed duel never leaves half a pair, and
``--resume`` continues from the first pair not stored. One file holds one duel; its ``duels``
row keeps the full configuration, and a resume with a different one is refused.
"""

from __future__ import annotations

import datetime as _dt
import json
import sqlite3
from pathlib import Path
from typing import Any

from ..core.errors import BgbotError
from .duel import DuelConfig, GameRow, PairResult
from .referee import SEEDING_VERSION

SCHEMA_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS duels (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    schema INTEGER NOT NULL,
    config TEXT NOT NULL,
    created TEXT NOT NULL,
    stopped TEXT
);
CREATE TABLE IF NOT EXISTS pairs (
    pair INTEGER PRIMARY KEY,
    seconds REAL NOT NULL,
    cpu_seconds REAL NOT NULL,
    stored TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS games (
    pair INTEGER NOT NULL REFERENCES pairs(pair),
    mirrored INTEGER NOT NULL,
    game INTEGER NOT NULL,
    winner INTEGER NOT NULL,
    points INTEGER NOT NULL,
    kind INTEGER NOT NULL,
    ending TEXT NOT NULL,
    cube INTEGER NOT NULL,
    score_a INTEGER NOT NULL,
    score_b INTEGER NOT NULL,
    mwc_a REAL,
    luck_a REAL,
    luck_b REAL,
    PRIMARY KEY (pair, mirrored, game)
);
"""

_COLUMNS = ("mirrored", "game", "winner", "points", "kind", "ending", "cube", "score_a",
            "score_b", "mwc_a", "luck_a", "luck_b")


class DuelStoreError(BgbotError):
    """The results file cannot be used for this duel (another duel, a different config)."""


def default_path(config: DuelConfig, directory: Path = Path("duels")) -> Path:
    """``duels/<A>-vs-<B>-<mode>[-luck[-<judge>]]-seed<S>.sqlite``: a name for every
    configuration (`DuelConfig.identity`), so that two different duels never meet in one
    file. The mode is ``money-cubeless``, ``money-cubeful`` with ``-jacoby``, ``-beavers``
    and ``-limit<N>`` as set, or ``<N>pt`` (``-cubeless`` without the cube)."""
    from ..util import safe_name

    if config.length:
        mode = f"{config.length}pt" + ("" if config.cube else "-cubeless")
    elif not config.cube:
        mode = "money-cubeless"
    else:
        mode = "money-cubeful" + "".join(
            f"-{word}" for word, on in (("jacoby", config.jacoby), ("beavers", config.beavers))
            if on)
    if config.cube and config.cube_limit:
        mode += f"-limit{config.cube_limit}"
    if config.luck_judge is not None:
        mode += "-luck" + ("" if config.luck_judge == "heuristic"
                           else f"-{safe_name(config.luck_judge, 'judge')}")
    a, b = (safe_name(spec, "agent") for spec in (config.agent_a, config.agent_b))
    return directory / f"{a}-vs-{b}-{mode}-seed{config.seed}.sqlite"


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


class DuelStore:
    """One duel's results file (stdlib sqlite3, WAL mode)."""

    def __init__(self, path: Path, connection: sqlite3.Connection, config: DuelConfig) -> None:
        self.path = path
        self.db = connection
        self.config = config

    @classmethod
    def open(cls, path: Path, config: DuelConfig, *, resume: bool) -> DuelStore:
        """Open (or create) ``path`` for ``config``.

        A file that already holds a duel is only used with ``resume`` and the same config.
        """
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(path, isolation_level=None, timeout=30.0)
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            db.executescript(_SCHEMA)
            row = db.execute("SELECT schema, config FROM duels WHERE id = 1").fetchone()
            wanted = {**config.identity(), "seeding": SEEDING_VERSION}
            if row is None:
                db.execute("INSERT INTO duels (id, schema, config, created) VALUES (1, ?, ?, ?)",
                           (SCHEMA_VERSION, json.dumps(wanted, sort_keys=True), _now()))
            else:
                stored = json.loads(row[1])
                pairs = db.execute("SELECT COUNT(*) FROM pairs").fetchone()[0]
                if not resume:
                    raise DuelStoreError(
                        f"{path} already holds a duel ({pairs} pair{'' if pairs == 1 else 's'}); "
                        "pass --resume to "
                        "continue it, or choose another results file with --db")
                if row[0] != SCHEMA_VERSION:
                    raise DuelStoreError(f"{path}: results file format {row[0]}, this bgbot "
                                         f"reads {SCHEMA_VERSION}")
                seeding = stored.setdefault("seeding", 1)  # stores before it was recorded: 1
                if seeding != SEEDING_VERSION:
                    raise DuelStoreError(
                        f"{path} was played with version {seeding} of the agents' random "
                        f"streams and this bgbot derives them with version {SEEDING_VERSION} "
                        "(per decision, from the match seed), so the rest of the duel would not "
                        "be the duel it started as: finish it with the bgbot that began it, or "
                        "start a new results file with --db")
                if stored != wanted:
                    raise DuelStoreError(f"{path} holds a different duel, so it cannot be "
                                         f"resumed with these options: {_differences(stored, wanted)}")
                db.execute("UPDATE duels SET stopped = NULL WHERE id = 1")
        except BaseException:
            db.close()
            raise
        return cls(path, db, config)

    def add_pair(self, pair: PairResult) -> None:
        """Store one pair's games in a single transaction."""
        db = self.db
        db.execute("BEGIN IMMEDIATE")
        try:
            db.execute("INSERT INTO pairs (pair, seconds, cpu_seconds, stored) "
                       "VALUES (?, ?, ?, ?)",
                       (pair.index, pair.seconds, pair.cpu_seconds, _now()))
            db.executemany(
                f"INSERT INTO games (pair, {', '.join(_COLUMNS)}) "
                f"VALUES ({', '.join('?' * (len(_COLUMNS) + 1))})",
                [(pair.index, *_row_values(g)) for g in pair.games],
            )
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")

    def pairs(self) -> list[PairResult]:
        """Every stored pair, in order, rebuilt from the games table."""
        times = {row[0]: (row[1], row[2])
                 for row in self.db.execute("SELECT pair, seconds, cpu_seconds FROM pairs")}
        games: dict[int, list[GameRow]] = {index: [] for index in times}
        query = (f"SELECT pair, {', '.join(_COLUMNS)} FROM games "
                 "ORDER BY pair, mirrored, game")
        for row in self.db.execute(query):
            games[row[0]].append(_game_row(row[1:]))
        return [PairResult(index, tuple(games[index]), times[index][0],
                           cpu_seconds=times[index][1]) for index in sorted(games)]

    def pair_count(self) -> int:
        count: int = self.db.execute("SELECT COUNT(*) FROM pairs").fetchone()[0]
        return count

    def mark_stopped(self, reason: str) -> None:
        self.db.execute("UPDATE duels SET stopped = ? WHERE id = 1", (f"{_now()} {reason}",))

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> DuelStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _row_values(g: GameRow) -> tuple[Any, ...]:
    return (int(g.mirrored), g.number, g.winner, g.points, g.kind, g.ending, g.cube, g.score_a,
            g.score_b, g.mwc_a, g.luck_a, g.luck_b)


def _game_row(values: tuple[Any, ...]) -> GameRow:
    (mirrored, number, winner, points, kind, ending, cube, score_a, score_b, mwc_a, luck_a,
     luck_b) = values
    return GameRow(bool(mirrored), number, winner, points, kind, ending, cube, score_a, score_b,
                   mwc_a, luck_a, luck_b)


def _differences(stored: dict[str, Any], wanted: dict[str, Any]) -> str:
    keys = sorted(set(stored) | set(wanted))
    return "; ".join(f"{k} was {_shown(stored.get(k))}, now {_shown(wanted.get(k))}"
                     for k in keys if stored.get(k) != wanted.get(k))


def _shown(value: Any) -> str:
    """A configuration value as people read it: on/off, none, text without quotes."""
    if isinstance(value, bool):
        return "on" if value else "off"
    if value is None:
        return "none"
    return str(value)
