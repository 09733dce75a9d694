"""bgbot as GNU Backgammon's external player: an asyncio server gnubg connects to.

gnubg plays against an outside program when told ``set player N external HOST:PORT``: it
connects to HOST:PORT (or, in 1.07, to a Unix socket when the argument has no ``:``) at that
moment, keeps the connection for every later game and match, and for each decision of that
seat writes one ``board:...`` line framed as ``line\\n\\0``, then waits for a one-line reply
(reference/gnubg-interfaces.md §2). `GnubgPlayerServer` listens, gives every connection its
own agent (built from an agent spec) and `PlayerSession`, and keeps serving whatever a peer
does:

- lines are read by hand from a bounded buffer: a line longer than ``max_line`` bytes gets
  ``Error: ...`` and the connection is closed;
- half a line followed by silence for ``line_timeout`` seconds closes the connection (an idle
  connection with nothing pending waits forever by default: gnubg is silent between matches);
- a peer that disconnects mid-request, or stops reading our replies, only ends its own
  connection;
- garbage and impossible boards get ``Error: ...`` (gnubg prints it and stops automatic play)
  and the connection stays open;
- every problem is one clear log line (logger ``bgbot.gnubg_player``).

One process serves many connections at once. Agents are built by ``make_agent`` (default
`create_agent`: each decides on the event loop, which suits a listener of its own); the daemon
passes its own, which runs in-process players in its decision workers, so the loop it shares
with every other client is never blocked by a decision.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as _dt
import itertools
import logging
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from ..agents.base import Agent
from ..agents.players import SERVING_AGENT
from ..agents.spec import AgentMaker, parse_agent_spec
from ..core.errors import FormatError
from ..core.rules import Rules
from ..deciders import create_agent
from .gnubg_log import JsonLinesLog
from .gnubg_session import GNUBG_DEFAULT_RULES, PlayerSession

__all__ = [
    "GnubgPlayerServer",
    "ListenAddress",
    "PlayerServerConfig",
    "ServerStats",
    "run_gnubg_player",
]

log = logging.getLogger("bgbot.gnubg_player")

_TCP = re.compile(r"^(?:\[(?P<v6>[^\]]+)\]|(?P<host>[^:\[\]]*)):(?P<port>\d{1,5})$")
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


@dataclass(frozen=True, slots=True)
class ListenAddress:
    """Where to listen: TCP ``host:port`` (port 0 = any free port) or a Unix socket path."""

    host: str | None = None
    port: int | None = None
    path: str | None = None

    @classmethod
    def parse(cls, text: str) -> ListenAddress:
        """``127.0.0.1:40001``, ``[::1]:40001``, ``:40001`` (all interfaces), ``unix:/p`` or a
        path. As in gnubg, a name without a colon is a Unix socket path (so is one with a
        ``/``, which no host has); any other text with a colon must be ``HOST:PORT`` with a
        port of 1..65535 (0: any free port)."""
        raw = text.strip()
        if not raw:
            raise FormatError("listen address", text, "expected HOST:PORT or a socket path")
        if raw.startswith("unix:"):
            path = raw[5:]
            if not path:
                raise FormatError("listen address", text, "unix: needs a socket path")
            return cls(path=path)
        if ":" not in raw or "/" in raw:
            return cls(path=raw)
        match = _TCP.match(raw)
        if match is None:
            raise FormatError("listen address", text, "expected HOST:PORT with a port of "
                              "1..65535, e.g. 127.0.0.1:40001 (a socket path has no colon, "
                              "or is written unix:PATH)")
        port = int(match["port"])
        if port > 65535:
            raise FormatError("listen address", text, "a port is 1..65535 (0: any free port)")
        host = match["v6"] if match["v6"] is not None else match["host"]
        return cls(host=host or "0.0.0.0", port=port)

    @property
    def is_unix(self) -> bool:
        return self.path is not None

    def __str__(self) -> str:
        if self.path is not None:
            return self.path
        host = f"[{self.host}]" if self.host and ":" in self.host else self.host
        return f"{host}:{self.port}"

    def gnubg_argument(self) -> str:
        """What to type after ``set player N external`` in gnubg to reach this address."""
        if self.path is not None:
            return self.path
        host = "127.0.0.1" if self.host in (None, "", "0.0.0.0") else self.host
        return f"{host}:{self.port}"


@dataclass(frozen=True, slots=True)
class PlayerServerConfig:
    """How the listener plays and how much it tolerates from a peer."""

    player: str = SERVING_AGENT
    """Agent spec (``NAME[:key=value,...]``); every connection gets its own agent."""
    log_dir: Path | None = None
    """Write one JSON-lines log per connection here (None = no log files)."""
    rules: Rules = GNUBG_DEFAULT_RULES
    """The money rules gnubg plays by (a board line does not say): Jacoby, beavers."""
    max_beavers: int | None = None
    """Beavers + raccoons gnubg allows in one exchange (``set beavers N``; gnubg's default 3).
    None = 3 when ``rules`` has beavers and raccoons, 1 with beavers only, 0 without."""
    seed: int = 0
    """Connection k's agent gets seed ``seed + k`` (for agents with noise or randomness)."""
    max_line: int = 4096
    """Longest request line accepted, in bytes (gnubg's are about 140)."""
    line_timeout: float = 10.0
    """Seconds a started line may take to complete before the connection is closed."""
    idle_timeout: float | None = None
    """Seconds of silence with nothing pending before closing; None = never."""
    write_timeout: float = 10.0
    """Seconds a reply may wait for a peer that does not read before the connection is closed."""
    max_connections: int = 64
    max_consecutive_errors: int = 20
    """Close a connection after this many bad requests in a row (gnubg never sends one)."""


@dataclass
class ServerStats:
    """Counters over the listener's life (all connections)."""

    connections: int = 0
    active: int = 0
    requests: int = 0
    protocol_errors: int = 0
    """Requests answered ``Error:`` plus framing failures (too long, timeout, cut)."""
    refused: int = 0
    closed_reasons: dict[str, int] = field(default_factory=dict)


class _Closed(Exception):
    """The connection must end; ``reason`` says why (for the log and the stats)."""

    def __init__(self, reason: str, error: bool = False, partial: bytes = b"") -> None:
        super().__init__(reason)
        self.reason = reason
        self.error = error
        self.partial = partial


class GnubgPlayerServer:
    """The listener. ``async with GnubgPlayerServer(config) as s: await s.start(addr)``.

    ``make_agent(spec, seed)`` builds each connection's agent (default: `create_agent`)."""

    def __init__(self, config: PlayerServerConfig | None = None, *,
                 make_agent: AgentMaker | None = None) -> None:
        self.config = config or PlayerServerConfig()
        self.make_agent: AgentMaker = make_agent or _create
        parse_agent_spec(self.config.player)  # fail now, not at the first connection
        create_agent(self.config.player)  # unknown agents and bad options fail here too
        self.stats = ServerStats()
        self.address: ListenAddress | None = None
        self._server: asyncio.AbstractServer | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._ids = itertools.count(1)
        self._stamp = _dt.datetime.now().strftime("%Y%m%d-%H%M%S")

    async def __aenter__(self) -> GnubgPlayerServer:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def start(self, address: ListenAddress | str) -> ListenAddress:
        """Bind and start accepting; returns the address bound (with the real port)."""
        where = ListenAddress.parse(address) if isinstance(address, str) else address
        if where.path is not None:
            _remove_stale_socket(where.path)
            self._server = await asyncio.start_unix_server(self._serve, path=where.path)
            self.address = where
        else:
            self._server = await asyncio.start_server(self._serve, host=where.host,
                                                      port=where.port)
            port = self._server.sockets[0].getsockname()[1]
            self.address = ListenAddress(host=where.host, port=int(port))
        log.info("listening on %s (player %s)", self.address, self.config.player)
        return self.address

    async def serve_forever(self) -> None:
        if self._server is None:
            raise RuntimeError("call start() first")
        await self._server.serve_forever()

    async def close(self) -> None:
        """Stop listening and end every connection (their logs are settled)."""
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await self._server.wait_closed()
            self._server = None
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
        if self.address is not None and self.address.path is not None:
            with contextlib.suppress(OSError):
                _remove_stale_socket(self.address.path)

    # ------------------------------------------------------------------ one connection

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._tasks.add(task)
        try:
            await self._connection(reader, writer)
        finally:
            if task is not None:
                self._tasks.discard(task)

    async def _connection(self, reader: asyncio.StreamReader,
                          writer: asyncio.StreamWriter) -> None:
        number = next(self._ids)
        peer = _peer_name(writer)
        label = f"gnubg#{number} ({peer})"
        stats = self.stats
        if stats.active >= self.config.max_connections:
            stats.refused += 1
            log.warning("%s: refused, %d connections already", label, stats.active)
            with contextlib.suppress(Exception):
                writer.write(b"Error: too many connections\n")
                await asyncio.wait_for(writer.drain(), 1.0)
            await _close_writer(writer)
            return
        stats.connections += 1
        stats.active += 1
        log.info("%s: connected", label)
        agent: Agent | None = None
        session: PlayerSession | None = None
        reason = "closed by us"
        try:
            agent = self.make_agent(self.config.player, self.config.seed + number)
            await agent.start()
            log_file = self._open_log(number, peer)
            session = PlayerSession(agent, rules=self.config.rules, log_file=log_file,
                                    label=label, max_beavers=self.config.max_beavers)
            if log_file is not None:
                log_file.write("connect", peer=peer, agent=agent.name, connection=number)
            reason = await self._loop(reader, writer, session)
        except asyncio.CancelledError:
            reason = "server shutting down"
        except Exception as exc:  # never let one connection take the listener down
            reason = f"internal error: {exc!r}"
            log.exception("%s: internal error", label)
        finally:
            stats.active -= 1
            stats.closed_reasons[reason] = stats.closed_reasons.get(reason, 0) + 1
            log.info("%s: connection ended: %s", label, reason)
            if session is not None:
                session.close(reason)
            if agent is not None:
                with contextlib.suppress(Exception):
                    await agent.close()
            await _close_writer(writer)

    async def _loop(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                    session: PlayerSession) -> str:
        buffer = bytearray()
        bad_in_a_row = 0
        while True:
            try:
                raw = await self._read_line(reader, buffer)
            except _Closed as closed:
                if closed.error:
                    self.stats.protocol_errors += 1
                    session.protocol_error(closed.reason,
                                           closed.partial.decode("utf-8", "replace"))
                    log.warning("%s: %s", session.label, closed.reason)
                    if closed.reason.startswith("request line longer"):
                        await self._send(writer, f"Error: {closed.reason}")
                return closed.reason
            self.stats.requests += 1
            reply = await session.respond(raw.decode("utf-8", errors="replace"))
            bad_in_a_row = bad_in_a_row + 1 if reply.is_error else 0
            if reply.is_error:
                self.stats.protocol_errors += 1
            try:
                await self._send(writer, reply.text)
            except _Closed as closed:
                self.stats.protocol_errors += 1
                log.warning("%s: %s", session.label, closed.reason)
                return closed.reason
            if bad_in_a_row >= self.config.max_consecutive_errors:
                reason = f"{bad_in_a_row} bad requests in a row"
                log.warning("%s: closing after %s", session.label, reason)
                return reason

    async def _read_line(self, reader: asyncio.StreamReader, buffer: bytearray) -> bytes:
        """The next ``\\n``-terminated line (without it), read with the limits of the config."""
        config = self.config
        while True:
            end = buffer.find(b"\n")
            if end >= 0:
                if end > config.max_line:
                    raise _Closed(f"request line longer than {config.max_line} bytes",
                                  error=True, partial=bytes(buffer[:_PEEK]))
                line = bytes(buffer[:end])
                del buffer[: end + 1]
                return line
            if len(buffer) > config.max_line:
                raise _Closed(f"request line longer than {config.max_line} bytes",
                              error=True, partial=bytes(buffer[:_PEEK]))
            pending = bool(buffer.strip(b"\x00 \t\r"))
            timeout = config.line_timeout if pending else config.idle_timeout
            try:
                chunk = await asyncio.wait_for(reader.read(65536), timeout)
            except asyncio.TimeoutError:
                if pending:
                    raise _Closed(f"half a request line, then {config.line_timeout:g} s of "
                                  "silence", error=True, partial=bytes(buffer[:_PEEK])) from None
                raise _Closed(f"idle for {config.idle_timeout:g} s") from None
            except (ConnectionError, OSError) as exc:
                raise _Closed(f"connection error: {exc}", error=pending,
                              partial=bytes(buffer[:_PEEK])) from None
            if not chunk:
                if pending:
                    raise _Closed("peer closed the connection in the middle of a request",
                                  error=True, partial=bytes(buffer[:_PEEK]))
                raise _Closed("peer closed the connection")
            buffer += chunk

    async def _send(self, writer: asyncio.StreamWriter, text: str) -> None:
        try:
            writer.write(text.encode("utf-8") + b"\n")
            await asyncio.wait_for(writer.drain(), self.config.write_timeout)
        except asyncio.TimeoutError:
            raise _Closed(f"peer did not read our reply for {self.config.write_timeout:g} s",
                          error=True) from None
        except (ConnectionError, OSError) as exc:
            raise _Closed(f"peer went away before our reply: {exc}", error=True) from None

    def _open_log(self, number: int, peer: str) -> JsonLinesLog | None:
        if self.config.log_dir is None:
            return None
        who = _UNSAFE.sub("_", peer).strip("_") or "peer"
        name = f"gnubg-player-{self._stamp}-{os.getpid()}-{number:04d}-{who}.jsonl"
        return JsonLinesLog(Path(self.config.log_dir) / name)


_PEEK = 200  # bytes of a bad line kept for the log


def _create(spec: str, seed: int) -> Agent:
    return create_agent(spec, seed=seed)


def _peer_name(writer: asyncio.StreamWriter) -> str:
    peer = writer.get_extra_info("peername")
    if isinstance(peer, tuple) and len(peer) >= 2:
        return f"{peer[0]}:{peer[1]}"
    return "unix-socket" if not peer else str(peer)


async def _close_writer(writer: asyncio.StreamWriter) -> None:
    with contextlib.suppress(Exception):
        writer.close()
        await asyncio.wait_for(writer.wait_closed(), 2.0)


def _remove_stale_socket(path: str) -> None:
    """Remove ``path`` if it is a socket (a leftover of an earlier run); refuse anything else."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return
    if not stat.S_ISSOCK(mode):
        raise FormatError("listen address", path, "exists and is not a socket; not replacing it")
    os.unlink(path)


async def run_gnubg_player(address: ListenAddress | str, config: PlayerServerConfig, *,
                           ready: Callable[[ListenAddress], None] | None = None) -> None:
    """Listen at ``address`` until cancelled (the CLI's main loop); ``ready`` gets the address
    bound (with the real port) once gnubg can connect."""
    async with GnubgPlayerServer(config) as server:
        bound = await server.start(address)
        if ready is not None:
            ready(bound)
        await server.serve_forever()
