"""GNU Backgammon as an engine bgbot asks: gnubg's ``external`` server mode (reference §3).

`GnubgEngine` is an `Agent`. It starts and owns one headless gnubg (``gnubg -t -q -r -s
<private prefs dir>``, no rc files), sends it the evaluation settings on stdin, then the command
``external <socket>``, which makes gnubg serve FIBS ``board:`` lines on a Unix-domain socket in
a private temporary directory (gnubg 1.07 treats an argument without ``:`` as a socket path; no
port to race for). The engine asks for plays, double / no double, take / drop / beaver,
resignation answers and evaluations, one request at a time.

The board lines are written by `bgbot.formats.fibsboard` in gnubg's own dialect (we sit in
gnubg's seat 1): gnubg's server reads its own external-player lines correctly, scores included
(reference §3.5), while a FIBS-dialect line gets the scores swapped.

Guards for gnubg 1.07's quirks (reference §3):

* a request line longer than 254 characters makes gnubg abort (buffer overflow): every line is
  measured before it is sent; names are two letters;
* no pipelining: an asyncio lock keeps exactly one request in flight;
* missing trailing integers silently keep the previous request's values: all 50 are written;
* ``jacobyrule`` defaults to *on* in server mode: it is sent with every money board;
  ``crawfordrule off`` is sent when the match has no Crawford rule;
* the per-request ``beavers`` option is ignored by 1.07 (only the global ``set beavers``
  counts), so a ``beaver`` answer where beavers are not allowed is read as a take;
* the server does not check cube access and reads may-double flags 0:0 as a pending double:
  cube questions are asked only when the rules allow the action, and the flags always name
  one owner at most;
* ``plies -1`` never returns: plies are checked to be 0..`MAX_PLIES`; an integer ``noise``
  is read as 1/10000ths, so noise is always written with a decimal point;
* gnubg prints numbers with the C library, so it runs with ``LC_ALL=C`` (a comma decimal
  separator would make every evaluation unreadable).

Every answer is checked against the rules core before it is used: a play must name a legal
play of the position and dice (`parse_play`); a cube or resignation answer must be one of the
words gnubg is documented to send. An unusable answer is logged, counted in `GnubgStats` and
replaced by a safe legal answer (the first legal play, no double, take, reject). Every request
has a timeout; a gnubg that died, hung or closed the connection is killed (its whole process
group), started again with the same settings, and the request is sent again, so a match goes on.

gnubg exits by itself when its connection closes: the socket lives in a directory that is
removed once connected, so gnubg's attempt to listen again fails and it reads end-of-file on
stdin. A crashed bgbot therefore leaves no gnubg behind.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
import weakref
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING, Callable, NamedTuple, Sequence

from ..agents.base import Agent
from ..core.context import Context, CubeOwner
from ..core.errors import BgbotError, FormatError, IllegalAction
from ..core.notation import parse_play
from ..core.position import Play, Position
from ..formats.fibsboard import Dialect, FibsBoard, Request, Side, format_board
from ..players.base import Probabilities, TakeDecision
from .stats import EngineStats

if TYPE_CHECKING:
    from ..agents.spec import AgentSpec

__all__ = [
    "DEFAULT_BINARY",
    "MAX_LINE",
    "MAX_PLIES",
    "GnubgEngine",
    "GnubgError",
    "GnubgEvaluation",
    "GnubgNotFound",
    "GnubgServer",
    "GnubgStats",
    "GnubgUnavailable",
    "create",
    "find_gnubg",
    "gnubg_environment",
    "register",
]

log = logging.getLogger("bgbot.engines.gnubg")

DEFAULT_BINARY = "/usr/games/gnubg"
MAX_LINE = 254
"""gnubg 1.07 aborts on a request line of 255 characters or more (without the newline)."""
MAX_PLIES = 4
"""Deepest look-ahead accepted; 4-ply cubeful takes about 20 s a position on a small machine."""
DEFAULT_TIMEOUTS = {0: 10.0, 1: 15.0, 2: 30.0, 3: 120.0, 4: 900.0}
"""Seconds a request may take at each ply depth before gnubg is deemed hung."""
START_TIMEOUT = 15.0
RETRIES = 2
"""How often a request is sent again (to a restarted gnubg) after a crash or a time-out."""
_MY_SEAT = 1
"""We write every board from gnubg's seat 1 (positive chequers, colour 1)."""
_NAMES = ("me", "op")
_CUBE_SIDE = {CubeOwner.CENTRE: None, CubeOwner.ME: Side.ME, CubeOwner.OPPONENT: Side.OPPONENT}


class GnubgError(BgbotError):
    """gnubg could not answer a request (it is missing, keeps failing, or answered nonsense)."""


class GnubgNotFound(GnubgError):
    """No gnubg binary at the configured path."""


class GnubgUnavailable(GnubgError):
    """gnubg kept dying, hanging or failing to start, even after restarts."""


class _ErrorReply(GnubgError):
    """gnubg answered ``Error: ...`` (a request it could not read)."""


def find_gnubg(binary: str | None = None) -> str | None:
    """The gnubg executable to run: ``binary``, else $BGBOT_GNUBG, else `DEFAULT_BINARY` or PATH."""
    candidates = [binary] if binary else [os.environ.get("BGBOT_GNUBG"), DEFAULT_BINARY, "gnubg"]
    for candidate in candidates:
        if not candidate:
            continue
        found = shutil.which(candidate)
        if found:
            return found
    return None


def gnubg_environment(home: str) -> dict[str, str]:
    """The environment gnubg runs in: the C locale (``.`` decimal point) and a private home."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("LC_")}
    env.update(LC_ALL="C", LANG="C", LANGUAGE="C", HOME=home)
    env.pop("DISPLAY", None)
    return env


def private_directory(prefix: str) -> str:
    """A fresh directory only we can use, short enough to hold a Unix socket path (< 108 bytes)."""
    directory = tempfile.mkdtemp(prefix=prefix)
    if len(directory) > 80:  # a long $TMPDIR: fall back to /tmp for the socket's sake
        shutil.rmtree(directory, ignore_errors=True)
        directory = tempfile.mkdtemp(prefix=prefix, dir="/tmp")
    return directory


def gnubg_command(binary: str, prefs: str) -> list[str]:
    """gnubg without GUI, sound or rc files, with its preferences in ``prefs``."""
    return [binary, "-t", "-q", "-r", "-s", prefs]


# --------------------------------------------------------------------------- statistics


class GnubgStats(EngineStats):
    """What happened on one gnubg connection (error replies: lines starting ``Error``)."""


class GnubgEvaluation(NamedTuple):
    """gnubg's answer to ``evaluation fibsboard``: chances and equity for the side on roll.

    ``equity`` is the match-winning chance (0..1) in match play; in money play the money
    equity for a 1-cube, cubeful or cubeless as asked.
    """

    probabilities: Probabilities
    equity: float
    cubeful: bool
    plies: int
    match_play: bool


# --------------------------------------------------------------------------- the process


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    """SIGKILL a gnubg we started and anything it started (it leads its own process group).

    Only while it has not been reaped: a reaped process id may already belong to another.
    """
    if process.poll() is None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)


def _check_line(line: str) -> None:
    """Refuse a line gnubg would crash on or misread."""
    if "\n" in line or "\r" in line or "\x00" in line:
        raise FormatError("gnubg request", line, "one line without line breaks or NUL bytes")
    if len(line) > MAX_LINE:
        raise FormatError("gnubg request", line,
                          f"{len(line)} characters; gnubg 1.07 aborts above {MAX_LINE}")
    if not line.strip() or not line.isascii():
        raise FormatError("gnubg request", line, "a non-empty line of ASCII text")


class GnubgServer:
    """One headless gnubg in ``external`` server mode, on a Unix socket, restarted on failure.

    ``setup`` are the gnubg commands sent on stdin before ``external`` (at every start, so a
    restarted gnubg has the same settings). `ask` sends one line and returns gnubg's one-line
    reply; requests are serialised by a lock. Neither the process nor the socket belongs to an
    event loop (the socket is driven with ``loop.sock_*``, gnubg's output is drained by two
    daemon threads), so one server can be used from several event loops in turn, e.g. by
    successive ``asyncio.run`` calls.
    """

    def __init__(
        self,
        setup: Sequence[str] = (),
        *,
        binary: str | None = None,
        start_timeout: float = START_TIMEOUT,
        retries: int = RETRIES,
        stats: GnubgStats | None = None,
    ) -> None:
        self.setup = tuple(setup)
        self.binary = binary
        self.start_timeout = start_timeout
        self.retries = retries
        self.stats = stats if stats is not None else GnubgStats()
        self.version: str | None = None
        self._process: subprocess.Popen[bytes] | None = None
        self._socket: socket.socket | None = None
        self._buffer = bytearray()
        self._directory: str | None = None
        self._generation = 0
        self._stopping = False
        self._locks: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = (
            weakref.WeakKeyDictionary()
        )
        self._finalizer: weakref.finalize | None = None  # type: ignore[type-arg]

    # ----------------------------------------------------------------- facts

    @property
    def pid(self) -> int | None:
        """The running gnubg's process id (its process group id too), or None."""
        process = self._process
        return process.pid if process is not None and process.poll() is None else None

    @property
    def running(self) -> bool:
        return self.pid is not None and self._socket is not None

    # ----------------------------------------------------------------- public

    async def start(self) -> None:
        """Start gnubg now (requests start it on demand anyway)."""
        async with self._lock():
            if not self.running:
                await self._launch()

    async def ask(self, line: str, timeout: float) -> str:
        """Send ``line``, return gnubg's reply without its line end.

        A crash, lost connection or time-out kills gnubg, starts it again and sends the line
        again (`retries` times); then `GnubgUnavailable`. An ``Error`` reply raises
        `GnubgError` at once (sending the same line again would not help).
        """
        _check_line(line)
        async with self._lock():
            self.stats.requests += 1
            failure = "no attempt"
            for attempt in range(self.retries + 1):
                try:
                    if not self.running:
                        await self._launch()
                    reply = await asyncio.wait_for(self._exchange(line), timeout)
                except asyncio.TimeoutError:
                    self.stats.timeouts += 1
                    failure = f"no reply within {timeout:g} s"
                except (OSError, EOFError) as exc:
                    self.stats.crashes += 1
                    failure = f"connection lost ({exc.__class__.__name__}: {exc})"
                except GnubgUnavailable as exc:
                    failure = str(exc)
                else:
                    if reply.startswith("Error"):
                        self.stats.error_replies += 1
                        raise _ErrorReply(f"gnubg refused {line!r}: {reply}")
                    return reply
                log.warning("gnubg (pid %s) failed on attempt %d of %d: %s; request %r",
                            self.pid, attempt + 1, self.retries + 1, failure, line)
                self._kill()
            raise GnubgUnavailable(f"gnubg failed {self.retries + 1} times: {failure}")

    async def close(self) -> None:
        """Stop gnubg (it exits once its connection closes) and remove its private directory."""
        async with self._lock():
            await self._stop()
        if self._directory is not None:
            shutil.rmtree(self._directory, ignore_errors=True)
            self._directory = None

    # ----------------------------------------------------------------- internals

    def _lock(self) -> asyncio.Lock:
        """The request lock for the running event loop."""
        loop = asyncio.get_running_loop()
        lock = self._locks.get(loop)
        if lock is None:
            lock = self._locks[loop] = asyncio.Lock()
        return lock

    async def _exchange(self, line: str) -> str:
        assert self._socket is not None
        loop = asyncio.get_running_loop()
        self._buffer.clear()
        await loop.sock_sendall(self._socket, line.encode("ascii") + b"\n")
        return (await self._readline()).replace("\x00", "").strip("\r\n")

    async def _readline(self) -> str:
        assert self._socket is not None
        loop = asyncio.get_running_loop()
        while b"\n" not in self._buffer:
            data = await loop.sock_recv(self._socket, 4096)
            if not data:
                raise EOFError("gnubg closed the connection")
            self._buffer += data
            if len(self._buffer) > 65536:
                raise EOFError("gnubg's reply has no line end")
        end = self._buffer.index(b"\n")
        raw = bytes(self._buffer[:end])
        del self._buffer[:end + 1]
        return raw.decode("ascii", errors="replace")

    async def _launch(self) -> None:
        """Start gnubg, send the settings, connect, and read its version."""
        self._kill()
        binary = find_gnubg(self.binary)
        if binary is None:
            raise GnubgNotFound(f"GNU Backgammon not found (looked for {self.binary or DEFAULT_BINARY}"
                                "; set BGBOT_GNUBG or install gnubg)")
        if self._directory is None:
            self._directory = private_directory("bgbot-gnubg-")
        self._generation += 1
        prefs = os.path.join(self._directory, "prefs")
        os.makedirs(prefs, exist_ok=True)
        socket_dir = os.path.join(self._directory, f"socket-{self._generation}")
        os.makedirs(socket_dir, exist_ok=True)
        path = os.path.join(socket_dir, "gnubg.sock")
        self.stats.starts += 1
        if self.stats.starts > 1:
            self.stats.restarts += 1
        commands = [*self.setup, f"external {path}"]
        try:
            process = subprocess.Popen(
                gnubg_command(binary, prefs),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=self._directory,
                env=gnubg_environment(self._directory),
                start_new_session=True,
            )
        except OSError as exc:
            raise GnubgUnavailable(f"cannot run {binary}: {exc}") from exc
        self._process = process
        self._stopping = False
        self._finalizer = weakref.finalize(self, _kill_group, process)
        assert process.stdin is not None and process.stdout is not None
        assert process.stderr is not None
        tag = f"gnubg[{process.pid}]"
        for stream, name, level in ((process.stdout, tag, lambda: logging.DEBUG),
                                    (process.stderr, tag + " stderr", self._stderr_level)):
            threading.Thread(target=_drain, args=(stream, name, level), name=name,
                             daemon=True).start()
        try:
            # Small enough for the pipe buffer, so this never blocks; gnubg reads end-of-file
            # only once `external` returns, and then exits.
            process.stdin.write(("\n".join(commands) + "\n").encode("utf-8"))
            process.stdin.close()
        except OSError:
            pass  # it died at once: the connection below fails and says so
        try:
            await asyncio.wait_for(self._connect(path, process), self.start_timeout)
            # The socket file is not needed once connected; with its directory gone gnubg
            # cannot listen again after the connection closes, so it exits instead of lingering.
            shutil.rmtree(socket_dir, ignore_errors=True)
            self._buffer.clear()
            self.version = await asyncio.wait_for(self._handshake(), self.start_timeout)
        except (asyncio.TimeoutError, OSError, EOFError) as exc:
            self._kill()
            raise GnubgUnavailable(f"gnubg did not start: {exc.__class__.__name__}: {exc}") from exc
        log.info("gnubg %s started (pid %d, start %d)", self.version, process.pid,
                 self.stats.starts)

    async def _connect(self, path: str, process: subprocess.Popen[bytes]) -> None:
        loop = asyncio.get_running_loop()
        while True:
            if process.poll() is not None:
                raise EOFError(f"gnubg exited with status {process.returncode} before listening")
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.setblocking(False)
            try:
                await loop.sock_connect(sock, path)
            except (FileNotFoundError, ConnectionRefusedError):
                sock.close()
                await asyncio.sleep(0.02)
                continue
            except BaseException:
                sock.close()
                raise
            self._socket = sock
            return

    async def _handshake(self) -> str:
        """Ask ``version`` (a four-line reply) and return the ``Software:`` value."""
        assert self._socket is not None
        await asyncio.get_running_loop().sock_sendall(self._socket, b"version\n")
        lines: list[str] = []
        while len(lines) < 8:
            text = (await self._readline()).strip()
            lines.append(text)
            if text.startswith("Software:"):
                return text.partition(":")[2].strip()
        raise EOFError(f"unexpected reply to 'version': {lines}")

    def _stderr_level(self) -> int:
        """gnubg's stderr is a warning, except its expected complaint while we stop it."""
        return logging.DEBUG if self._stopping else logging.WARNING

    async def _stop(self) -> None:
        """Close the connection (gnubg then exits by itself); kill it if it does not."""
        process = self._process
        self._stopping = True
        if self._socket is not None:
            with contextlib.suppress(OSError):
                self._socket.close()
            self._socket = None
        if process is not None:
            deadline = time.monotonic() + 2.0
            while process.poll() is None and time.monotonic() < deadline:
                await asyncio.sleep(0.01)
        self._kill()

    def _kill(self) -> None:
        """Kill gnubg's process group, reap it, and forget the connection."""
        process = self._process
        if self._socket is not None:
            with contextlib.suppress(OSError):
                self._socket.close()
        self._socket = None
        self._buffer.clear()
        if process is not None:
            self._stopping = True
            _kill_group(process)
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(5.0)  # at once after SIGKILL; the drain threads close the pipes
            if process.stdin is not None:
                with contextlib.suppress(OSError):
                    process.stdin.close()
        if self._finalizer is not None:
            self._finalizer.detach()
        self._process = None
        self._finalizer = None


def _drain(stream: IO[bytes], tag: str, level: Callable[[], int]) -> None:
    """Log what gnubg prints (and keep its pipe from filling up); runs in a daemon thread."""
    with contextlib.suppress(OSError, ValueError), stream:
        for raw in iter(stream.readline, b""):
            text = raw.decode("utf-8", errors="replace").rstrip()
            if text:
                log.log(level(), "%s: %s", tag, text)


# --------------------------------------------------------------------------- the engine


def _timeout_for(plies: int) -> float:
    return DEFAULT_TIMEOUTS.get(plies, DEFAULT_TIMEOUTS[MAX_PLIES])


def _check_plies(plies: int) -> int:
    if isinstance(plies, bool) or not isinstance(plies, int) or not 0 <= plies <= MAX_PLIES:
        raise FormatError("plies", plies, f"gnubg look-ahead is 0..{MAX_PLIES} (plies -1 hangs "
                                          "gnubg 1.07)")
    return plies


def _check_noise(noise: float) -> float:
    if not isinstance(noise, (int, float)) or not math.isfinite(noise) or not 0 <= noise <= 1:
        raise FormatError("noise", noise, "gnubg's evaluation noise is 0..1 (a standard deviation)")
    return float(noise)


class GnubgEngine(Agent):
    """GNU Backgammon as an `Agent`: gnubg decides, bgbot checks every answer (module docstring).

    ``plies`` is gnubg's look-ahead for plays and cube decisions (0 = its neural net alone);
    ``noise`` its evaluation noise (a standard deviation; gnubg's deterministic noise, a
    function of the position, so the same position always gets the same noise); ``seed`` is
    given to gnubg's random generator (``set seed``). gnubg's deterministic noise does not depend
    on that seed (gnubg 1.07 derives it from the board alone), so two engines with the same
    noise play alike whatever their seeds; runs are reproducible either way.
    ``timeout`` overrides the per-request time limit (seconds).
    """

    def __init__(
        self,
        *,
        plies: int = 0,
        noise: float = 0.0,
        seed: int = 0,
        timeout: float | None = None,
        binary: str | None = None,
        retries: int = RETRIES,
        start_timeout: float = START_TIMEOUT,
        name: str = "gnubg",
    ) -> None:
        self.plies = _check_plies(plies)
        self.noise = _check_noise(noise)
        self.seed = int(seed)
        if timeout is not None and not timeout > 0:
            raise FormatError("timeout", timeout, "a positive number of seconds")
        self.timeout = timeout
        self.name = name
        self.stats = GnubgStats()
        self.server = GnubgServer(self._setup(), binary=binary, retries=retries,
                                  start_timeout=start_timeout, stats=self.stats)

    def __repr__(self) -> str:
        return f"GnubgEngine(plies={self.plies}, noise={self.noise}, seed={self.seed})"

    def _setup(self) -> list[str]:
        """gnubg commands that make every restart behave the same."""
        commands = ["set rng mersenne", f"set seed {self.seed}", "set jacoby off"]
        for kind in ("chequerplay", "cubedecision"):
            prefix = f"set evaluation {kind} evaluation"
            commands += [
                f"{prefix} plies {self.plies}",
                f"{prefix} cubeful on",
                f"{prefix} noise {self.noise:.6f}",
                f"{prefix} deterministic on",
            ]
        return commands

    @property
    def pid(self) -> int | None:
        """The process id of the gnubg now running (None before the first request)."""
        return self.server.pid

    # ----------------------------------------------------------------- lifecycle

    async def start(self) -> None:
        await self.server.start()

    async def close(self) -> None:
        await self.server.close()

    # ----------------------------------------------------------------- requests

    async def _ask(self, line: str, plies: int) -> str | None:
        """gnubg's reply, or None (logged, counted) when gnubg could not give one."""
        try:
            return await self.server.ask(line, self.timeout or _timeout_for(plies))
        except GnubgNotFound:
            raise
        except (GnubgError, FormatError) as exc:
            log.error("%s: %s", self.name, exc)
            return None

    def _unusable(self, what: str, reply: str | None, fallback: object, detail: str = "") -> None:
        self.stats.unusable += 1
        log.warning("%s: unusable answer %r to a %s request%s; using %s instead", self.name,
                    reply, what, f" ({detail})" if detail else "", fallback)

    async def choose_play(self, position: Position, dice: Sequence[int], context: Context) -> Play:
        plays = position.legal_plays(dice)
        if len(plays) <= 1:
            return plays[0] if plays else Play()
        roll = (int(dice[0]), int(dice[1]))
        try:
            line = _board_line(position, context, Request.MOVE, dice=roll)
        except FormatError as exc:
            self._unusable("move", None, plays[0], f"cannot write the board: {exc}")
            return plays[0]
        reply = await self._ask(line, self.plies)
        if reply is None:
            self._unusable("move", reply, plays[0])
            return plays[0]
        try:
            return parse_play(reply.strip(), position, roll)
        except (FormatError, IllegalAction) as exc:
            self._unusable("move", reply, plays[0], str(exc))
            return plays[0]

    async def should_double(self, position: Position, context: Context) -> bool:
        if not context.may_double():
            return False  # the server does not check cube access: never ask without it
        try:
            line = _board_line(position, context, Request.ROLL_OR_DOUBLE)
        except FormatError as exc:
            self._unusable("double", None, "no double", f"cannot write the board: {exc}")
            return False
        reply = await self._ask(line, self.plies)
        word = (reply or "").strip().lower()
        if word in ("double", "roll"):
            return word == "double"
        self._unusable("double", reply, "no double")
        return False

    async def take_decision(self, position: Position, context: Context) -> TakeDecision:
        try:
            line = _board_line(position, context, Request.TAKE)
        except FormatError as exc:
            self._unusable("take", None, "take", f"cannot write the board: {exc}")
            return TakeDecision.TAKE
        reply = await self._ask(line, self.plies)
        word = (reply or "").strip().lower()
        if word == "take":
            return TakeDecision.TAKE
        if word == "drop":
            return TakeDecision.DROP
        if word == "beaver":
            rules = context.rules
            if context.is_money and rules.cube and rules.beavers:
                return TakeDecision.BEAVER
            return TakeDecision.TAKE  # 1.07 ignores `beavers off`: a beaver says "take" here
        self._unusable("take", reply, "take")
        return TakeDecision.TAKE

    async def accept_resignation(self, position: Position, context: Context, value: int) -> bool:
        if value not in (1, 2, 3):
            return False
        try:
            # The resigner is on roll; the board is written from its side.
            line = _board_line(position, context.swapped(), Request.ROLL_OR_DOUBLE)
        except FormatError as exc:
            self._unusable("resignation", None, "reject", f"cannot write the board: {exc}")
            return False
        reply = await self._ask(f"{line} resignation {value}", self.plies)
        word = (reply or "").strip().lower()
        if word in ("accept", "reject"):
            return word == "accept"
        self._unusable("resignation", reply, "reject")
        return False

    async def offer_resignation(self, position: Position, context: Context) -> int:
        """Resign only a lost race: gnubg sees no winning chance left (cubeless, as printed).

        Offers the level that costs nothing against playing on: single, or gammon /
        backgammon when gnubg sees it as certain (gammons count single under Jacoby with a
        centred cube). With contact the nets are never proof, so never.
        """
        if position.is_contact():
            return 0
        mine, theirs = position.pip_counts()
        if mine <= theirs:
            return 0  # cheap pre-check: the side ahead in a race can still win
        try:
            evaluation = await self.evaluate(position, context)
        except GnubgError as exc:
            log.warning("%s: no evaluation for a resignation (%s); playing on", self.name, exc)
            return 0
        chances = evaluation.probabilities
        if chances.win > 0.0:
            return 0
        rules = context.rules
        if context.is_money and rules.jacoby and rules.cube and context.cube_owner is CubeOwner.CENTRE:
            return 1
        expected_loss = 1.0 + chances.lose_gammon + chances.lose_backgammon
        return max(1, min(3, int(expected_loss + 1e-6)))

    async def evaluate(
        self,
        position: Position,
        context: Context | None = None,
        *,
        plies: int | None = None,
        cubeful: bool = False,
    ) -> GnubgEvaluation:
        """gnubg's evaluation of ``position`` for the side on roll, before rolling (noiseless).

        ``context`` (seen from the side on roll; default: money, centred cube, no Jacoby) sets
        the score, cube and rules; ``plies`` defaults to the engine's. Raises `GnubgError`
        when gnubg cannot answer or answers something that is not six numbers.
        """
        ctx = context if context is not None else Context()
        depth = self.plies if plies is None else _check_plies(plies)
        line = "evaluation fibsboard " + _board_line(position, ctx, Request.ROLL_OR_DOUBLE)
        if depth:
            line += f" plies {depth}"
        if cubeful:
            line += " cubeful"
        reply = await self.server.ask(line, self.timeout or _timeout_for(depth))
        numbers = _six_numbers(reply)
        if numbers is None:
            self.stats.unusable += 1
            raise GnubgError(f"gnubg's evaluation is not six numbers: {reply!r}")
        return GnubgEvaluation(Probabilities(*numbers[:5]), numbers[5], cubeful, depth,
                               not ctx.is_money)


def _six_numbers(reply: str) -> tuple[float, ...] | None:
    """Six finite floats, the first five probabilities in 0..1 (gnubg's %f), else None."""
    words = reply.split()
    if len(words) != 6:
        return None
    try:
        numbers = tuple(float(word) for word in words)
    except ValueError:
        return None
    if not all(math.isfinite(x) for x in numbers):
        return None
    if not all(-1e-6 <= x <= 1 + 1e-6 for x in numbers[:5]):
        return None
    return numbers


def _board_line(position: Position, context: Context, kind: Request,
                dice: tuple[int, int] | None = None) -> str:
    """The ``board:`` line (plus rule options) asking ``kind`` about ``position``.

    For MOVE and ROLL_OR_DOUBLE ``position`` and ``context`` are the side on roll's; for TAKE
    ``position`` is the doubler's (on roll) and ``context`` the taker's. Raises `FormatError`
    when the context does not fit a board (e.g. a score at or above the match length).
    """
    board = FibsBoard(
        position=position,
        kind=kind,
        on_roll=Side.OPPONENT if kind is Request.TAKE else Side.ME,
        dice=dice,
        dialect=Dialect.GNUBG,
        my_name=_NAMES[0],
        opponent_name=_NAMES[1],
        match_length=context.match_length,
        my_score=context.my_score,
        opponent_score=context.opponent_score,
        cube_value=context.cube_value,
        cube_owner=_CUBE_SIDE[context.cube_owner],
        crawford=context.crawford,
        post_crawford=context.post_crawford,
        my_seat=_MY_SEAT,
    )
    line = format_board(board)
    rules = context.rules
    if context.is_money:
        line += f" jacobyrule {'on' if rules.jacoby and rules.cube else 'off'}"
    elif not rules.crawford:
        line += " crawfordrule off"
    return line


# --------------------------------------------------------------------------- agent spec


SUMMARY = "GNU Backgammon's engine, run headless (plies=N, noise=X, seed=S, timeout=SEC)"


def create(spec: AgentSpec, seed: int) -> Agent:
    """Build a `GnubgEngine` from ``gnubg[:plies=N,noise=X,seed=S,timeout=SEC]``."""
    from ..agents.spec import _Options

    opts = _Options(spec, {
        "plies": f"gnubg look-ahead 0..{MAX_PLIES} (default 0)",
        "noise": "gnubg evaluation noise, a standard deviation, e.g. 0.02 (default 0)",
        "seed": "seed for gnubg's random generator",
        "timeout": "seconds a request may take before gnubg is restarted",
    })
    timeout = opts.number("timeout", 0.0, 0.0, 86400.0)
    return GnubgEngine(
        plies=opts.integer("plies", 0, 0, MAX_PLIES),
        noise=opts.number("noise", 0.0, 0.0, 1.0),
        seed=opts.integer("seed", seed),
        timeout=timeout or None,
    )


def register() -> None:
    """Make ``gnubg[:plies=N,noise=X,seed=S]`` an agent spec (`bgbot.agents.spec`)."""
    from ..agents.spec import register_agent

    register_agent("gnubg", create, SUMMARY)
