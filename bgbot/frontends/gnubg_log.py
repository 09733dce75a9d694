"""The per-connection log of a gnubg external-player connection: JSON lines, one event a line.

Why JSON lines and not ``.mat``: an external player sees only the requests addressed to it.
It never sees the opponent's dice (so it cannot tell which roll produced the opponent's play,
or that the opponent danced), nor the last move of a game it lost, nor a resignation the
opponent offered (gnubg answers those itself). A ``.mat`` needs every roll of both sides, and
gnubg's import rejects a game with an invented roll, so a reconstructed ``.mat`` would be
either unreadable or wrong. The log therefore records exactly what was seen and done: every
request line (gnubg's own words), our reply, our decision with its dice, and the game and
match boundaries read from the score changes. The end of the last game of a connection (or
of a match followed by a new one) has no score change to read, so its result is worked out
from our last action and the last board we saw, and marked ``"inferred": true``: the winner
is certain, the points are a lower bound when the game ended on moves gnubg played for us
(forced ones it does not ask for) while its own rolls, which we never see, could still change
a gammon into a backgammon. gnubg's own ``export match mat`` stays the authoritative record of
the match.

Events (every record has ``t`` (Unix time) and ``event``):

- ``connect`` (``peer``, ``agent``), ``disconnect`` (``reason``, ``requests``, ``errors``)
- ``match_start`` (``match``, ``length``, ``seat``, ``names`` in seat order)
- ``game_start`` (``match``, ``game``, ``score`` [player 0, player 1], ``crawford``,
  ``post_crawford``)
- ``request`` (``n``, ``match``, ``game``, ``kind`` roll_or_double/move/take, ``line``,
  ``reply``, ``action`` roll/double/move/take/drop/beaver/resign, ``dice``, ``play``,
  ``position_id`` (the board we decided on, from our side), ``cube``, ``ms``)
- ``resignation_declined`` (``value``), ``error`` (``n``, ``reason``, ``line``)
- ``game_end`` (``match``, ``game``, ``winner`` seat, ``points``, ``ending``
  normal/drop/resign/unknown, ``inferred``, ``score_after`` or null)
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Iterable

__all__ = ["JsonLinesLog", "LoggedGame", "games_from_log", "read_log"]


class JsonLinesLog:
    """Append-only JSON-lines file, flushed after every record (a crash loses at most one)."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._handle: IO[str] | None = self.path.open("a", encoding="utf-8")

    def write(self, event: str, **fields: Any) -> None:
        """Append one record ``{"t": now, "event": event, **fields}``."""
        if self._handle is None:
            return
        record = {"t": round(time.time(), 3), "event": event, **fields}
        self._handle.write(json.dumps(record, separators=(",", ":")) + "\n")
        self._handle.flush()

    def close(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None


def read_log(path: Path) -> list[dict[str, Any]]:
    """All records of a log file, in order (a torn last line is skipped)."""
    records: list[dict[str, Any]] = []
    with Path(path).open(encoding="utf-8") as handle:
        for line in handle:
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError:
                continue
    return records


@dataclass
class LoggedGame:
    """One game as the log saw it: our actions and, once known, its result."""

    match: int
    game: int
    score: tuple[int, int]
    actions: list[dict[str, Any]] = field(default_factory=list)
    """Our ``request`` records (roll, double, move, take, drop, beaver, resign) in order."""
    winner: int | None = None
    points: int | None = None
    ending: str | None = None
    inferred: bool = False


def games_from_log(records: Iterable[dict[str, Any]]) -> list[LoggedGame]:
    """Group a log's records into games (in order of play)."""
    games: list[LoggedGame] = []
    by_key: dict[tuple[int, int], LoggedGame] = {}
    for record in records:
        event = record.get("event")
        if event == "game_start":
            first, second = record["score"]
            game = LoggedGame(record["match"], record["game"], (int(first), int(second)))
            games.append(game)
            by_key[(game.match, game.game)] = game
        elif event == "request" and (record.get("match"), record.get("game")) in by_key:
            by_key[(record["match"], record["game"])].actions.append(record)
        elif event == "game_end" and (record.get("match"), record.get("game")) in by_key:
            game = by_key[(record["match"], record["game"])]
            game.winner = record["winner"]
            game.points = record["points"]
            game.ending = record["ending"]
            game.inferred = bool(record["inferred"])
    return games
