"""The base of every online-server frontend: one account kept logged in and playing.

`ServerClient` owns what every server dialect shares, so that a dialect (FIBS, bgammon, a
plugin's) only speaks its protocol in `ServerClient._session`:

- the run loop: connect, play, and after a failure reconnect with jittered exponential
  `Backoff` until `stop` (or a refusal for good, `ServerClient.fatal`);
- the agent's lifecycle: the account's agent spec is created and started with the run and
  closed after it (an agent passed in belongs to the caller);
- the account's events: a JSON-lines log beside the ``.mat`` files and the optional
  ``on_event`` callback (the daemon's store), one dict per event, never a password;
- the ``.mat`` files: names (`ServerClient.mat_path`) and the one writer (`MatMirror`);
- the status the daemon's ``frontend_list`` shows.

Events every dialect emits: ``connect`` (host, port, password: where it came from),
``login_failed`` (reason), ``disconnect`` (reason; "stopped" after `stop`), ``reconnect_wait``
(seconds), ``fatal`` (reason); the dialects add their own.

A `ServerAccount` holds what every account has; the password in it is the one to use
(accounts built from the configuration or the command line found it with
`bgbot.util.resolve_secret`, in the one order documented there).
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as _dt
import logging
import random
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, ClassVar, Sequence

from ..agents.players import SERVING_AGENT
from ..core.game import Action, Game
from ..formats.mat import MatchRecord
from ..referee.events import action_record
from ..referee.matlog import MatWriteError, MatWriter
from ..util import safe_name
from .backoff import Backoff
from .gnubg_log import JsonLinesLog
from .invitations import InvitationPolicy, PolicyState

if TYPE_CHECKING:
    from ..agents.base import Agent
    from .accounts import ServerAccountConfig

__all__ = ["ConnectionLost", "EventCallback", "LoginFailed", "MatMirror", "ServerAccount",
           "ServerClient"]

log = logging.getLogger(__name__)

EventCallback = Callable[[dict[str, Any]], None]


class LoginFailed(Exception):
    """The server refused our login (it is tried again after the backoff)."""


class ConnectionLost(Exception):
    """The connection is gone: closed, silent for too long, or unreadable."""


@dataclass(frozen=True)
class ServerAccount:
    """What every account on an online server has; dialects add their own fields (and may
    give these other defaults). Times are seconds; ``logs_dir`` None writes no files,
    ``state_path`` None keeps the invitation state in memory only."""

    KIND: ClassVar[str] = ""
    """The server kind (``fibs``): frontend names ``KIND-USER``, the status."""

    user: str
    password: str | None = field(default=None, repr=False)
    """The password to log in with; None: none (a guest, where the server has guests)."""
    host: str = ""
    port: int = 0
    agent: str = SERVING_AGENT
    """The agent spec that plays."""
    name: str = ""
    """Frontend name for the daemon (default ``KIND-USER``)."""
    password_source: str = "given"
    """Where the password came from (shown in the status; never the password)."""
    policy: InvitationPolicy = field(default_factory=InvitationPolicy)
    greeting: str = ""
    """Said to each new opponent, ``{opponent}`` replaced; "" = nothing."""
    farewell: str = ""
    """Said after each match, ``{opponent}`` replaced; "" = nothing."""
    logs_dir: Path | None = None
    state_path: Path | None = None
    connect_timeout: float = 30.0
    backoff_base: float = 1.0
    backoff_cap: float = 300.0
    seed: int = 0

    @property
    def frontend_name(self) -> str:
        return self.name or f"{self.KIND}-{self.user}"

    def events_log_name(self) -> str:
        """The JSON-lines log's file name in ``logs_dir``."""
        return f"{self.KIND}-{safe_name(self.user)}.jsonl"


class MatMirror:
    """A server match replayed through core games: its ``.mat`` file, written by the one
    `.mat` writer (`bgbot.referee.matlog.MatWriter`: each game formatted once, the file
    rewritten atomically after every game, so a crash never leaves a torn file), and the
    actions the games recorded (`apply`, `take_actions`), which the client logs in their one
    plain form (`bgbot.referee.events.action_record`). ``record`` is the file's header (length,
    names, rules, tags, comments); `games` counts the games written."""

    def __init__(self, record: MatchRecord, path: Path | None) -> None:
        self.writer = MatWriter(path, record)
        self.game: Game | None = None
        self._actions: list[Action] = []

    @property
    def record(self) -> MatchRecord:
        return self.writer.header

    @property
    def path(self) -> Path | None:
        return self.writer.path

    @path.setter
    def path(self, path: Path | None) -> None:
        self.writer.path = path

    @property
    def games(self) -> int:
        """Games recorded in the file."""
        return self.writer.games

    def add_game(self, game: Game, score_before: Sequence[int] | None = None,
                 crawford: bool | None = None) -> None:
        """Record the next game of the file (`write` writes it)."""
        self.writer.add_game(game, score_before, crawford)

    def apply(self, game: Game, change: Callable[[Game], object]) -> None:
        """``change(game)``; the actions it recorded wait for `take_actions` (also when it
        fails half-way: what the game took is recorded)."""
        seen = len(game.history)
        try:
            change(game)
        finally:
            self._actions.extend(game.history[seen:])

    def take_actions(self) -> list[Action]:
        """The actions applied since the last call, in order."""
        taken, self._actions = self._actions, []
        return taken

    def write(self) -> None:
        """Write the file (nothing without a path or before the first game). A file that
        cannot be written is logged, naming it, and the match goes on (the next write tries
        again)."""
        if not self.writer.games:
            return
        try:
            self.writer.write()
        except MatWriteError as exc:
            log.error("%s", exc)


class ServerClient:
    """Keeps one account logged in and playing until `stop` (see the module docstring).

    Subclasses implement `_session` (connect with `_connect`, log in, play until the
    connection ends or `stopping` is set) and may add `_goodbye`, `_status_details` and
    `_event_context`.
    """

    RETRYABLE: ClassVar[tuple[type[BaseException], ...]] = (
        OSError, EOFError, TimeoutError, ConnectionLost, LoginFailed)
    """Errors that end a session and are retried after the backoff."""

    def __init__(self, account: ServerAccount, *, agent: Agent | None = None,
                 on_event: EventCallback | None = None, backoff: Backoff | None = None,
                 policy_state: PolicyState | None = None, clock: Callable[[], float] = time.time,
                 rng: random.Random | None = None) -> None:
        self.account = account
        self.agent = agent
        self._own_agent = agent is None
        self.on_event = on_event
        self.clock = clock
        self.backoff = backoff or Backoff(
            account.backoff_base, max(account.backoff_cap, account.backoff_base),
            rng=rng or random.Random(account.seed))
        self.policy_state = policy_state if policy_state is not None else \
            PolicyState(account.state_path)
        self.events_log: JsonLinesLog | None = None
        self.stopping = asyncio.Event()
        self.fatal: str | None = None
        """Why the server refused us for good (a banned or unknown account): run ends."""
        self.phase = "stopped"
        self.connects = 0
        self.connected_since: float | None = None
        self.last_error: str | None = None
        self.next_retry: float | None = None
        self.matches_finished = 0
        self._writer: asyncio.StreamWriter | None = None

    # ---------------------------------------------------------------- the run loop

    async def run(self) -> None:
        """Connect, play, reconnect after failures with backoff, until `stop` (or `fatal`)."""
        account = self.account
        if account.logs_dir is not None:
            self.events_log = JsonLinesLog(account.logs_dir / account.events_log_name())
        if self.agent is None:
            from ..deciders import create_agent

            self.agent = create_agent(account.agent, seed=account.seed)
        await self.agent.start()
        try:
            while not self.stopping.is_set() and self.fatal is None:
                await self._one_session()
                if self.stopping.is_set() or self.fatal is not None:
                    break
                delay = self.backoff.next_delay()
                self.phase, self.next_retry = "backoff", self.clock() + delay
                log.info("%s: reconnecting in %.1f s", account.frontend_name, delay)
                self._emit("reconnect_wait", seconds=round(delay, 3))
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(delay):
                        await self.stopping.wait()
                self.next_retry = None
        finally:
            self.phase = "failed" if self.fatal else "stopped"
            if self.fatal:
                self._emit("fatal", reason=self.fatal)
            if self._own_agent and self.agent is not None:
                await self.agent.close()
            if self.events_log is not None:
                self.events_log.close()

    async def _one_session(self) -> None:
        try:
            await self._session()
            reason = self.fatal or "closed by the server"
            if self.fatal is None:
                self.last_error = None
        except LoginFailed as exc:
            reason = self.last_error = str(exc)
            self._emit("login_failed", reason=reason)
        except self.RETRYABLE as exc:
            reason = str(exc) or type(exc).__name__
            self.last_error = f"{type(exc).__name__}: {exc}" if str(exc) else reason
        except Exception as exc:  # a bug: say so and stop, rather than die without a word
            log.exception("%s: the session failed", self.account.frontend_name)
            reason = self.last_error = self.fatal = f"internal error: {type(exc).__name__}: {exc}"
        finally:
            writer, self._writer = self._writer, None
            self.connected_since = None
            if writer is not None:
                with contextlib.suppress(RuntimeError):
                    writer.close()
        if self.stopping.is_set():
            reason = "stopped"
        self.phase = "disconnected"
        self._emit("disconnect", reason=reason)

    async def _connect(self, *, limit: int = 1 << 16
                       ) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        """Open the account's connection (within ``connect_timeout``) and count it."""
        account = self.account
        self.phase = "connecting"
        async with asyncio.timeout(account.connect_timeout):
            reader, writer = await asyncio.open_connection(account.host, account.port,
                                                           limit=limit)
        self._writer = writer
        self.connects += 1
        self.connected_since = self.clock()
        self._emit("connect", host=account.host, port=account.port,
                   password=account.password_source)
        return reader, writer

    async def _session(self) -> None:
        """One connection: connect, log in, play; return (or raise one of `RETRYABLE`) when
        it ends."""
        raise NotImplementedError

    async def stop(self) -> None:
        """End `run`: say goodbye where the dialect does, close the connection (servers keep
        a match in progress for our return)."""
        self.stopping.set()
        writer = self._writer
        if writer is not None:
            with contextlib.suppress(OSError, RuntimeError):
                await self._goodbye(writer)
            writer.close()

    async def _goodbye(self, writer: asyncio.StreamWriter) -> None:
        """What the dialect sends before closing on `stop` (nothing by default)."""

    # ---------------------------------------------------------------- events and files

    def _emit(self, event: str, **fields: Any) -> None:
        """One event: to the JSON-lines log and to ``on_event`` (a failing callback is logged
        and play goes on)."""
        record = {"t": round(self.clock(), 3), "event": event,
                  "account": self.account.frontend_name, **self._event_context(), **fields}
        if self.events_log is not None:
            self.events_log.write(event, **{k: v for k, v in record.items()
                                            if k not in ("t", "event")})
        log.debug("%s: %s %s", self.account.frontend_name, event, fields)
        if self.on_event is not None:
            try:
                self.on_event(record)
            except Exception:
                log.exception("%s: event callback failed", self.account.frontend_name)

    def _event_context(self) -> dict[str, Any]:
        """Fields every event carries (the dialect's match id, say)."""
        return {}

    def _emit_actions(self, mirror: MatMirror | None) -> None:
        """Log the game actions ``mirror`` recorded since the last call (`action_record`:
        ``roll``, ``move``, ``double``...; seat 0 is this account)."""
        if mirror is None:
            return
        for action in mirror.take_actions():
            found = action_record(action)
            if found is not None:
                self._emit(found[0], **found[1])

    def mat_path(self, name: str) -> Path | None:
        """``<logs_dir>/<YYYYmmdd-HHMMSS>-<name>.mat`` (None without a logs directory)."""
        if self.account.logs_dir is None:
            return None
        stamp = _dt.datetime.now().strftime("%Y%m%d-%H%M%S")
        return self.account.logs_dir / f"{stamp}-{name}.mat"

    @staticmethod
    def versus(me: str, opponent: str) -> str:
        """``me-vs-opponent`` as a piece of a file name."""
        return f"{safe_name(me)}-vs-{safe_name(opponent)}"

    # ---------------------------------------------------------------- status

    def status(self) -> dict[str, Any]:
        """For the daemon's ``frontend_list`` (no secrets)."""
        account = self.account
        return {
            "name": account.frontend_name, "kind": account.KIND, "user": account.user,
            "host": account.host, "port": account.port,
            "server": f"{account.host}:{account.port}", "state": self.phase,
            "agent": account.agent, "password": account.password_source,
            "connects": self.connects, "connected_since": self.connected_since,
            "matches_finished": self.matches_finished, "last_error": self.last_error,
            "next_retry_in": (max(0.0, self.next_retry - self.clock())
                              if self.next_retry is not None else None),
            **self._status_details(),
        }

    def _status_details(self) -> dict[str, Any]:
        """The dialect's fields of the status (opponent, score...)."""
        return {}

    # ---------------------------------------------------------------- configuration

    @classmethod
    def account_from_config(cls, entry: ServerAccountConfig,
                            common: dict[str, Any]) -> ServerAccount:
        """The dialect's account for a configuration table: ``common`` holds the fields
        every account has (`bgbot.frontends.kinds.account_for` filled them), the dialect adds
        its own from ``entry``."""
        raise NotImplementedError
