"""One gnubg external-player connection's decisions: a board line in, one reply line out.

gnubg (``set player N external HOST:PORT``) sends a FIBS ``board:`` line whenever its external
player must act (reference/gnubg-interfaces.md §1.2, §2) and reads one line back. A
`PlayerSession` decodes each line with `parse_board` (gnubg dialect; our seat is learnt from
the first request and passed on afterwards, since a take request after a beaver cannot tell it),
asks its `Agent`, checks the answer against the rules core and writes it in words gnubg
accepts:

- roll-or-double request (dice 0) -> ``roll`` or ``double`` (``double`` only when our context
  allows it);
- move request -> the chosen legal play in gnubg notation (`format_play`, the core's own
  writer, so gnubg can always parse it), or an empty line when the roll cannot be played;
- take request -> ``take``, ``drop`` or ``beaver`` (beaver only in money play with beavers on,
  and a raccoon only with raccoons on, up to ``max_beavers`` per double, by default
  `Rules.max_redoubles`; otherwise a beaver becomes ``take``);
- on a roll-or-double or move request the agent may resign: ``resign single|gammon|
  backgammon``. gnubg declines by sending the identical line again; we then offer only a
  higher value on that line (gnubg stalls on a repeated offer, §2.5).

gnubg never asks an external player to accept a resignation (it answers for us, §2.5), so
there is no ``accept``/``reject`` reply in this protocol.

Anything we cannot answer (garbage, an impossible board, an agent failure or an illegal
decision) gets ``Error: <reason>``: gnubg prints it and stops automatic play, which is safe;
free text in a move request would crash gnubg 1.07 (§2.4). Every request, decision and game
boundary goes to an optional `JsonLinesLog` (see `bgbot.frontends.gnubg_log`).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Any

from ..agents.base import Agent
from ..core.errors import FormatError
from ..core.notation import format_play
from ..core.position import CHEQUERS, Position
from ..core.rules import Rules
from ..formats.fibsboard import Dialect, FibsBoard, Request, Side, parse_board
from ..formats.gnubgid import check_match_length
from ..players.base import Context, TakeDecision
from .gnubg_log import JsonLinesLog

__all__ = ["GNUBG_DEFAULT_RULES", "GNUBG_MAX_CUBE", "PlayerSession", "Reply", "RESIGN_WORDS"]

log = logging.getLogger("bgbot.gnubg_player")

GNUBG_MAX_CUBE = 4096
"""gnubg refuses a double or beaver past 4096 ("The cube is already at its highest supported
value") and then stalls; seen in a money session where beavers raised the cube that far."""

GNUBG_DEFAULT_RULES = Rules(jacoby=True, beavers=True, raccoons=True, cube_limit=GNUBG_MAX_CUBE)
"""gnubg 1.07's defaults for money sessions: Jacoby on, beavers (and raccoons) allowed, and its
highest cube, 4096.

A board line does not say which rules gnubg plays by; pass other `Rules` when gnubg was told
``set jacoby off`` or ``set beavers 0``. Match play ignores the money-only options.
"""

RESIGN_WORDS = {1: "single", 2: "gammon", 3: "backgammon"}
_SHOWN = 200  # characters of a bad line quoted in logs and error replies


@dataclass(frozen=True, slots=True)
class Reply:
    """The answer to one request: ``text`` (sent with a ``\\n``) and what it means."""

    text: str
    action: str
    """roll, double, move, take, drop, beaver, resign or error."""
    detail: dict[str, Any] = field(default_factory=dict)

    @property
    def is_error(self) -> bool:
        return self.action == "error"


@dataclass
class _GameView:
    """What we have seen of the current game (for game boundaries and the inferred ending)."""

    match: int
    number: int
    length: int
    score: tuple[int, int]
    """Before the game, (player 0, player 1)."""
    last_action: str | None = None
    last_board: FibsBoard | None = None
    after: Position | None = None
    """The board from our side after our last action (we are ``mover``)."""
    cube: int = 1
    centred: bool = True
    resigned: int = 0
    our_moves: int = 0


def _clip(text: str) -> str:
    return text if len(text) <= _SHOWN else text[:_SHOWN] + f"...[{len(text)} chars]"


class PlayerSession:
    """The protocol state of one connection: our seat, the game in progress, the log."""

    def __init__(
        self,
        agent: Agent,
        *,
        rules: Rules = GNUBG_DEFAULT_RULES,
        log_file: JsonLinesLog | None = None,
        label: str = "gnubg",
        max_beavers: int | None = None,
    ) -> None:
        self.agent = agent
        self.rules = rules
        self.max_beavers = max_beavers if max_beavers is not None else rules.max_redoubles
        """Beavers and raccoons allowed in one exchange (gnubg's ``set beavers N``, default 3);
        by default what ``rules`` allow (`Rules.max_redoubles`: 0 without beavers, 1 without
        raccoons, else `Rules.beaver_limit`)."""
        self.log_file = log_file
        self.label = label
        self.seat: int | None = None
        self.requests = 0
        self.errors = 0
        self._game: _GameView | None = None
        self._matches = 0
        self._pending_resign: tuple[str, int] | None = None
        self._declined: tuple[str, int] | None = None
        self._last: tuple[str, str] | None = None
        """(line, action) of our last answer, to notice gnubg refusing it (it asks again)."""
        self._refused: str | None = None
        self._exchange_base: int | None = None
        """The cube value when the current double was first offered (None = no exchange)."""
        self._rolled_on: str | None = None
        """The position id of our last ``roll`` reply, so a move request on it is the same turn."""

    # ------------------------------------------------------------------ the request cycle

    async def respond(self, raw: str) -> Reply:
        """Answer one request line (NULs, spaces and the line end are ignored)."""
        self.requests += 1
        started = time.perf_counter()
        line = raw.strip().strip("\x00").strip()
        if not line:
            return self._error("empty request line", raw)
        if not line.startswith("board:"):
            return self._error("expected a gnubg 'board:...' request line", line)
        try:
            board = parse_board(line, Dialect.GNUBG, my_seat=self.seat)
        except FormatError as exc:
            return self._error(f"bad board: {exc}", line)
        try:
            check_match_length("match_length", board.match_length)
        except FormatError as exc:
            return self._error(f"bad board: {exc}", line)
        if self.seat is None:
            self.seat = board.my_seat
            log.info("%s: we are gnubg's player %s", self.label, self.seat)
        declined = self._check_declined(line)
        self._refused = None
        if self._last is not None and self._last[0] == line and self._last[1] in ("double",
                                                                                 "beaver"):
            self._refused = self._last[1]
            log.warning("%s: gnubg refused our %s (it sent the same request again); "
                        "answering without it", self.label, self._refused)
            self._log("refused", n=self.requests, action=self._refused)
        self._observe(board)
        try:
            reply = await self._decide(board, line, declined)
        except Exception as exc:  # an agent that fails must not take the connection down
            log.exception("%s: agent %s failed on %s", self.label, self.agent.name, line)
            return self._error(f"agent {self.agent.name} failed: {exc}", line)
        if reply.is_error:
            return reply
        self._last = (line, reply.action)
        self._record(board, reply)
        self._log("request", n=self.requests, match=self._game.match if self._game else None,
                  game=self._game.number if self._game else None, kind=board.kind.value,
                  line=line, reply=reply.text, action=reply.action,
                  ms=round((time.perf_counter() - started) * 1000.0, 3),
                  cube=board.cube_value, **reply.detail)
        return reply

    def close(self, reason: str) -> None:
        """The connection ended: settle the game in progress (inferred) and close the log."""
        if self._game is not None:
            self._end_inferred(self._game)
            self._game = None
        self._log("disconnect", reason=reason, requests=self.requests, errors=self.errors)
        if self.log_file is not None:
            self.log_file.close()

    def protocol_error(self, reason: str, text: str = "") -> None:
        """A framing problem seen by the transport (too long, timeout): count and log it."""
        self.errors += 1
        self._log("error", n=self.requests, reason=reason, line=_clip(text))

    # ------------------------------------------------------------------ decisions

    async def _decide(self, board: FibsBoard, line: str, declined: int) -> Reply:
        context = board.context(rules=self.rules)
        if board.kind is Request.TAKE:
            if self._game is None or self._game.last_action not in ("double", "beaver"):
                self._exchange_base = board.cube_value  # a fresh double by gnubg
            return await self._take(board, context)
        self._exchange_base = None
        position = board.position  # roll and move requests: we are on roll
        same_turn = board.kind is Request.MOVE and self._rolled_on == position.position_id()
        first_of_turn = not same_turn
        self._rolled_on = None
        if first_of_turn:
            resign = await self._maybe_resign(position, context, line, declined)
            if resign is not None:
                return resign
        if board.kind is Request.ROLL_OR_DOUBLE:
            if (self._refused != "double" and context.may_double()
                    and await self.agent.should_double(position, context)):
                self._exchange_base = board.cube_value
                return Reply("double", "double", {"position_id": position.position_id(),
                                                  "to": 2 * board.cube_value})
            self._rolled_on = position.position_id()
            return Reply("roll", "roll", {"position_id": position.position_id()})
        assert board.dice is not None
        dice = board.dice
        results = position.play_results(dice)
        detail: dict[str, Any] = {"dice": list(dice), "position_id": position.position_id()}
        if not results:
            return Reply("", "move", {**detail, "play": "", "after": position.position_id()})
        chosen = await self.agent.choose_play(position, dice, context)
        legal = {after: play for play, after in results}
        try:
            reached = position.apply(chosen)
        except ValueError as exc:
            return self._error(f"agent {self.agent.name} chose an impossible play "
                               f"{chosen!r} with {dice[0]}{dice[1]}: {exc}", line)
        canonical = legal.get(reached)
        if canonical is None:
            return self._error(f"agent {self.agent.name} chose an illegal play "
                               f"{format_play(chosen) or '(none)'} with {dice[0]}{dice[1]}", line)
        text = format_play(canonical)
        return Reply(text, "move", {**detail, "play": text, "after": reached.position_id()})

    async def _take(self, board: FibsBoard, context: Context) -> Reply:
        # The agent sees the board from the side that (re)doubled, as the referee asks it.
        doubler_view = board.my_view().swapped()
        decision = await self.agent.take_decision(doubler_view, context)
        detail: dict[str, Any] = {"position_id": board.my_view().position_id(),
                                  "to": 2 * board.cube_value}
        if decision is TakeDecision.BEAVER:
            allowed, why = self._may_beaver(board)
            if self._refused == "beaver":
                allowed, why = False, "gnubg refused our beaver on this very request"
            if allowed:
                return Reply("beaver", "beaver", {**detail, "to": 4 * board.cube_value})
            log.info("%s: agent beavered where %s; answering take", self.label, why)
            decision = TakeDecision.TAKE
        if decision is TakeDecision.DROP:
            return Reply("drop", "drop", detail)
        return Reply("take", "take", detail)

    def _may_beaver(self, board: FibsBoard) -> tuple[bool, str]:
        """May we answer this take request with a beaver (or raccoon)? (allowed, why not)."""
        if not board.is_money:
            return False, "match play has no beavers"
        limit = min(self.rules.cube_limit or GNUBG_MAX_CUBE, GNUBG_MAX_CUBE)
        if 4 * board.cube_value > limit:
            return False, f"a beaver to {4 * board.cube_value} passes the cube limit {limit}"
        # Beavers so far in this exchange: the cube has doubled once per beaver since the
        # original offer of 2 x base (gnubg counts beavers and raccoons alike, `set beavers N`).
        base = self._exchange_base or board.cube_value
        so_far = max(board.cube_value // base, 1).bit_length() - 1
        if so_far >= self.max_beavers:
            return False, f"{so_far} beaver(s) already made and gnubg allows {self.max_beavers}"
        return True, ""

    async def _maybe_resign(self, position: Position, context: Context, line: str,
                            declined: int) -> Reply | None:
        value = await self.agent.offer_resignation(position, context)
        if not value:
            return None
        if value not in RESIGN_WORDS:
            log.warning("%s: agent offered an invalid resignation %r; ignored", self.label, value)
            return None
        if value <= declined:
            return None  # gnubg declined this (or more) on this very board: play on
        self._pending_resign = (line, value)
        return Reply(f"resign {RESIGN_WORDS[value]}", "resign",
                     {"value": value, "position_id": position.position_id()})

    def _check_declined(self, line: str) -> int:
        """The resignation value gnubg declined on this very line (0 = none)."""
        pending, self._pending_resign = self._pending_resign, None
        if pending is not None and pending[0] == line:
            self._declined = pending
            self._log("resignation_declined", value=pending[1])
            log.info("%s: gnubg declined our resignation (%s)", self.label,
                     RESIGN_WORDS[pending[1]])
        if self._declined is not None and self._declined[0] == line:
            return self._declined[1]
        self._declined = None
        return 0

    def _error(self, reason: str, line: str) -> Reply:
        self.errors += 1
        shown = _clip(line)
        log.warning("%s: request %d: %s; line: %r", self.label, self.requests, reason, shown)
        self._log("error", n=self.requests, reason=reason, line=shown)
        text = "Error: " + " ".join(reason.split())
        return Reply(text[:500], "error", {"reason": reason})

    # ------------------------------------------------------------------ game tracking

    def _scores(self, board: FibsBoard) -> tuple[int, int]:
        if self.seat == 0:
            return board.my_score, board.opponent_score
        return board.opponent_score, board.my_score

    def _observe(self, board: FibsBoard) -> None:
        """Notice a new game or match from the score (or a fresh board at the same score)."""
        score = self._scores(board)
        game = self._game
        if game is None:
            self._start(board, score, new_match=True)
            return
        if (board.match_length, score) != (game.length, game.score):
            gains = [score[i] - game.score[i] for i in (0, 1)]
            same_match = (
                board.match_length == game.length
                and min(gains) == 0
                and max(gains) > 0
                and (not game.length or max(game.score) < game.length)
            )
            if same_match:
                winner = 0 if gains[0] else 1
                ending = {"double": "drop", "drop": "drop", "beaver": "drop",
                          "resign": "resign"}.get(game.last_action or "", "normal")
                self._end(game, winner, gains[winner], ending, False, score)
                self._start(board, score, new_match=False)
            else:
                self._end_inferred(game)
                self._start(board, score, new_match=True)
            return
        if (board.kind is Request.MOVE and game.our_moves and board.cube_value == 1
                and board.my_view() == Position.initial()):
            # The same score and a fresh board: the last game was abandoned (new game/match).
            self._end(game, None, 0, "unknown", True, None)
            self._start(board, score, new_match=not any(score))

    def _start(self, board: FibsBoard, score: tuple[int, int], *, new_match: bool) -> None:
        if new_match or self._game is None:
            self._matches += 1
            number = 1
            names = (board.my_name, board.opponent_name)
            self._log("match_start", match=self._matches, length=board.match_length,
                      seat=self.seat, names=list(names if self.seat == 0 else names[::-1]))
        else:
            number = self._game.number + 1
        self._game = _GameView(self._matches, number, board.match_length, score)
        self._declined = None
        self._log("game_start", match=self._matches, game=number, score=list(score),
                  crawford=bool(board.crawford), post_crawford=bool(board.post_crawford))

    def _record(self, board: FibsBoard, reply: Reply) -> None:
        """Remember our action, for the ending of a game whose end we do not see."""
        game = self._game
        if game is None:
            return
        game.last_action = reply.action
        game.last_board = board
        game.cube = board.cube_value
        game.centred = board.cube_owner is None
        view = board.my_view()
        if reply.action == "move":
            game.our_moves += 1
            game.after = Position.from_position_id(reply.detail["after"])
        elif reply.action == "take":
            game.after, game.cube, game.centred = view, 2 * board.cube_value, False
        elif reply.action == "resign":
            game.resigned = int(reply.detail["value"])
            game.after = view
        else:
            game.after = view

    def _end_inferred(self, game: _GameView) -> None:
        """Settle a game whose end we did not see, from our last action and board."""
        action, after = game.last_action, game.after
        if self.seat is None or after is None or action is None:
            self._end(game, None, 0, "unknown", True, None)
            return
        me, them = self.seat, 1 - self.seat
        bg = self.rules.backgammon_value
        jacoby = game.length == 0 and self.rules.jacoby and self.rules.cube
        if action == "drop":
            self._end(game, them, game.cube, "drop", True, None)
        elif action == "double":  # gnubg dropped our double
            self._end(game, me, game.cube, "drop", True, None)
        elif action == "beaver":  # gnubg dropped our beaver
            self._end(game, me, 2 * game.cube, "drop", True, None)
        elif action == "resign":
            self._end(game, them, game.resigned * game.cube, "resign", True, None)
        elif action == "move" and not any(after.mover):  # we bore off our last chequer
            kind = _win_kind(after.opponent, bg)
            points = game.cube * (1 if jacoby and game.centred else kind)
            self._end(game, me, points, "normal", True, None)
        elif action == "move" and (kinds := _our_forced_finish(after, bg)):
            # gnubg cannot finish on its next roll and every roll of ours then bears off our
            # last chequers: the game ended with a move of ours gnubg played for us (a forced
            # move, which it does not ask for); the loser's position on its last roll decides
            # the kind, the smallest one it could leave when several are possible
            points = game.cube * (1 if jacoby and game.centred else min(kinds))
            self._end(game, me, points, "normal", True, None)
        else:  # gnubg won: by bearing off, the only way left that sends us nothing more
            kind = _win_kind(after.mover, bg)
            points = game.cube * (1 if jacoby and game.centred else kind)
            self._end(game, them, points, "normal", True, None)

    def _end(self, game: _GameView, winner: int | None, points: int, ending: str,
             inferred: bool, score_after: tuple[int, int] | None) -> None:
        self._log("game_end", match=game.match, game=game.number, winner=winner, points=points,
                  ending=ending, inferred=inferred,
                  score_after=list(score_after) if score_after else None)

    def _log(self, event: str, **fields: Any) -> None:
        if self.log_file is not None:
            self.log_file.write(event, **fields)


def _turns_at_least(pips: int) -> int:
    """Fewest turns that can move ``pips`` pips (24 a turn, double sixes)."""
    return -(-pips // 24)


def _our_forced_finish(after: Position, backgammon_value: int) -> set[int]:
    """The possible win kinds when we, having moved to ``after`` (we are ``mover``), surely
    win with moves gnubg played for us without asking (forced ones): all our chequers are home
    and the bear-off database's worst case for them is fewer turns than gnubg's fastest
    possible finish; empty when that is not certain. The kind is the smallest gnubg could
    still reach in those turns (a gammon or backgammon only when it surely cannot escape)."""
    from ..players.bearoff import default_database

    ours, theirs = after.mover, after.opponent
    if any(ours[6:]) or not any(ours):
        return set()
    try:
        turns = default_database().max_rolls(ours)
    except ValueError:
        return set()
    left = sum(theirs)
    pips = sum(n * (i + 1) for i, n in enumerate(theirs))
    if max(_turns_at_least(pips), -(-left // 4)) <= turns:
        return set()  # gnubg might have borne off first
    if left < CHEQUERS:
        return {1}
    first_off = sum(n * (i - 5) for i, n in enumerate(theirs) if i >= 6) + 1
    if _turns_at_least(first_off) <= turns:
        return {1}
    escape = sum(n * (i - 17) for i, n in enumerate(theirs) if i >= 18)
    if escape and _turns_at_least(escape) > turns:
        return {backgammon_value}
    return {2}


def _win_kind(loser: tuple[int, ...], backgammon_value: int) -> int:
    """Multiplier of a win against ``loser`` (25 counts, own numbering): 1, 2 or backgammon."""
    if sum(loser) < CHEQUERS:
        return 1
    if any(loser[18:25]):
        return backgammon_value
    return 2

