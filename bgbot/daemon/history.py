"""A hosted match's history read from its journal, for ``match_get`` (SPEC §8.6, §9).

A long money session has tens of thousands of events: rebuilding them replays every action
through the rules core, seconds of CPU. So `read_history` runs in a helper thread with its own
read-only connection to the store (the daemon's loop goes on answering), and a page of events
(``events_from``, ``events_limit``, protocol 1.3) replays only the games it covers: each
journalled action has exactly one event, so the events of game g are numbered from the counts
of the journal alone (``game_started``, one per action, ``game_ended`` once it is over), and a
game is rebuilt from its row of the ``games`` table (score, Crawford flags) and its actions.

It also answers where a match stands while no worker plays it (waiting to resume after a
restart): the game in play as its journal replays it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgpack  # type: ignore[import-untyped, unused-ignore]

from ..core.game import Game
from ..core.errors import BgbotError
from .protocol import MAX_MESSAGE_BYTES, ErrorCode, ProtocolError
from .store import MatchRow, MatchState, Store, StoreError, apply_action
from .wire import game_events, match_ended_event

__all__ = ["MAX_EVENTS_PAGE", "History", "read_history"]

MAX_EVENTS_PAGE = 10_000
"""The most events one ``match_get`` page may ask for (``events_limit``)."""
_REPLY_ROOM = 64 * 1024
"""Bytes of a reply kept for what is not the events (summary, rules, .mat text aside)."""


@dataclass(frozen=True)
class History:
    """What `read_history` found: a page of events and the game in play."""

    events: list[dict[str, Any]] | None
    """``{msg_type, content}`` of the events asked for, in order (None: not asked)."""
    more: bool
    """Events after the page exist (at the time of reading)."""
    in_play: dict[str, Any] | None
    """The game in play as the journal has it: ``game``, ``position`` (GNU BG ID),
    ``crawford``; None between games and when not asked."""


@dataclass(frozen=True)
class _Game:
    number: int
    first_seq: int
    entries: int
    row: dict[str, Any] | None
    """Its row of the games table (None if missing: then it is replayed from the start)."""

    @property
    def ended(self) -> bool:
        return self.row is not None and self.row.get("winner") is not None

    @property
    def event_count(self) -> int:
        return 1 + self.entries + (1 if self.ended else 0)


def read_history(db_path: Path, match_id: str, *, events: bool = False, first: int = 1,
                 limit: int | None = None, in_play: bool = False) -> History:
    """The events ``first`` .. ``first + limit - 1`` of a match (every one from ``first`` when
    ``limit`` is None; ProtocolError TOO_LARGE when they would not fit in a reply) and, with
    ``in_play``, its game in play. Opens its own read-only connection: call it in a thread."""
    try:
        store = Store(db_path, read_only=True)
    except StoreError as exc:
        raise ProtocolError(ErrorCode.INTERNAL, str(exc)) from None
    try:
        row = store.get_match(match_id)
        if row is None:
            raise ProtocolError(ErrorCode.NOT_FOUND, f"no match {match_id}",
                                {"match_id": match_id})
        games = _games(store, row)
        page, more = _events(store, row, games, first, limit) if events else (None, False)
        playing = _in_play(store, row, games) if in_play else None
        return History(page, more, playing)
    except (StoreError, BgbotError, KeyError, ValueError, TypeError) as exc:
        if isinstance(exc, ProtocolError):
            raise
        raise ProtocolError(ErrorCode.INTERNAL, f"the journal of match {match_id} does not "
                            f"replay: {exc}") from None
    finally:
        store.close()


def _games(store: Store, row: MatchRow) -> list[_Game]:
    rows = {int(g["number"]): g for g in store.games(row.id)}
    found: list[_Game] = []
    seq = 1
    for number, count in store.journal_counts(row.id):
        found.append(_Game(number, seq, count, rows.get(number)))
        seq += count
    return found


def _replay(store: Store, row: MatchRow, game: _Game) -> tuple[Game, tuple[int, int],
                                                                tuple[int, int]]:
    """Game ``game`` rebuilt from its games row and its actions: (game, score before, after)."""
    if game.row is None:
        raise StoreError(f"game {game.number} has actions but no row in the games table")
    spec = row.spec
    before = (int(game.row["score"][0]), int(game.row["score"][1]))
    played = Game(spec.rules.for_match(spec.length), spec.length, before,
                  crawford=bool(game.row["crawford"]),
                  post_crawford=bool(game.row["post_crawford"]))
    for entry in store.journal_range(row.id, game.first_seq, game.first_seq + game.entries - 1):
        if entry.game != game.number:
            raise StoreError(f"journal entry {entry.seq} belongs to game {entry.game}, "
                             f"expected {game.number}")
        apply_action(played, entry.kind, entry.data)
    after = before
    if played.outcome is not None:
        gained = [0, 0]
        gained[played.outcome.winner] = played.outcome.points
        after = (before[0] + gained[0], before[1] + gained[1])
    return played, before, after


def _events(store: Store, row: MatchRow, games: list[_Game], first: int,
            limit: int | None) -> tuple[list[dict[str, Any]], bool]:
    result = store.result(row.id) if row.state is MatchState.FINISHED else None
    total = sum(g.event_count for g in games) + (1 if result is not None else 0)
    last = total if limit is None else min(total, first + limit - 1)
    page: list[dict[str, Any]] = []
    n = 1
    for game in games:
        end = n + game.event_count - 1
        if end >= first and n <= last:
            played, before, after = _replay(store, row, game)
            for offset, (kind, content) in enumerate(
                    game_events(row.id, game.number, played, before, after)):
                if first <= n + offset <= last:
                    content["n"] = n + offset
                    page.append({"msg_type": kind, "content": content})
        n = end + 1
        if n > last:
            break
    if result is not None and first <= total <= last:
        kind, content = match_ended_event(row.id, (int(result["score"][0]),
                                                   int(result["score"][1])),
                                          result["winner"], int(result["games"]))
        content["n"] = total
        page.append({"msg_type": kind, "content": content})
    if limit is None:
        size = len(msgpack.packb(page, use_bin_type=True))
        if size > MAX_MESSAGE_BYTES - _REPLY_ROOM:
            raise ProtocolError(ErrorCode.TOO_LARGE, f"the {total} events of match {row.id} "
                                f"take {size} bytes, more than a reply may hold: ask for them "
                                f"a page at a time (events_from, events_limit up to "
                                f"{MAX_EVENTS_PAGE}; protocol 1.3)",
                                {"size": size, "limit": MAX_MESSAGE_BYTES, "events": total})
    return page, last < total


def _in_play(store: Store, row: MatchRow, games: list[_Game]) -> dict[str, Any] | None:
    from .hosting import game_gnubgid

    if not games or games[-1].ended or row.state is MatchState.FINISHED:
        return None
    played, _, _ = _replay(store, row, games[-1])
    if played.is_over:
        return None
    return {"game": games[-1].number, "position": game_gnubgid(played),
            "crawford": bool(played.crawford)}
