"""Worker processes: the daemon's CPU-heavy work runs outside its event loop.

Pure-Python players hold the GIL while they think, so threads would starve the loop that must
answer ``status`` within milliseconds; the work runs in processes instead:

- match workers (`match_worker_main`) each host many matches at once on their own event loop
  (`bgbot.daemon.hosting.MatchHost`), write the journal themselves (SQLite allows one writer
  at a time; commits are grouped) and send the committed events back to the daemon, which
  publishes them. They run at a lower priority (nice) than the daemon.
- decision workers (`decision_worker_main`) answer one decision request at a time.

Each worker talks to the daemon over its own pipe (pickled tuples; both ends are ours). A
worker ignores SIGINT/SIGTERM (the daemon tells it when to stop), and dies with the daemon
(PR_SET_PDEATHSIG on Linux, and end-of-pipe everywhere), so a killed daemon never leaves a
worker writing to the journal of a match the next daemon resumes.
"""

from __future__ import annotations

import asyncio
import ctypes
import ctypes.util
import itertools
import logging
import multiprocessing
import multiprocessing.connection
import os
import signal
import sys
import time
from collections import deque
from dataclasses import dataclass
from typing import Any, Callable

from .protocol import ErrorCode, ProtocolError

log = logging.getLogger(__name__)

_CTX = multiprocessing.get_context("spawn")
READ_BATCH = 8
"""Messages read from one worker's pipe per event-loop turn."""
Connection = multiprocessing.connection.Connection


@dataclass(frozen=True)
class WorkerSettings:
    """What a worker needs to know (picklable: it crosses the process boundary)."""

    state_db: str
    journal_sync: str = "normal"
    log_level: int = logging.INFO
    log_format: str = "text"
    default_agent: str = "heuristic"
    max_candidates: int = 32
    nice: int = 5
    """Match workers lower their priority by this much, so the daemon's loop comes first."""


# ============================================================================ in the child


def _die_with_parent(parent: int) -> None:
    """Ask Linux to SIGKILL us when the daemon dies; exit now if it already has."""
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
            libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
        except OSError:
            pass
    if os.getppid() != parent:
        os._exit(0)


def _prepare(settings: WorkerSettings, role: str, index: int, parent: int, nice: int) -> None:
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.SIG_IGN)
    _die_with_parent(parent)
    from .logs import setup_logging

    setup_logging(settings.log_level, settings.log_format, process=f"{role}-{index}")
    if nice:
        try:
            os.nice(nice)
        except OSError:
            pass


def match_worker_main(conn: Connection, settings: WorkerSettings, index: int, parent: int) -> None:
    """Entry point of a match worker process."""
    _prepare(settings, "match-worker", index, parent, settings.nice)
    try:
        asyncio.run(_match_worker(conn, settings))
    except (EOFError, BrokenPipeError, ConnectionResetError):
        pass


async def _match_worker(conn: Connection, settings: WorkerSettings) -> None:
    from .hosting import MatchHost
    from .protocol import event_message
    from .store import MatchState, Store

    loop = asyncio.get_running_loop()
    store = Store(settings.state_db, journal_sync=settings.journal_sync)
    finished: asyncio.Future[str] = loop.create_future()

    def send(message: tuple[Any, ...]) -> None:
        try:
            conn.send(message)
        except (BrokenPipeError, ConnectionResetError, OSError):
            if not finished.done():
                finished.set_result("eof")

    def on_state(match_id: str, state: MatchState, error: str | None) -> None:
        send(("state", match_id, state.value, error))

    host = MatchHost(store, lambda items: send(("events", items)),
                     event_item=lambda _mid, event: event_message(event), on_state=on_state)

    def on_command() -> None:
        try:
            while conn.poll():
                command = conn.recv()
                kind = command[0]
                if kind == "start":
                    try:
                        host.start(command[1])
                    except Exception as exc:
                        log.exception("cannot start match %s", command[1])
                        send(("state", command[1], MatchState.FAILED.value, str(exc)))
                elif kind == "abort":
                    if not host.stop(command[1], "abort"):
                        send(("not_here", command[1]))
                elif kind == "snapshot":
                    send(("snapshot", command[1], host.snapshot(command[2])))
                elif kind == "stop" and not finished.done():
                    finished.set_result("stop")
        except (EOFError, OSError):
            loop.remove_reader(conn.fileno())
            if not finished.done():
                finished.set_result("eof")

    loop.add_reader(conn.fileno(), on_command)
    send(("ready", os.getpid()))
    reason = await finished
    loop.remove_reader(conn.fileno())
    await host.stop_all("park")
    host.close()
    store.close()
    if reason == "stop":
        send(("stopped",))


def decision_worker_main(conn: Connection, settings: WorkerSettings, index: int,
                         parent: int) -> None:
    """Entry point of a decision worker: answer requests one at a time until told to stop."""
    _prepare(settings, "decision-worker", index, parent, 0)
    from .decisions import AgentCache, answer

    loop = asyncio.new_event_loop()
    agents = AgentCache()
    try:
        loop.run_until_complete(agents.get(settings.default_agent))  # warm up
    except Exception:
        log.exception("cannot create the default agent %s", settings.default_agent)
    try:
        conn.send(("ready", os.getpid()))
        while True:
            try:
                request = conn.recv()
            except (EOFError, OSError):
                break
            if request is None:
                break
            req_id, msg_type, content, default_agent = request
            try:
                result = loop.run_until_complete(answer(
                    msg_type, content, agents, default_agent=default_agent,
                    max_candidates=settings.max_candidates))
                reply: tuple[Any, ...] = (req_id, True, result)
            except ProtocolError as exc:
                reply = (req_id, False, (exc.code.value, exc.message, exc.details))
            except Exception as exc:
                log.exception("decision %s failed", msg_type)
                reply = (req_id, False, (ErrorCode.INTERNAL.value,
                                         f"{type(exc).__name__}: {exc}", {}))
            try:
                conn.send(reply)
            except (BrokenPipeError, OSError):
                break
    finally:
        try:
            loop.run_until_complete(agents.close())
        finally:
            loop.close()


# ============================================================================ in the daemon


class Worker:
    """One worker process as the daemon sees it: a pipe, a reader on the loop, a pid."""

    def __init__(self, role: str, index: int, target: Callable[..., None],
                 settings: WorkerSettings, on_message: Callable[[Worker, Any], None],
                 on_exit: Callable[[Worker], None]) -> None:
        self.role = role
        self.index = index
        self.on_message = on_message
        self.on_exit = on_exit
        self.ready = asyncio.get_running_loop().create_future()
        self.matches: set[str] = set()
        self.exited = False
        self._loop = asyncio.get_running_loop()
        parent, child = _CTX.Pipe(duplex=True)
        self.conn = parent
        self.process = _CTX.Process(target=target, args=(child, settings, index, os.getpid()),
                                    name=f"bgbot-{role}-{index}", daemon=True)
        self.process.start()
        child.close()
        self._loop.add_reader(parent.fileno(), self._readable)

    @property
    def pid(self) -> int | None:
        return self.process.pid

    def pause(self) -> None:
        """Stop reading this worker's messages (it blocks once its pipe is full)."""
        if not self.exited:
            self._loop.remove_reader(self.conn.fileno())

    def resume(self) -> None:
        if not self.exited:
            self._loop.add_reader(self.conn.fileno(), self._readable)

    def send(self, message: Any) -> bool:
        if self.exited:
            return False
        try:
            self.conn.send(message)
        except (BrokenPipeError, ConnectionResetError, OSError):
            self._gone()
            return False
        return True

    def _readable(self) -> None:
        # a few messages per call: the loop gets back to the sockets between them
        try:
            for _ in range(READ_BATCH):
                if not self.conn.poll():
                    break
                message = self.conn.recv()
                if isinstance(message, tuple) and message and message[0] == "ready":
                    if not self.ready.done():
                        self.ready.set_result(message[1])
                    continue
                self.on_message(self, message)
        except (EOFError, OSError):
            self._gone()

    def _gone(self) -> None:
        if self.exited:
            return
        self.exited = True
        try:
            self._loop.remove_reader(self.conn.fileno())
        except (ValueError, OSError):
            pass
        if not self.ready.done():
            self.ready.set_exception(RuntimeError(f"{self.role} {self.index} exited at start"))
            self.ready.exception()
        self.on_exit(self)

    async def stop(self, message: Any, timeout: float) -> None:
        """Ask the worker to stop with ``message``; kill it after ``timeout`` seconds."""
        self.send(message)
        deadline = time.monotonic() + timeout
        while self.process.is_alive() and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
            self._readable_quietly()
        if self.process.is_alive():
            log.warning("%s %d did not stop in %.1f s; killing it", self.role, self.index, timeout)
            self.process.kill()
        self.process.join(1.0)
        self._readable_quietly()
        self._gone()
        self.conn.close()

    def _readable_quietly(self) -> None:
        if not self.exited:
            self._readable()

    def kill(self) -> None:
        if self.process.is_alive():
            self.process.kill()
        self.process.join(1.0)


class DecisionPool:
    """Decision workers, started on first use; one request per worker at a time."""

    def __init__(self, size: int, settings: WorkerSettings) -> None:
        self.size = size
        self.settings = settings
        self.workers: list[Worker] = []
        self._idle: deque[Worker] = deque()
        self._waiting: deque[asyncio.Future[Worker]] = deque()
        self._pending: dict[int, tuple[asyncio.Future[dict[str, Any]], Worker]] = {}
        self._ids = itertools.count(1)
        self._starting: asyncio.Task[None] | None = None
        self._closed = False

    @property
    def busy(self) -> int:
        return len(self._pending)

    @property
    def queued(self) -> int:
        return sum(1 for w in self._waiting if not w.done())

    def pids(self) -> list[int]:
        return [w.pid for w in self.workers if w.pid is not None and not w.exited]

    async def _ensure_started(self) -> None:
        if self._starting is None:
            self._starting = asyncio.get_running_loop().create_task(self._start_all())
        await asyncio.shield(self._starting)

    async def _start_all(self) -> None:
        for index in range(1, self.size + 1):
            self._spawn(index)

    def _spawn(self, index: int) -> None:
        worker = Worker("decision-worker", index, decision_worker_main, self.settings,
                        self._on_message, self._on_exit)
        self.workers.append(worker)

        def became_ready(future: asyncio.Future[Any]) -> None:
            if not future.cancelled() and future.exception() is None:
                self._release(worker)

        worker.ready.add_done_callback(became_ready)

    async def start(self) -> None:
        """Start the workers now and wait until they are ready."""
        await self._ensure_started()
        await asyncio.gather(*(w.ready for w in self.workers), return_exceptions=True)

    async def submit(self, msg_type: str, content: dict[str, Any], default_agent: str,
                     timeout: float) -> dict[str, Any]:
        """Answer one decision request; ProtocolError TIMEOUT after ``timeout`` seconds."""
        if self._closed:
            raise ProtocolError(ErrorCode.SHUTTING_DOWN, "the daemon is stopping")
        await self._ensure_started()
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        worker = await self._acquire(timeout)
        req_id = next(self._ids)
        future: asyncio.Future[dict[str, Any]] = loop.create_future()
        self._pending[req_id] = (future, worker)
        if not worker.send((req_id, msg_type, content, default_agent)):
            self._pending.pop(req_id, None)
            raise ProtocolError(ErrorCode.INTERNAL, "a decision worker died; try again")
        timer = loop.call_at(deadline, self._expire, req_id)
        try:
            return await future
        finally:
            timer.cancel()

    async def _acquire(self, timeout: float) -> Worker:
        while self._idle:
            worker = self._idle.popleft()
            if not worker.exited:
                return worker
        waiter: asyncio.Future[Worker] = asyncio.get_running_loop().create_future()
        self._waiting.append(waiter)
        try:
            return await asyncio.wait_for(waiter, timeout)
        except asyncio.TimeoutError:
            raise ProtocolError(ErrorCode.BUSY, "every decision worker is busy; try again later",
                                {"workers": self.size}) from None

    def _release(self, worker: Worker) -> None:
        if worker.exited or self._closed:
            return
        while self._waiting:
            waiter = self._waiting.popleft()
            if not waiter.done():
                waiter.set_result(worker)
                return
        self._idle.append(worker)

    def _on_message(self, worker: Worker, message: Any) -> None:
        req_id, ok, payload = message
        entry = self._pending.pop(req_id, None)
        if entry is not None:
            future = entry[0]
            if not future.done():
                if ok:
                    future.set_result(payload)
                else:
                    code, text, details = payload
                    future.set_exception(ProtocolError(ErrorCode(code), text, details))
        self._release(worker)

    def _expire(self, req_id: int) -> None:
        entry = self._pending.pop(req_id, None)
        if entry is None:
            return
        future, worker = entry
        if not future.done():
            future.set_exception(ProtocolError(ErrorCode.TIMEOUT,
                                               "the decision took too long; its worker is "
                                               "restarted"))
        log.warning("decision worker %d timed out; restarting it", worker.index)
        worker.kill()
        worker._gone()

    def _on_exit(self, worker: Worker) -> None:
        for req_id, (future, owner) in list(self._pending.items()):
            if owner is worker:
                self._pending.pop(req_id, None)
                if not future.done():
                    future.set_exception(ProtocolError(ErrorCode.INTERNAL,
                                                       "a decision worker died; try again"))
        if worker in self.workers:
            self.workers.remove(worker)
        if not self._closed:
            log.warning("decision worker %d exited; starting another", worker.index)
            self._spawn(worker.index)

    async def close(self, timeout: float = 5.0) -> None:
        self._closed = True
        for waiter in self._waiting:
            if not waiter.done():
                waiter.cancel()
        await asyncio.gather(*(w.stop(None, timeout) for w in list(self.workers)),
                             return_exceptions=True)
