"""Worker processes: the daemon's CPU-heavy work runs outside its event loop.

Pure-Python players hold the GIL while they think, so threads would starve the loop that must
answer ``status`` within milliseconds; the work runs in processes instead:

- match workers (`match_worker_main`) each host many matches at once on their own event loop
  (`bgbot.daemon.hosting.MatchHost`), write the journal themselves (SQLite allows one writer
  at a time; commits are grouped) and send the committed events back to the daemon, which
  publishes them. They run at a lower priority (nice) than the daemon.
- decision workers (`decision_worker_main`) answer one decision at a time: the protocol's
  decision requests, and the decisions of the in-process players the daemon's frontends play
  with (`PooledAgent`, built by `frontend_agent`), so a player thinking for one client never
  holds up the loop that answers every other one.

Each worker talks to the daemon over its own pipe (pickled tuples; both ends are ours). A
worker ignores SIGINT/SIGTERM (the daemon tells it when to stop), and dies with the daemon
(PR_SET_PDEATHSIG on Linux, and end-of-pipe everywhere), so a killed daemon never leaves a
worker writing to the journal of a match the next daemon resumes.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import multiprocessing.connection
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from collections import deque
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from ..agents.base import Agent, PlayerAgent
from ..agents.players import PLAYER_CACHE_ENTRIES, limit_player_caches
from ..agents.spec import define_named_agents
from ..core.errors import BgbotError
from ..core.position import Play, Position
from ..deciders import create_agent
from ..util import die_with_parent
from ..players.base import Context, TakeDecision
from ..agents.players import SERVING_AGENT
from .decisions import is_quick
from .protocol import ErrorCode, ProtocolError

log = logging.getLogger(__name__)

MAX_FAILED_STARTS = 3
"""Workers that die before they are ready, in a row, before the daemon stops replacing them."""
PIPELINE_DEPTH = 4
"""Decision jobs sent ahead to one decision worker."""
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
    default_agent: str = SERVING_AGENT
    max_candidates: int = 32
    player_cache: int = PLAYER_CACHE_ENTRIES
    """HeuristicEvaluator.CACHE_LIMIT in the worker (0 = leave the evaluator's default)."""
    nice: int = 5
    """Match workers lower their priority by this much, so the daemon's loop comes first."""
    mat_errors: str = "stop"
    """A .mat file that cannot be written: "stop" parks the match, "continue" plays on."""
    named_agents: tuple[tuple[str, str], ...] = ()
    """The configuration's named agents, (name, spec) (``[[agents.named]]``)."""


# ============================================================================ in the child


def _die_with_parent(parent: int | None) -> None:
    """Ask Linux to SIGKILL us when our parent (the daemon, or for a rollout worker the
    forkserver, which exits with the daemon) dies; exit now if the daemon, ``parent``, is
    gone already."""
    die_with_parent()
    if parent is not None and os.getppid() != parent:
        os._exit(0)


def prepare_worker(settings: WorkerSettings, role: str, index: int, parent: int | None,
                   nice: int) -> None:
    """What every worker does first: leave the signals to the daemon, die with it, log as
    ``role-index``, know the configuration's named agents, bound the players' caches, and
    lower its priority by ``nice``."""
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.SIG_IGN)
    _die_with_parent(parent)
    from .logs import setup_logging

    setup_logging(settings.log_level, settings.log_format, process=f"{role}-{index}")
    define_named_agents(dict(settings.named_agents))
    limit_player_caches(settings.player_cache)
    if nice:
        try:
            os.nice(nice)
        except OSError:
            pass


def match_worker_main(conn: Connection, settings: WorkerSettings, index: int, parent: int) -> None:
    """Entry point of a match worker process."""
    prepare_worker(settings, "match-worker", index, parent, settings.nice)
    try:
        asyncio.run(_match_worker(conn, settings))
    except (EOFError, BrokenPipeError, ConnectionResetError):
        pass


async def _match_worker(conn: Connection, settings: WorkerSettings) -> None:
    from .hosting import MatchHost
    from .store import MatchState, Store
    from .wire import event_message

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

    def event_item(match_id: str, event: Any) -> Any:
        """The event's message, numbered in its match (``n``, protocol 1.2)."""
        found = event_message(event)
        if found is not None:
            found[1].content["n"] = host.next_number(match_id)
        return found

    host = MatchHost(store, lambda items: send(("events", items)),
                     event_item=event_item, on_state=on_state,
                     mat_errors=settings.mat_errors)

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
                    send(("snapshot", command[1], host.snapshot(command[2], command[3])))
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
    prepare_worker(settings, "decision-worker", index, parent, 0)
    from .decisions import AgentCache, answer, answer_call, answer_now

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
            req_id, kind, *job = request
            try:
                result: Any
                if kind == "call":
                    spec, seed, method, board, args = job
                    result = loop.run_until_complete(answer_call(agents, spec, seed, method,
                                                                 board, args))
                else:
                    msg_type, content, default_agent = job
                    result = answer_now(msg_type, content, agents, default_agent=default_agent,
                                        max_candidates=settings.max_candidates)
                    if result is None:
                        result = loop.run_until_complete(answer(
                            msg_type, content, agents, default_agent=default_agent,
                            max_candidates=settings.max_candidates))
                reply: tuple[Any, ...] = (req_id, True, result)
            except ProtocolError as exc:
                reply = (req_id, False, (exc.code.value, exc.message, exc.details))
            except Exception as exc:
                log.exception("decision %s failed", job[2] if kind == "call" else job[0])
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


ROLES: dict[str, Callable[[Connection, WorkerSettings, int, int], None]] = {
    "match-worker": match_worker_main,
    "decision-worker": decision_worker_main,
}


def _child_environment() -> dict[str, str]:
    """The daemon's environment, with this bgbot first on the path (the worker must import the
    same code as the daemon, whatever the working directory)."""
    env = dict(os.environ)
    here = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (here, env.get("PYTHONPATH", "")) if p)
    return env


_ENTRY = "import sys; from bgbot.daemon.workers import worker_main; sys.exit(worker_main(sys.argv[1:]))"


def worker_main(argv: list[str]) -> int:
    """A worker process: ``python -c _ENTRY ROLE INDEX FD PARENT``; the daemon sends its
    settings first, over the socket FD."""
    role, index, fd, parent = argv[0], int(argv[1]), int(argv[2]), int(argv[3])
    conn = Connection(fd)
    try:
        settings = conn.recv()
    except (EOFError, OSError):
        return 0
    ROLES[role](conn, settings, index, parent)
    return 0


class Worker:
    """One worker process as the daemon sees it: a socket pair, a reader on the loop, a pid.

    Workers are plain subprocesses (`worker_main`), not multiprocessing ones: no
    resource-tracker process, no re-import of the daemon's main module."""

    def __init__(self, role: str, index: int, target: Callable[..., None],
                 settings: WorkerSettings, on_message: Callable[[Worker, Any], None],
                 on_exit: Callable[[Worker], None]) -> None:
        self.role = role
        self.index = index
        self.on_message = on_message
        self.on_exit = on_exit
        self.ready = asyncio.get_running_loop().create_future()
        self.matches: set[str] = set()
        self.jobs: deque[int] = deque()
        """Decision jobs sent and not answered yet, oldest (the one being computed) first."""
        self.exited = False
        self._loop = asyncio.get_running_loop()
        del target  # the role names the entry point (ROLES)
        ours, theirs = socket.socketpair()
        try:
            self.process = subprocess.Popen(
                [sys.executable, "-c", _ENTRY, role, str(index), str(theirs.fileno()),
                 str(os.getpid())],
                pass_fds=[theirs.fileno()], stdin=subprocess.DEVNULL, env=_child_environment())
        finally:
            theirs.close()
        self.conn = Connection(ours.detach())
        self.conn.send(settings)
        self._loop.add_reader(self.conn.fileno(), self._readable)

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
        self.process.poll()  # reap it if it has exited
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
        while self.process.poll() is None and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
            self._readable_quietly()
        if self.process.poll() is None:
            log.warning("%s %d did not stop in %.1f s; killing it", self.role, self.index, timeout)
            self.process.kill()
        self._wait(1.0)
        self._readable_quietly()
        self._gone()
        self.conn.close()

    def _readable_quietly(self) -> None:
        if not self.exited:
            self._readable()

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self._wait(1.0)

    def _wait(self, timeout: float) -> None:
        try:
            self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            log.warning("%s %d (pid %d) does not exit", self.role, self.index, self.process.pid)


@dataclass
class _Job:
    """A decision waiting for, or running in, a decision worker: ``message`` is what the worker
    gets after the job's id (``("decision", msg_type, content, default_agent)`` or ``("call",
    spec, seed, method, board, args)``)."""

    id: int
    message: tuple[Any, ...]
    future: asyncio.Future[Any]
    timer: asyncio.TimerHandle | None = None
    worker: Worker | None = None


class DecisionPool:
    """Decision workers, started on first use; one request per worker at a time, the others
    queued (``busy`` beyond ``max_queue``); each request has its own deadline."""

    def __init__(self, size: int, settings: WorkerSettings, *, max_queue: int = 10_000) -> None:
        self.size = size
        self.settings = settings
        self.max_queue = max_queue
        self.workers: list[Worker] = []
        self._ready: list[Worker] = []
        self._queue: deque[_Job] = deque()
        self._running: dict[int, _Job] = {}
        self._ids = itertools.count(1)
        self._started = False
        self._closed = False
        self._failed_starts = 0

    @property
    def busy(self) -> int:
        return len(self._running)

    @property
    def queued(self) -> int:
        return sum(1 for job in self._queue if not job.future.done())

    def pids(self) -> list[int]:
        return [w.pid for w in self.workers if w.pid is not None and not w.exited]

    def _start(self) -> None:
        if not self._started:
            self._started = True
            for index in range(1, self.size + 1):
                self._spawn(index)

    def _spawn(self, index: int) -> None:
        worker = Worker("decision-worker", index, decision_worker_main, self.settings,
                        self._on_message, self._on_exit)
        self.workers.append(worker)

        def became_ready(future: asyncio.Future[Any]) -> None:
            if not future.cancelled() and future.exception() is None:
                self._failed_starts = 0
                self._ready.append(worker)
                self._dispatch()

        worker.ready.add_done_callback(became_ready)

    async def start(self) -> None:
        """Start the workers now and wait until they are ready."""
        self._start()
        await asyncio.gather(*(w.ready for w in self.workers), return_exceptions=True)

    def request(self, msg_type: str, content: dict[str, Any], default_agent: str,
                timeout: float) -> asyncio.Future[dict[str, Any]]:
        """A future for the reply content; it fails with a ProtocolError (``timeout`` after
        ``timeout`` seconds, ``busy`` when too much is queued, ``shutting_down``)."""
        return self._enqueue(("decision", msg_type, content, default_agent), timeout)

    async def call(self, spec: str, seed: int, method: str, position: Position,
                   args: Sequence[Any], timeout: float) -> Any:
        """``method(position, *args)`` of the agent ``spec`` / ``seed`` (one of the `Agent`
        decisions), answered by a worker that keeps that agent; ProtocolErrors as `request`."""
        board = (position.opponent, position.mover)  # a Position does not pickle
        return await self._enqueue(("call", spec, seed, method, board, tuple(args)), timeout)

    def _enqueue(self, message: tuple[Any, ...], timeout: float) -> asyncio.Future[Any]:
        if self._closed:
            raise ProtocolError(ErrorCode.SHUTTING_DOWN, "the daemon is stopping")
        if len(self._queue) >= self.max_queue:
            raise ProtocolError(ErrorCode.BUSY, f"{len(self._queue)} decisions are queued; try "
                                "again later", {"queued": len(self._queue)})
        self._start()
        loop = asyncio.get_running_loop()
        job = _Job(next(self._ids), message, loop.create_future())
        job.timer = loop.call_later(timeout, self._expire, job)
        self._queue.append(job)
        self._dispatch()
        return job.future

    async def submit(self, msg_type: str, content: dict[str, Any], default_agent: str,
                     timeout: float) -> dict[str, Any]:
        return await self.request(msg_type, content, default_agent, timeout)

    def _dispatch(self) -> None:
        """Send queued jobs to the least loaded workers, up to PIPELINE_DEPTH each: a worker
        finds its next job waiting when it finishes one (no wake-up round trip)."""
        while self._queue:
            candidates = [w for w in self._ready if not w.exited and len(w.jobs) < PIPELINE_DEPTH]
            if not candidates:
                return
            job = self._queue.popleft()
            if job.future.done():  # expired while queued
                continue
            worker = min(candidates, key=lambda w: len(w.jobs))
            job.worker = worker
            self._running[job.id] = job
            worker.jobs.append(job.id)
            if not worker.send((job.id, *job.message)):
                self._running.pop(job.id, None)
                self._fail(job, ProtocolError(ErrorCode.INTERNAL,
                                              "a decision worker died; try again"))

    @staticmethod
    def _fail(job: _Job, error: ProtocolError) -> None:
        if job.timer is not None:
            job.timer.cancel()
        if not job.future.done():
            job.future.set_exception(error)

    def _on_message(self, worker: Worker, message: Any) -> None:
        job_id, ok, payload = message
        if job_id in worker.jobs:
            worker.jobs.remove(job_id)
        job = self._running.pop(job_id, None)
        if job is not None:
            if job.timer is not None:
                job.timer.cancel()
            if not job.future.done():
                if ok:
                    job.future.set_result(payload)
                else:
                    code, text, details = payload
                    job.future.set_exception(ProtocolError(ErrorCode(code), text, details))
        if not self._closed:
            self._dispatch()

    def _expire(self, job: _Job) -> None:
        if job.future.done():
            return
        if job.worker is None:
            job.future.set_exception(ProtocolError(
                ErrorCode.TIMEOUT, "no decision worker was free in time; try again",
                {"queued": len(self._queue)}))
            return
        self._running.pop(job.id, None)
        worker = job.worker
        if worker.jobs and worker.jobs[0] != job.id:  # still waiting behind another job
            job.future.set_exception(ProtocolError(
                ErrorCode.TIMEOUT, "the decision waited too long behind others; try again"))
            return
        job.future.set_exception(ProtocolError(ErrorCode.TIMEOUT, "the decision took too "
                                               "long; its worker is restarted"))
        log.warning("decision worker %d timed out; restarting it", worker.index)
        worker.kill()
        worker._gone()

    def _on_exit(self, worker: Worker) -> None:
        for job_id, job in list(self._running.items()):
            if job.worker is worker:
                self._running.pop(job_id, None)
                self._fail(job, ProtocolError(ErrorCode.INTERNAL,
                                              "a decision worker died; try again"))
        if worker in self.workers:
            self.workers.remove(worker)
        if worker in self._ready:
            self._ready.remove(worker)
        worker.jobs.clear()
        if self._closed:
            return
        if not worker.ready.done() or worker.ready.exception() is not None:
            self._failed_starts += 1
        if self._failed_starts >= MAX_FAILED_STARTS:
            log.error("decision workers die as they start; not starting more (see above)")
            if not self.workers:
                for job in list(self._queue):
                    self._fail(job, ProtocolError(ErrorCode.INTERNAL,
                                                  "the decision workers cannot start"))
                self._queue.clear()
            return
        log.warning("decision worker %d exited; starting another", worker.index)
        self._spawn(worker.index)

    async def close(self, timeout: float = 5.0) -> None:
        self._closed = True
        for job in list(self._queue) + list(self._running.values()):
            self._fail(job, ProtocolError(ErrorCode.SHUTTING_DOWN, "the daemon is stopping"))
        self._queue.clear()
        await asyncio.gather(*(w.stop(None, timeout) for w in list(self.workers)),
                             return_exceptions=True)


# ============================================================================ frontends' agents


class DecisionFailed(BgbotError):
    """The decision workers could not make a decision in time (or are stopping)."""


class PooledAgent(Agent):
    """An in-process player whose decisions run in the decision workers (DESIGN §1).

    Each decision is sent to the `DecisionPool`; the worker builds the same agent from
    ``spec`` and ``seed`` once and keeps it (a player with noise has its noise stream per
    worker). Failures (the limit ``timeout()`` passed, a worker died, the daemon is stopping)
    raise `DecisionFailed`, which the frontends treat as any agent failure."""

    def __init__(self, pool: DecisionPool, spec: str, seed: int, *, name: str,
                 timeout: Callable[[], float]) -> None:
        self.pool = pool
        self.spec = spec
        self.seed = seed
        self.name = name
        self.timeout = timeout

    def __repr__(self) -> str:
        return f"PooledAgent({self.spec!r}, seed={self.seed})"

    async def _decide(self, method: str, position: Position, *args: Any) -> Any:
        try:
            return await self.pool.call(self.spec, self.seed, method, position, args,
                                        self.timeout())
        except ProtocolError as exc:
            raise DecisionFailed(f"{self.name}: {exc.message}") from None

    async def choose_play(self, position: Position, dice: Sequence[int], context: Context) -> Play:
        play = await self._decide("choose_play", position, (int(dice[0]), int(dice[1])), context)
        if not isinstance(play, Play):
            raise DecisionFailed(f"{self.name}: a worker answered {play!r}, not a play")
        return play

    async def should_double(self, position: Position, context: Context) -> bool:
        return bool(await self._decide("should_double", position, context))

    async def take_decision(self, position: Position, context: Context) -> TakeDecision:
        return TakeDecision(await self._decide("take_decision", position, context))

    async def offer_resignation(self, position: Position, context: Context) -> int:
        return int(await self._decide("offer_resignation", position, context))

    async def accept_resignation(self, position: Position, context: Context, value: int) -> bool:
        return bool(await self._decide("accept_resignation", position, context, value))


def frontend_agent(spec: str, seed: int, pool: DecisionPool | None, *, quick: bool,
                   timeout: Callable[[], float]) -> Agent:
    """The agent a frontend the daemon runs plays with.

    An engine as it is (it waits for its process, not for the CPU); an in-process player as a
    `PooledAgent`, unless there are no decision workers (``inline_decisions``: the operator
    chose the loop) or it decides at 0-ply with ``quick`` on (``limits.quick_decisions``:
    measured well under a millisecond, cheaper than the round trip to a worker)."""
    agent = create_agent(spec, seed=seed)
    if pool is None or not isinstance(agent, PlayerAgent) or (quick and is_quick(spec)):
        return agent
    return PooledAgent(pool, spec, seed, name=agent.name, timeout=timeout)
