"""The daemon's side of hosted matches: create, dispatch to match workers, track, abort.

Matches are played in match worker processes (`bgbot.daemon.workers`); this module keeps the
daemon's view of them: which worker plays which match, the live game number and score (from
the committed events the workers send), and it publishes those events. A worker that dies
has its matches resumed from the journal by a new one.
"""

from __future__ import annotations

import asyncio
import datetime as _dt
from collections import deque
import itertools
import logging
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from ..agents.spec import parse_agent_spec
from .hosting import default_mat_path
from .logs import event_level
from .protocol import ErrorCode, Message, ProtocolError, match_topic, new_message
from .store import RESUMABLE, MatchRow, MatchSpec, MatchState, Store
from .wire import rules_to_wire
from .workers import Worker, WorkerSettings, match_worker_main

log = logging.getLogger(__name__)
event_log = logging.getLogger("bgbot.events")

Publish = Callable[[bytes, Message], None]

TERMINAL = frozenset({MatchState.FINISHED.value, MatchState.ABORTED.value,
                      MatchState.FAILED.value})
DRAIN_CHUNK = 48
"""Events published (and logged) per event-loop turn."""
PAUSE_AT, RESUME_AT = 20_000, 2_000
"""Queued events at which the daemon stops / resumes reading the match workers' pipes."""
MAX_CRASHES = 3
"""A match whose worker died this many times while playing it is marked failed."""


def wire_state(state: MatchState) -> str:
    """The protocol's match state: queued, running and suspended matches are all "playing"."""
    return "playing" if state in RESUMABLE else state.value


def default_names(agent_a: str, agent_b: str) -> tuple[str, str]:
    """The agents' specs as written by the spec parser; -A/-B added when they are equal."""
    a, b = str(parse_agent_spec(agent_a)), str(parse_agent_spec(agent_b))
    return (a, b) if a != b else (f"{a}-A", f"{b}-B")


@dataclass
class Live:
    """What the daemon knows of a match being played."""

    worker: Worker | None
    game: int
    score: tuple[int, int]
    crashes: int = 0
    waiters: list[asyncio.Future[MatchState]] = field(default_factory=list)


class MatchManager:
    """Hosted matches as the daemon sees them (see the module docstring)."""

    def __init__(self, store: Store, settings: WorkerSettings, *, workers: int,
                 logs_dir: Path, publish: Publish, max_matches: int) -> None:
        self.store = store
        self.settings = settings
        self.size = workers
        self.logs_dir = logs_dir
        self.publish = publish
        self.max_matches = max_matches
        self.workers: list[Worker] = []
        self.live: dict[str, Live] = {}
        self.events = 0
        self.stopping = False
        self.parked = 0  # matches parked by the stop in progress
        self.finished = sum(n for state, n in store.count_by_state().items()
                            if state in TERMINAL)
        self._pending: deque[tuple[bytes, Message]] = deque()
        self._draining = False
        self._paused = False
        self._snapshots: dict[int, asyncio.Future[dict[str, Any] | None]] = {}
        self._ids = itertools.count(1)

    # ----------------------------------------------------------------- workers

    async def start(self) -> None:
        """Start the match workers and resume every unfinished match."""
        for index in range(1, self.size + 1):
            self._spawn(index)
        rows = self.store.resumable()
        for row in rows:
            self._dispatch(row, resumed=True)
        if rows:
            log.info("resuming %d unfinished matches", len(rows))
        await asyncio.gather(*(w.ready for w in self.workers), return_exceptions=True)

    def _spawn(self, index: int) -> Worker:
        worker = Worker("match-worker", index, match_worker_main, self.settings,
                        self._on_message, self._on_exit)
        self.workers.append(worker)
        return worker

    def pids(self) -> list[int]:
        return [w.pid for w in self.workers if w.pid is not None and not w.exited]

    def _pick(self) -> Worker:
        alive = [w for w in self.workers if not w.exited]
        if not alive:
            alive = [self._spawn(len(self.workers) + 1)]
        return min(alive, key=lambda w: len(w.matches))

    def _dispatch(self, row: MatchRow, *, resumed: bool = False, crashes: int = 0) -> None:
        worker = self._pick()
        worker.matches.add(row.id)
        live = self.live.get(row.id)
        if live is None:
            live = self.live[row.id] = Live(worker, row.played, row.score)
        live.worker = worker
        live.crashes = crashes
        worker.send(("start", row.id))
        self.publish(match_topic(row.id), new_message("match_started", {
            "match_id": row.id, "players": [row.spec.agent_a, row.spec.agent_b],
            "names": list(row.spec.names), "length": row.spec.length,
            "games": row.spec.games if row.spec.length == 0 else 0, "seed": row.spec.seed,
            "resumed": resumed,
        }))

    # ----------------------------------------------------------------- requests

    @property
    def active(self) -> int:
        return len(self.live)

    def create(self, spec: MatchSpec) -> MatchRow:
        if self.stopping:
            raise ProtocolError(ErrorCode.SHUTTING_DOWN, "the daemon is stopping")
        if self.max_matches and self.active >= self.max_matches:
            raise ProtocolError(ErrorCode.BUSY, f"{self.active} matches are playing, the limit "
                                f"is {self.max_matches}; try again later",
                                {"active": self.active, "limit": self.max_matches})
        if self.settings.mat_errors == "stop":
            self._check_logs_dir()
        match_id = uuid.uuid4().hex[:12]
        now = _dt.datetime.now()
        if not (spec.names[0] and spec.names[1]):
            spec = MatchSpec(spec.agent_a, spec.agent_b, spec.length, spec.games, spec.rules,
                             spec.seed, default_names(spec.agent_a, spec.agent_b))
        path = default_mat_path(self.logs_dir, match_id, spec, now)
        row = self.store.create_match(match_id, spec, path, now.isoformat(timespec="seconds"))
        self._dispatch(row)
        log.info("match started", extra={"fields": {
            "match": match_id, "players": f"{spec.agent_a} vs {spec.agent_b}",
            "length": spec.length, "seed": spec.seed, "mat": str(path)}})
        return row

    def _check_logs_dir(self) -> None:
        """Refuse a match whose .mat file could not be written (``mat_errors = "stop"``)."""
        try:
            self.logs_dir.mkdir(parents=True, exist_ok=True)
            with tempfile.NamedTemporaryFile(dir=self.logs_dir, prefix=".probe-"):
                pass
        except OSError as exc:
            raise ProtocolError(
                ErrorCode.BAD_STATE, f"the match log folder {self.logs_dir} cannot be written: "
                f"{exc.strerror or exc} (daemon.mat_errors = \"stop\")",
                {"path": str(self.logs_dir)}) from None

    async def abort(self, match_id: str, reason: str | None, timeout: float = 10.0) -> MatchRow:
        row = self.store.get_match(match_id)
        if row is None:
            raise ProtocolError(ErrorCode.NOT_FOUND, f"no match {match_id}", {"match_id": match_id})
        if row.state not in RESUMABLE:
            raise ProtocolError(ErrorCode.BAD_STATE, f"match {match_id} is {row.state.value}",
                                {"match_id": match_id, "state": wire_state(row.state)})
        live = self.live.get(match_id)
        if live is None or live.worker is None or live.worker.exited:
            self.store.set_state(match_id, MatchState.ABORTED, reason or "aborted on request")
            self._ended(match_id, MatchState.ABORTED, reason or "aborted on request")
        else:
            future: asyncio.Future[MatchState] = asyncio.get_running_loop().create_future()
            live.waiters.append(future)
            live.worker.send(("abort", match_id))
            try:
                await asyncio.wait_for(asyncio.shield(future), timeout)
            except asyncio.TimeoutError:
                raise ProtocolError(ErrorCode.TIMEOUT, f"match {match_id} did not stop in "
                                    f"{timeout:g} s", {"match_id": match_id}) from None
            if reason:
                self.store.set_state(match_id, MatchState.ABORTED, reason)
        found = self.store.get_match(match_id)
        assert found is not None
        return found

    async def snapshot(self, match_id: str, *, mat: bool = False,
                       timeout: float = 5.0) -> dict[str, Any] | None:
        """The live game number, GNU BG ID, Crawford flag (and with ``mat`` the .mat text) of
        a playing match; None when it is not being played."""
        live = self.live.get(match_id)
        if live is None or live.worker is None or live.worker.exited:
            return None
        req = next(self._ids)
        future: asyncio.Future[dict[str, Any] | None] = asyncio.get_running_loop().create_future()
        self._snapshots[req] = future
        live.worker.send(("snapshot", req, match_id, mat))
        try:
            return await asyncio.wait_for(future, timeout)
        except asyncio.TimeoutError:
            return None
        finally:
            self._snapshots.pop(req, None)

    def summary(self, row: MatchRow) -> dict[str, Any]:
        """A match_summary (protocol schema) for ``row``, with the live game and score."""
        terminal = row.state not in RESUMABLE
        # the store is the truth once a match ended: the worker's "ended" note may still be
        # on its way to this process, leaving a stale live entry for a moment
        live = None if terminal else self.live.get(row.id)
        result = self.store.result(row.id) if row.state is MatchState.FINISHED else None
        score = live.score if live is not None else row.score
        game = live.game if live is not None else row.played
        return {
            "match_id": row.id,
            "state": wire_state(row.state) if live is None else "playing",
            "players": [row.spec.agent_a, row.spec.agent_b],
            "names": list(row.spec.names),
            "length": row.spec.length,
            "games": row.spec.games if row.spec.length == 0 else 0,
            "game": game,
            "score": [score[0], score[1]],
            "winner": None if result is None or row.spec.length == 0 else result["winner"],
            "started": row.created,
            "ended": row.updated if terminal and live is None else None,
            "seed": row.spec.seed,
            "mat_path": str(row.mat_path),
        }

    def details(self, row: MatchRow) -> dict[str, Any]:
        return {"seed": row.spec.seed, "rules": rules_to_wire(row.spec.rules),
                "error": row.error}

    # ----------------------------------------------------------------- from the workers

    def _on_message(self, worker: Worker, message: Any) -> None:
        kind = message[0]
        if kind == "events":
            self._pending.extend(message[1])
            if not self._draining:
                self._draining = True
                asyncio.get_running_loop().call_soon(self._drain)
            if len(self._pending) > PAUSE_AT and not self._paused:
                self._paused = True
                for each in self.workers:
                    each.pause()
        elif kind == "state":
            _, match_id, state, error = message
            self.flush_events()  # a match's events come before its end
            self._state(worker, match_id, MatchState(state), error)
        elif kind == "snapshot":
            future = self._snapshots.get(message[1])
            if future is not None and not future.done():
                future.set_result(message[2])
        elif kind == "not_here":
            live = self.live.get(message[1])
            if live is not None:
                for waiter in live.waiters:
                    if not waiter.done():
                        waiter.set_result(MatchState.ABORTED)
        elif kind == "stopped":
            pass
        else:
            log.warning("unexpected message from match worker %d: %r", worker.index, kind)

    def _drain(self) -> None:
        """Publish and log queued events, a chunk per loop turn (requests go in between)."""
        pending = self._pending
        for _ in range(min(DRAIN_CHUNK, len(pending))):
            topic, msg = pending.popleft()
            try:
                self._event(topic, msg)
            except Exception:  # one bad event must not stop the others
                log.exception("publishing a %s event failed", msg.msg_type)
        if self._paused and len(pending) < RESUME_AT:
            self._paused = False
            for each in self.workers:
                each.resume()
        if pending:
            asyncio.get_running_loop().call_soon(self._drain)
        else:
            self._draining = False

    def flush_events(self) -> None:
        """Publish every queued event now (before a state change that follows them)."""
        while self._pending:
            topic, msg = self._pending.popleft()
            try:
                self._event(topic, msg)
            except Exception:
                log.exception("publishing a %s event failed", msg.msg_type)

    def _event(self, topic: bytes, msg: Message) -> None:
        self.events += 1
        content = msg.content
        match_id = content.get("match_id", "")
        live = self.live.get(match_id)
        if live is not None:
            if msg.msg_type == "game_started":
                live.game = int(content["game"])
            elif msg.msg_type == "game_ended":
                live.score = (int(content["score"][0]), int(content["score"][1]))
        self.publish(topic, msg)
        level = event_level(msg.msg_type)
        if event_log.isEnabledFor(level):
            fields = {"match": match_id}
            fields.update((k, v) for k, v in content.items() if k != "match_id")
            event_log.log(level, msg.msg_type, extra={"fields": fields})

    def _state(self, worker: Worker, match_id: str, state: MatchState, error: str | None) -> None:
        if state in (MatchState.RUNNING, MatchState.QUEUED):
            return
        worker.matches.discard(match_id)
        if state is MatchState.SUSPENDED:
            if self.stopping:
                self.parked += 1
            else:
                log.warning("match %s was parked by its worker%s", match_id,
                            f": {error}" if error else "")
        self._ended(match_id, state, error)

    def _ended(self, match_id: str, state: MatchState, error: str | None) -> None:
        live = self.live.pop(match_id, None)
        if state.value in TERMINAL:
            self.finished += 1
        if live is not None:
            for waiter in live.waiters:
                if not waiter.done():
                    waiter.set_result(state)
        if state in (MatchState.ABORTED, MatchState.FAILED):
            reason = error or state.value
            log.log(logging.WARNING if state is MatchState.FAILED else logging.INFO,
                    "match %s", state.value, extra={"fields": {"match": match_id,
                                                               "reason": reason}})
            self.publish(match_topic(match_id), new_message("match_aborted", {
                "match_id": match_id, "reason": reason[:4096], "state": state.value}))
        elif state is MatchState.FINISHED:
            log.info("match finished", extra={"fields": {"match": match_id}})

    def _on_exit(self, worker: Worker) -> None:
        if worker in self.workers:
            self.workers.remove(worker)
        if self.stopping:
            return
        log.error("match worker %d (pid %s) died; resuming its %d matches in a new one",
                  worker.index, worker.pid, len(worker.matches))
        self._spawn(worker.index)
        for match_id in sorted(worker.matches):
            live = self.live.get(match_id)
            crashes = (live.crashes if live else 0) + 1
            row = self.store.get_match(match_id)
            if row is None or row.state not in RESUMABLE:
                self.live.pop(match_id, None)
                continue
            if crashes >= MAX_CRASHES:
                error = f"its worker died {crashes} times while playing it"
                self.store.set_state(match_id, MatchState.FAILED, error)
                self._ended(match_id, MatchState.FAILED, error)
                continue
            self._dispatch(row, resumed=True, crashes=crashes)
        worker.matches.clear()

    async def stop(self, timeout: float) -> None:
        """Park every match (journalled; resumed on the next start) and stop the workers."""
        self.stopping = True
        self.parked = 0
        started = time.monotonic()
        await asyncio.gather(*(w.stop(("stop",), timeout) for w in list(self.workers)),
                             return_exceptions=True)
        log.info("match workers stopped in %.2f s; matches parked: %d",
                 time.monotonic() - started, self.parked + len(self.live))
        self.live.clear()
