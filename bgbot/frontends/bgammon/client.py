"""bgammon.org frontend: a bot account that hosts matches, plays them and logs them.

bgammon.org (tslocum/bgammon) has tables rather than FIBS invitations, and its bot rules shape
how the bot finds opponents (shared/reference/online-servers.md §2):

- A bot logs in as ``bot_NAME`` (shown ``BOT_NAME``) and may only *create* matches; joining a
  human's match is refused ("Bots are not allowed to join player matches"). So the bot creates
  a public match of ``match_length`` points and waits. When someone sits down (``joined``), the
  next ``board`` tells their name and rating, and that is the invitation: `judge` the shared
  `InvitationPolicy`; a decline is logged with its reason (and said at the table when
  ``explain_declines``), then the bot leaves and opens a new table. With ``join_bot_matches``
  (off by default) the bot first looks in the ``list`` for an open table with the default name
  of a bot's table (``BOT_x's match``; bots may play bots) and judges its host the same way.
  Careful: the bgammon server as read (server_command.go, March 2026) does not release its
  games lock when it refuses a bot at a human's table, so a wrong guess may stall that server.
- A reconnecting player with the same name is put back into its unfinished match by the server
  ("Rejoined match"); the bot treats that as a resumed match (accepted unless blocked).

Play is driven by the latest ``board`` event, never by notices: opening die (``roll``), cube
(``double`` before rolling, ``ok`` / ``resign`` to take or decline), ``roll``, the play one
``move`` per step (the server checks all steps of one command against the moves legal before
it) followed by ``ok``, ``ok`` when nothing can be played, ``reset`` when a resumed turn has
half-made moves that are not ours, and ``resign`` on our turn when the agent offers at least what
the server would score. Every play is checked against the rules core before it is sent. The
server scores a declined double like a resignation (cube x 1/2/3 by the position), so with
``take_when_drop_costs_more`` a drop that would cost more than the cube is turned into a take.
A command that gets no new board within ``stall_seconds``, a ``failed*`` answer and a malformed
event all make the bot ask for the ``board`` again.

Each match is mirrored in a core `Game` (from the boards and the ``win`` events) and written
as a ``.mat`` file (bgbot.formats.mat, atomically at every game end); every event goes to a
JSON-lines log and to the optional ``on_event`` callback. The connection writes a ``pong``
at least every ``keepalive_seconds`` (the server drops a client silent for 40 s) and treats
``read_timeout`` seconds of silence as a dead link; `BgammonClient` is the bgammon dialect of
`bgbot.frontends.server.ServerClient`, which reconnects with jittered exponential backoff and
owns the agent, the event log and the status.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from ... import __version__
from ...core.context import Context, CubeOwner
from ...core.errors import FormatError, IllegalAction
from ...formats.gnubgid import LONGEST_MATCH
from ...core.position import Play, Position
from ...core.rules import Rules
from ...players.base import TakeDecision
from ..invitations import Invitation, judge
from ..accounts import ServerAccountConfig
from ..server import ConnectionLost, ServerAccount, ServerClient
from . import protocol as bp
from .mirror import MatchRun

__all__ = ["BgammonAccount", "BgammonClient"]

log = logging.getLogger(__name__)

_FATAL = ("No account was found", "Invalid username", "You are banned", "only registered users")
_BOT_TABLE = re.compile(r"^BOT_[A-Za-z0-9_]+'s? match$")
"""The server's default name for a table a bot created; the only tables a bot tries to join."""


@dataclass(frozen=True)
class BgammonAccount(ServerAccount):
    """One bot account on a bgammon server (``[[bgammon.accounts]]`` in bgbot.toml).

    ``user`` is the login name (``bot_NAME``); ``password`` (hidden from ``repr``) is the one
    to log in with (None: a guest login). ``agent`` is an agent spec; ``match_length`` /
    ``match_name`` describe the tables the bot opens; ``policy`` judges who sits down.
    ``greeting`` / ``farewell`` are said at match start / end (``{opponent}`` is replaced;
    empty = silent); ``explain_declines`` says the reason before leaving a declined table.
    ``logs_dir`` gets the .mat files and ``bgammon-USER.jsonl``; ``state_path`` keeps the
    policy's per-opponent match ends (None: memory only). Timers, in seconds:
    ``keepalive_seconds`` (write at least this often; < 40), ``read_timeout`` (silence that
    means a dead link; also the connect timeout), ``settle_seconds`` (after login, wait for the
    server to rejoin a match before opening a table), ``stall_seconds`` (no board after a
    command: ask again), ``recreate_delay`` (before a new table), ``abandon_after`` (leave when
    the opponent stays away; the server then scores the forfeit), ``backoff_base`` /
    ``backoff_cap`` (reconnects).
    """

    KIND: ClassVar[str] = "bgammon"

    host: str = "bgammon.org"
    port: int = 1337
    match_length: int = 5
    match_name: str = ""
    explain_declines: bool = True
    join_bot_matches: bool = False
    take_when_drop_costs_more: bool = True
    logs_dir: Path | None = Path("logs/bgammon")
    connect_timeout: float = 75.0
    keepalive_seconds: float = 25.0
    read_timeout: float = 75.0
    settle_seconds: float = 1.0
    stall_seconds: float = 10.0
    recreate_delay: float = 2.0
    abandon_after: float = 600.0
    client_name: str = f"bgbot-{__version__}/en"

    def __post_init__(self) -> None:
        bp.check_bot_name(self.user)
        if not 0 < self.port < 65536:
            raise FormatError("port", self.port, "expected 1..65535")
        if not 0 < self.keepalive_seconds < 40:
            raise FormatError("keepalive_seconds", self.keepalive_seconds,
                              "bgammon drops a client silent for 40 s: use 1..39")
        if not 1 <= self.match_length <= LONGEST_MATCH:
            raise FormatError("match_length", self.match_length,
                              f"1..{LONGEST_MATCH} (bgammon allows 127; gnubg and bgbot 64)")
        if not self.policy.min_length <= self.match_length <= self.policy.max_length:
            raise FormatError("match_length", self.match_length,
                              f"outside the policy's {self.policy.min_length}..{self.policy.max_length}: "
                              "every opponent would be declined")
        for name in ("greeting", "farewell", "match_name"):
            text = getattr(self, name)
            if "\n" in text or "\r" in text:
                raise FormatError(name, text, "must be one line")

    @property
    def display_name(self) -> str:
        """The name the server shows for this account (``BOT_...``)."""
        return bp.display_name(self.user, guest=False)


class BgammonClient(ServerClient):
    """Runs one `BgammonAccount` until `stop`: connect, log in, host, play, reconnect."""

    account: BgammonAccount

    def __init__(self, account: BgammonAccount, **options: Any) -> None:
        super().__init__(account, **options)
        self.display_name = ""
        self.matches_started = 0
        self.declined = 0
        self.errors = 0
        self.match: MatchRun | None = None
        self._reset_session()

    @classmethod
    def account_from_config(cls, entry: ServerAccountConfig,
                            common: dict[str, Any]) -> BgammonAccount:
        return BgammonAccount(**common, match_length=entry.match_length,
                              keepalive_seconds=entry.keepalive or 25.0)

    def _status_details(self) -> dict[str, Any]:
        s = self.state
        out: dict[str, Any] = {
            "display_name": self.display_name, "matches_started": self.matches_started,
            "declined": self.declined, "errors": self.errors,
            "opponent": self.match.opponent if self.match else None,
        }
        if self.match is not None and s is not None:
            out["score"] = [s.me.points, s.opponent.points]
            out["length"] = s.length
            out["mat"] = str(self.match.path)
        return out

    def _event_context(self) -> dict[str, Any]:
        return {"match": self.match.game_id} if self.match is not None else {}

    # ------------------------------------------------------------------ session

    def _reset_session(self) -> None:
        self.state: bp.BoardState | None = None
        self._name = ""
        self._in_match = False
        self._game_id = 0
        self._accepted: str | None = None
        self._serial = 0
        self._acted_serial = -1
        self._acted_at = 0.0
        self._host_at: float | None = None
        self._opponent_left_at: float | None = None
        self._last_write = time.monotonic()
        self._last_read = time.monotonic()
        self._tried_tables: set[int] = set()
        self._refused: dict[tuple[Position, tuple[int, int]], set[Position]] = {}
        self._last_play: tuple[tuple[Position, tuple[int, int]], Position] | None = None
        self._plan: tuple[Position, Play] | None = None
        self._awaiting_list = False
        self._awaiting_join = False

    async def _session(self) -> None:
        acc = self.account
        self._reset_session()
        reader, writer = await self._connect(limit=1 << 20)
        try:
            await self._send(bp.login_command(acc.client_name, acc.user, acc.password),
                             shown=f"loginjson {acc.client_name} {acc.user}"
                                   + (" <password>" if acc.password else ""))
            while not self.stopping.is_set():
                try:
                    # asyncio.timeout, not wait_for: wait_for can swallow a cancellation that
                    # arrives as a line does (Python 3.11), and then the task never ends.
                    async with asyncio.timeout(0.25):
                        raw = await reader.readline()
                except TimeoutError:
                    await self._tick()
                    continue
                except ValueError as exc:  # a line over the 1 MiB limit: the stream is lost
                    raise ConnectionLost(f"unreadable line from the server: {exc}") from None
                if not raw:
                    raise ConnectionLost("connection closed by the server")
                self._last_read = time.monotonic()
                await self._on_line(raw.decode("utf-8", "replace"))
                if self.fatal is not None:
                    return
                await self._tick()
        finally:
            self._writer = None
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    async def _send(self, command: str, *, shown: str | None = None) -> None:
        if self._writer is None:
            raise ConnectionLost("not connected")
        self._writer.write((command + "\n").encode("utf-8"))
        await self._writer.drain()
        self._last_write = time.monotonic()
        if not command.startswith("pong"):
            self._emit("sent", command=shown if shown is not None else command)

    async def _tick(self) -> None:
        """Timers: keep-alive, dead-link detection, hosting, stalls, abandoned matches."""
        acc, now = self.account, time.monotonic()
        if now - self._last_read > acc.read_timeout:
            raise ConnectionLost(f"nothing from the server for {acc.read_timeout:g} s")
        if now - self._last_write >= acc.keepalive_seconds:
            await self._send("pong bgbot")
        if self._host_at is not None and now >= self._host_at and not self._in_match:
            self._host_at = None
            await self._host()
        if self._acted_serial == self._serial and self._in_match and now - self._acted_at > acc.stall_seconds:
            self._acted_serial = -1
            self._acted_at = now
            self._emit("stall", seconds=acc.stall_seconds)
            await self._send("board")
        if (self._opponent_left_at is not None and self._in_match
                and now - self._opponent_left_at > acc.abandon_after):
            self._opponent_left_at = None
            self._emit("leave", reason=f"opponent away for more than {acc.abandon_after:g} s")
            await self._send("leave")

    async def _host(self, look: bool = True) -> None:
        """Open a table, or first look for a bot's open table when ``join_bot_matches``."""
        if self.match is not None and not self.match.over:
            # Logged in again and not put back into the match: it ended (or was given up)
            # while we were away; the server does not say how.
            self._end_match("ended_while_away")
        self.phase = "hosting"
        if self.account.join_bot_matches and look:
            self._awaiting_list = True
            await self._send("list")
            return
        await self._send(bp.create_command(self.account.match_length, self.account.match_name))

    # ------------------------------------------------------------------ events

    async def _on_line(self, line: str) -> None:
        if not line.strip():
            return
        try:
            event = bp.parse_event(line)
        except Exception as exc:  # FormatError by contract; anything else is a bug, not an end
            if not isinstance(exc, FormatError):
                log.exception("bgammon %s: reading a line failed", self.account.user)
            self.errors += 1
            self.last_error = str(exc)
            self._emit("malformed", reason=str(exc), line=line.strip()[:300])
            if self._in_match:
                self._acted_serial = -1
                await self._send("board")
            return
        try:
            await self._dispatch(event)
        except (ConnectionLost, OSError):
            raise
        except Exception as exc:  # a bug or an agent failure must not end the account's run
            log.exception("bgammon %s: handling %s failed", self.account.user, type(event).__name__)
            self.errors += 1
            self.last_error = f"{type(exc).__name__}: {exc}"
            self._emit("internal_error", reason=self.last_error, event_type=type(event).__name__)
            if self._in_match:
                self._acted_serial = -1
                await self._send("board")

    async def _dispatch(self, event: bp.Event) -> None:
        if isinstance(event, bp.BoardState):
            await self._on_board(event)
        elif isinstance(event, bp.Welcome):
            self._name = self.display_name = event.player_name
            self.phase = "logged_in"
            self.backoff.reset()
            self._emit("login", name=event.player_name)
            self._host_at = time.monotonic() + self.account.settle_seconds
        elif isinstance(event, bp.Ping):
            await self._send(f"pong {event.message}".strip())
        elif isinstance(event, bp.Notice):
            self._emit("notice", message=event.message)
            if event.message.startswith("Connection terminated"):
                self.last_error = event.message
                if any(f in event.message for f in _FATAL):
                    self.fatal = event.message
        elif isinstance(event, bp.Say):
            self._emit("say", player=event.player, message=event.message)
        elif isinstance(event, bp.ListEvent):
            await self._on_list(event)
        elif isinstance(event, bp.Failed):
            await self._on_failed(event)
        elif isinstance(event, bp.Joined):
            await self._on_joined(event)
        elif isinstance(event, bp.Left):
            await self._on_left(event)
        elif isinstance(event, bp.Rolled):
            self._emit("rolled", player=event.player, dice=[event.roll1, event.roll2])
        elif isinstance(event, bp.Moved):
            self._emit("moved", player=event.player, moves=[list(m) for m in event.moves])
        elif isinstance(event, bp.Win):
            self._on_win(event)

    async def _on_list(self, event: bp.ListEvent) -> None:
        if not self._awaiting_list or self._in_match:
            return
        self._awaiting_list = False
        for g in event.games:
            if (g.players == 1 and not g.password and _BOT_TABLE.match(g.name)
                    and g.game_id not in self._tried_tables
                    and self.account.policy.min_length <= g.points <= self.account.policy.max_length):
                self._tried_tables.add(g.game_id)
                self._emit("join_table", game_id=g.game_id, name=g.name, points=g.points)
                self._awaiting_join = True
                await self._send(f"join {g.game_id}")
                return
        await self._host(look=False)

    async def _on_failed(self, event: bp.Failed) -> None:
        self._emit("failed", kind=event.kind, reason=event.reason)
        if event.kind == "move" and self._last_play is not None:
            key, after = self._last_play
            self._refused.setdefault(key, set()).add(after)
            self._last_play = None
            self._plan = None
        if event.kind in ("roll", "move", "ok") and self._in_match:
            self._acted_serial = -1
            await self._send("board")
        elif event.kind == "create" and not self._in_match:
            self._host_at = time.monotonic() + max(self.account.recreate_delay, 5.0)
        elif event.kind == "join" and self._awaiting_join and not self._in_match:
            self._awaiting_join = False
            await self._host(look=False)

    async def _on_joined(self, event: bp.Joined) -> None:
        if event.player == self._name:
            self._awaiting_join = False
            self._in_match, self._game_id = True, event.game_id
            self.phase = "waiting"
            self._emit("table", game_id=event.game_id)
        else:
            self._opponent_left_at = None
            self._emit("opponent_joined", player=event.player, game_id=event.game_id)

    async def _on_left(self, event: bp.Left) -> None:
        if event.player == self._name:
            self._in_match, self._accepted = False, None
            self._emit("left_table", game_id=self._game_id)
            if self.match is not None and not self.match.over:
                self._end_match("abandoned")
            self._host_at = time.monotonic() + self.account.recreate_delay
            return
        self._emit("opponent_left", player=event.player)
        if self._accepted == event.player:
            self._opponent_left_at = time.monotonic()
        elif self.match is None:
            self._accepted = None

    def _on_win(self, event: bp.Win) -> None:
        self._emit("win", player=event.player, points=event.points, resigned=event.resigned)
        if self.match is not None:
            try:
                self._record(self.match.on_win(event.player == self._name, event.points, event.resigned))
            except (IllegalAction, FormatError) as exc:
                self.errors += 1
                self._emit("mirror_error", reason=str(exc))
                self.match.lost = True
                self._record(self.match.on_win(event.player == self._name, event.points, event.resigned))

    async def _on_board(self, s: bp.BoardState) -> None:
        self.state = s
        self._serial += 1
        if s.spectating or s.variant != 0 or not self._in_match:
            return
        opponent = s.opponent.name
        if opponent and self._accepted != opponent:
            if not await self._judge(s):
                return
        if self.match is not None:
            try:
                self._record(self.match.observe(s))
            except (IllegalAction, FormatError) as exc:
                self.errors += 1
                self._emit("mirror_error", reason=str(exc))
                self.match.lost = True  # followed again from the next game on
            if s.winner and (s.me.points >= s.length or s.opponent.points >= s.length) and not self.match.over:
                await self._match_over(s)
                return
        await self._act(s)

    async def _judge(self, s: bp.BoardState) -> bool:
        name = s.opponent.name
        known = self.match is not None and self.match.opponent == name and not self.match.over
        resume = known or s.started != 0
        invitation = Invitation(name, s.length, rating=float(s.opponent.rating) if s.opponent.rating else None,
                                is_bot=name.upper().startswith("BOT_"), resume=resume)
        if self.match is not None and not known:
            self._end_match("abandoned")
        verdict = judge(self.account.policy, invitation, self.policy_state, time.time())
        self._emit("invitation", opponent=name, length=s.length, rating=invitation.rating,
                   resume=resume, accept=verdict.accept, reason=verdict.reason)
        if not verdict.accept:
            self.declined += 1
            if self.account.explain_declines:
                await self._send(f"say Sorry, {verdict.reason}")
            await self._send("leave")
            self._in_match = False
            return False
        self._accepted = name
        self._opponent_left_at = None
        self.policy_state.set_busy(True)
        self.phase = "playing"
        if not known:
            path = self.mat_path(f"bgammon-{self.versus(self._name, name)}-{s.length}pt-"
                                 f"{self._game_id}")
            self.match = MatchRun(self._name, name, s.length, self._game_id, path,
                                   site=f"bgammon {self.account.host}")
            self.matches_started += 1
            self._emit("match_start", opponent=name, length=s.length, game_id=self._game_id,
                       mat=str(path), resumed=resume)
            if self.account.greeting:
                await self._send("say " + self.account.greeting.format(opponent=name))
        else:
            self._emit("match_resumed", opponent=name, game_id=self._game_id)
        return True

    async def _match_over(self, s: bp.BoardState) -> None:
        assert self.match is not None
        name = self.match.opponent
        if self.account.farewell:
            await self._send("say " + self.account.farewell.format(opponent=name))
        self._end_match("finished", winner="me" if s.me.points >= s.length else "opponent",
                        score=[s.me.points, s.opponent.points])
        await self._send("leave")

    def _end_match(self, how: str, **info: Any) -> None:
        match = self.match
        if match is None:
            return
        match.over = True
        with contextlib.suppress(IllegalAction, FormatError):
            self._record(match.finalize(None, last=True))
        if match.games:
            match.write()
        self.policy_state.record_match_end(match.opponent, time.time())
        self.policy_state.set_busy(False)
        if how == "finished":
            self.matches_finished += 1
        self._emit("match_end", how=how, opponent=match.opponent, mat=str(match.path), **info)
        self.match = None
        self._accepted = None
        self.phase = "logged_in"

    def _record(self, events: list[tuple[str, dict[str, Any]]]) -> None:
        for name, info in events:
            self._emit(name, **info)

    # ------------------------------------------------------------------ decisions

    def _context(self, s: bp.BoardState) -> Context:
        owner = {0: CubeOwner.CENTRE, 1: CubeOwner.ME, 2: CubeOwner.OPPONENT}[s.cube_player]
        return Context(cube_value=s.cube_value, cube_owner=owner, match_length=s.length,
                       my_score=s.me.points, opponent_score=s.opponent.points,
                       crawford=s.crawford == 1, post_crawford=s.crawford == 2,
                       rules=Rules(cube=s.length != 1, cube_limit=64))

    async def _act(self, s: bp.BoardState) -> None:
        """Send the one command the board asks of us, once per board."""
        if self._accepted is None or s.winner or not s.opponent_present or self._acted_serial == self._serial:
            return
        try:
            command = await self._decide(s)
        except (IllegalAction, FormatError) as exc:
            self.errors += 1
            self._emit("decision_error", reason=str(exc))
            return
        if command is not None:
            self._acted_serial, self._acted_at = self._serial, time.monotonic()
            await self._send(command)

    async def _decide(self, s: bp.BoardState) -> str | None:
        assert self.agent is not None
        if s.turn == 0:
            return "roll" if s.may_roll_opening() else None
        pos, ctx = s.position(), self._context(s)
        if s.double_offered:
            if s.turn != 2:
                return None
            decision = await self.agent.take_decision(pos.swapped(), ctx)
            take = decision in (TakeDecision.TAKE, TakeDecision.BEAVER)
            cost = bp.resign_points(pos)
            if not take and self.account.take_when_drop_costs_more and cost > 1:
                self._emit("take_override", reason=f"declining would cost {cost} x {s.cube_value} "
                                                   f"on bgammon; taking instead")
                take = True
            self._emit("decision", action="take" if take else "drop", cube=s.cube_value * 2,
                       position_id=pos.position_id())
            return "ok" if take else "resign"
        if s.turn != 1:
            return None
        dice = s.dice
        if dice is None:
            offer = await self.agent.offer_resignation(pos, ctx)
            if offer and offer >= bp.resign_points(pos):
                self._emit("decision", action="resign", value=offer, position_id=pos.position_id())
                return "resign"
            if s.may_double() and ctx.may_double() and await self.agent.should_double(pos, ctx):
                self._emit("decision", action="double", cube=s.cube_value * 2,
                           position_id=pos.position_id())
                return "double"
            return "roll"
        if s.moves:
            return self._continue_play(s, pos)
        results = pos.play_results(dice)
        if not s.available or not results:
            if results:
                self._emit("decision_error", reason=f"server lists no moves but {len(results)} "
                                                   f"plays exist for {dice}")
            return "ok"
        key = (pos, dice)
        tried = self._refused.get(key, set())
        play = await self.agent.choose_play(pos, dice, ctx)
        legal = {after: p for p, after in results}
        try:
            after: Position | None = pos.apply(play)
        except IllegalAction:
            after = None
        if after not in legal:
            self._emit("decision_error", reason=f"agent chose an illegal play {play} for {dice}")
            after = results[0][1]
        if after in tried:
            # The server refused this play before: try the legal plays it has not refused,
            # those starting with a step the board lists as available first.
            offered = set(s.available)
            rest = [a for _, a in results if a not in tried]
            if not rest:
                self._emit("decision_error", reason=f"the server refused every legal play for {dice}")
                return None
            rest.sort(key=lambda a: (legal[a].steps[0].from_point if legal[a].steps[0].from_point != 25
                                     else 26, legal[a].steps[0].to_point) not in offered)
            after = rest[0]
        play = legal[after]
        self._last_play = key, after
        self._plan = (pos, play)
        self._emit("decision", action="move", dice=list(dice), play=str(play),
                   position_id=pos.position_id())
        return bp.move_command(Play(play.steps[:1]))

    def _continue_play(self, s: bp.BoardState, pos: Position) -> str:
        """The next step of the planned play, one ``move`` per step.

        The server checks every step of one ``move`` command against the moves legal *before*
        the command (``Game.AddMoves``), so ``move bar/23 13/11`` is refused when 13/11 is only
        legal after entering; one step at a time always works. Pending moves that are not a
        prefix of our plan (a resumed turn, the server's forced moves) are undone with ``reset``.
        """
        done = len(s.moves)
        if self._plan is not None:
            start, play = self._plan
            steps = play.steps
            with contextlib.suppress(IllegalAction):
                if done <= len(steps) and start.apply(steps[:done]) == pos:
                    if done < len(steps) and s.available:
                        return bp.move_command(Play(steps[done:done + 1]))
                    if done < len(steps) or not s.available:
                        if done < len(steps):
                            self._emit("decision_error", reason=f"the server sees no move after "
                                       f"{done} of the steps of {play}")
                        return "ok"
        return "reset" if s.available else "ok"
