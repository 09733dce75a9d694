"""Any UBGI engine as an `Agent`: the controller side of the Universal Backgammon Interface.

The protocol's vocabulary (keys, move payloads, Match ID states, error codes) is in
`bgbot.engines.ubgi_protocol`, shared with the engine side (`bgbot.frontends.ubgi`). Here:

* `UbgiProcess`, the UBGI dialect of `bgbot.engines.process.EngineProcess`: the engine runs
  as a child process in its own process group, stdin and stdout its channel, stderr logged; a
  handshake with a time limit reads the engine's ids and keys; the spec's options
  (``engine.ply=2`` ...) are checked against the declared keys, sent with ``set`` and confirmed
  with ``isready``; a refused option is a configuration error (`EngineConfigError`), not
  retried; every request has a time limit, and a dead or hung engine is killed, started again
  (handshake and options again) and the request sent again, ``retries`` times;
* `UbgiEngine`, the `Agent`: every answer is checked against the rules core: a move must name
  a legal play of the position and dice, a cube answer one of the words the spec allows
  (``beaver`` only where the rules allow one). An unusable answer, or a decision the engine
  declares ``unsupported`` (many engines answer chequer play only), is logged, counted in
  `UbgiStats` and answered by the ``fallback`` agent (default: bgbot's heuristic), or raises
  `EngineError` with ``strict``.

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

import logging
import shlex
import time
from dataclasses import dataclass, field
from typing import Mapping, Sequence

from ..agents.base import Agent
from ..agents.spec import AgentSpec, Options, create_agent, register_agent
from ..core.context import Context
from ..core.errors import FormatError, IllegalAction
from ..core.position import Play, Position
from ..formats.gnubgid import MatchState, encode_gnubgid
from ..players.base import TakeDecision
from .process import (
    EngineAgent,
    EngineConfigError,
    EngineError,
    EngineErrorReply,
    EngineProcess,
    EngineStats,
    EngineUnavailable,
    Launch,
    LineChannel,
)
from .ubgi_protocol import (
    KEY_NAME,
    RESIGN_WORDS,
    ErrorCode,
    KeySpec,
    error_parts,
    match_state_for,
    parse_ubgi_play,
)

__all__ = [
    "EngineInfo",
    "UbgiEngine",
    "UbgiErrorReply",
    "UbgiProcess",
    "UbgiStats",
    "create",
]

log = logging.getLogger("bgbot.engines.ubgi")

DEFAULT_TIMEOUT = 30.0
"""Seconds one decision may take before the engine is deemed hung."""
START_TIMEOUT = 10.0
"""Seconds the handshake (``ubgi`` .. ``ubgiok``, options, ``isready``) may take."""
RETRIES = 2
"""How often a request is sent again to a restarted engine after a crash or a time-out."""
MAX_LINE = 1 << 20
"""Longest engine output line read (bytes)."""


class UbgiErrorReply(EngineErrorReply):
    """The engine answered ``error <code> <detail>``."""

    def __init__(self, request: str, code: str, detail: str) -> None:
        super().__init__(request, f"error {code} {detail}".rstrip())
        self.code = code
        self.detail = detail


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


# --------------------------------------------------------------------------- the process


async def _send(channel: LineChannel, *lines: str) -> None:
    for line in lines:
        log.debug("ubgi << %s", line)
    await channel.write("".join(line + "\n" for line in lines).encode("utf-8"))


async def _read(channel: LineChannel) -> str:
    line = (await channel.readline()).decode("utf-8", "replace").strip()
    log.debug("ubgi >> %s", line)
    return line


async def _until_ready(channel: LineChannel) -> list[str]:
    """Read up to ``readyok``; return the ``error`` lines seen on the way."""
    errors: list[str] = []
    while True:
        line = await _read(channel)
        if line == "readyok":
            return errors
        if line.startswith("error"):
            errors.append(line)


class UbgiProcess(EngineProcess):
    """A UBGI engine process (the UBGI dialect): handshake, options, one request at a time.

    It also keeps what the running engine has been told (game keys, whether a game is new,
    whether it reads Match IDs), so `describe` sends only what changes; a restart forgets it.
    """

    label = "UBGI engine"
    log = log
    line_limit = MAX_LINE

    def __init__(self, command: Sequence[str], *, options: Mapping[str, str], seed: int | None,
                 context: str, start_timeout: float, retries: int, stats: EngineStats) -> None:
        super().__init__(start_timeout=start_timeout, retries=retries, stats=stats)
        self.command = list(command)
        self.options = dict(options)
        self.seed = seed
        self.context_mode = context
        self.info = EngineInfo()
        self.full_ids = context == "full"
        self._game_keys: dict[str, str] = {}
        self._last_initial = False

    @property
    def title(self) -> str:
        return f"UBGI engine {self.info.name}"

    def _launch_spec(self) -> Launch:
        return Launch(self.command)

    async def _handshake(self, channel: LineChannel) -> None:
        """``ubgi`` .. ``ubgiok``, the options (checked against the declared keys), ``newgame``
        and, with ``context=auto``, the probe for Match IDs."""
        self._game_keys = {}
        self._last_initial = False
        info = EngineInfo()
        await _send(channel, "ubgi")
        while True:
            line = await _read(channel)
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
                raise UbgiErrorReply("ubgi", *error_parts(line))
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
                    raise EngineConfigError(f"engine option {key}={value}: {exc.reason}") from None
            elif info.keys:
                raise EngineConfigError(f"engine option {key}: {info.name} declares no such key; "
                                        "it has: " + ", ".join(sorted(info.keys)))
            sets.append(f"set {key} {value}")
        await _send(channel, *sets, "isready")
        errors = await _until_ready(channel)
        if errors:
            raise EngineConfigError(f"the engine refused {'; '.join(sets)!r}: {errors[0]}")
        await _send(channel, "newgame")
        if self.context_mode == "auto":
            probe = encode_gnubgid(Position.initial(), MatchState())
            await _send(channel, f"position gnubgid {probe}", "isready")
            self.full_ids = not await _until_ready(channel)
            log.debug("UBGI engine %s reads Match IDs: %s", info.name, self.full_ids)

    async def _goodbye(self, channel: LineChannel) -> None:
        """``quit``, and the end of the engine's input."""
        await _send(channel, "quit")
        channel.close()

    async def ask(self, setup: list[str], go: str, expect: str, timeout: float) -> str:
        """Send ``setup`` (checked with ``isready``), then ``go``; the payload after ``expect``.

        Restarts and resends on a crash or time-out; `UbgiErrorReply` at once on ``error``.
        """

        async def exchange(channel: LineChannel) -> str:
            await _send(channel, *setup, "isready")
            errors = await _until_ready(channel)
            if errors:
                raise UbgiErrorReply(" / ".join(setup), *error_parts(errors[0]))
            started = time.monotonic()
            await _send(channel, go)
            while True:
                line = await _read(channel)
                if line.startswith("error"):
                    raise UbgiErrorReply(go, *error_parts(line))
                word, _, payload = line.partition(" ")
                if word == expect:
                    log.debug("ubgi: %s answered in %.3f s", go, time.monotonic() - started)
                    return payload.strip()
                # info lines and anything else unknown are skipped, as the spec's controllers do

        return await self.request(exchange, timeout, go)

    def describe(self, position: Position, context: Context, dice: Sequence[int] | None = None,
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
        if self.full_ids:
            ident = encode_gnubgid(position, match_state_for(context, dice=dice, doubled=doubled,
                                                             resigned=resigned))
        lines.append(f"position gnubgid {ident}")
        if dice is not None:
            lines.append(f"dice {int(dice[0])} {int(dice[1])}")
        return lines


# --------------------------------------------------------------------------- the agent


class UbgiEngine(EngineAgent):
    """A UBGI engine subprocess as an `Agent` (see the module docstring).

    ``command`` is the argv to run; ``options`` are engine keys to ``set`` after each handshake
    (values checked against the declared keys); ``seed`` is sent as ``engine.seed`` when the
    engine declares that key and ``options`` do not set it. ``timeout`` bounds each decision,
    ``start_timeout`` the handshake; ``retries`` restarts per request; ``fallback`` is an agent
    spec answering what the engine cannot (None: a safe answer); ``strict`` raises `EngineError`
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
        self.options = dict(options or {})
        for key, value in self.options.items():
            if not KEY_NAME.match(key) or "\n" in value or not value.strip():
                raise FormatError(f"engine option {key}", value, "a key name and a one-line value")
        self.seed = seed
        self.timeout = float(timeout)
        self.fallback_spec = fallback
        self.strict = strict
        self.name = name
        self.stats: UbgiStats = UbgiStats()
        self.process: UbgiProcess = UbgiProcess(
            command, options=self.options, seed=seed, context=context,
            start_timeout=float(start_timeout), retries=retries, stats=self.stats)
        self._unsupported: set[str] = set()
        self._fallback_agent: Agent | None = None

    def __repr__(self) -> str:
        return f"UbgiEngine({shlex.join(self.process.command)!r}, options={self.options!r})"

    @property
    def info(self) -> EngineInfo:
        """What the engine's last handshake told."""
        return self.process.info

    async def close(self) -> None:
        """Send ``quit``, give the engine a moment to exit, then kill it; close the fallback."""
        await self.process.close()
        if self._fallback_agent is not None:
            await self._fallback_agent.close()

    # ----------------------------------------------------------------- fallbacks

    async def _fallback(self) -> Agent | None:
        if self.fallback_spec is None:
            return None
        if self._fallback_agent is None:
            self._fallback_agent = create_agent(self.fallback_spec, seed=self.seed or 0)
        return self._fallback_agent

    def _give_up(self, what: str, reason: object) -> None:
        """Count and log a decision the engine could not make; raise it when strict."""
        self.stats.fallbacks += 1
        if self.strict:
            raise reason if isinstance(reason, EngineError) else EngineError(f"{what}: {reason}")
        log.warning("%s: %s decision answered by the fallback (%s): %s", self.name, what,
                    self.fallback_spec or "safe answer", reason)

    async def _ask(self, kind: str, setup: list[str], go: str, expect: str) -> str | None:
        """The engine's payload, or None when it cannot give one (then the caller falls back)."""
        if kind in self._unsupported:
            self._give_up(kind, "unsupported by the engine")
            return None
        try:
            return await self.process.ask(setup, go, expect, self.timeout)
        except UbgiErrorReply as exc:
            if exc.request == go and exc.code in (ErrorCode.UNSUPPORTED.value,
                                                  ErrorCode.BAD_COMMAND.value):
                self._unsupported.add(kind)
                log.info("%s: the engine does not support %r", self.name, go)
            self._give_up(kind, exc)
        except EngineUnavailable as exc:
            self._give_up(kind, exc)
        return None

    # ----------------------------------------------------------------- decisions

    async def choose_play(self, position: Position, dice: Sequence[int], context: Context) -> Play:
        plays = position.legal_plays(dice)
        if len(plays) <= 1:
            return plays[0] if plays else Play()
        payload = await self._ask("chequer", self.process.describe(position, context, dice), "go chequer",
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
        payload = await self._ask("cube", self.process.describe(position, context), "go cube", "bestcube")
        if payload in ("double", "nodouble"):
            return payload == "double"
        if payload is not None:
            self.stats.unusable += 1
            self._give_up("cube", f"unusable bestcube {payload!r}")
        fallback = await self._fallback()
        return await fallback.should_double(position, context) if fallback else False

    async def take_decision(self, position: Position, context: Context) -> TakeDecision:
        payload = await self._ask("take", self.process.describe(position, context.swapped(), doubled=True),
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
            payload = await self.process.ask(self.process.describe(position, context), "go resign",
                                             "bestresign", self.timeout)
        except UbgiErrorReply as exc:
            if exc.request == "go resign":
                self._unsupported.add("resign")
            return 0
        except EngineUnavailable:
            return 0
        if payload in RESIGN_WORDS:
            return RESIGN_WORDS.index(payload)
        self.stats.unusable += 1
        return 0

    async def accept_resignation(self, position: Position, context: Context, value: int) -> bool:
        if value not in (1, 2, 3):
            return False
        payload = await self._ask("accept", self.process.describe(position, context.swapped(), resigned=value),
                                  f"go accept {RESIGN_WORDS[value]}", "bestaccept")
        if payload in ("accept", "reject"):
            return payload == "accept"
        if payload is not None:
            self.stats.unusable += 1
            self._give_up("accept", f"unusable bestaccept {payload!r}")
        fallback = await self._fallback()
        return await fallback.accept_resignation(position, context, value) if fallback else False


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
    engine_keys = {k: v for k, v in spec.options.items() if "." in k}
    client = AgentSpec(spec.name, {k: v for k, v in spec.options.items() if "." not in k})
    opts = Options(client, _CLIENT_OPTIONS)
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


register_agent("ubgi", create, SUMMARY, host_options=("command",), agent_options=("fallback",))
