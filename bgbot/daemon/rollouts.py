"""The daemon's rollouts (protocol/SPEC.md §8.11-8.12): ``rollout`` and ``rollout_cancel``.

Where the work runs. A rollout is `bgbot.rollout`'s blocking `rollout_position` /
`rollout_candidates`, run in a thread of its own (one per running rollout, at most
``limits.max_rollouts``), which hands its chunks of trials to a process pool of the daemon's
own (``limits.rollout_workers`` processes, started at the first rollout, niced below the
daemon) and counts them in trial order. The thread itself only waits and counts (a few
microseconds a trial), so the loop that answers every request keeps its promises (``status``
within 50 ms), and the figures are those of ``bgbot rollout`` with the same seed, bit for bit.

Why a pool of its own rather than the decision workers: those answer one short decision at a
time under ``limits.decision_timeout`` (a worker busy longer is killed), and a chunk of
trials takes seconds; a `concurrent.futures.ProcessPoolExecutor` is the executor the rollout
runner already takes (``bgbot rollout --concurrency N`` uses the same), so nothing new plays
the trials, and decisions never queue behind a rollout.

Progress: the thread's progress callback (after every chunk) posts, at most every
`PROGRESS_INTERVAL` seconds, a ``rollout_progress`` event to the loop, which publishes it
under ``rollout.<rollout_id>``; the last one, with ``stopped``, goes out just before the
reply. Cancel: ``rollout_cancel`` sets the rollout's event, which the runner checks between
chunks; the reply then carries the trials counted so far. A stopping daemon cancels every
rollout, waits a moment for their replies, then ends the pool's processes.
"""

from __future__ import annotations

import asyncio
import logging
import math
import multiprocessing
import os
import threading
import time
from concurrent.futures import Executor, ProcessPoolExecutor, ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, Mapping

from ..core.errors import BgbotError
from ..deciders import create_agent
from ..rollout import (CandidateResult, RolloutProgress, RolloutResult, close_players,
                       rollout_candidates, rollout_position)
from ..rollout.settings import DEFAULT_TRIALS
from .agents import check_request_agent
from .config import MAX_ROLLOUTS, LimitsConfig
from .protocol import ErrorCode, Message, ProtocolError, new_message, rollout_topic
from .wire import DEFAULT_ROLLOUT_PLAYER, RolloutRequest, rollout_request, rollout_to_wire
from .workers import WorkerSettings, prepare_worker

__all__ = ["PROGRESS_INTERVAL", "Rollouts", "rollout_worker_init"]

log = logging.getLogger(__name__)

PROGRESS_INTERVAL = 0.25
"""Seconds between two ``rollout_progress`` events of one rollout, at least (the last one
always goes out)."""
STOP_GRACE = 2.0
"""Seconds a stopping daemon waits for its cancelled rollouts to reply before it ends the
processes that play them (a reply then says ``shutting_down``)."""

Publish = Callable[[bytes, Message], None]
Found = RolloutResult | list[CandidateResult]


def rollout_worker_init(settings: WorkerSettings) -> None:
    """The start of a rollout worker process (the pool's initializer): as every worker of the
    daemon (`prepare_worker`), niced like the match workers."""
    prepare_worker(settings, "rollout-worker", os.getpid(), None, settings.nice)


@dataclass
class _Running:
    """One rollout being played: its id, what it plays, its cancel flag, when it started
    and when it last published its progress."""

    rollout_id: str
    request: RolloutRequest
    stop: threading.Event = field(default_factory=threading.Event)
    started: float = field(default_factory=time.monotonic)
    published: float = -math.inf


class Rollouts:
    """The rollouts a daemon runs: their threads, their process pool, their events."""

    def __init__(self, settings: WorkerSettings, workers: int, publish: Publish) -> None:
        self.settings = settings
        self.workers = workers
        self.publish = publish
        self.running: dict[str, _Running] = {}
        self._pool: ProcessPoolExecutor | None = None
        self._threads = ThreadPoolExecutor(MAX_ROLLOUTS, thread_name_prefix="rollout")
        self._closed = False

    # ----------------------------------------------------------------- requests

    def start(self, rollout_id: str, content: Mapping[str, Any], limits: LimitsConfig
              ) -> Awaitable[dict[str, Any]]:
        """Check a rollout request (ProtocolError naming the field, or ``busy``) and begin
        it; the awaitable gives the reply's content when it ends."""
        if self._closed:
            raise ProtocolError(ErrorCode.SHUTTING_DOWN, "the daemon is stopping")
        player = str(content.get("player", DEFAULT_ROLLOUT_PLAYER))
        check_request_agent(player, "player")
        trials = int(content.get("trials", DEFAULT_TRIALS))
        if trials > limits.max_rollout_trials:
            raise _bad("trials", f"at most {limits.max_rollout_trials} trials a rollout (the "
                       f"daemon's limits.max_rollout_trials), got {trials}")
        candidates = int(content.get("candidates", 0))
        if candidates > limits.max_candidates:
            raise _bad("candidates", f"at most {limits.max_candidates} (the daemon's "
                       f"limits.max_candidates), got {candidates}")
        request = rollout_request(content)
        if len(self.running) >= limits.max_rollouts:
            raise ProtocolError(ErrorCode.BUSY, f"{len(self.running)} rollouts are running, the "
                                f"daemon's limit (limits.max_rollouts); try again later",
                                {"limit": limits.max_rollouts, "key": "limits.max_rollouts"})
        try:
            create_agent(player)  # its options, checked here: a worker's error would be late
        except BgbotError as exc:
            raise _bad("player", str(exc)) from None
        running = _Running(rollout_id, request)
        self.running[rollout_id] = running
        return self._run(running)

    def cancel(self, rollout_id: str) -> dict[str, Any]:
        """The reply to ``rollout_cancel``: the rollout stops at its next chunk."""
        running = self.running.get(rollout_id)
        if running is None:
            raise ProtocolError(ErrorCode.NOT_FOUND, f"no rollout {rollout_id} is running",
                                {"rollout_id": rollout_id})
        running.stop.set()
        return {"rollout_id": rollout_id}

    # ----------------------------------------------------------------- the work

    async def _run(self, running: _Running) -> dict[str, Any]:
        loop = asyncio.get_running_loop()
        try:
            try:
                found = await loop.run_in_executor(
                    self._threads, self._play, running, self._executor(), loop)
            finally:
                del self.running[running.rollout_id]
        except BrokenProcessPool:
            self._drop_pool()
            if self._closed:
                raise ProtocolError(ErrorCode.SHUTTING_DOWN, "the daemon stopped before the "
                                    "rollout could reply") from None
            raise ProtocolError(ErrorCode.INTERNAL, "a rollout worker died (its log says "
                                "why); try again") from None
        except BgbotError as exc:  # the player cannot play (an engine that fails)
            player = running.request.settings.player
            raise ProtocolError(ErrorCode.UNSUPPORTED, f"{player}: {exc}",
                                {"agent": player}) from None
        self._publish_end(running, found)
        results = [found] if isinstance(found, RolloutResult) else [c.result for c in found]
        log.info("rollout %s: %s", running.rollout_id, "cancelled" if running.stop.is_set()
                 else "done", extra={"fields": {
                     "player": running.request.settings.player,
                     "plays": len(results), "trials": sum(r.trials for r in results),
                     "seconds": round(time.monotonic() - running.started, 2)}})
        return rollout_to_wire(running.rollout_id, running.request, found)

    def _play(self, running: _Running, executor: Executor,
              loop: asyncio.AbstractEventLoop) -> Found:
        """The rollout itself, in its thread: the runner on the pool, in ``window`` chunks."""
        request = running.request

        def progress(stand: RolloutProgress) -> None:
            now = time.monotonic()
            if now - running.published < PROGRESS_INTERVAL or stand.trials >= stand.total:
                return  # too soon, or done: the last event (`_publish_end`) says it
            running.published = now
            try:
                loop.call_soon_threadsafe(self._publish_progress, running, stand)
            except RuntimeError:  # the loop is closed: the daemon is gone
                pass

        window = 2 * self.workers
        try:
            if request.dice is None:
                return rollout_position(request.position, request.context, request.settings,
                                        executor=executor, window=window, progress=progress,
                                        cancel=running.stop.is_set)
            return rollout_candidates(request.position, request.dice, request.context,
                                      request.settings, candidates=request.candidates,
                                      executor=executor, window=window, progress=progress,
                                      cancel=running.stop.is_set)
        finally:
            close_players()

    def _executor(self) -> ProcessPoolExecutor:
        if self._pool is None:
            self._pool = ProcessPoolExecutor(
                self.workers, mp_context=multiprocessing.get_context("forkserver"),
                initializer=rollout_worker_init, initargs=(self.settings,))
        return self._pool

    def _drop_pool(self) -> None:
        """Let a broken pool go (the next rollout starts another)."""
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)

    # ----------------------------------------------------------------- events

    def _publish_progress(self, running: _Running, stand: RolloutProgress) -> None:
        known = [equity for equity in stand.equities if equity is not None]
        best = max(known, key=lambda e: e.mean) if known else None
        self._event(running, stand.trials, stand.total, best.mean if best else None,
                    best.se if best else None, None)

    def _publish_end(self, running: _Running, found: Found) -> None:
        results = [found] if isinstance(found, RolloutResult) else [c.result for c in found]
        rolled = [r for r in results if r.stopped != "over"]
        trials = sum(r.trials for r in rolled)
        if any(r.stopped == "cancelled" for r in rolled):
            stopped = "cancelled"
        elif rolled and all(r.stopped == "se_target" for r in rolled):
            stopped = "se_target"
        else:
            stopped = "trials"
        best = results[0].equity if results else None
        self._event(running, trials, trials, best.mean if best else None,
                    best.se if best else None, stopped)

    def _event(self, running: _Running, trials: int, total: int, equity: float | None,
               se: float | None, stopped: str | None) -> None:
        def finite(value: float | None) -> float | None:
            return value if value is not None and math.isfinite(value) else None

        self.publish(rollout_topic(running.rollout_id), new_message("rollout_progress", {
            "rollout_id": running.rollout_id, "trials": trials, "total": total,
            "equity": finite(equity), "se": finite(se),
            "seconds": round(time.monotonic() - running.started, 3), "stopped": stopped}))

    # ----------------------------------------------------------------- the end

    def pids(self) -> list[int]:
        """The rollout workers' process ids."""
        return sorted(_processes(self._pool))

    async def close(self, grace: float = STOP_GRACE) -> None:
        """Cancel every rollout, give them ``grace`` seconds to reply with what they have,
        then end the pool's processes (a rollout still waiting on them replies
        ``shutting_down``)."""
        self._closed = True
        for running in self.running.values():
            running.stop.set()
        deadline = time.monotonic() + grace
        while self.running and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
        pool, self._pool = self._pool, None
        if pool is not None:
            processes = _processes(pool)
            pool.shutdown(wait=False, cancel_futures=True)
            deadline = time.monotonic() + 1.0
            while any(p.is_alive() for p in processes.values()) and time.monotonic() < deadline:
                await asyncio.sleep(0.02)
            for process in processes.values():
                if process.is_alive():
                    process.kill()  # its engines die with it (PR_SET_PDEATHSIG)
        deadline = time.monotonic() + grace
        while self.running and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
        self._threads.shutdown(wait=False, cancel_futures=True)


def _processes(pool: ProcessPoolExecutor | None) -> Mapping[int, Any]:
    """pid -> process of a pool's workers (``_processes``: the only way to know them before
    Python 3.14's ``terminate_workers``)."""
    found: Mapping[int, Any] | None = getattr(pool, "_processes", None)
    return dict(found) if found else {}


def _bad(field: str, reason: str) -> ProtocolError:
    return ProtocolError(ErrorCode.BAD_VALUE, f"{field}: {reason}",
                         {"field": field, "reason": reason})
