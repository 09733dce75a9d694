"""A bgbot account on FIBS (or any CLIP server): log in, take invitations by policy, play.

`FibsClient` is the FIBS dialect of `bgbot.frontends.server.ServerClient` (which keeps the
account connected, reconnecting with backoff, and owns the agent, the event log and the
status): asyncio streams, the line reader and typed events of `bgbot.frontends.fibs.clip`, and
on return it resumes the match that was interrupted (FIBS saves it).  Play is driven by the
latest ``board:`` line (FIBS orientation, colour and direction re-read every time), never by
prompts; prompts and silence only make us ask for ``board`` again (reference/online-servers.md
§1, §4.4).

Every match is logged as a ``.mat`` file (`bgbot.formats.mat`, rewritten atomically at each game
end) rebuilt from what the server tells both players -- FIBS shows both sides' rolls and moves --
by replaying them through a core `Game` (`MatchMirror`); a game the mirror cannot follow (for
instance one begun before a restart) is left out and said so in the event log.  Every game
event also goes to the optional ``on_event`` callback (a dict per event, for the daemon's
store) and to a JSON-lines log beside the ``.mat`` files.  The password is never logged.
"""

from __future__ import annotations

import asyncio
import logging
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from ...core.errors import FormatError
from ...formats.gnubgid import LONGEST_MATCH
from ...formats.fibsboard import FibsBoard, Request, Side
from ...formats.notation import format_fibs_move
from ...players.base import Context, TakeDecision
from ...util import safe_name
from ..invitations import Invitation, judge
from ..accounts import ServerAccountConfig
from ..server import LoginFailed, ServerAccount, ServerClient
from . import clip
from .mirror import FIBS_RULES, MatchMirror

__all__ = ["FibsAccount", "FibsClient", "parse_invite"]

log = logging.getLogger("bgbot.fibs")

CLIP_VERSION = 1008
WANTED_TOGGLES = {
    "ready": True, "autoboard": True, "moreboards": True, "notify": True, "double": True,
    "greedy": False, "automove": False, "autodouble": False, "moves": False, "ratings": False,
    "bell": False, "report": False, "crawford": True,
}
"""The settings a bot needs (§1.5). ``toggle`` flips, so only the ones that differ are sent."""

_GAME_COMMANDS = frozenset({"roll", "move", "double", "accept", "reject", "redouble", "resign",
                            "join"})


@dataclass(frozen=True)
class FibsAccount(ServerAccount):
    """One account on one CLIP server, and how to play with it.

    ``invite`` lists (opponent, length) pairs the bot invites whenever it is free and they are
    online and ready (length None = unlimited).  ``greeting``/``farewell``/``decline_message``
    are ``tell``-ed to the opponent with ``{opponent}`` (and ``{reason}``) filled in; empty =
    say nothing.  Times are seconds.
    """

    KIND: ClassVar[str] = "fibs"

    host: str = "fibs.com"
    port: int = 4321
    client_name: str = "bgbot"
    invite: tuple[tuple[str, int | None], ...] = ()
    decline_message: str = ""
    keepalive: float = 120.0
    retry_after: float = 10.0
    """Silence (while we are expected to act, or an action is unanswered) before asking for
    ``board`` again, and the interval of ``join`` retries."""
    autoroll_grace: float = 2.0
    """How long to wait for FIBS's automatic roll before sending ``roll`` ourselves."""
    invite_grace: float = 0.5
    """Wait this long after an invitation for its WARNING line before answering."""
    flush_after: float = 0.5
    """Hand out an unterminated line after this much silence."""
    backoff_base: float = 2.0

    def events_log_name(self) -> str:
        return f"{safe_name(self.user)}-events.jsonl"


def parse_invite(item: object, field_name: str = "invite") -> tuple[str, int | None]:
    """``"bob:5"``, ``"bob:unlimited"``, ``"bob"`` (5 points) or ``{opponent="bob", length=5}``."""
    if isinstance(item, dict):
        name, length = item.get("opponent"), item.get("length", 5)
    elif isinstance(item, str):
        name, _, text = item.partition(":")
        length = None if text == "unlimited" else (int(text) if text.isdigit() else
                                                   (5 if not text else -1))
    else:
        raise FormatError(field_name, item, "an invitation is 'name:length' or a table")
    if length == "unlimited":
        length = None
    if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z_]+", name):
        raise FormatError(field_name, item, "the opponent must be a FIBS name (letters and _)")
    if length is not None and (not isinstance(length, int) or length < 1):
        raise FormatError(field_name, item, "the length is a positive number or 'unlimited'")
    return name, length


# ======================================================================= the client


@dataclass
class _PendingInvitation:
    event: clip.Invited
    at: float
    warned: bool = False
    asked_who: bool = False


def _is_bot(name: str, who: clip.WhoInfo | None) -> bool | None:
    """A guess: FIBS has no bot flag. Bots' names, clients or e-mails say "bot" by custom."""
    texts = [name] + ([who.client, who.email] if who is not None else [])
    if any("bot" in t.lower() for t in texts):
        return True
    return False if who is not None else None


class FibsClient(ServerClient):
    """Keeps a `FibsAccount` logged in and playing until `stop` (see the module docstring)."""

    account: FibsAccount

    def __init__(self, account: FibsAccount, **options: Any) -> None:
        super().__init__(account, **options)
        # match state, kept across reconnects
        self.mirror: MatchMirror | None = None
        self.opponent: str | None = None
        self._saved: set[str] = set()
        self._too_long: set[str] = set()
        """Opponents whose saved match is longer than bgbot plays: never resumed."""
        self._reset_connection_state()

    @classmethod
    def account_from_config(cls, entry: ServerAccountConfig,
                            common: dict[str, Any]) -> FibsAccount:
        invites = tuple(parse_invite(item if ":" in item else f"{item}:{entry.match_length}",
                                     "invite") for item in entry.invite)
        return FibsAccount(**common, invite=invites, keepalive=entry.keepalive or 120.0)

    async def _goodbye(self, writer: asyncio.StreamWriter) -> None:
        """Log out: FIBS saves a match in progress."""
        writer.write(b"bye\r\n")
        await writer.drain()

    def _status_details(self) -> dict[str, Any]:
        mirror = self.mirror
        return {
            "opponent": self.opponent,
            "match_length": mirror.length if mirror else None,
            "score": list(mirror.score) if mirror else None,
            "saved_matches": sorted(self._saved),
        }

    # ---------------------------------------------------------------- connection

    def _reset_connection_state(self) -> None:
        self._login_sent = False
        self._logged_in = False
        self._in_motd = False
        self._refused: set[str] = set()
        self._settings_done = False
        self._who: dict[str, clip.WhoInfo] = {}
        self._online: set[str] = set()
        self._board: FibsBoard | None = None
        self._board_raw = ""
        self._acted_key: str | None = None
        self._board_due: float | None = None
        self._roll_due: float | None = None
        self._join_due: float | None = None
        self._last_board_request = 0.0
        self._board_misses = 0
        self._last_action_at = 0.0
        self._pending_inv: dict[str, _PendingInvitation] = {}
        self._last_inviter: str | None = None
        self._invited_at: dict[str, float] = {}
        self._joining_until: float | None = None
        self._last_rx = self.clock()
        self._last_tx = self.clock()
        self._declined_resign = 0
        self._resign_sent = 0
        self._resign_pending = False
        self._verify_mirror = False
        self._answered_double = False
        self._after_login_done = False
        self._logged_in_at = 0.0

    async def _session(self) -> None:
        self._reset_connection_state()
        reader, writer = await self._connect()
        queue: asyncio.Queue[clip.Event | None] = asyncio.Queue()
        reader_task = asyncio.create_task(self._read(reader, queue))
        started = self.clock()
        try:
            while not self.stopping.is_set():
                try:
                    event = await asyncio.wait_for(queue.get(), timeout=0.1)
                except asyncio.TimeoutError:
                    event = None
                    if not queue.empty():
                        continue
                else:
                    if event is None:
                        break
                    self._last_rx = self.clock()
                    await self._handle(event)
                if not self._login_sent and self.clock() - started > 10:
                    self._send_login()
                await self._timers()
        finally:
            reader_task.cancel()
            if self.opponent is not None:
                self._saved.add(self.opponent)  # the server saves an interrupted match
                self.opponent = None
            self.policy_state.set_busy(False)

    async def _read(self, reader: asyncio.StreamReader,
                    queue: asyncio.Queue[clip.Event | None]) -> None:
        splitter = clip.LineSplitter()
        try:
            while True:
                try:
                    data = await asyncio.wait_for(reader.read(65536), self.account.flush_after)
                except asyncio.TimeoutError:
                    lines = splitter.flush()
                else:
                    if not data:
                        for line in splitter.flush():
                            queue.put_nowait(self._parse(line))
                        break
                    dropped = splitter.dropped
                    lines = splitter.feed(data)
                    if splitter.dropped > dropped:
                        log.warning("%s: dropped a line longer than %d bytes from the server",
                                    self.account.user, splitter.max_line)
                for line in lines:
                    queue.put_nowait(self._parse(line))
        except (OSError, asyncio.IncompleteReadError):
            pass
        finally:
            queue.put_nowait(None)

    def _parse(self, line: str) -> clip.Event:
        log.debug("%s <- %s", self.account.user, line)
        event = clip.parse_line(line)
        if isinstance(event, (clip.MotdStart, clip.MotdEnd)):
            self._in_motd = isinstance(event, clip.MotdStart)
        elif isinstance(event, clip.Unknown) and not self._in_motd and self._logged_in:
            log.info("%s: unknown line %r", self.account.user, event.text)
        return event

    def _send(self, command: str) -> None:
        if self._writer is None or self._writer.is_closing():
            return
        if command.split(" ", 1)[0] in _GAME_COMMANDS:
            self._last_action_at = self.clock()
        shown = command if not command.startswith("login ") else \
            " ".join(command.split()[:4] + ["********"])
        log.debug("%s -> %s", self.account.user, shown)
        self._writer.write(command.encode("utf-8") + b"\r\n")
        self._last_tx = self.clock()

    def _send_login(self) -> None:
        account = self.account
        self._login_sent = True
        self._send(f"login {account.client_name} {CLIP_VERSION} {account.user} "
                   f"{account.password or ''}")

    # ---------------------------------------------------------------- events

    def _is_me(self, name: str) -> bool:
        return name == clip.YOU or name.lower() == self.account.user.lower()

    def _seat(self, name: str) -> int:
        return 0 if self._is_me(name) else 1

    async def _handle(self, event: clip.Event) -> None:
        """React to one server event, then log the game actions the mirror recorded."""
        await self._dispatch(event)
        self._emit_actions(self.mirror)

    async def _dispatch(self, event: clip.Event) -> None:  # noqa: C901 - one dispatch table
        now = self.clock()
        if isinstance(event, clip.LoginPrompt):
            if self._login_sent:
                raise LoginFailed(f"the server refused the login of {self.account.user}")
            self._send_login()
        elif isinstance(event, clip.Welcome):
            self._logged_in = True
            self._logged_in_at = now
            self.phase = "logged_in"
            self.backoff.reset()
            self._emit("login", user=event.name)
        elif isinstance(event, clip.OwnInfo):
            if not self._settings_done:
                self._settings_done = True
                self._send("set boardstyle 3")
                for key, wanted in WANTED_TOGGLES.items():
                    if key in event.settings and event.settings[key] != wanted:
                        self._send(f"toggle {key}")
        elif isinstance(event, clip.WhoInfo):
            self._who[event.name.lower()] = event
            self._online.add(event.name.lower())
            if event.ready and event.name.lower() in self._refused:
                self._refused.discard(event.name.lower())
                self._invited_at.pop(event.name.lower(), None)  # invite again now
            self._maybe_resume_with(event.name)
            waiting = self._pending_inv.get(event.name.lower())
            if waiting is not None and waiting.asked_who:
                waiting.at = now - self.account.invite_grace  # what we waited for
        elif isinstance(event, clip.WhoEnd):
            self._after_login()
        elif isinstance(event, clip.UserLoggedIn):
            self._online.add(event.name.lower())
            self._maybe_resume_with(event.name)
        elif isinstance(event, clip.UserLoggedOut):
            self._online.discard(event.name.lower())
            self._who.pop(event.name.lower(), None)
        elif isinstance(event, clip.Invited):
            self._last_inviter = event.name
            self._pending_inv[event.name.lower()] = _PendingInvitation(event, now)
        elif isinstance(event, clip.SavedMatchWarning):
            # The warning names no one: it belongs to the last invitation.
            last = self._pending_inv.get((self._last_inviter or "").lower())
            if last is not None:
                last.warned = True
        elif isinstance(event, clip.MatchStarted):
            self._start_match(event.opponent, event.length or 0, resumed=False)
        elif isinstance(event, clip.MatchLoaded):
            self._start_match(event.opponent, None, resumed=True)
        elif isinstance(event, clip.ResumeInfo):
            self._resume_info(event)
        elif isinstance(event, clip.NewGame):
            self._join_due = None
            self._declined_resign = 0
            self._resign_pending = False
            self._acted_key = None
            self._verify_mirror = False
            if self.mirror is not None:
                self.mirror.new_game()
                self._emit("game_start", opponent=self.opponent, game=self.mirror.games_seen,
                           score=list(self.mirror.score))
        elif isinstance(event, clip.OpeningRoll):
            if self._is_me(event.first):
                mine, theirs = event.first_die, event.second_die
            else:
                mine, theirs = event.second_die, event.first_die
            if self.mirror is not None:
                if self.mirror.game is None:
                    # BaldLies starts the next game of a loaded match without "Starting a new game".
                    self.mirror.new_game()
                    self._emit("game_start", opponent=self.opponent, game=self.mirror.games_seen,
                               score=list(self.mirror.score))
                self.mirror.opening(mine, theirs)
        elif isinstance(event, clip.Rolled):
            seat = self._seat(event.name)
            if seat == 0:
                self._roll_due = None
                self._board_due = None
            if self.mirror is not None:
                self.mirror.rolled(seat, event.dice)
        elif isinstance(event, clip.Moved):
            if not self._is_me(event.name) and self.mirror is not None:
                direction = -self._board.direction if self._board is not None else 1
                self.mirror.moved(1, event.text, direction)
        elif isinstance(event, (clip.RollPrompt, clip.PleaseMove)):
            # A prompt is only a hint: if our board does not say the same, the board is stale.
            board = self._board
            expected = Request.ROLL_OR_DOUBLE if isinstance(event, clip.RollPrompt) else Request.MOVE
            if board is None or board.kind is not expected or board.to_act is not Side.ME:
                self._request_board()
        elif isinstance(event, clip.OnlyMove):
            self._board_due = now + 0.5
        elif isinstance(event, clip.CantMove):
            seat = self._seat(event.name)
            if self.mirror is not None:
                self.mirror.cant_move(seat)
            self._board_due = now + min(1.0, self.account.retry_after)
        elif isinstance(event, clip.Doubled):
            seat = self._seat(event.name)
            if self.mirror is not None:
                self.mirror.doubled(seat)
            if seat == 1:
                self._answered_double = False
                await self._answer_double()
            else:
                self._board_due = now + self.account.retry_after
        elif isinstance(event, clip.DoubleAccepted):
            if self.mirror is not None:
                self.mirror.taken()
            self._board_due = now + min(1.0, self.account.retry_after)
        elif isinstance(event, clip.DoubleRejected):
            seat = self._seat(event.name)
            if self.mirror is not None:
                self.mirror.dropped()
            self._game_over(1 - seat, event.points, "drop")
        elif isinstance(event, clip.ResignOffered):
            seat = self._seat(event.name)
            if self.mirror is not None:
                self.mirror.resigned(seat, event.points)
            if seat == 1:
                await self._answer_resignation(event.points)
        elif isinstance(event, clip.ResignAccepted):
            self._resign_pending = False
            accepter = self._seat(event.name)
            if self.mirror is not None:
                self.mirror.resignation_answered(True)
            self._game_over(accepter, event.points, "resign")
        elif isinstance(event, clip.ResignRejected):
            self._resign_pending = False
            rejecter = self._seat(event.name)
            if self.mirror is not None:
                self.mirror.resignation_answered(False)
            if rejecter == 1:
                self._declined_resign = max(self._declined_resign, self._resign_sent)
            self._acted_key = None
            if rejecter == 1:
                await self._act()  # our turn goes on; FIBS sends no new board here
            else:
                self._board_due = now + min(1.0, self.account.retry_after)
        elif isinstance(event, clip.GameWon):
            self._game_over(self._seat(event.name), event.points, "normal")
        elif isinstance(event, clip.ScoreLine):
            self._score_line(event)
        elif isinstance(event, clip.JoinPrompt):
            self._send("join")
            self._join_due = now + self.account.retry_after
        elif isinstance(event, clip.WaitForJoin):
            self._join_due = None
        elif isinstance(event, clip.MatchWon):
            self._match_over(event)
        elif isinstance(event, clip.GameSaved):
            self._interrupted(event)
        elif isinstance(event, clip.BoardLine):
            await self._on_board(event)
        elif isinstance(event, clip.Chat):
            if self.opponent and event.name.lower() == self.opponent.lower() \
                    and event.text.strip().lower() in ("move", "roll", "join", "board"):
                self._acted_key = None
                self._board_due = now
                if event.text.strip().lower() == "join":
                    self._join_due = now
        elif isinstance(event, clip.ServerMessage):
            self._server_message(event)
        elif isinstance(event, clip.ConnectionTimedOut):
            self._emit("server_timeout")

    # ---------------------------------------------------------------- invitations

    def _after_login(self) -> None:
        if self._after_login_done or not self._logged_in:
            return
        self._after_login_done = True
        self.phase = "idle"
        if self.opponent is not None:
            self._saved.add(self.opponent)
        for name in sorted(self._saved):
            self._maybe_resume_with(name)

    def _maybe_resume_with(self, name: str) -> None:
        """Invite a returning opponent to resume our saved match with them."""
        if not self._after_login_done or self.policy_state.busy:
            return
        key = name.lower()
        if key not in {s.lower() for s in self._saved} or key not in self._online \
                or key in self._too_long:
            return
        now = self.clock()
        if now - self._invited_at.get(key, -1e9) < 2 * self.account.retry_after:
            return
        self._invited_at[key] = now
        self._send(f"invite {name}")
        self._emit("invite_sent", opponent=name, length=None, resume=True)

    def _decide_invitation(self, pending: _PendingInvitation) -> None:
        inv = pending.event
        who = self._who.get(inv.name.lower())
        policy = self.account.policy
        needs_who = any(x is not None for x in (policy.min_rating, policy.max_rating,
                                                policy.min_experience, policy.max_experience))
        if who is None and needs_who and not pending.asked_who:
            pending.asked_who = True
            pending.at = self.clock() + 2.0
            self._send(f"rawwho {inv.name}")
            return
        self._pending_inv.pop(inv.name.lower(), None)
        if inv.resume and inv.name.lower() in self._too_long:
            reason = f"our saved match is longer than bgbot plays ({LONGEST_MATCH} points)"
            self._emit("invitation", opponent=inv.name, length=inv.length, resume=True,
                       accept=False, reason=reason, warned=pending.warned)
            log.info("%s: declining %s: %s", self.account.user, inv.name, reason)
            return
        invitation = Invitation(inv.name, inv.length, who.rating if who else None,
                                who.experience if who else None, _is_bot(inv.name, who), inv.resume)
        verdict = judge(policy, invitation, self.policy_state, self.clock())
        self._emit("invitation", opponent=inv.name, length=inv.length, resume=inv.resume,
                   accept=verdict.accept, reason=verdict.reason, warned=pending.warned)
        if not verdict.accept:
            log.info("%s: declining %s: %s", self.account.user, inv.name, verdict.reason)
            if self.account.decline_message:
                self._send(f"tell {inv.name} " + self.account.decline_message.format(
                    opponent=inv.name, reason=verdict.reason))
            return
        log.info("%s: %s", self.account.user, verdict.reason)
        if pending.warned and not inv.resume:
            # Joining would throw away our saved match with them: offer to resume it instead.
            self._saved.add(inv.name)
            self._invited_at.pop(inv.name.lower(), None)
            self._maybe_resume_with(inv.name)
            return
        self.policy_state.set_busy(True)
        self._joining_until = self.clock() + max(10.0, 2 * self.account.retry_after)
        self._send(f"join {inv.name}")

    def _invite_configured(self) -> None:
        if self.policy_state.busy or not self._after_login_done:
            return
        now = self.clock()
        saved = {name.lower() for name in self._saved}
        for name in sorted(self._saved):
            self._maybe_resume_with(name)  # a saved match comes first
        for name, length in self.account.invite:
            key = name.lower()
            if key in saved:
                continue
            who = self._who.get(key)
            if key not in self._online or (who is not None and (not who.ready or who.opponent)):
                continue
            if now - self._invited_at.get(key, -1e9) < max(60.0, 6 * self.account.retry_after):
                continue
            last = self.policy_state.last_match_end(name)
            if last is not None and now - last < self.account.policy.cooldown_seconds:
                continue
            self._invited_at[key] = now
            self._send(f"invite {name} {'unlimited' if length is None else length}")
            self._emit("invite_sent", opponent=name, length=length, resume=False)
            return

    # ---------------------------------------------------------------- match

    def _mat_path(self, opponent: str, length: int, resumed: bool) -> Path | None:
        kind = f"{length}pt" if length else "money"
        suffix = "-resumed" if resumed else ""
        return self.mat_path(f"{self.versus(self.account.user, opponent)}-{kind}{suffix}")

    def _leave_if_too_long(self, opponent: str, length: int | None) -> bool:
        """A match longer than bgbot plays (gnubg's limit, 64 points: a resumed saved match
        can be 99): leave it (the server keeps it saved), say why once, never resume it."""
        if length is None or length <= LONGEST_MATCH:
            return False
        key = opponent.lower()
        if key not in self._too_long:
            self._too_long.add(key)
            reason = (f"a {length}-point match is longer than bgbot plays ({LONGEST_MATCH} "
                      "points, gnubg's limit)")
            log.warning("%s: leaving the match with %s: %s", self.account.user, opponent,
                        reason)
            self._emit("match_too_long", opponent=opponent, length=length, reason=reason)
            self._send("leave")
        self._saved = {s for s in self._saved if s.lower() != key}
        self.opponent = None
        self.mirror = None
        self._board = None
        self._acted_key = None
        self._board_due = self._roll_due = None
        self.phase = "logged_in"
        self.policy_state.set_busy(False)
        return True

    def _start_match(self, opponent: str, length: int | None, *, resumed: bool) -> None:
        if self._leave_if_too_long(opponent, length):
            return
        self.policy_state.set_busy(True)
        self._joining_until = None
        self._saved = {s for s in self._saved if s.lower() != opponent.lower()}
        self.opponent = opponent
        self.phase = "playing"
        self._acted_key = None
        self._answered_double = False
        same = self.mirror is not None and self.mirror.opponent.lower() == opponent.lower()
        if resumed and same:
            self._verify_mirror = True
            self._emit("match_resumed", opponent=opponent, mirror=True)
        else:
            known = length if length is not None else 0
            self.mirror = MatchMirror(self.account.user, opponent, known,
                                      self._mat_path(opponent, known, resumed), resumed=resumed)
            self._emit("match_resumed" if resumed else "match_start", opponent=opponent,
                       length=length, mirror=False)
            if not resumed and self.account.greeting:
                self._send(f"tell {opponent} " + self.account.greeting.format(opponent=opponent))
        if resumed:
            self._board_due = self.clock() + min(1.0, self.account.retry_after)

    def _resume_info(self, event: clip.ResumeInfo) -> None:
        mirror = self.mirror
        if mirror is None or not mirror.resumed or mirror.games_seen:
            return
        if event.key == "match length" and event.value.isdigit() and not mirror.length:
            mirror.length = int(event.value)
            mirror.record.length = mirror.length
            mirror.path = self._mat_path(mirror.opponent, mirror.length, True)
        elif event.key == "points" and event.name is not None and event.value.isdigit():
            mirror.score[self._seat(event.name)] = int(event.value)
            mirror.set_score(*mirror.score)

    def _game_over(self, winner: int, points: int, ending: str) -> None:
        self._acted_key = None
        self._board_due = None
        self._roll_due = None
        mirror = self.mirror
        if mirror is None:
            return
        if mirror.game is None and mirror.broken is None:
            return  # already closed by an earlier line of the same ending
        game_no = mirror.games_seen
        recorded = mirror.game_over(winner, points)
        self._emit_actions(mirror)  # the game's last actions (our winning move) before its end
        self._emit("game_end", opponent=self.opponent, game=game_no, winner=winner, points=points,
                   ending=ending, score=list(mirror.score), recorded=recorded)
        if not recorded:
            self._emit("mirror_lost", game=game_no)

    def _score_line(self, event: clip.ScoreLine) -> None:
        mirror = self.mirror
        if mirror is None:
            return
        mine = theirs = None
        for name, points in event.scores.items():
            if self._is_me(name):
                mine = points
            elif name.lower() == mirror.opponent.lower():
                theirs = points
        if mine is not None and theirs is not None and [mine, theirs] != mirror.score:
            log.warning("%s: score line %s-%s differs from ours %s; taking the server's",
                        self.account.user, mine, theirs, mirror.score)
            mirror.set_score(mine, theirs)

    def _match_over(self, event: clip.MatchWon) -> None:
        mirror = self.mirror
        opponent = self.opponent or (mirror.opponent if mirror else "")
        if mirror is not None:
            mirror.write()
        self._emit("match_end", opponent=opponent, winner=self._seat(event.name),
                   length=event.length, score=[event.winner_score, event.loser_score],
                   mat=str(mirror.path) if mirror and mirror.path else None,
                   games_recorded=mirror.games if mirror else 0,
                   games_lost=mirror.games_lost if mirror else 0)
        if opponent:
            self.policy_state.record_match_end(opponent, self.clock())
            if self.account.farewell:
                self._send(f"tell {opponent} " + self.account.farewell.format(opponent=opponent))
        self.matches_finished += 1
        self.mirror = None
        self.opponent = None
        self.policy_state.set_busy(False)
        self.phase = "idle"
        self._board = None
        self._join_due = None

    def _interrupted(self, event: clip.GameSaved) -> None:
        opponent = self.opponent or event.name
        self._emit("match_saved", opponent=opponent, how=event.how)
        if opponent and opponent != clip.YOU:
            self._saved.add(opponent)
        self.policy_state.set_busy(False)
        self.phase = "idle"
        self._board = None
        self._board_due = self._roll_due = self._join_due = None

    def _server_message(self, event: clip.ServerMessage) -> None:
        text = event.text
        lowered = text.lower()
        refusing = re.match(r"(\S+) is refusing games", text)
        if refusing:
            self._refused.add(refusing.group(1).lower())
        if self._joining_until is not None and (
                "refusing" in lowered or "didn't invite" in lowered or "join who" in lowered
                or "already playing" in lowered or "corrupt" in lowered):
            self._joining_until = None
            self.policy_state.set_busy(self.opponent is not None)
            self._emit("join_failed", reason=text)
            return
        if "unknown command" in lowered:
            return  # e.g. BaldLies adds "** Unknown command: 'board'" to its board reply
        recent = self.clock() - self._last_action_at < self.account.retry_after
        if self.opponent is not None and self._board is not None and recent:
            # Probably an error about our last command: look at the board again.
            self._acted_key = None
            self._board_due = self.clock() + min(1.0, self.account.retry_after)

    # ---------------------------------------------------------------- play

    def _crawford(self, board: FibsBoard, raw: str) -> tuple[bool, bool]:
        flags = self.mirror.crawford_flags() if self.mirror is not None else None
        if flags is not None:
            return flags
        if board.crawford is not None and board.post_crawford is not None:
            return board.crawford, board.post_crawford
        tokens = raw.split(":")
        nobody_may_double = tokens[38] == "0" and tokens[39] == "0" and board.cube_value == 1
        return nobody_may_double, not nobody_may_double

    def _context(self, board: FibsBoard, side: Side | None = None) -> Context:
        crawford, post = self._crawford(board, self._board_raw)
        return board.context(rules=FIBS_RULES, crawford=crawford, post_crawford=post, side=side)

    async def _on_board(self, event: clip.BoardLine) -> None:
        now = self.clock()
        if event.board is None:
            self._emit("malformed_board", line=event.raw, error=str(event.error))
            log.warning("%s: malformed board line (%s); asking for the board again",
                        self.account.user, event.error)
            if now - self._last_board_request > 1.0:
                self._request_board()
            else:
                self._board_due = self._last_board_request + 1.0
            return
        board = event.board
        if board.my_name != clip.YOU:
            return  # watching
        if self._leave_if_too_long(board.opponent_name, board.match_length):
            return
        self._board, self._board_raw = board, event.raw
        self._board_due = None
        self._board_misses = 0
        mirror = self.mirror
        if mirror is not None and mirror.pending is not None:
            mirror.commit_pending(board.my_view())
        if self._verify_mirror and mirror is not None and board.kind is not Request.GAME_OVER:
            self._verify_mirror = False
            game = mirror.game
            if game is not None and mirror.broken is None and game.board_for(0) != board.my_view():
                mirror.broken = "after the resume the server's board differs from the record"
                self._emit("mirror_lost", game=mirror.games_seen, reason=mirror.broken)
        if self.opponent is None and board.kind is not Request.GAME_OVER:
            # A board in a match we did not see start (a resume whose lines we missed).
            self._start_match(board.opponent_name, board.match_length, resumed=True)
        await self._act()

    def _request_board(self) -> None:
        self._answered_double = False  # a TAKE board that comes back is answered again
        self._board_misses += 1
        self._last_board_request = self.clock()
        self._acted_key = None
        self._send("board")
        self._emit("board_request")

    async def _act(self) -> None:
        board, raw = self._board, self._board_raw
        if board is None or self.agent is None or raw == self._acted_key or self._resign_pending:
            return
        if board.kind is Request.GAME_OVER or board.to_act is not Side.ME:
            return
        now = self.clock()
        if board.kind is Request.TAKE:
            self._acted_key = raw
            await self._answer_double()
            return
        position = board.position
        context = self._context(board)
        if board.kind is Request.ROLL_OR_DOUBLE:
            self._acted_key = raw
            value = await self.agent.offer_resignation(position, context)
            if value > self._declined_resign and 1 <= value <= 3:
                self._resign_sent = value
                self._resign_pending = True  # no other game command until it is answered
                self._send("resign " + "ngb"[value - 1])
                self._board_due = now + self.account.retry_after
                return
            tokens = raw.split(":")
            if tokens[38] == "1" and context.may_double() \
                    and await self.agent.should_double(position, context):
                self._send("double")
                self._board_due = now + self.account.retry_after
                return
            if tokens[38] == "1" and context.may_double():
                self._send("roll")
                self._board_due = now + self.account.retry_after
            else:
                self._roll_due = now + self.account.autoroll_grace  # FIBS should roll for us
            return
        # MOVE
        assert board.dice is not None
        self._roll_due = None
        if not position.legal_plays(board.dice) or not board.can_move:
            return
        self._acted_key = raw
        play = await self.agent.choose_play(position, board.dice, context)
        text = format_fibs_move(play, board.direction)
        if not text:
            return
        if self.mirror is not None:
            self.mirror.play_ours(play)
        self._send(f"move {text}")
        self._emit("move_sent", dice=list(board.dice), text=text, position_id=position.position_id())
        self._board_due = now + self.account.retry_after

    async def _answer_double(self) -> None:
        board = self._board
        if board is None or self.agent is None or self._answered_double:
            if board is None:
                self._board_due = self.clock()
            return
        self._answered_double = True
        # The doubler is on roll: their view, context from me.
        position = board.position if board.on_roll is Side.OPPONENT else board.position.swapped()
        context = self._context(board, Side.ME)
        decision = await self.agent.take_decision(position, context)
        if decision is TakeDecision.BEAVER and board.is_money and board.redoubles:
            self._send("redouble")
        elif decision is TakeDecision.DROP:
            self._send("reject")
        else:
            self._send("accept")
        self._emit("double_answer", decision=decision.value)

    async def _answer_resignation(self, points: int) -> None:
        board = self._board
        if self.agent is None:
            return
        if board is None:
            self._send("reject")
            return
        value = max(1, min(3, points // max(1, board.cube_value)))
        position = board.my_view().swapped()  # the resigner's view
        context = self._context(board, Side.ME)
        accept = await self.agent.accept_resignation(position, context, value)
        self._send("accept" if accept else "reject")

    # ---------------------------------------------------------------- timers

    async def _timers(self) -> None:
        now = self.clock()
        account = self.account
        for pending in sorted(self._pending_inv.values(), key=lambda p: p.at):
            if now - pending.at >= account.invite_grace:
                self._decide_invitation(pending)
        if self._joining_until is not None and now > self._joining_until:
            self._joining_until = None
            if self.opponent is None:
                self.policy_state.set_busy(False)
        if self._roll_due is not None and now >= self._roll_due:
            self._roll_due = None
            board = self._board
            if board is not None and board.kind is Request.ROLL_OR_DOUBLE and board.to_act is Side.ME:
                self._send("roll")
                self._board_due = now + account.retry_after
        if self._board_due is not None and now >= self._board_due:
            # Unanswered requests back off: 2, 4, 8... times retry_after (at most 64).
            wait = account.retry_after * 2 ** min(6, self._board_misses + 1)
            self._board_due = now + wait if self.opponent is not None else None
            if self.opponent is not None:
                self._request_board()
        if self._join_due is not None and now >= self._join_due:
            self._join_due = now + account.retry_after
            if self.opponent is not None:
                self._send("join")
        if self._logged_in and now - self._last_tx >= account.keepalive:
            self._send("time" if self.opponent is not None else "show saved")
        if self._logged_in and not self._after_login_done and now - self._logged_in_at > 5.0:
            self._after_login()
        self._invite_configured()

