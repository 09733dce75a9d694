"""Any UBGI engine as an `Agent`: the Universal Backgammon Interface, controller side.

UBGI v0.2 (``bungogood/bgci: docs/ubgi-v0.2-spec.md``) is a UCI-like line protocol on the
engine's stdin/stdout: ``ubgi`` -> ``id ...``, ``key ...``, ``ubgiok``; ``set``/``get``/``keys``;
``isready`` -> ``readyok``; ``newgame``; ``position gnubgid <id>`` (or ``position xgid``);
``dice d1 d2``; ``go [chequer|cube|turn]`` -> ``bestmove 24/18 13/12`` (``bar``, ``off``,
``pass``), ``bestcube double|nodouble``, ``bestturn cube=... move=...``; failures are
``error bad_command|bad_value|bad_state|unsupported <detail>``.

This module holds the protocol's vocabulary, shared with the engine side
(`bgbot.frontends.ubgi`): `KeySpec` (the ``key`` lines, parsed and validated the way
python-chess's ``Option`` validates UCI options), `format_ubgi_play` / `parse_ubgi_play` (move
payloads, checked against the rules core) and `ErrorCode`. Then `UbgiEngine`, modelled on
python-chess's engine module:

* the engine runs as an asyncio subprocess in its own process group, its stderr logged;
* a handshake with a time limit reads the engine's ids and keys; the spec's options
  (``engine.ply=2`` ...) are checked against the declared keys, sent with ``set`` and confirmed
  with ``isready``; a refused option is a configuration error (`UbgiError`), not retried;
* every request has a time limit; a dead or hung engine is killed, started again (handshake and
  options again) and the request sent again, `retries` times;
* every answer is checked against the rules core: a move must name a legal play of the
  position and dice, a cube answer one of the words the spec allows (``beaver`` only where the
  rules allow one). An unusable answer, or a decision the engine declares ``unsupported``
  (many engines answer chequer play only), is logged, counted in `UbgiStats` and answered by the
  ``fallback`` agent (default: bgbot's heuristic), or raises `UbgiError` with ``strict``.

Positions go out as gnubg's ``PositionID:MatchID`` (``context=full``: cube, score, Crawford,
Jacoby and a pending double reach the engine), or as the bare 14-character Position ID the spec
names (``context=bare``); ``context=auto`` (the default) tries the full form once after each
handshake and falls back to the bare one if the engine refuses it. Decisions the v0.2 spec
leaves out are asked with bgbot's extensions, which other engines may answer ``unsupported``:
``go take`` -> ``besttake take|drop|beaver`` (the position is the doubler's, on roll),
``go resign`` -> ``bestresign none|single|gammon|backgammon``, ``go accept single|gammon|
backgammon`` -> ``bestaccept accept|reject`` (the position is the resigner's, on roll).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import shlex
import signal
import time
import weakref
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, Mapping, Sequence

from ..agents.base import Agent
from ..core.context import Context, CubeOwner
from ..core.errors import BgbotError, FormatError, IllegalAction
from ..core.notation import parse_play
from ..core.position import BAR_POINT, OFF_POINT, Play, Position
from ..formats.gnubgid import GameState, MatchState, encode_gnubgid
from ..players.base import TakeDecision
from .stats import EngineStats

if TYPE_CHECKING:
    from ..agents.spec import AgentSpec

__all__ = [
    "PROTOCOL_VERSION",
    "ErrorCode",
    "KeySpec",
    "UbgiEngine",
    "UbgiConfigError",
    "UbgiError",
    "UbgiErrorReply",
    "UbgiNotFound",
    "UbgiStats",
    "UbgiUnavailable",
    "create",
    "format_ubgi_play",
    "match_state_for",
    "parse_ubgi_play",
    "RESIGN_WORDS",
]

log = logging.getLogger("bgbot.engines.ubgi")

PROTOCOL_VERSION = "0.2"
DEFAULT_TIMEOUT = 30.0
"""Seconds one decision may take before the engine is deemed hung."""
START_TIMEOUT = 10.0
"""Seconds the handshake (``ubgi`` .. ``ubgiok``, options, ``isready``) may take."""
RETRIES = 2
"""How often a request is sent again to a restarted engine after a crash or a time-out."""
MAX_LINE = 1 << 20
"""Longest engine output line read (bytes)."""
RESIGN_WORDS = ("none", "single", "gammon", "backgammon")
"""``bestresign`` / ``go accept`` words, indexed by resignation value 0..3."""


class ErrorCode(str, Enum):
    """The four error codes UBGI v0.2 standardises (spec §5)."""

    BAD_COMMAND = "bad_command"
    """Unknown command or malformed syntax."""
    BAD_VALUE = "bad_value"
    """A parsed value is invalid for its key or argument."""
    BAD_STATE = "bad_state"
    """A valid command that cannot be applied in the current state."""
    UNSUPPORTED = "unsupported"
    """A feature, key or format the engine does not implement."""


# --------------------------------------------------------------------------- keys


_RANGE = re.compile(r"^(-?\d+)\.\.(-?\d+)$")
_KEY_NAME = re.compile(r"^[A-Za-z0-9_.-]+$")


@dataclass(frozen=True)
class KeySpec:
    """One ``key`` line: an option an engine declares (spec §4, "Key Discovery").

    ``kind`` is ``int``, ``bool``, ``enum`` or ``string``; ``low``/``high`` bound an int (None
    for ``*`` or a bare default); ``choices`` are an enum's values; ``minor`` is the ``!``
    marker (not part of a rating identity).
    """

    name: str
    kind: str
    default: str
    low: int | None = None
    high: int | None = None
    choices: tuple[str, ...] = ()
    minor: bool = False
    description: str = ""

    def line(self) -> str:
        """The ``key ...`` line declaring this key."""
        if self.kind == "int":
            shape = f"{self.low}..{self.high} " if self.low is not None and self.high is not None else "* "
        elif self.kind == "enum":
            shape = "|".join(self.choices) + " "
        elif self.kind == "string":
            shape = "* "
        else:
            shape = ""
        tail = (" !" if self.minor else "") + (f" {self.description}" if self.description else "")
        return f"key {self.name} {self.kind} {shape}{self.default}{tail}"

    def parse(self, value: str) -> str:
        """``value`` in canonical form, or `FormatError` naming the key and what it must be."""
        text = value.strip()
        if self.kind == "int":
            try:
                number = int(text)
            except ValueError:
                raise FormatError(self.name, value, "must_be an integer") from None
            if self.low is not None and self.high is not None and not self.low <= number <= self.high:
                raise FormatError(self.name, value, f"must_be {self.low}..{self.high}")
            return str(number)
        if self.kind == "bool":
            lowered = text.lower()
            if lowered in ("true", "1", "on", "yes"):
                return "true"
            if lowered in ("false", "0", "off", "no"):
                return "false"
            raise FormatError(self.name, value, "must_be true|false")
        if self.kind == "enum":
            if text not in self.choices:
                raise FormatError(self.name, value, "must_be " + "|".join(self.choices))
            return text
        if not text or "\n" in text or "\r" in text:
            raise FormatError(self.name, value, "must_be one non-empty line")
        return text

    @classmethod
    def from_line(cls, line: str) -> KeySpec:
        """Read a ``key`` line; `FormatError` if it does not follow the spec's grammar."""
        words = line.split()
        if len(words) < 4 or words[0] != "key" or not _KEY_NAME.match(words[1]):
            raise FormatError("key line", line, "expected: key <name> <type> ...")
        name, kind, rest = words[1], words[2], words[3:]
        low = high = None
        choices: tuple[str, ...] = ()
        if kind == "int":
            match = _RANGE.match(rest[0])
            if match or rest[0] == "*":
                if match:
                    low, high = int(match.group(1)), int(match.group(2))
                rest = rest[1:]
        elif kind == "enum":
            choices = tuple(rest[0].split("|"))
            rest = rest[1:]
        elif kind == "string":
            if rest[0] != "*":
                raise FormatError("key line", line, "a string key reads: string * <default>")
            rest = rest[1:]
        elif kind != "bool":
            raise FormatError("key line", line, "type must be int, bool, enum or string")
        if not rest:
            raise FormatError("key line", line, "no default value")
        default, rest = rest[0], rest[1:]
        minor = bool(rest) and rest[0] == "!"
        if minor:
            rest = rest[1:]
        spec = cls(name, kind, default, low, high, choices, minor, " ".join(rest))
        spec.parse(default)  # the default must be a valid value itself
        return spec


# --------------------------------------------------------------------------- moves


def _point_name(point: int) -> str:
    if point == BAR_POINT:
        return "bar"
    if point == OFF_POINT:
        return "off"
    return str(point)


def format_ubgi_play(play: Play) -> str:
    """The ``bestmove`` payload of ``play``: every step as ``from/to`` in the order made, ``bar``
    and ``off`` by name, no ``*`` and no ``(n)`` (spec §6); ``pass`` for the empty play."""
    if not play:
        return "pass"
    return " ".join(f"{_point_name(step[0])}/{_point_name(step[1])}" for step in play)


def parse_ubgi_play(payload: str, position: Position, dice: Sequence[int]) -> Play:
    """The legal play a ``bestmove`` payload names, checked with the rules core.

    ``pass`` (or nothing, as the 0.01 draft answered) is the empty play and is legal only when
    no chequer can move. Anything else is read by the core's move parser (so ``25``/``0`` and
    gnubg's forms are tolerated) and must be one of ``position.legal_plays(dice)``; otherwise
    `IllegalAction` or `FormatError`.
    """
    text = payload.strip()
    if text in ("", "pass"):
        legal = position.legal_plays(dice)
        if legal and legal[0]:
            raise IllegalAction(f"'pass' with {dice[0]}{dice[1]}, but chequers can move "
                                f"(e.g. {format_ubgi_play(legal[0])})")
        return Play()
    return parse_play(text, position, dice)


# --------------------------------------------------------------------------- match state


def match_state_for(context: Context, *, dice: Sequence[int] | None = None,
                    doubled: bool = False, resigned: int = 0) -> MatchState:
    """The gnubg Match ID state of a decision: the side on roll sits in seat 0.

    ``context`` is the side on roll's (for a take, the doubler's: pass ``context.swapped()`` of
    the taker's). ``doubled`` / ``resigned`` make seat 1 the one to act. Raises `FormatError`
    when the context does not fit a Match ID (a score above the match length).
    """
    owner = {CubeOwner.CENTRE: -1, CubeOwner.ME: 0, CubeOwner.OPPONENT: 1}[context.cube_owner]
    rules = context.rules
    return MatchState(
        cube=context.cube_value,
        cube_owner=owner,
        on_roll=0,
        crawford=context.crawford and not context.is_money,
        game_state=GameState.PLAYING,
        turn=1 if doubled or resigned else 0,
        doubled=doubled,
        resigned=resigned,
        dice=(int(dice[0]), int(dice[1])) if dice else (0, 0),
        match_length=context.match_length,
        score=(context.my_score, context.opponent_score),
        jacoby=context.is_money and rules.jacoby and rules.cube,
    )


# --------------------------------------------------------------------------- errors, stats


class UbgiError(BgbotError):
    """A UBGI engine could not answer (refused, kept failing or answered nonsense)."""


class UbgiNotFound(UbgiError):
    """The engine's executable does not exist or cannot be run."""


class UbgiUnavailable(UbgiError):
    """The engine kept dying, hanging or failing its handshake, even after restarts."""


class UbgiConfigError(UbgiError, ValueError):
    """An option the engine does not declare, or refuses: fix the spec; never retried."""


class UbgiErrorReply(UbgiError):
    """The engine answered ``error <code> <detail>``."""

    def __init__(self, request: str, code: str, detail: str) -> None:
        self.request = request
        self.code = code
        self.detail = detail
        super().__init__(f"engine refused {request!r}: error {code} {detail}".rstrip())


class _Terminated(Exception):
    """The engine process ended or closed its output."""


@dataclass
class UbgiStats(EngineStats):
    """What happened on one UBGI engine's connection."""

    fallbacks: int = 0
    """Decisions answered by the fallback agent (unusable, unsupported or unavailable)."""


@dataclass
class EngineInfo:
    """What the handshake told: ``id`` lines, the protocol version, the declared keys."""

    ids: dict[str, str] = field(default_factory=dict)
    proto: str | None = None
    keys: dict[str, KeySpec] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.ids.get("name", "?")


# --------------------------------------------------------------------------- the client


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


class UbgiEngine(Agent):
    """A UBGI engine subprocess as an `Agent` (see the module docstring).

    ``command`` is the argv to run; ``options`` are engine keys to ``set`` after each handshake
    (values checked against the declared keys); ``seed`` is sent as ``engine.seed`` when the
    engine declares that key and ``options`` do not set it. ``timeout`` bounds each decision,
    ``start_timeout`` the handshake; ``retries`` restarts per request; ``fallback`` is an agent
    spec answering what the engine cannot (None: a safe answer); ``strict`` raises `UbgiError`
    instead of falling back; ``context`` is ``auto``, ``full`` or ``bare``.
    """

    def __init__(
        self,
        command: Sequence[str],
        *,
        options: Mapping[str, str] | None = None,
        seed: int | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        start_timeout: float = START_TIMEOUT,
        retries: int = RETRIES,
        fallback: str | None = "heuristic",
        strict: bool = False,
        context: str = "auto",
        name: str = "ubgi",
    ) -> None:
        if not command:
            raise FormatError("command", command, "the engine command is empty")
        if context not in ("auto", "full", "bare"):
            raise FormatError("context", context, "must be auto, full or bare")
        if not timeout > 0 or not start_timeout > 0:
            raise FormatError("timeout", (timeout, start_timeout), "must be positive seconds")
        if retries < 0:
            raise FormatError("retries", retries, "must be >= 0")
        self.command = list(command)
        self.options = dict(options or {})
        for key, value in self.options.items():
            if not _KEY_NAME.match(key) or "\n" in value or not value.strip():
                raise FormatError(f"engine option {key}", value, "a key name and a one-line value")
        self.seed = seed
        self.timeout = float(timeout)
        self.start_timeout = float(start_timeout)
        self.retries = retries
        self.fallback_spec = fallback
        self.strict = strict
        self.context_mode = context
        self.name = name
        self.stats = UbgiStats()
        self.info = EngineInfo()
        self._full_ids = context == "full"
        self._process: asyncio.subprocess.Process | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stderr_task: asyncio.Task[None] | None = None
        self._lock_obj: asyncio.Lock | None = None
        self._unsupported: set[str] = set()
        self._game_keys: dict[str, str] = {}
        self._last_initial = False
        self._fallback_agent: Agent | None = None
        self._finalizer: weakref.finalize | None = None  # type: ignore[type-arg]

    def __repr__(self) -> str:
        return f"UbgiEngine({shlex.join(self.command)!r}, options={self.options!r})"

    @property
    def pid(self) -> int | None:
        """The running engine's process id (its process group id too), or None."""
        process = self._process
        return process.pid if process is not None and process.returncode is None else None

    # ----------------------------------------------------------------- lifecycle

    async def start(self) -> None:
        """Start the engine and run the handshake now (requests do it on demand anyway)."""
        async with self._lock():
            if self.pid is None or self._loop is not asyncio.get_running_loop():
                await self._launch()

    async def close(self) -> None:
        """Send ``quit``, give the engine a moment to exit, then kill it."""
        process = self._process
        if process is not None and process.returncode is None and self._loop is asyncio.get_running_loop():
            with contextlib.suppress(Exception):
                assert process.stdin is not None
                process.stdin.write(b"quit\n")
                await process.stdin.drain()
                process.stdin.close()
                await asyncio.wait_for(process.wait(), 2.0)
        await self._stop()
        if self._fallback_agent is not None:
            await self._fallback_agent.close()

    async def _stop(self) -> None:
        """Kill the engine's process group, reap it and close its pipes (within this loop)."""
        process = self._process
        self._kill()
        if process is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(process.wait(), 5.0)
            transport = getattr(process, "_transport", None)  # no public way to close it
            if transport is not None:
                transport.close()

    def _kill(self) -> None:
        """SIGKILL the engine's process group and forget it (callable without a loop)."""
        process = self._process
        if process is not None:
            if process.returncode is None:
                _kill_group(process.pid)
            if self._stderr_task is not None:
                self._stderr_task.cancel()
        if self._finalizer is not None:
            self._finalizer.detach()
        self._process = None
        self._stderr_task = None
        self._finalizer = None

    def _lock(self) -> asyncio.Lock:
        loop = asyncio.get_running_loop()
        if self._lock_obj is None or self._loop is not loop:
            if self._loop is not None and self._loop is not loop:
                self._kill()  # a process bound to another (finished) event loop
            self._loop = loop
            self._lock_obj = asyncio.Lock()
        return self._lock_obj

    async def _launch(self) -> None:
        """Start the process, read the handshake, send the options, probe the id form."""
        await self._stop()
        self.stats.starts += 1
        if self.stats.starts > 1:
            self.stats.restarts += 1
        try:
            process = await asyncio.create_subprocess_exec(
                *self.command,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                start_new_session=True,
                limit=MAX_LINE,
            )
        except (FileNotFoundError, PermissionError) as exc:
            raise UbgiNotFound(f"cannot run UBGI engine {self.command[0]!r}: {exc}") from exc
        except OSError as exc:
            raise UbgiUnavailable(f"cannot run UBGI engine {self.command[0]!r}: {exc}") from exc
        self._process = process
        self._loop = asyncio.get_running_loop()
        self._finalizer = weakref.finalize(self, _kill_group, process.pid)
        self._stderr_task = asyncio.ensure_future(self._drain_stderr(process))
        self._game_keys = {}
        self._last_initial = False
        try:
            await asyncio.wait_for(self._handshake(), self.start_timeout)
        except asyncio.TimeoutError:
            await self._stop()
            raise UbgiUnavailable(f"no handshake within {self.start_timeout:g} s") from None
        except _Terminated as exc:
            await self._stop()
            raise UbgiUnavailable(f"engine died during the handshake: {exc}") from None
        except UbgiError:
            await self._stop()
            raise
        log.info("UBGI engine %s started (pid %d, start %d)", self.info.name, process.pid,
                 self.stats.starts)

    async def _drain_stderr(self, process: asyncio.subprocess.Process) -> None:
        assert process.stderr is not None
        with contextlib.suppress(Exception):
            while True:
                raw = await process.stderr.readline()
                if not raw:
                    return
                log.debug("ubgi[%d] stderr: %s", process.pid, raw.decode("utf-8", "replace").rstrip())

    async def _send(self, *lines: str) -> None:
        process = self._process
        if process is None or process.stdin is None or process.returncode is not None:
            raise _Terminated("the engine is not running")
        for line in lines:
            log.debug("ubgi << %s", line)
        try:
            process.stdin.write("".join(line + "\n" for line in lines).encode("utf-8"))
            await process.stdin.drain()
        except (BrokenPipeError, ConnectionResetError) as exc:
            raise _Terminated(f"cannot write: {exc}") from None

    async def _read(self) -> str:
        process = self._process
        if process is None or process.stdout is None:
            raise _Terminated("the engine is not running")
        try:
            raw = await process.stdout.readline()
        except (ValueError, asyncio.LimitOverrunError) as exc:
            raise _Terminated(f"unreadable output: {exc}") from None
        if not raw:
            await asyncio.sleep(0)
            code = process.returncode
            raise _Terminated("end of output" + (f" (exit status {code})" if code is not None else ""))
        line = raw.decode("utf-8", "replace").strip()
        log.debug("ubgi >> %s", line)
        return line

    async def _until_ready(self, request: str) -> list[str]:
        """Read up to ``readyok``; return the ``error`` lines seen on the way."""
        errors: list[str] = []
        while True:
            line = await self._read()
            if line == "readyok":
                return errors
            if line.startswith("error"):
                errors.append(line)

    async def _handshake(self) -> None:
        info = EngineInfo()
        await self._send("ubgi")
        while True:
            line = await self._read()
            if line in ("ubgiok", "readyok"):  # the 0.01 draft ends its handshake with readyok
                break
            words = line.split(maxsplit=2)
            if not words:
                continue
            if words[0] == "id" and len(words) == 3:
                info.ids[words[1]] = words[2]
            elif words[0] == "proto" and len(words) >= 2:
                info.proto = words[1]
            elif words[0] == "key":
                try:
                    spec = KeySpec.from_line(line)
                except FormatError as exc:
                    log.warning("UBGI engine declared an unreadable key: %s", exc)
                else:
                    info.keys[spec.name] = spec
            elif words[0] == "error":
                raise UbgiErrorReply("ubgi", *_error_parts(line))
        self.info = info
        sets = []
        options = dict(self.options)
        if self.seed is not None and "engine.seed" in info.keys and "engine.seed" not in options:
            options["engine.seed"] = str(self.seed)
        for key, value in options.items():
            declared = info.keys.get(key)
            if declared is not None:
                try:
                    value = declared.parse(value)
                except FormatError as exc:
                    raise UbgiConfigError(f"engine option {key}={value}: {exc.reason}") from None
            elif info.keys:
                raise UbgiConfigError(f"engine option {key}: {info.name} declares no such key; "
                                      "it has: " + ", ".join(sorted(info.keys)))
            sets.append(f"set {key} {value}")
        await self._send(*sets, "isready")
        errors = await self._until_ready("set")
        if errors:
            raise UbgiConfigError(f"the engine refused {'; '.join(sets)!r}: {errors[0]}")
        await self._send("newgame")
        if self.context_mode == "auto":
            probe = encode_gnubgid(Position.initial(), MatchState())
            await self._send(f"position gnubgid {probe}", "isready")
            self._full_ids = not await self._until_ready("position")
            log.debug("UBGI engine %s reads Match IDs: %s", info.name, self._full_ids)

    # ----------------------------------------------------------------- one request

    async def _request(self, setup: list[str], go: str, expect: str) -> str:
        """Send ``setup`` (checked with ``isready``), then ``go``; the payload after ``expect``.

        Restarts and resends on a crash or time-out; `UbgiErrorReply` at once on ``error``.
        """
        async with self._lock():
            self.stats.requests += 1
            failure = "no attempt"
            for attempt in range(self.retries + 1):
                try:
                    if self.pid is None:
                        await self._launch()
                    return await asyncio.wait_for(self._exchange(setup, go, expect), self.timeout)
                except asyncio.TimeoutError:
                    self.stats.timeouts += 1
                    failure = f"no answer within {self.timeout:g} s"
                except _Terminated as exc:
                    self.stats.crashes += 1
                    failure = f"engine terminated ({exc})"
                except UbgiErrorReply:
                    self.stats.error_replies += 1
                    raise
                except UbgiUnavailable as exc:
                    failure = str(exc)
                log.warning("UBGI engine %s (pid %s) failed on attempt %d of %d: %s; request %r",
                            self.info.name, self.pid, attempt + 1, self.retries + 1, failure, go)
                await self._stop()
            raise UbgiUnavailable(f"UBGI engine failed {self.retries + 1} times: {failure}")

    async def _exchange(self, setup: list[str], go: str, expect: str) -> str:
        await self._send(*setup, "isready")
        errors = await self._until_ready(setup[-1] if setup else "isready")
        if errors:
            raise UbgiErrorReply(" / ".join(setup), *_error_parts(errors[0]))
        started = time.monotonic()
        await self._send(go)
        while True:
            line = await self._read()
            if line.startswith("error"):
                code, detail = _error_parts(line)
                raise UbgiErrorReply(go, code, detail)
            word, _, payload = line.partition(" ")
            if word == expect:
                log.debug("ubgi: %s answered in %.3f s", go, time.monotonic() - started)
                return payload.strip()
            # info lines and anything else unknown are skipped, as the spec's controllers do

    def _setup(self, position: Position, context: Context, dice: Sequence[int] | None = None,
               doubled: bool = False, resigned: int = 0) -> list[str]:
        """The lines that describe a decision: game keys, ``newgame`` at a game's start, the
        position (full or bare id) and the dice. ``context`` is the side on roll's (the
        doubler's or resigner's when ``doubled`` / ``resigned``)."""
        lines = []
        rules = context.rules
        wanted = {"game.beavers": rules.beavers and rules.cube and context.is_money,
                  "game.jacoby": rules.jacoby and rules.cube and context.is_money}
        for key, flag in wanted.items():
            value = "true" if flag else "false"
            if key in self.info.keys and self._game_keys.get(key) != value:
                lines.append(f"set {key} {value}")
                self._game_keys[key] = value
        initial = position == Position.initial()
        if initial and not self._last_initial:
            lines.append("newgame")
        self._last_initial = initial
        ident = position.position_id()
        if self._full_ids:
            ident = encode_gnubgid(position, match_state_for(context, dice=dice, doubled=doubled,
                                                             resigned=resigned))
        lines.append(f"position gnubgid {ident}")
        if dice is not None:
            lines.append(f"dice {int(dice[0])} {int(dice[1])}")
        return lines

    # ----------------------------------------------------------------- fallbacks

    async def _fallback(self) -> Agent | None:
        if self.fallback_spec is None:
            return None
        if self._fallback_agent is None:
            from ..agents.spec import create_agent

            self._fallback_agent = create_agent(self.fallback_spec, seed=self.seed or 0)
        return self._fallback_agent

    def _give_up(self, what: str, reason: object) -> None:
        """Count and log a decision the engine could not make; raise it when strict."""
        self.stats.fallbacks += 1
        if self.strict:
            raise reason if isinstance(reason, UbgiError) else UbgiError(f"{what}: {reason}")
        log.warning("%s: %s decision answered by the fallback (%s): %s", self.name, what,
                    self.fallback_spec or "safe answer", reason)

    async def _ask(self, kind: str, setup: list[str], go: str, expect: str) -> str | None:
        """The engine's payload, or None when it cannot give one (then the caller falls back)."""
        if kind in self._unsupported:
            self._give_up(kind, "unsupported by the engine")
            return None
        try:
            return await self._request(setup, go, expect)
        except UbgiErrorReply as exc:
            if exc.request == go and exc.code in (ErrorCode.UNSUPPORTED.value,
                                                  ErrorCode.BAD_COMMAND.value):
                self._unsupported.add(kind)
                log.info("%s: the engine does not support %r", self.name, go)
            self._give_up(kind, exc)
        except UbgiUnavailable as exc:
            self._give_up(kind, exc)
        return None

    # ----------------------------------------------------------------- decisions

    async def choose_play(self, position: Position, dice: Sequence[int], context: Context) -> Play:
        plays = position.legal_plays(dice)
        if len(plays) <= 1:
            return plays[0] if plays else Play()
        payload = await self._ask("chequer", self._setup(position, context, dice), "go chequer",
                                  "bestmove")
        if payload is not None:
            try:
                return parse_ubgi_play(payload, position, dice)
            except (FormatError, IllegalAction) as exc:
                self.stats.unusable += 1
                self._give_up("chequer", f"unusable bestmove {payload!r}: {exc}")
        fallback = await self._fallback()
        return await fallback.choose_play(position, dice, context) if fallback else plays[0]

    async def should_double(self, position: Position, context: Context) -> bool:
        if not context.may_double():
            return False
        payload = await self._ask("cube", self._setup(position, context), "go cube", "bestcube")
        if payload in ("double", "nodouble"):
            return payload == "double"
        if payload is not None:
            self.stats.unusable += 1
            self._give_up("cube", f"unusable bestcube {payload!r}")
        fallback = await self._fallback()
        return await fallback.should_double(position, context) if fallback else False

    async def take_decision(self, position: Position, context: Context) -> TakeDecision:
        payload = await self._ask("take", self._setup(position, context.swapped(), doubled=True),
                                  "go take",
                                  "besttake")
        rules = context.rules
        if payload in ("take", "drop"):
            return TakeDecision(payload)
        if payload == "beaver":
            if context.is_money and rules.cube and rules.beavers:
                return TakeDecision.BEAVER
            self.stats.unusable += 1
            log.warning("%s: a beaver where the rules allow none, read as a take", self.name)
            return TakeDecision.TAKE
        if payload is not None:
            self.stats.unusable += 1
            self._give_up("take", f"unusable besttake {payload!r}")
        fallback = await self._fallback()
        return await fallback.take_decision(position, context) if fallback else TakeDecision.TAKE

    async def offer_resignation(self, position: Position, context: Context) -> int:
        if "resign" in self._unsupported:
            return 0  # not a fallback: never resigning is always a legal answer
        try:
            payload = await self._request(self._setup(position, context), "go resign", "bestresign")
        except UbgiErrorReply as exc:
            if exc.request == "go resign":
                self._unsupported.add("resign")
            return 0
        except UbgiUnavailable:
            return 0
        if payload in RESIGN_WORDS:
            return RESIGN_WORDS.index(payload)
        self.stats.unusable += 1
        return 0

    async def accept_resignation(self, position: Position, context: Context, value: int) -> bool:
        if value not in (1, 2, 3):
            return False
        payload = await self._ask("accept", self._setup(position, context.swapped(), resigned=value),
                                  f"go accept {RESIGN_WORDS[value]}", "bestaccept")
        if payload in ("accept", "reject"):
            return payload == "accept"
        if payload is not None:
            self.stats.unusable += 1
            self._give_up("accept", f"unusable bestaccept {payload!r}")
        fallback = await self._fallback()
        return await fallback.accept_resignation(position, context, value) if fallback else False


def _error_parts(line: str) -> tuple[str, str]:
    words = line.split(maxsplit=2)
    code = words[1] if len(words) > 1 else ""
    return code, words[2] if len(words) > 2 else ""


# --------------------------------------------------------------------------- agent spec


SUMMARY = ("any UBGI engine run as a subprocess (command=PATH ARGS, timeout=SEC, "
           "fallback=AGENT, engine.KEY=VALUE ...)")

_CLIENT_OPTIONS = {
    "command": "the engine's command line (split like a shell; required)",
    "timeout": f"seconds one decision may take (default {DEFAULT_TIMEOUT:g})",
    "start_timeout": f"seconds the handshake may take (default {START_TIMEOUT:g})",
    "retries": f"restarts per request after a crash or hang (default {RETRIES})",
    "fallback": "agent answering what the engine cannot (default heuristic; 'none': safe answers)",
    "strict": "on = raise instead of falling back",
    "context": "auto|full|bare: send PositionID:MatchID or the bare Position ID (default auto)",
    "seed": "sent as engine.seed when the engine declares it",
}


def create(spec: AgentSpec, seed: int) -> Agent:
    """Build a `UbgiEngine` from ``ubgi:command=/path/to/engine[,option=value...]``.

    Options whose name holds a dot (``engine.ply=2``, ``game.variant=backgammon``) are engine
    keys, sent with ``set``; the others are the client's (`_CLIENT_OPTIONS`).
    """
    from ..agents.spec import AgentSpec as _Spec
    from ..agents.spec import _Options

    engine_keys = {k: v for k, v in spec.options.items() if "." in k}
    client = _Spec(spec.name, {k: v for k, v in spec.options.items() if "." not in k})
    opts = _Options(client, _CLIENT_OPTIONS)
    command_text = client.options.get("command", "")
    try:
        command = shlex.split(command_text)
    except ValueError as exc:
        raise FormatError("agent 'ubgi' option command", command_text, str(exc)) from None
    if not command:
        raise FormatError("agent 'ubgi' option command", command_text,
                          "required, e.g. ubgi:command=/usr/local/bin/wildbg-ubgi")
    fallback = client.options.get("fallback", "heuristic")
    context = client.options.get("context", "auto")
    if context not in ("auto", "full", "bare"):
        raise FormatError("agent 'ubgi' option context", context, "must be auto, full or bare")
    return UbgiEngine(
        command,
        options=engine_keys,
        seed=opts.integer("seed", seed),
        timeout=opts.number("timeout", DEFAULT_TIMEOUT, 0.001, 86400.0),
        start_timeout=opts.number("start_timeout", START_TIMEOUT, 0.001, 3600.0),
        retries=opts.integer("retries", RETRIES, 0, 100),
        fallback=None if fallback.lower() in ("none", "") else fallback,
        strict=opts.flag("strict", False),
        context=context,
    )
