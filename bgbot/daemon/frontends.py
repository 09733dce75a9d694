"""The frontends the daemon runs: programs and servers that drive bgbot from outside.

The kinds, each behind the same small `Runner` interface so that the daemon starts, stops,
lists and reconfigures them alike:

- ``gnubg_external``: a listener gnubg connects to as its external player
  (``[[gnubg_player]]`` tables, or started ad hoc by ``frontend_start`` with options);
- every server kind of `bgbot.frontends.kinds` (``fibs``, ``bgammon``, a plugin's): an
  account kept logged in on an online server (``[[KIND.accounts]]``).

Server accounts are configured only in the file (their passwords must not travel in a
request). Each frontend answers on the daemon's event loop, and its agent comes from
``make_agent`` (the daemon's runs in-process players in its decision workers, so no decision
holds the loop up); its games are logged under
``<logs_dir>/<kind>/`` and, for server accounts, every game event also goes to the store.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Protocol

from ..agents.base import Agent
from ..agents.spec import AgentMaker
from ..core.errors import BgbotError
from ..deciders import create_agent
from ..frontends import kinds
from ..frontends.accounts import ServerAccountConfig
from ..frontends.kinds import server_kind, server_kinds
from .config import Config, GnubgPlayerConfig, frontend_name
from .protocol import ErrorCode, ProtocolError

if TYPE_CHECKING:
    from ..frontends.server import ServerClient

log = logging.getLogger(__name__)

GNUBG_EXTERNAL = "gnubg_external"
"""The one kind that is not an online server: gnubg's external-player listener."""


def frontend_kinds() -> list[str]:
    """Every kind of frontend: gnubg_external and the registered server kinds."""
    return [GNUBG_EXTERNAL, *server_kinds()]

EventSink = Callable[[str, dict[str, Any]], None]
"""(frontend name, event) -> None: where server frontends report their game events."""


class Runner(Protocol):
    """A started frontend."""

    async def close(self) -> None: ...

    def details(self) -> dict[str, Any]:
        """Kind-specific fields of the frontend's record (listen address, server, user...)."""
        ...


@dataclass
class Frontend:
    """One frontend as the daemon sees it: its configuration and, while running, its runner."""

    name: str
    kind: str
    config: GnubgPlayerConfig | ServerAccountConfig
    configured: bool
    runner: Runner | None = None
    state: str = "stopped"
    since: float | None = None
    error: str | None = None

    @property
    def autostart(self) -> bool:
        return self.config.autostart

    def record(self) -> dict[str, Any]:
        record: dict[str, Any] = {"name": self.name, "kind": self.kind, "state": self.state,
                                  "agent": self.config.agent, "since": self.since,
                                  "error": self.error}
        if self.runner is not None:
            record.update(self.runner.details())
        elif isinstance(self.config, GnubgPlayerConfig):
            record["listen"] = self.config.listen
        else:
            record["listen"] = server_kind(self.kind).address(self.config)
            record["user"] = self.config.user
        return record


# ============================================================================ runners


class _GnubgRunner:
    def __init__(self, server: Any) -> None:
        self.server = server

    async def close(self) -> None:
        await self.server.close()

    def details(self) -> dict[str, Any]:
        return {"listen": str(self.server.address)}


class _ServerRunner:
    """A server client (a `bgbot.frontends.server.ServerClient`) running as a task on the
    loop."""

    def __init__(self, kind: str, client: ServerClient, task: asyncio.Task[Any],
                 entry: ServerAccountConfig, agent: Agent | None = None) -> None:
        self.kind, self.client, self.task, self.entry = kind, client, task, entry
        self.agent = agent
        """The agent given to the client (not owned by it, so closed here)."""

    async def close(self) -> None:
        with contextlib.suppress(Exception):
            await self.client.stop()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await asyncio.wait_for(self.task, 10.0)
        if not self.task.done():
            self.task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self.task
        if self.agent is not None:
            with contextlib.suppress(Exception):
                await self.agent.close()

    def details(self) -> dict[str, Any]:
        status: dict[str, Any] = {}
        with contextlib.suppress(Exception):
            status = dict(self.client.status())
        return {"listen": server_kind(self.kind).address(self.entry), "user": self.entry.user,
                "status": plain_value(status)}


def plain_value(value: Any) -> Any:
    """A value reduced to msgpack's JSON-like types (paths, enums and tuples become plain)."""
    if isinstance(value, dict):
        return {str(k): plain_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain_value(v) for v in value]
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)


# ============================================================================ the set


class Frontends:
    """Starts, stops and lists the frontends; builds each kind's runner."""

    def __init__(self, logs_dir: Path, state_dir: Path,
                 events: EventSink | None = None, *, make_agent: AgentMaker | None = None) -> None:
        self.logs_dir = logs_dir
        self.state_dir = state_dir
        self.events = events
        self.make_agent = make_agent
        """Builds the frontends' agents (None: each frontend builds its own)."""
        self.items: dict[str, Frontend] = {}

    def configure(self, config: Config) -> None:
        """Add the frontends the configuration names (not started)."""
        for name, (kind, entry) in configured_frontends(config).items():
            self.items[name] = Frontend(name, kind, entry, True)

    @property
    def running(self) -> int:
        return sum(1 for f in self.items.values() if f.state == "running")

    async def start(self, frontend: Frontend) -> None:
        if frontend.state in ("running", "starting"):
            raise ProtocolError(ErrorCode.BAD_STATE, f"frontend {frontend.name} is "
                                f"{frontend.state}", {"name": frontend.name})
        frontend.state, frontend.since, frontend.error = "starting", time.time(), None
        try:
            runner = await self._launch(frontend)
        except (OSError, BgbotError, ImportError) as exc:
            frontend.state, frontend.since, frontend.error = "failed", time.time(), str(exc)
            log.error("frontend %s failed to start: %s", frontend.name, exc)
            raise ProtocolError(ErrorCode.BAD_VALUE if isinstance(exc, BgbotError)
                                else ErrorCode.BAD_STATE,
                                f"frontend {frontend.name}: {exc}",
                                {"name": frontend.name, "field": "options",
                                 "reason": str(exc)}) from None
        frontend.runner = runner
        frontend.state, frontend.since = "running", time.time()
        log.info("frontend started", extra={"fields": {"name": frontend.name,
                                                       "kind": frontend.kind,
                                                       **runner.details()}})

    async def _launch(self, frontend: Frontend) -> Runner:
        entry = frontend.config
        if isinstance(entry, GnubgPlayerConfig):
            from ..frontends.gnubg_player import GnubgPlayerServer, PlayerServerConfig

            server = GnubgPlayerServer(PlayerServerConfig(
                player=entry.agent, seed=entry.seed, max_connections=entry.max_connections,
                log_dir=self.logs_dir / "gnubg-player" if entry.log_connections else None),
                make_agent=self.make_agent)
            await server.start(entry.listen)
            return _GnubgRunner(server)
        agent = self.make_agent(entry.agent, entry.seed) if self.make_agent else None
        try:
            client = self._server_client(frontend.name, frontend.kind, entry, agent)
        except BaseException:
            if agent is not None:
                await agent.close()
            raise
        task = asyncio.get_running_loop().create_task(client.run(),
                                                      name=f"frontend-{frontend.name}")
        task.add_done_callback(lambda done: self._ended(frontend, done))
        return _ServerRunner(frontend.kind, client, task, entry, agent)

    def _server_client(self, name: str, kind: str, entry: ServerAccountConfig,
                       agent: Agent | None) -> ServerClient:
        sink = self.events

        def on_event(event: dict[str, Any]) -> None:
            if sink is not None:
                sink(name, event)

        return kinds.client_for(kind, entry, logs_dir=self.logs_dir / kind / name,
                                state_path=self.state_dir / f"{name}.policy.json",
                                on_event=on_event, agent=agent)

    def _ended(self, frontend: Frontend, task: asyncio.Task[Any]) -> None:
        """A server client's run() returned or failed on its own, not by a stop (a refused
        login, say): the frontend is marked failed with the client's last error."""
        runner = frontend.runner
        if frontend.state != "running" or task.cancelled() or runner is None or \
                getattr(runner, "task", None) is not task:
            return
        error = task.exception()
        reason = str(error) if error is not None else str(
            runner.details().get("status", {}).get("last_error") or "the client stopped")
        frontend.state, frontend.since, frontend.error = "failed", time.time(), reason
        log.error("frontend %s stopped: %s", frontend.name, reason)

    async def stop(self, frontend: Frontend) -> None:
        if frontend.state not in ("running", "failed") or frontend.runner is None:
            raise ProtocolError(ErrorCode.BAD_STATE, f"frontend {frontend.name} is not running",
                                {"name": frontend.name, "state": frontend.state})
        runner, frontend.runner = frontend.runner, None
        await runner.close()
        frontend.state, frontend.since = "stopped", time.time()
        log.info("frontend stopped", extra={"fields": {"name": frontend.name}})

    async def autostart(self) -> None:
        for frontend in list(self.items.values()):
            if frontend.autostart and frontend.state != "running":
                with contextlib.suppress(ProtocolError):
                    await self.start(frontend)

    async def reconfigure(self, new: Config) -> None:
        """Apply a reloaded configuration: stop removed or changed frontends, start new ones."""
        after = configured_frontends(new)
        for name, frontend in list(self.items.items()):
            if not frontend.configured:
                continue
            if after.get(name) != (frontend.kind, frontend.config):
                if frontend.runner is not None:
                    await self.stop(frontend)
                del self.items[name]
        for name, (kind, entry) in after.items():
            existing = self.items.get(name)
            if existing is not None and existing.configured:
                continue
            if existing is not None and existing.runner is not None:
                await self.stop(existing)
            frontend = Frontend(name, kind, entry, True)
            self.items[name] = frontend
            if entry.autostart:
                with contextlib.suppress(ProtocolError):
                    await self.start(frontend)

    async def close(self) -> None:
        for frontend in self.items.values():
            if frontend.runner is not None:
                with contextlib.suppress(Exception):
                    await self.stop(frontend)


def configured_frontends(
    config: Config,
) -> dict[str, tuple[str, GnubgPlayerConfig | ServerAccountConfig]]:
    """Name -> (kind, entry) for every frontend the configuration names."""
    found: dict[str, tuple[str, GnubgPlayerConfig | ServerAccountConfig]] = {}
    for index, entry in enumerate(config.gnubg_player):
        found[frontend_name(entry, index)] = (GNUBG_EXTERNAL, entry)
    for kind in config.servers:
        for account in config.accounts(kind):
            found[kinds.frontend_name(kind, account)] = (kind, account)
    return found


def frontend_from_options(name: str, options: dict[str, Any]) -> GnubgPlayerConfig:
    """A gnubg_external frontend from frontend_start options (listen, agent, seed, ...)."""
    known = {"listen": str, "agent": str, "seed": int, "max_connections": int,
             "log_connections": bool}
    for key, value in options.items():
        kind = known.get(key)
        if kind is None:
            raise ProtocolError(ErrorCode.BAD_VALUE, f"options.{key}: unknown option; known: "
                                f"{', '.join(known)}", {"field": f"options.{key}",
                                                        "reason": "unknown option"})
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise ProtocolError(ErrorCode.BAD_VALUE, f"options.{key}: expected "
                                f"{kind.__name__}", {"field": f"options.{key}",
                                                     "reason": f"expected {kind.__name__}"})
    if "listen" not in options:
        raise ProtocolError(ErrorCode.BAD_VALUE, "options.listen: required (HOST:PORT or a "
                            "socket path)", {"field": "options.listen", "reason": "required"})
    entry = GnubgPlayerConfig(name=name, autostart=False, **options)
    from ..frontends.gnubg_player import ListenAddress

    try:
        ListenAddress.parse(entry.listen)
        create_agent(entry.agent)
    except BgbotError as exc:
        field_name = "options.agent" if "agent" in str(exc) else "options.listen"
        raise ProtocolError(ErrorCode.BAD_VALUE, f"{field_name}: {exc}",
                            {"field": field_name, "reason": str(exc)}) from None
    return entry
