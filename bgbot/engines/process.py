"""One out-of-process engine: the child process, its line channel and its lifecycle.

Every engine bgbot drives (gnubg's ``external`` server mode, UBGI engines) is a child process
that answers one request at a time. `EngineProcess` owns that process and everything that is
the same for every dialect, as python-chess's ``Protocol`` does for UCI and XBoard; a dialect
(`bgbot.engines.gnubg.GnubgProcess`, `bgbot.engines.ubgi.UbgiProcess`) says only how to
start it, open its channel, shake hands and say goodbye:

* launch: a `subprocess.Popen` leading its own process group, its stderr (and whatever else
  the dialect does not read) logged by daemon threads, and a finalizer that kills the group if
  the object is dropped unclosed, so a crashed caller leaves no engine behind;
* handshake: the dialect's, within ``start_timeout``;
* start (`start`): a launch that fails (the engine dies or hangs in its handshake) is tried
  again, ``retries`` times, as a request is;
* requests (`request`): one at a time per event loop (a lock), each within its time limit; a
  process that dies, hangs or closes its channel is killed (its whole group), started again and
  the request sent again, ``retries`` times, then `EngineUnavailable`;
* close: the dialect's goodbye, a moment to exit, then the kill.

One asyncio model for every dialect: the channel (`LineChannel`, non-blocking file
descriptors: a socket or two pipes) is driven by the readiness callbacks of whichever event
loop is running, and nothing is bound to a loop between requests, so one engine serves
successive event loops (``asyncio.run`` after ``asyncio.run``) without a restart.

Errors form one family, `EngineError`, for every dialect.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import subprocess
import threading
import time
import weakref
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import IO, Awaitable, Callable, Mapping, Sequence, TypeVar

from ..agents.base import Agent
from ..core.errors import BgbotError
from ..util import die_with_parent

__all__ = [
    "EngineAgent",
    "EngineConfigError",
    "EngineError",
    "EngineErrorReply",
    "EngineNotFound",
    "EngineProcess",
    "EngineStats",
    "EngineTerminated",
    "EngineUnavailable",
    "Launch",
    "LineChannel",
]

log = logging.getLogger("bgbot.engines")

T = TypeVar("T")

READ_CHUNK = 65536
EXIT_GRACE = 2.0
"""Seconds a process may take to exit by itself after its goodbye before it is killed."""


# --------------------------------------------------------------------------- errors, stats


class EngineError(BgbotError):
    """An engine could not answer (it is missing, refused, kept failing or answered nonsense)."""


class EngineNotFound(EngineError):
    """The engine's executable does not exist or cannot be run."""


class EngineUnavailable(EngineError):
    """The engine kept dying, hanging or failing its handshake, even after restarts."""


class EngineTerminated(EngineError):
    """The process ended, or closed its channel, under a request (it is restarted and the
    request sent again; `EngineUnavailable` once the retries are spent)."""


class EngineConfigError(EngineError, ValueError):
    """A setting the engine does not declare, or refuses: fix the spec; never retried."""


class EngineErrorReply(EngineError):
    """The engine answered a request with an error line (it could not read the request;
    sending it again would not help)."""

    def __init__(self, request: str, reply: str, *, engine: str = "the engine") -> None:
        self.request = request
        self.reply = reply
        super().__init__(f"{engine} refused {request!r}: {reply}")


@dataclass
class EngineStats:
    """Counters an engine keeps; read them to see how healthy the engine was."""

    requests: int = 0
    starts: int = 0
    restarts: int = 0
    """Starts after the first: every one followed a crash, a hang or a lost connection."""
    timeouts: int = 0
    crashes: int = 0
    """Connections lost or processes that died under a request."""
    error_replies: int = 0
    """Error replies (the engine could not read our line)."""
    unusable: int = 0
    """Answers that failed the rules check (or could not be had) and were replaced."""


# --------------------------------------------------------------------------- the channel


class LineChannel:
    """Lines to and from a child over non-blocking file descriptors (one socket, or the two
    ends of its stdin and stdout), driven by the running event loop's readiness callbacks.

    ``close`` releases the descriptors; ``limit`` bounds a line (a longer one ends the
    channel: the engine is not speaking the protocol)."""

    def __init__(self, read_fd: int, write_fd: int, *, limit: int,
                 close: Callable[[], None]) -> None:
        self.read_fd = read_fd
        self.write_fd = write_fd
        self.limit = limit
        self._close = close
        self._buffer = bytearray()
        self.closed = False
        for fd in {read_fd, write_fd}:
            os.set_blocking(fd, False)

    async def write(self, data: bytes) -> None:
        """Write all of ``data``; `EngineTerminated` when the other end is gone."""
        view = memoryview(data)
        while view:
            self._check_open()
            try:
                written = os.write(self.write_fd, view)
            except BlockingIOError:
                await _ready(self.write_fd, writing=True)
                continue
            except OSError as exc:
                raise EngineTerminated(f"cannot write: {exc}") from None
            view = view[written:]

    async def readline(self) -> bytes:
        """The next line without its ``\\n``; `EngineTerminated` at end of output."""
        while True:
            end = self._buffer.find(b"\n")
            if end >= 0:
                line = bytes(self._buffer[:end])
                del self._buffer[:end + 1]
                return line
            if len(self._buffer) > self.limit:
                raise EngineTerminated(f"a line longer than {self.limit} bytes")
            self._check_open()
            try:
                data = os.read(self.read_fd, READ_CHUNK)
            except BlockingIOError:
                await _ready(self.read_fd, writing=False)
                continue
            except OSError as exc:
                raise EngineTerminated(f"cannot read: {exc}") from None
            if not data:
                raise EngineTerminated("end of output")
            self._buffer += data

    def discard(self) -> None:
        """Forget what was read and not consumed (a stale reply to an abandoned request)."""
        self._buffer.clear()

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            with contextlib.suppress(OSError):
                self._close()

    def _check_open(self) -> None:
        if self.closed:
            raise EngineTerminated("the channel is closed")


async def _ready(fd: int, *, writing: bool) -> None:
    """Wait until ``fd`` can be read (written) without blocking, on the running loop."""
    loop = asyncio.get_running_loop()
    ready = loop.create_future()

    def wake() -> None:
        if not ready.done():
            ready.set_result(None)

    if writing:
        loop.add_writer(fd, wake)
    else:
        loop.add_reader(fd, wake)
    try:
        await ready
    finally:
        if writing:
            loop.remove_writer(fd)
        else:
            loop.remove_reader(fd)


# --------------------------------------------------------------------------- the process


@dataclass(frozen=True)
class Launch:
    """How to start the engine: its argv, environment (None: ours) and working directory."""

    argv: Sequence[str]
    env: Mapping[str, str] | None = None
    cwd: str | None = None


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    """SIGKILL a process we started and anything it started (it leads its own process group).

    Only while it has not been reaped: a reaped process id may already belong to another.
    """
    if process.poll() is None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)


def _drain(stream: IO[bytes], logger: logging.Logger, tag: str, level: Callable[[], int]) -> None:
    """Log what the process prints (and keep its pipe from filling up); a daemon thread."""
    with contextlib.suppress(OSError, ValueError), stream:
        for raw in iter(stream.readline, b""):
            text = raw.decode("utf-8", errors="replace").rstrip()
            if text:
                logger.log(level(), "%s: %s", tag, text)


class EngineProcess(ABC):
    """One engine process, restarted on failure (see the module docstring).

    A dialect sets `label` and `log`, implements `_launch_spec` and `_handshake`, and may
    override `_open` (default: the child's stdin and stdout are the channel), `_goodbye`
    (default: nothing) and `_closed` (clean-up after the last stop).
    """

    label = "engine"
    """How messages name this kind of engine (``gnubg``, ``UBGI engine``)."""
    log: logging.Logger = log
    stderr_level = logging.DEBUG
    """The level of the engine's stderr lines (DEBUG always while it is being stopped)."""
    line_limit = 1 << 20
    """Longest line read from the engine (bytes)."""

    def __init__(self, *, start_timeout: float, retries: int,
                 stats: EngineStats | None = None) -> None:
        self.start_timeout = start_timeout
        self.retries = retries
        self.stats = stats if stats is not None else EngineStats()
        self._process: subprocess.Popen[bytes] | None = None
        self._channel: LineChannel | None = None
        self._stopping = False
        self._locks: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = (
            weakref.WeakKeyDictionary()
        )
        self._finalizer: weakref.finalize | None = None  # type: ignore[type-arg]

    # ----------------------------------------------------------------- the dialect

    @abstractmethod
    def _launch_spec(self) -> Launch:
        """How to start the engine now; `EngineNotFound` when it cannot be found."""

    async def _open(self, process: subprocess.Popen[bytes]) -> LineChannel:
        """The channel to a process just started: by default its stdin and stdout."""
        stdin, stdout = process.stdin, process.stdout
        assert stdin is not None and stdout is not None

        def close() -> None:
            for stream in (stdin, stdout):
                with contextlib.suppress(OSError):
                    stream.close()

        return LineChannel(stdout.fileno(), stdin.fileno(), limit=self.line_limit, close=close)

    @abstractmethod
    async def _handshake(self, channel: LineChannel) -> None:
        """Greet the engine and set it up; `EngineConfigError` for refused settings."""

    async def _goodbye(self, channel: LineChannel) -> None:
        """Ask the engine to exit (it is killed if it does not, `EXIT_GRACE` seconds later)."""

    def _closed(self) -> None:
        """Release what the dialect keeps between starts (after `close`)."""

    @property
    def title(self) -> str:
        """The engine as log lines name it (its label, and its name once known)."""
        return self.label

    # ----------------------------------------------------------------- facts

    @property
    def pid(self) -> int | None:
        """The running engine's process id (its process group id too), or None."""
        process = self._process
        return process.pid if process is not None and process.poll() is None else None

    @property
    def running(self) -> bool:
        return self.pid is not None and self._channel is not None and not self._channel.closed

    # ----------------------------------------------------------------- public

    async def start(self) -> None:
        """Start the engine now (requests start it on demand anyway). A start that fails (the
        engine dies or hangs before its handshake is done) is tried again, `retries` times, as
        a request is; then `EngineUnavailable`. A missing engine or a refused setting is not
        retried."""
        async with self._lock():
            failure = "no attempt"
            for attempt in range(self.retries + 1):
                if self.running:
                    return
                try:
                    await self._launch()
                    return
                except EngineUnavailable as exc:
                    failure = str(exc)
                self.log.warning("%s failed to start, attempt %d of %d: %s", self.title,
                                 attempt + 1, self.retries + 1, failure)
            raise EngineUnavailable(f"{self.label} did not start in {self.retries + 1} "
                                    f"attempts: {failure}")

    async def request(self, exchange: Callable[[LineChannel], Awaitable[T]], timeout: float,
                      what: str) -> T:
        """Run ``exchange`` (one request and its answer, ``what`` for the log) on the channel.

        A crash, lost channel or time-out kills the engine, starts it again and runs the
        exchange again (`retries` times); then `EngineUnavailable`. An `EngineErrorReply`
        raised by the exchange ends the request at once (sending it again would not help).
        """
        async with self._lock():
            self.stats.requests += 1
            failure = "no attempt"
            for attempt in range(self.retries + 1):
                try:
                    if not self.running:
                        if self._process is not None:
                            # it died between requests (its channel saw the end first): a
                            # crash as much as one met in the middle of a request
                            self.stats.crashes += 1
                            self.log.warning("%s died since its last request; starting it "
                                             "again", self.title)
                        await self._launch()
                    assert self._channel is not None
                    return await asyncio.wait_for(exchange(self._channel), timeout)
                except asyncio.TimeoutError:
                    self.stats.timeouts += 1
                    failure = f"no answer within {timeout:g} s"
                except EngineTerminated as exc:
                    self.stats.crashes += 1
                    failure = f"connection lost ({exc})"
                except EngineErrorReply:
                    self.stats.error_replies += 1
                    raise
                except EngineUnavailable as exc:
                    failure = str(exc)
                self.log.warning("%s (pid %s) failed on attempt %d of %d: %s; request %r",
                                 self.title, self.pid, attempt + 1, self.retries + 1, failure,
                                 what)
                self._kill()
            raise EngineUnavailable(f"{self.label} failed {self.retries + 1} times: {failure}")

    async def close(self) -> None:
        """Say goodbye, give the engine a moment to exit, kill what is left, clean up."""
        async with self._lock():
            await self._stop()
        self._closed()

    # ----------------------------------------------------------------- internals

    def _lock(self) -> asyncio.Lock:
        """The request lock for the running event loop."""
        loop = asyncio.get_running_loop()
        lock = self._locks.get(loop)
        if lock is None:
            lock = self._locks[loop] = asyncio.Lock()
        return lock

    async def _launch(self) -> None:
        """Start the process, open its channel and shake hands, within `start_timeout`."""
        self._kill()
        spec = self._launch_spec()
        self.stats.starts += 1
        if self.stats.starts > 1:
            self.stats.restarts += 1
        try:
            process = subprocess.Popen(
                list(spec.argv), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=subprocess.PIPE, cwd=spec.cwd,
                env=dict(spec.env) if spec.env is not None else None, start_new_session=True,
                preexec_fn=die_with_parent)  # its own session, yet it dies with us
        except (FileNotFoundError, PermissionError) as exc:
            raise EngineNotFound(f"cannot run {self.label} {spec.argv[0]!r}: {exc}") from exc
        except OSError as exc:
            raise EngineUnavailable(f"cannot run {self.label} {spec.argv[0]!r}: {exc}") from exc
        self._process = process
        self._stopping = False
        self._finalizer = weakref.finalize(self, _kill_group, process)
        assert process.stderr is not None
        self._drain(process.stderr, "stderr", self._stderr_level)
        try:
            await asyncio.wait_for(self._connect(process), self.start_timeout)
        except asyncio.TimeoutError:
            self._kill()
            raise EngineUnavailable(f"{self.label}: no handshake within "
                                    f"{self.start_timeout:g} s") from None
        except (EngineTerminated, OSError) as exc:
            self._kill()
            raise EngineUnavailable(f"{self.label} did not start: {exc}") from None
        except BaseException:
            self._kill()
            raise
        self.log.info("%s started (pid %d, start %d)", self.title, process.pid,
                      self.stats.starts)

    async def _connect(self, process: subprocess.Popen[bytes]) -> None:
        self._channel = await self._open(process)
        await self._handshake(self._channel)

    def _drain(self, stream: IO[bytes], what: str, level: Callable[[], int]) -> None:
        """Log ``stream`` of the running process in a daemon thread."""
        pid = self._process.pid if self._process is not None else 0
        tag = f"{self.label}[{pid}] {what}"
        threading.Thread(target=_drain, args=(stream, self.log, tag, level), name=tag,
                         daemon=True).start()

    def _stderr_level(self) -> int:
        """The engine's stderr at `stderr_level`, except its complaints while we stop it."""
        return logging.DEBUG if self._stopping else self.stderr_level

    async def _stop(self) -> None:
        """The goodbye, a moment to exit by itself, then the kill."""
        process, channel = self._process, self._channel
        self._stopping = True
        if channel is not None and not channel.closed and process is not None:
            with contextlib.suppress(EngineError, OSError, asyncio.TimeoutError):
                await asyncio.wait_for(self._goodbye(channel), EXIT_GRACE)
        if process is not None:
            deadline = time.monotonic() + EXIT_GRACE
            while process.poll() is None and time.monotonic() < deadline:
                await asyncio.sleep(0.01)
        self._kill()

    def _kill(self) -> None:
        """Kill the engine's process group, reap it and forget it (callable without a loop)."""
        process = self._process
        if self._channel is not None:
            self._channel.close()
        self._channel = None
        if process is not None:
            self._stopping = True
            _kill_group(process)
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(5.0)  # at once after SIGKILL; the drain threads close their pipes
            if process.stdin is not None and not process.stdin.closed:
                with contextlib.suppress(OSError):
                    process.stdin.close()
        if self._finalizer is not None:
            self._finalizer.detach()
        self._process = None
        self._finalizer = None


class EngineAgent(Agent):
    """An engine as an `Agent`: its decisions are asked of `process`, and every answer is
    checked against the rules core before it is used (each dialect's agent does that)."""

    process: EngineProcess
    stats: EngineStats

    @property
    def pid(self) -> int | None:
        """The process id of the engine now running (None before the first request)."""
        return self.process.pid

    async def start(self) -> None:
        await self.process.start()

    async def close(self) -> None:
        await self.process.close()
