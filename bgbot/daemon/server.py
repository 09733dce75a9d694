"""`bgbot serve`: the daemon (DESIGN §5, protocol/SPEC.md).

One asyncio loop does only I/O and bookkeeping: a ZeroMQ ROUTER for requests (clients use
DEALER sockets), a PUB socket for events (topic ``match.<id>``), the gnubg external-player
frontends, signals and the systemd notifications. CPU-heavy work runs in worker processes
(`bgbot.daemon.workers`): hosted matches in match workers, decisions in decision workers, and
the trials of rollouts in a process pool of their own (`bgbot.daemon.rollouts`), so ``status``
is answered within milliseconds however many matches and rollouts play.

Each request type has one handler, a method below registered with
`bgbot.daemon.requests.handles` (quick ones answer on the loop; the others run as tasks or hand
their work to the workers); importing this module checks them against the protocol schema.

Nothing a client sends can stop the daemon: every message that cannot be accepted gets an
``error`` reply (a frame above the size limit makes ZeroMQ drop that connection instead), and
every handler failure becomes an ``internal`` error reply and a log line.

Signals: SIGTERM / SIGINT stop taking work, park the hosted matches (journalled; resumed at
the next start), close the frontends and exit 0 within ``daemon.stop_timeout`` (a second one
exits at once). SIGHUP reloads the configuration, as the ``reload`` request does.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import fcntl
import inspect
import logging
import math
import os
import re
import secrets
import signal
import socket
import stat
import sys
import time
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any, Awaitable

import zmq

from .. import __version__
from ..agents.base import Agent
from ..core.errors import BgbotError
from ..deciders import create_agent, known_agents
from ..plugins import load_plugins
from ..referee.matlog import written_parts
from ..util import writable_directory
from .config import (
    Config,
    ConfigError,
    Secret,
    load_config,
    load_control_key,
)
from ..agents.spec import define_named_agents
from .agents import check_request_agent
from .decisions import DECISION_TYPES, AgentCache, answer, answer_now, is_quick
from ..frontends.kinds import server_kinds
from .frontends import (
    GNUBG_EXTERNAL,
    Frontend,
    Frontends,
    frontend_from_options,
    frontend_kinds,
    plain_value,
)
from .logs import event_level, setup_logging
from .matches import MatchManager
from .notify import Notifier, watchdog_interval
from .protocol import (
    EVENT_TYPES,
    PROTOCOL_VERSION,
    REQUEST_TYPES,
    ErrorCode,
    Message,
    ProtocolError,
    Signer,
    check_request,
    error_reply,
    frontend_topic,
    new_message,
    peek_id,
    reply_type,
    split_identities,
)
from .requests import check_handlers, handlers, handles
from .rollouts import Rollouts
from .history import read_history
from .store import RESUMABLE, MatchSpec, MatchState, Store, StoreError
from ..agents.players import limit_player_caches
from ..util import die_with_parent
from .wire import rules_from_wire, rules_to_wire
from .workers import DecisionPool, WorkerSettings, frontend_agent

log = logging.getLogger(__name__)
wire_log = logging.getLogger("bgbot.wire")

_MORE = int(zmq.SNDMORE) | int(zmq.NOBLOCK)
_LAST = int(zmq.NOBLOCK)
READ_BATCH = 32
"""Requests read per event-loop turn."""
MAX_IN_FLIGHT = 10_000
"""Requests being worked on at once before new ones get ``busy``."""
REPLAY_GUARD_KEY = "replay_guard"
"""The store's note of the latest message time this daemon may have accepted."""
REPLAY_GUARD_AHEAD = 1.0
"""Seconds the replay guard is recorded ahead of the newest message time."""


class DaemonStartError(BgbotError):
    """The daemon cannot start (a socket in use, another daemon on the same state, ...)."""


# ============================================================================ the daemon


def _worker_settings(config: Config) -> WorkerSettings:
    level = logging.getLevelName(config.logging.level.upper())
    return WorkerSettings(
        state_db=str(config.state_dir / "state.db"),
        journal_sync=config.store.journal_sync,
        log_level=level if isinstance(level, int) else logging.INFO,
        log_format=config.logging.format,
        default_agent=config.agents.default,
        max_candidates=config.limits.max_candidates,
        player_cache=config.limits.player_cache,
        mat_errors=config.daemon.mat_errors,
        named_agents=tuple((entry.name, entry.spec) for entry in config.agents.named),
    )


def _event_name(text: str) -> str:
    """An event name the schema accepts (lower case, digits, '_'; at most 64)."""
    name = re.sub(r"[^a-z0-9_]+", "_", text.lower()).strip("_")[:64]
    return name if name[:1].isalpha() else f"e_{name}"[:64]


def _flatten(obj: Any, prefix: str = "") -> dict[str, Any]:
    """Dotted key -> value of every configuration value (a server kind's accounts as
    ``KIND.accounts``)."""
    import dataclasses

    out: dict[str, Any] = {}
    for item in dataclasses.fields(obj):
        if item.metadata.get("internal"):
            continue
        value = getattr(obj, item.name)
        key = f"{prefix}{item.name}"
        if dataclasses.is_dataclass(value):
            out.update(_flatten(value, key + "."))
        else:
            out[key] = value
    if isinstance(obj, Config):
        for kind in server_kinds():
            out[f"{kind}.accounts"] = obj.accounts(kind)
    return out


def _frontend_keys() -> frozenset[str]:
    """The configuration keys that name frontends: a reload restarts what they change."""
    return frozenset({"gnubg_player", *(f"{kind}.accounts" for kind in server_kinds())})


LIVE_KEYS = frozenset({
    "logging.level", "logging.format", "agents.default", "limits.max_matches",
    "limits.decision_timeout", "limits.max_candidates", "limits.max_rollouts",
    "limits.max_rollout_trials", "control.key_file",
}) | _frontend_keys()
"""Configuration keys a reload applies at once; the others need a restart."""


@dataclass
class _Counters:
    requests: int = 0
    errors: int = 0
    in_flight: int = 0
    max_lag: float = 0.0
    tasks: set[asyncio.Task[None]] = field(default_factory=set)


class Daemon:
    """The daemon: `await Daemon(config).run()` serves until SIGTERM or a shutdown request."""

    def __init__(self, config: Config, *, config_file: str | None = None) -> None:
        self.config = config
        self.config_file = config_file
        self.state = "starting"
        self.started = time.time()
        self.notifier = Notifier()
        self.counters = _Counters()
        self.frontends = Frontends(config.logs_dir, config.state_dir, self._frontend_event,
                                   make_agent=self._frontend_agent)
        self._stop = asyncio.Event()
        self._stop_reason = ""
        self._signals = 0
        self._lock_fd: int | None = None
        self._ipc_paths: list[Path] = []
        self._ctx: zmq.Context[Any] | None = None
        self._auth: Any = None
        self._pump_scheduled = False
        self.router: zmq.Socket[Any] | None = None
        self.pub: zmq.Socket[Any] | None = None
        self.store: Store | None = None
        self.matches: MatchManager | None = None
        self.decisions: DecisionPool | None = None
        self.rollouts: Rollouts | None = None
        self._inline_agents: AgentCache | None = None
        self._quick_agents: AgentCache | None = None
        """In-process 0-ply players answering on the loop (``limits.quick_decisions``)."""
        self.signer = Signer(None)
        self._key: Secret = Secret(b"")

    # ----------------------------------------------------------------- lifecycle

    async def run(self) -> int:
        """Serve until stopped; returns the exit status (0 after a clean stop)."""
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):  # a stop during start-up waits for it
            loop.add_signal_handler(sig, self._on_stop_signal, sig)
        try:
            await self._start()
        except BaseException:
            await self._close()
            raise
        loop.add_signal_handler(signal.SIGHUP, self._on_hup)
        self._start_reading()
        watchdog = loop.create_task(self._watchdog(), name="watchdog")
        lag = loop.create_task(self._measure_lag(), name="loop-lag")
        self.state = "stopping" if self._stop.is_set() else "running"
        self.notifier.ready(self._status_line())
        log.info("serving", extra={"fields": {
            "requests": self.config.request_endpoint, "events": self.config.events_endpoint,
            "pid": os.getpid(), "signed": self.signer.signed}})
        await self._stop.wait()
        log.info("stopping: %s", self._stop_reason)
        self.state = "stopping"
        self.notifier.stopping()
        self.notifier.status(f"stopping: {self._stop_reason}")
        try:
            await asyncio.wait_for(self._shutdown(), self.config.daemon.stop_timeout + 5)
        except asyncio.TimeoutError:
            log.error("shutdown took longer than %.0f s", self.config.daemon.stop_timeout)
        self._stop_reading()
        watchdog.cancel()
        lag.cancel()
        await asyncio.gather(watchdog, lag, return_exceptions=True)
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            loop.remove_signal_handler(sig)
        await self._close()
        log.info("stopped")
        return 0

    def request_stop(self, reason: str) -> None:
        """Stop: from now on no new work is taken (``shutting_down``), even from requests
        read in the same turn of the loop as the one that asked for the stop."""
        if not self._stop.is_set():
            self._stop_reason = reason
            self._stop.set()
        if self.state != "starting":
            self.state = "stopping"

    def _on_stop_signal(self, sig: int) -> None:
        self._signals += 1
        name = signal.Signals(sig).name
        if self._signals > 1:
            log.warning("second %s: stopping at once", name)
            for worker in (self.matches.workers if self.matches else []):
                worker.kill()
            os._exit(1)
        self.request_stop(name)

    def _frontend_agent(self, spec: str, seed: int) -> Agent:
        """The frontends' agents: in-process players decide in the decision workers (but for
        0-ply ones with ``limits.quick_decisions``), so no frontend stalls the loop."""
        return frontend_agent(spec, seed, self.decisions, quick=self._quick_agents is not None,
                              timeout=lambda: self.config.limits.decision_timeout)

    def _on_hup(self) -> None:
        task = asyncio.get_running_loop().create_task(self._reload_logged())
        self.counters.tasks.add(task)
        task.add_done_callback(self.counters.tasks.discard)

    async def _reload_logged(self) -> None:
        try:
            result = await self.reload()
            log.info("configuration reloaded", extra={"fields": {
                "changed": ",".join(result["changed"]) or "-",
                "restart_needed": ",".join(result["restart_needed"]) or "-"}})
        except ProtocolError as exc:
            log.error("reload refused: %s", exc.message)

    async def _start(self) -> None:
        config = self.config
        for directory in (config.state_dir, config.runtime_dir):
            directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        try:
            writable_directory(config.logs_dir, "logs_dir")
        except BgbotError as exc:  # the journal is the record: matches play on without files
            log.error("%s; hosted matches and frontends play on without their .mat files", exc)
        self._lock()
        define_named_agents({entry.name: entry.spec for entry in config.agents.named})
        self._load_key(create=True)
        try:
            self.store = Store(config.state_dir / "state.db", journal_sync=config.store.journal_sync)
        except StoreError as exc:
            raise DaemonStartError(str(exc)) from None
        self._guard_replays()
        self._bind()
        await _warm_caches()
        settings = _worker_settings(config)
        self.matches = MatchManager(self.store, settings, workers=config.match_workers,
                                    logs_dir=config.logs_dir, publish=self._publish,
                                    max_matches=config.limits.max_matches)
        if config.limits.inline_decisions:
            limit_player_caches(config.limits.player_cache)
            self._inline_agents = AgentCache()
        else:
            self.decisions = DecisionPool(config.decision_workers, settings)
            if config.limits.quick_decisions:
                limit_player_caches(config.limits.player_cache)
                self._quick_agents = AgentCache()
        self.rollouts = Rollouts(settings, config.rollout_workers, self._publish)
        await self.matches.start()
        self.frontends.configure(config)
        await self.frontends.autostart()

    def _lock(self) -> None:
        """One daemon per state directory: two would resume the same matches."""
        path = self.config.state_dir / "daemon.lock"
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            other = os.read(fd, 32).decode(errors="replace").strip() or "?"
            os.close(fd)
            raise DaemonStartError(f"another bgbot daemon (pid {other}) uses {self.config.state_dir}"
                              ) from None
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        self._lock_fd = fd

    def _guard_replays(self) -> None:
        """Keep SPEC §5's promise across restarts: the ids seen are only in memory, so this run
        refuses (as ``stale``) every message not later than the time the previous runs had
        reserved (`_reserve_replay`) or than its own start."""
        store = self.store
        assert store is not None
        recorded = store.get_meta(REPLAY_GUARD_KEY)
        try:
            floor = float(recorded) if recorded is not None else -math.inf
        except ValueError:
            log.warning("unreadable replay guard %r in the store; refusing messages made "
                        "before this start", recorded)
            floor = -math.inf
        self.signer.refuse_until(max(floor if math.isfinite(floor) else -math.inf,
                                     self.started))
        self.signer.reserve = self._reserve_replay

    def _reserve_replay(self, stamp: float) -> float:
        """Before a message with time ``stamp`` is accepted: record, synced to disk, a time
        at least ``stamp`` (a little ahead, so that this happens about once a second under
        load), below which the next run refuses everything."""
        store = self.store
        assert store is not None
        until = max(stamp, time.time()) + REPLAY_GUARD_AHEAD
        try:
            store.set_meta(REPLAY_GUARD_KEY, repr(until))
        except StoreError as exc:
            raise ProtocolError(ErrorCode.BUSY, f"the daemon cannot record its replay guard "
                                f"({exc}); try again later") from None
        return until

    def _load_key(self, *, create: bool) -> None:
        if self.config.control.allow_unsigned:
            self._key = Secret(b"")
            log.warning("control.allow_unsigned: requests are neither signed nor checked")
        else:
            key, path, origin = load_control_key(self.config, create=create)
            if not key.reveal():
                raise ConfigError("control.key_file", f"the key file {path} is empty (set "
                                  "control.allow_unsigned to run without a key)",
                                  file=self.config.source)
            self._key = key
            log.info("control key loaded", extra={"fields": {"file": str(path), "from": origin}})
        # the same Signer keeps its replay history across reloads
        self.signer.key = self._key.reveal()
        self.signer.replay_window = self.config.control.replay_window

    # ----------------------------------------------------------------- sockets

    def _bind(self) -> None:
        config = self.config
        # plain sockets: the ROUTER is read from the loop through its ZMQ_FD (`_pump`), and
        # replies and events are sent without blocking from plain callbacks
        self._ctx = zmq.Context()
        router: zmq.Socket[Any] = self._ctx.socket(zmq.ROUTER)
        pub: zmq.Socket[Any] = self._ctx.socket(zmq.PUB)
        for sock in (router, pub):
            sock.setsockopt(zmq.LINGER, 1000)
            sock.setsockopt(zmq.MAXMSGSIZE, config.control.max_message_bytes)
        router.setsockopt(zmq.RCVHWM, 10_000)
        router.setsockopt(zmq.SNDHWM, 10_000)
        pub.setsockopt(zmq.SNDHWM, 100_000)
        self.router, self.pub = router, pub
        endpoints = [(router, config.request_endpoint), (pub, config.events_endpoint)]
        if any(e.startswith("tcp://") for _, e in endpoints):
            self._setup_curve([s for s, e in endpoints if e.startswith("tcp://")])
        for sock, endpoint in endpoints:
            self._bind_one(sock, endpoint)

    def _setup_curve(self, sockets: list[zmq.Socket[Any]]) -> None:
        import zmq.auth

        curve = self.config.control.curve
        if not zmq.has("curve"):
            raise DaemonStartError("this libzmq has no CURVE support; tcp:// endpoints need it")
        try:
            public, secret = zmq.auth.load_certificate(curve.secret_key_file)
        except (OSError, ValueError) as exc:
            raise ConfigError("control.curve.secret_key_file", f"cannot load "
                              f"{curve.secret_key_file}: {exc}", file=self.config.source) \
                from None
        if secret is None:
            raise ConfigError("control.curve.secret_key_file", f"{curve.secret_key_file} holds "
                              "no secret key (use the .key_secret file)", file=self.config.source)
        if curve.authorized_keys_dir:
            from zmq.auth.thread import ThreadAuthenticator

            assert self._ctx is not None
            self._auth = ThreadAuthenticator(self._ctx)
            self._auth.start()
            self._auth.configure_curve(domain="*", location=curve.authorized_keys_dir)
        for sock in sockets:
            sock.curve_secretkey = secret
            sock.curve_publickey = public
            sock.curve_server = True
        log.info("CURVE on for tcp:// endpoints", extra={"fields": {
            "public_key": public.decode(), "clients": curve.authorized_keys_dir or "any"}})

    def _bind_one(self, sock: zmq.Socket[Any], endpoint: str) -> None:
        if not endpoint.startswith("ipc://"):
            try:
                sock.bind(endpoint)
            except zmq.ZMQError as exc:
                raise DaemonStartError(f"cannot bind {endpoint}: {exc}") from None
            return
        path = Path(endpoint[len("ipc://"):])
        if path.exists() or path.is_symlink():
            if _socket_alive(path):
                raise DaemonStartError(f"{path} is in use by another process (another daemon?)")
            path.unlink()
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        old = os.umask(0o177)
        try:
            sock.bind(endpoint)
        except zmq.ZMQError as exc:
            raise DaemonStartError(f"cannot bind {endpoint}: {exc}") from None
        finally:
            os.umask(old)
        os.chmod(path, 0o600)
        self._ipc_paths.append(path)

    def _start_reading(self) -> None:
        router = self.router
        assert router is not None
        loop = asyncio.get_running_loop()
        loop.add_reader(int(router.getsockopt(zmq.FD)), self._pump)
        self._schedule_pump()

    def _stop_reading(self) -> None:
        router = self.router
        if router is not None and not router.closed:
            with contextlib.suppress(ValueError, OSError):
                asyncio.get_running_loop().remove_reader(int(router.getsockopt(zmq.FD)))

    def _schedule_pump(self) -> None:
        if not self._pump_scheduled:
            self._pump_scheduled = True
            asyncio.get_running_loop().call_soon(self._pump)

    def _pump(self) -> None:
        """Read what the ROUTER has (ZMQ_FD is edge-triggered: read until EAGAIN, a batch per
        loop turn so that events and timers get their turn in between)."""
        self._pump_scheduled = False
        router = self.router
        if router is None or router.closed:
            return
        for _ in range(READ_BATCH):
            try:
                frames = router.recv_multipart(zmq.NOBLOCK)
            except zmq.Again:
                return
            except zmq.ZMQError as exc:
                log.warning("receive failed: %s", exc)
                return
            try:
                self._on_frames(frames)
            except Exception:
                log.exception("request handling failed")
        self._schedule_pump()

    def _on_frames(self, frames: list[bytes]) -> None:
        ids, envelope = split_identities(frames)
        counters = self.counters
        counters.requests += 1
        try:
            size = sum(len(f) for f in envelope)
            limit = self.config.control.max_message_bytes
            if size > limit:
                raise ProtocolError(ErrorCode.TOO_LARGE, f"message of {size} bytes; the limit "
                                    f"is {limit}", {"size": size, "limit": limit},
                                    msg_id=peek_id(envelope[2]) if len(envelope) > 2 else None)
            msg = self.signer.deserialize(envelope)
            check_request(msg)
        except ProtocolError as exc:
            counters.errors += 1
            log.warning("refused a message: %s", exc, extra={"fields": {
                "peer": ids[0].hex() if ids else "-", "code": exc.code.value}})
            if ids:
                self._send(ids, exc.reply())
            return
        except Exception:  # a bug in the checks: still exactly one reply (SPEC §2)
            counters.errors += 1
            log.exception("checking a message failed")
            if ids:
                parent = peek_id(envelope[2]) if len(envelope) > 2 else None
                self._send(ids, ProtocolError(ErrorCode.INTERNAL, "the daemon could not check "
                                              "this message; its log has the details",
                                              msg_id=parent).reply())
            return
        if wire_log.isEnabledFor(logging.DEBUG):
            wire_log.debug("<< %s", msg.msg_type, extra={"fields": {
                "id": msg.msg_id, "peer": ids[0].hex(), "session": msg.session or "-",
                "bytes": size}})
        if counters.in_flight >= MAX_IN_FLIGHT:
            self._send(ids, error_reply(msg, ErrorCode.BUSY, "too many requests in flight; "
                                        "try again later", {"limit": MAX_IN_FLIGHT}))
            return
        handler = handlers().get(msg.msg_type)
        if handler is None:
            self._send(ids, error_reply(msg, ErrorCode.UNSUPPORTED,
                                        f"{msg.msg_type} is not served by this daemon"))
            return
        if self.state == "stopping" and handler.takes_work:
            self._send(ids, error_reply(msg, ErrorCode.SHUTTING_DOWN,
                                        "the daemon is stopping and takes no new work"))
            return
        try:
            result = handler.function(self, msg)
        except Exception as exc:
            self._send(ids, self._failure(msg, exc))
            return
        if not inspect.isawaitable(result):
            self._send(ids, new_message(reply_type(msg.msg_type), result, msg))
            return
        counters.in_flight += 1
        if isinstance(result, asyncio.Future):
            # a decision's future from the workers: the reply goes out from its callback
            result.add_done_callback(partial(self._finish, ids, msg))
            return
        task = asyncio.get_running_loop().create_task(self._handle(ids, msg, result))
        counters.tasks.add(task)
        task.add_done_callback(counters.tasks.discard)

    def _failure(self, msg: Message, exc: BaseException) -> Message:
        """The error reply for a handler's failure (a ProtocolError says what; anything else
        is a bug: logged, and answered ``internal``)."""
        if isinstance(exc, ProtocolError):
            return error_reply(msg, exc.code, exc.message, exc.details)
        if isinstance(exc, asyncio.CancelledError):
            return error_reply(msg, ErrorCode.SHUTTING_DOWN, "the daemon is stopping")
        log.error("%s failed", msg.msg_type, exc_info=(type(exc), exc, exc.__traceback__))
        return error_reply(msg, ErrorCode.INTERNAL, f"{type(exc).__name__}: see the daemon's log")

    def _finish(self, ids: list[bytes], msg: Message, result: asyncio.Future[Any]) -> None:
        self.counters.in_flight -= 1
        error = None if result.cancelled() else result.exception()
        if result.cancelled():
            self._send(ids, self._failure(msg, asyncio.CancelledError()))
        elif error is not None:
            self._send(ids, self._failure(msg, error))
        else:
            self._send(ids, new_message(reply_type(msg.msg_type), result.result(), msg))

    async def _handle(self, ids: list[bytes], msg: Message, work: Awaitable[Any]) -> None:
        try:
            reply = new_message(reply_type(msg.msg_type), await work, msg)
        except (Exception, asyncio.CancelledError) as exc:
            reply = self._failure(msg, exc)
        finally:
            self.counters.in_flight -= 1
        self._send(ids, reply)

    def _decide_quickly(self, msg: Message) -> dict[str, Any] | None:
        """The answer of an in-process 0-ply player, right here (`is_quick`); None leaves it
        to the pool (other agents, or this player's first request: it is created then, on
        the loop, and answers on the loop from the next request on)."""
        agents = self._quick_agents
        assert agents is not None
        config = self.config
        spec = msg.content.get("agent") or config.agents.default
        if not isinstance(spec, str) or not is_quick(spec):
            return None
        content = answer_now(msg.msg_type, msg.content, agents,
                             default_agent=config.agents.default,
                             max_candidates=config.limits.max_candidates)
        if content is None:
            task = asyncio.get_running_loop().create_task(self._create_quick(agents, spec))
            self.counters.tasks.add(task)
            task.add_done_callback(self.counters.tasks.discard)
        return content

    async def _create_quick(self, agents: AgentCache, spec: str) -> None:
        try:
            await agents.get(spec)
        except Exception as exc:  # a bad spec: the pool's answer names the fault
            log.debug("no quick agent for %s: %s", spec, exc)

    def _send(self, ids: list[bytes], msg: Message) -> None:
        router = self.router
        if router is None or router.closed:
            return
        try:
            frames = self.signer.serialize(msg)
        except ProtocolError as exc:  # a reply above the size limit: too_large instead
            msg = exc.reply()
            frames = self.signer.serialize(msg)
        if wire_log.isEnabledFor(logging.DEBUG):
            wire_log.debug(">> %s", msg.msg_type, extra={"fields": {
                "id": msg.msg_id, "parent": msg.parent_id or "-", "peer": ids[0].hex(),
                "bytes": sum(len(f) for f in frames)}})
        try:
            send = router.send
            for frame in ids:
                send(frame, _MORE)
            for frame in frames[:-1]:
                send(frame, _MORE)
            send(frames[-1], _LAST)
        except zmq.Again:
            log.warning("reply dropped: the client's queue is full")
        except zmq.ZMQError as exc:
            log.warning("reply dropped: %s", exc)
        # a send can consume the FD's edge: look for waiting requests on the next turn
        if int(router.getsockopt(zmq.EVENTS)) & zmq.POLLIN:
            self._schedule_pump()

    def _frontend_event(self, name: str, event: dict[str, Any]) -> None:
        """A server frontend's event: kept in the store, published as ``frontend_event``."""
        frontend = self.frontends.items.get(name)
        kind = frontend.kind if frontend is not None else "unknown"
        what = str(event.get("event") or event.get("type") or "event")
        data = {k: v for k, v in event.items() if k not in ("event", "type")}
        if self.store is not None:
            try:
                self.store.record_frontend_event(name, kind, what, data)
            except StoreError as exc:
                log.warning("frontend %s: event %s not stored: %s", name, what, exc)
        level = event_level(what)
        if log.isEnabledFor(level):
            log.log(level, "frontend %s: %s", name, what, extra={"fields": {"frontend": name, **{
                k: v for k, v in data.items() if isinstance(v, (str, int, float, bool))}}})
        self._publish(frontend_topic(name), new_message("frontend_event", {
            "frontend": name, "kind": kind, "event": _event_name(what),
            "data": plain_value(data)}))

    def _publish(self, topic: bytes, msg: Message) -> None:
        pub = self.pub
        if pub is None or pub.closed:
            return
        try:
            frames = self.signer.serialize(msg)
            send = pub.send  # frame by frame with int flags: 3x cheaper than send_multipart
            send(topic, _MORE)
            for frame in frames[:-1]:
                send(frame, _MORE)
            send(frames[-1], _LAST)
        except zmq.Again:
            pass  # PUB never blocks; at the high-water mark a slow subscriber misses events
        except (zmq.ZMQError, ProtocolError) as exc:
            log.warning("event %s dropped: %s", msg.msg_type, exc)

    # ----------------------------------------------------------------- quick handlers

    @handles("hello_request", quick=True)
    def _hello(self, msg: Message) -> dict[str, Any]:
        return {
            "protocol_version": PROTOCOL_VERSION,
            "server": f"bgbot {__version__}",
            "requests": sorted(REQUEST_TYPES),
            "events": sorted(EVENT_TYPES),
            "capabilities": ["gnubg_id", "xgid", "candidates", "frontend:gnubg_external",
                             "rollout"],
            "agents": known_agents(),
            "limits": {"max_message_bytes": self.config.control.max_message_bytes,
                       "replay_window": float(self.signer.replay_window),
                       "signed": self.signer.signed,
                       "max_rollouts": self.config.limits.max_rollouts,
                       "max_rollout_trials": self.config.limits.max_rollout_trials},
        }

    @handles("status_request", quick=True)
    def _status(self, msg: Message) -> dict[str, Any]:
        matches = self.matches
        store = self.store
        assert matches is not None and store is not None
        done = matches.finished
        pool = self.decisions
        lag, self.counters.max_lag = self.counters.max_lag, 0.0
        try:
            loadavg = list(os.getloadavg())
        except OSError:
            loadavg = [0.0, 0.0, 0.0]
        return {
            "state": self.state if self.state in ("running", "reloading", "stopping")
            else "running",
            "version": __version__,
            "pid": os.getpid(),
            "started": self.started,
            "uptime": time.time() - self.started,
            "matches": {"active": matches.active, "finished": done,
                        "limit": self.config.limits.max_matches,
                        "events_published": matches.events},
            "frontends": {"running": self.frontends.running, "total": len(self.frontends.items)},
            "load": {"requests": self.counters.in_flight,
                     "queued": pool.queued if pool is not None else 0,
                     "loadavg": loadavg,
                     "match_workers": matches.pids(),
                     "decision_workers": pool.pids() if pool is not None else [],
                     "rollouts": len(self.rollouts.running) if self.rollouts else 0,
                     "rollout_workers": self.rollouts.pids() if self.rollouts else [],
                     "requests_total": self.counters.requests,
                     "errors_total": self.counters.errors,
                     "loop_lag_ms": round(lag * 1000, 2)},
        }

    @handles("match_start_request", quick=True, takes_work=True)
    def _match_start(self, msg: Message) -> dict[str, Any]:
        content = msg.content
        matches = self.matches
        assert matches is not None
        players = content["players"]
        for index, spec in enumerate(players):
            check_request_agent(spec, f"players[{index}]")
            try:
                create_agent(spec)
            except BgbotError as exc:
                raise ProtocolError(ErrorCode.BAD_VALUE, f"players[{index}]: {exc}",
                                    {"field": f"players[{index}]", "reason": str(exc)}) from None
        length = int(content.get("length", 7))
        seed = int(content["seed"]) if "seed" in content else secrets.randbelow(2**31)
        names = content.get("names") or ["", ""]
        spec = MatchSpec(agent_a=players[0], agent_b=players[1], length=length,
                         games=int(content.get("games", 1)) if length == 0 else 1,
                         rules=rules_from_wire(content.get("rules")), seed=seed,
                         names=(names[0], names[1]))
        row = matches.create(spec)
        return {"match": matches.summary(row), "seed": seed}

    @handles("match_list_request", quick=True)
    def _match_list(self, msg: Message) -> dict[str, Any]:
        matches, store = self.matches, self.store
        assert matches is not None and store is not None
        which = msg.content.get("state", "all")
        states = list(RESUMABLE) if which == "active" else (
            [MatchState.FINISHED, MatchState.ABORTED, MatchState.FAILED]
            if which == "finished" else None)
        rows = store.list_matches(states, int(msg.content.get("limit", 100)))
        return {"matches": [matches.summary(row) for row in rows]}

    @handles("frontend_list_request", quick=True)
    def _frontend_list(self, msg: Message) -> dict[str, Any]:
        return {"frontends": [f.record() for f in self.frontends.items.values()]}

    @handles("shutdown_request", quick=True)
    def _shutdown_request(self, msg: Message) -> dict[str, Any]:
        reason = msg.content.get("reason")
        text = f"shutdown request: {reason}" if reason else "shutdown request"
        self.request_stop(text)  # at once: a request after this one gets shutting_down
        return {"state": "stopping"}

    # ----------------------------------------------------------------- async handlers

    @handles(*DECISION_TYPES, takes_work=True)
    def _decision(self, msg: Message) -> dict[str, Any] | Awaitable[dict[str, Any]]:
        """A decision: at once from a quick in-process player, else a worker's future (or,
        with ``limits.inline_decisions``, a coroutine on the loop)."""
        config = self.config
        spec = msg.content.get("agent")
        if spec is not None:
            check_request_agent(spec, "agent")
        pool = self.decisions
        if pool is not None:
            if self._quick_agents is not None:
                quick = self._decide_quickly(msg)
                if quick is not None:
                    return quick
            return pool.request(msg.msg_type, msg.content, config.agents.default,
                                config.limits.decision_timeout)
        agents = self._inline_agents
        assert agents is not None
        quick = answer_now(msg.msg_type, msg.content, agents, default_agent=config.agents.default,
                           max_candidates=config.limits.max_candidates)
        if quick is not None:
            return quick
        return self._decide_inline(msg, agents)

    async def _decide_inline(self, msg: Message, agents: AgentCache) -> dict[str, Any]:
        config = self.config
        try:
            return await asyncio.wait_for(
                answer(msg.msg_type, msg.content, agents, default_agent=config.agents.default,
                       max_candidates=config.limits.max_candidates),
                config.limits.decision_timeout)
        except asyncio.TimeoutError:
            raise ProtocolError(ErrorCode.TIMEOUT, "the decision took too long") from None

    @handles("rollout_request", takes_work=True)
    def _rollout(self, msg: Message) -> Awaitable[dict[str, Any]]:
        """A rollout: checked here, played by the rollout workers (`bgbot.daemon.rollouts`);
        its id is the request's msg_id."""
        rollouts = self.rollouts
        assert rollouts is not None
        return rollouts.start(msg.msg_id, msg.content, self.config.limits)

    @handles("rollout_cancel_request", quick=True)
    def _rollout_cancel(self, msg: Message) -> dict[str, Any]:
        rollouts = self.rollouts
        assert rollouts is not None
        return rollouts.cancel(msg.content["rollout_id"])

    @handles("match_get_request")
    async def _match_get(self, msg: Message) -> dict[str, Any]:
        matches, store = self.matches, self.store
        assert matches is not None and store is not None
        content = msg.content
        match_id = content["match_id"]
        row = store.get_match(match_id)
        if row is None:
            raise ProtocolError(ErrorCode.NOT_FOUND, f"no match {match_id}",
                                {"match_id": match_id})
        snapshot = await matches.snapshot(match_id, mat=bool(content.get("mat")))
        row = store.get_match(match_id) or row
        events = bool(content.get("events"))
        waiting = snapshot is None and row.state in RESUMABLE  # e.g. before it resumes
        history = None
        if events or waiting:  # replays the journal: in a thread, off the loop
            limit = content.get("events_limit")
            history = await asyncio.to_thread(
                read_history, self.config.state_dir / "state.db", match_id, events=events,
                first=int(content.get("events_from", 1)),
                limit=None if limit is None else int(limit), in_play=waiting)
        view = snapshot if snapshot is not None else (history.in_play if history else None)
        summary = matches.summary(row)
        reply: dict[str, Any] = {
            "match": summary, "seed": row.spec.seed, "rules": rules_to_wire(row.spec.rules),
            "crawford": bool(view and view["crawford"]),
            "position": view["position"] if view else None,
            "error": row.error,
        }
        if view:
            summary["game"] = view["game"]
        if history is not None and history.events is not None:
            reply["events"] = history.events
            reply["events_more"] = history.more
        if content.get("mat"):
            if snapshot is not None:
                reply["mat"] = snapshot["mat"]
            else:
                parts = written_parts(row.mat_path)  # a long money session: its last file
                try:
                    reply["mat"] = parts[-1].read_text(encoding="utf-8") if parts else ""
                except OSError:
                    reply["mat"] = ""
        return reply

    @handles("match_abort_request")
    async def _match_abort(self, msg: Message) -> dict[str, Any]:
        matches = self.matches
        assert matches is not None
        reason = msg.content.get("reason")
        text = f"aborted by request: {reason}" if reason else "aborted by request"
        row = await matches.abort(msg.content["match_id"], text)
        return {"match": matches.summary(row)}

    @handles("frontend_start_request", takes_work=True)
    async def _frontend_start(self, msg: Message) -> dict[str, Any]:
        name = msg.content["name"]
        kind = msg.content.get("kind")
        options = dict(msg.content.get("options") or {})
        frontend = self.frontends.items.get(name)
        if frontend is not None and frontend.configured and (kind or options):
            raise ProtocolError(ErrorCode.BAD_VALUE, f"kind: frontend {name} is configured; "
                                "start it by name alone", {"field": "kind",
                                                           "reason": "configured frontend"})
        if frontend is None or (not frontend.configured and kind):
            if kind is None:
                raise ProtocolError(ErrorCode.NOT_FOUND, f"no configured frontend {name}; give "
                                    "a kind to start a new one", {"name": name})
            if kind in server_kinds():
                raise ProtocolError(ErrorCode.UNSUPPORTED, f"{kind} accounts are configured "
                                    f"in bgbot.toml ([[{kind}.accounts]]; their passwords do "
                                    "not travel in requests): add one there, reload, and "
                                    "start it by name", {"kind": kind})
            if kind != GNUBG_EXTERNAL:
                raise ProtocolError(ErrorCode.UNSUPPORTED, f"frontend kind {kind!r} is not "
                                    f"built in (known: {', '.join(frontend_kinds())})",
                                    {"kind": kind})
            if frontend is not None and frontend.state == "running":
                raise ProtocolError(ErrorCode.BAD_STATE, f"frontend {name} is running",
                                    {"name": name})
            if isinstance(options.get("agent"), str):
                check_request_agent(options["agent"], "options.agent")
            self._check_listen(options.get("listen"))
            frontend = Frontend(name, GNUBG_EXTERNAL, frontend_from_options(name, options),
                                False)
            self.frontends.items[name] = frontend
        await self.frontends.start(frontend)
        return {"frontend": frontend.record()}

    def _check_listen(self, listen: Any) -> None:
        """A request's ``listen`` may be a TCP address, or a Unix socket in the daemon's runtime
        directory other than its own sockets: a key holder does not create, or replace,
        sockets elsewhere on the machine."""
        from ..frontends.gnubg_player import ListenAddress

        if not isinstance(listen, str):
            return  # frontend_from_options names what is wrong with it
        try:
            address = ListenAddress.parse(listen)
        except BgbotError:
            return
        if address.path is None:
            return
        runtime = self.config.runtime_dir.resolve()
        path = Path(address.path)
        own = {Path(e[len("ipc://"):]).resolve() for e in (self.config.request_endpoint,
                                                           self.config.events_endpoint)
               if e.startswith("ipc://")}
        if not path.is_absolute() or path.resolve().parent != runtime or path.resolve() in own:
            reason = (f"a Unix socket given in a request must be in the daemon's runtime "
                      f"directory {runtime} (and not its control or events socket); "
                      "elsewhere, configure the frontend in bgbot.toml")
            raise ProtocolError(ErrorCode.BAD_VALUE, f"options.listen: {reason}",
                                {"field": "options.listen", "reason": reason})

    @handles("frontend_stop_request")
    async def _frontend_stop(self, msg: Message) -> dict[str, Any]:
        name = msg.content["name"]
        frontend = self.frontends.items.get(name)
        if frontend is None:
            raise ProtocolError(ErrorCode.NOT_FOUND, f"no frontend {name}", {"name": name})
        await self.frontends.stop(frontend)
        return {"frontend": frontend.record()}

    @handles("reload_request", takes_work=True)
    async def _reload_request(self, msg: Message) -> dict[str, Any]:
        return await self.reload()

    async def _shutdown(self) -> None:
        """Stop taking work, park the matches, close frontends and workers."""
        config = self.config
        if self.rollouts is not None:  # first: their replies go out while the sockets are open
            await self.rollouts.close(min(2.0, config.daemon.stop_timeout))
        await self.frontends.close()
        if self.matches is not None:
            await self.matches.stop(config.daemon.stop_timeout)
        if self.decisions is not None:
            await self.decisions.close(5.0)
        if self._inline_agents is not None:
            await self._inline_agents.close()
        if self._quick_agents is not None:
            await self._quick_agents.close()
        pending = [t for t in self.counters.tasks if not t.done()]
        if pending:
            await asyncio.wait(pending, timeout=2.0)

    async def _close(self) -> None:
        if self.rollouts is not None:
            await self.rollouts.close(0.0)
        if self.matches is not None and not self.matches.stopping:
            await self.matches.stop(5.0)
        if self.decisions is not None:
            await self.decisions.close(1.0)
        for sock in (self.router, self.pub):
            if sock is not None and not sock.closed:
                sock.close(linger=500)
        if self._auth is not None:
            self._auth.stop()
        if self._ctx is not None:
            self._ctx.term()
            self._ctx = None
        for path in self._ipc_paths:
            with contextlib.suppress(OSError):
                path.unlink()
        if self.store is not None:
            self.store.close()
            self.store = None
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None
        self.notifier.close()

    # ----------------------------------------------------------------- reload, watchdog

    async def reload(self) -> dict[str, Any]:
        """Read the configuration again and apply what can change while running."""
        previous_state = self.state
        self.state = "reloading"
        self.notifier.reloading()
        try:
            try:
                new = load_config(self.config_file)
            except ConfigError as exc:
                raise ProtocolError(ErrorCode.BAD_VALUE, str(exc), {
                    "field": exc.key or "config", "reason": exc.reason,
                    "file": exc.file or "", "line": exc.line or 0}) from None
            old = self.config
            old_values, new_values = _flatten(old), _flatten(new)
            changed = sorted(k for k in new_values if new_values[k] != old_values.get(k))
            live = [k for k in changed if k in LIVE_KEYS]
            restart = [k for k in changed if k not in LIVE_KEYS]
            # the running configuration takes the live keys only; the rest waits for a restart
            # the named agents are defined in every worker at its start: a restart changes them
            self.config = replace(
                old, logging=new.logging, agents=replace(new.agents, named=old.agents.named),
                gnubg_player=new.gnubg_player,
                servers=new.servers,
                limits=replace(old.limits, max_matches=new.limits.max_matches,
                               decision_timeout=new.limits.decision_timeout,
                               max_candidates=new.limits.max_candidates,
                               max_rollouts=new.limits.max_rollouts,
                               max_rollout_trials=new.limits.max_rollout_trials),
                control=replace(old.control, key_file=new.control.key_file),
                source=new.source, origins=new.origins)
            old_key = self._key.reveal()
            try:
                self._load_key(create=False)  # first: a bad key file changes nothing
            except ConfigError as exc:
                self.config = old
                raise ProtocolError(ErrorCode.BAD_VALUE, str(exc), {
                    "field": exc.key, "reason": exc.reason}) from None
            if self._key.reveal() != old_key and "control.key_file" not in live:
                live.append("control.key_file")
            if "logging.level" in live or "logging.format" in live:
                setup_logging(new.logging.level, new.logging.format)
            if self.matches is not None:
                self.matches.max_matches = new.limits.max_matches
            if _frontend_keys() & set(changed):
                await self.frontends.reconfigure(new)
            return {"config": str(new.source or self.config_file or ""), "changed": live,
                    "restart_needed": restart}
        finally:
            self.state = "stopping" if self._stop.is_set() else (
                previous_state if previous_state != "reloading" else "running")
            self.notifier.ready(self._status_line())

    def _status_line(self) -> str:
        active = self.matches.active if self.matches is not None else 0
        return (f"{self.state}: {active} matches playing, {self.frontends.running} frontends, "
                f"{self.counters.requests} requests")

    async def _watchdog(self) -> None:
        """WATCHDOG=1 at half $WATCHDOG_USEC (from this loop: a stuck loop stops the pings)."""
        interval = watchdog_interval()
        status_every = 10.0
        step = min(interval, status_every) if interval else status_every
        last_status = 0.0
        while True:
            if interval:
                self.notifier.watchdog()
            now = time.monotonic()
            if now - last_status >= status_every:
                self.notifier.status(self._status_line())
                last_status = now
            await asyncio.sleep(step)

    async def _measure_lag(self) -> None:
        """How late the loop wakes a 20 ms timer: the longest lag since the last status
        request (a busy loop, or a process starved of CPU, shows here)."""
        step = 0.02
        while True:
            before = time.monotonic()
            await asyncio.sleep(step)
            lag = time.monotonic() - before - step
            if lag > self.counters.max_lag:
                self.counters.max_lag = lag



load_plugins()  # a plugin's request types and their handlers, before the check
check_handlers()  # every request of the protocol schema has its handler, and no other


async def _warm_caches() -> None:
    """Make sure the players' disk caches (the bear-off database) exist before the workers
    start, so that they load it instead of each building it (seconds of CPU apiece). Done in
    a short-lived process: the daemon itself never needs the tables."""
    begin = time.monotonic()
    try:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-c",
            "from bgbot.players.bearoff import default_database; default_database()",
            stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE, preexec_fn=die_with_parent)  # never an orphan
        _, err = await proc.communicate()
    except OSError as exc:
        log.warning("could not prepare the player caches: %s", exc)
        return
    if proc.returncode:
        log.warning("could not prepare the player caches: %s",
                    err.decode(errors="replace").strip().splitlines()[-1:] or proc.returncode)
    elif time.monotonic() - begin > 2.0:
        log.info("built the players' caches in %.1f s", time.monotonic() - begin)


def _socket_alive(path: Path) -> bool:
    """Does a process accept connections on the Unix socket ``path``?"""
    try:
        if not stat.S_ISSOCK(path.stat().st_mode):
            return False
    except OSError:
        return False
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    probe.settimeout(0.5)
    try:
        probe.connect(str(path))
    except OSError as exc:
        return exc.errno not in (errno.ECONNREFUSED, errno.ENOENT)
    finally:
        probe.close()
    return True


def serve(config: Config, *, config_file: str | None = None) -> int:
    """Run the daemon in this process until it stops; the exit status."""
    setup_logging(config.logging.level, config.logging.format)
    daemon_log = logging.getLogger("bgbot.daemon")
    try:
        return asyncio.run(Daemon(config, config_file=config_file).run())
    except (DaemonStartError, ConfigError) as exc:
        daemon_log.error("cannot start: %s", exc)
        print(f"bgbot serve: {exc}", file=sys.stderr)
        return 2
