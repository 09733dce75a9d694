"""A STAND-IN for a bgammon.org server, for tests only -- not bgammon, and not a server to deploy.

bgammon.org cannot be reached from here and its server (tslocum/bgammon, Go, AGPL) must not be
committed, so this module re-implements the part of its TCP protocol a bot uses, from the
message tables and transcripts in shared/reference/online-servers.md §2 and the server's
``PROTOCOL.md`` / Go source read for facts: the plain ``hello`` line, ``loginjson``/``lj`` with
its name rules (lower-cased; ``bot_`` -> ``BOT_``; guests ``Guest_``; "That username is already
in use."), ``welcome`` + ``list`` after login, ``create`` / ``join`` (a ``BOT_`` may not join a
human's table) / ``leave``, the opening roll (one die each, ties re-rolled by the server, the
winner plays both dice), ``double`` / ``ok`` (take) / ``resign`` (decline, or resign on one's
turn: scored cube x 1/2/3 *by the position*, the server's own quirk for declines too), the
automatic roll for a player who may not double, ``move`` with ``failedmove "Illegal move."``,
``ok`` with ``failedok "The following legal moves are available: ..."``, ``win`` and the reset
for the next game, Crawford, ``board`` and ``say``; every client sees itself as player 1; pings
every ``ping_interval`` s and a client silent for ``client_timeout`` s is dropped; a player who
reconnects under the same name is put back into its unfinished match ("Rejoined match").

Test hooks: `StandInServer.cut` drops a player's connection (optionally keeping the name
registered for a while, as a half-open TCP link does, so a quick re-login is refused),
`StandInServer.inject` writes a raw line (a malformed event) to a player,
`StandInServer.refuse_next_move` answers a player's next ``move`` with "Illegal move.", and
``transcript`` records every line both ways. `StandInOpponent` is a scripted human guest. Not modelled: human-readable mode, accounts beyond a fixed
name/password table, ratings, spectators, rematches, acey-deucey and tabula, inactivity
forfeits, undoing a move by sending it backwards, and moves sent as one jump over several dice
(``24/13``). Modelled on purpose: ``move`` checks all its steps against the moves legal before
the command (the server's ``Game.AddMoves``), so ``move bar/23 13/11`` is refused when 13/11
only becomes legal after entering.

The game itself is a `bgbot.core.game.Game` with seeded dice (`SeededDice`), so every play a
client makes is checked by the rules core. (Once, by hand and outside the repository, the bot
also played full matches against the real server built from its sources on 127.0.0.1; that is
how the ``move`` quirk above was found. Nothing of that build is kept here.)
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import re
import time
from dataclasses import dataclass, field
from typing import Any

from bgbot.core.dice import GameDice, SeededDice
from bgbot.core.errors import IllegalAction
from bgbot.core.game import Game, Phase
from bgbot.core.position import Play, Position
from bgbot.core.rules import Rules

HELLO = ("hello Welcome to bgammon.org! Please log in by sending the 'login' command. You may "
         "specify a username, otherwise you will be assigned a random username. If you specify a "
         "username, you may also specify a password. Have fun!")
_NAME = re.compile(r"^[A-Za-z0-9_]+$")
BAR, HOME = 26, 0  # in each client's own view


@dataclass(eq=False)
class _Conn:
    writer: asyncio.StreamWriter
    name: str = ""
    table: _Table | None = None
    number: int = 0  # 1 or 2 at its table (absolute)
    dead: bool = False
    lingering: bool = False
    last_read: float = field(default_factory=time.monotonic)


def _flip(space: int) -> int:
    """The server's FlipSpace for player 2."""
    if 1 <= space <= 24:
        return 25 - space
    return {0: 25, 25: 0, 26: 27, 27: 26}[space]


def _space_text(space: int) -> str:
    return str(space) if 1 <= space <= 24 else ("bar" if space in (26, 27) else "off")


def _win_points(loser_view: Position) -> int:
    """serverGame.winPoints for the player who loses, from the loser's side as the mover."""
    loser = loser_view.mover
    if loser[24] or any(loser[18:24]):
        return 3
    return 2 if sum(loser) == 15 else 1


class _Table:
    """One bgammon match (serverGame)."""

    def __init__(self, server: StandInServer, table_id: int, name: str, points: int,
                 password: str) -> None:
        self.server, self.id, self.name, self.points, self.password = server, table_id, name, points, password
        self.clients: dict[int, _Conn | None] = {1: None, 2: None}
        self.names = {1: "", 2: ""}
        self.allowed: dict[int, str] | None = None
        self.rejoin = {1: False, 2: False}
        self.score = {1: 0, 2: 0}
        self.crawford = 0
        self.games = 0
        self.started = 0
        self.ended = 0
        self._new_game()

    # ------------------------------------------------------------------ game state

    def _new_game(self) -> None:
        rules = Rules(cube=self.points != 1, cube_limit=64)
        self.game = Game(rules, self.points, (self.score[1], self.score[2]), self.crawford == 1,
                         post_crawford=self.crawford == 2)
        self.dice: GameDice = self.server.dice.for_game(self.games)
        self.games += 1
        self.turn = 0
        self.rolls = {1: 0, 2: 0}
        self.opening: tuple[int, int] | None = None
        self.winner = 0
        self.pending: list[tuple[int, int]] = []  # steps in the mover's own numbering (25 = bar)
        self.turn_start: Position | None = None

    def reset(self) -> None:
        """Game.Reset: next game of the match, Crawford bookkeeping as the server does it."""
        if self.crawford == 0 and self.points > 1 and self.points - 1 in (self.score[1], self.score[2]):
            self.crawford = 1
        elif self.crawford == 1:
            self.crawford = 2
        self._new_game()

    def view(self, player: int) -> Position:
        """The board with ``player`` as the mover (pending moves of the side on roll applied)."""
        pos = self.game.board_for(player - 1)
        if self.pending and self.turn_start is not None and self.turn == player:
            pos = self.turn_start.apply(self.pending)
        elif self.pending and self.turn_start is not None:
            pos = self.turn_start.apply(self.pending).swapped()
        return pos

    def board_array(self, player: int) -> list[int]:
        pos = self.view(player)
        b = [0] * 28
        for i in range(24):
            b[i + 1] = pos.mover[i] - pos.opponent[23 - i]
        b[26], b[27] = pos.mover[24], -pos.opponent[24]
        b[0], b[25] = 15 - sum(pos.mover), -(15 - sum(pos.opponent))
        return b

    def dice_now(self) -> tuple[int, int] | None:
        return self.game.dice if self.game.phase is Phase.MOVE and self.turn else None

    def remaining_dice(self) -> list[int]:
        dice = self.dice_now()
        if dice is None:
            return []
        left = [dice[0]] * 4 if dice[0] == dice[1] else list(dice)
        for frm, to in self.pending:
            left.remove(self._die_for(frm, to, left))
        return left

    @staticmethod
    def _die_for(frm: int, to: int, left: list[int]) -> int:
        if to > 0:
            return frm - to
        if frm in left:
            return frm
        bigger = sorted(d for d in left if d > frm)
        return bigger[0] if bigger else frm

    def available(self) -> list[tuple[int, int]]:
        """Single steps (mover's numbering) that keep a legal play reachable."""
        if self.dice_now() is None or self.turn_start is None:
            return []
        finals = {after for _, after in self.game.play_results()}
        if not finals:
            return []
        total = max(len(p) for p, _ in self.game.play_results())
        done = len(self.pending)
        if done >= total:
            return []
        current = self.turn_start.apply(self.pending)
        out = []
        for step in self._steps(current, self.remaining_dice()):
            if self._reaches(current.apply([step]), self._left_after(step, self.remaining_dice()),
                             total - done - 1, finals):
                out.append(step)
        return sorted(set(out), reverse=True)

    @staticmethod
    def _left_after(step: tuple[int, int], left: list[int]) -> list[int]:
        rest = list(left)
        rest.remove(_Table._die_for(step[0], step[1], rest))
        return rest

    @staticmethod
    def _steps(pos: Position, left: list[int]) -> list[tuple[int, int]]:
        """Single-die steps the board allows (enter first; bear off only with all home, with a
        larger die only from the highest point)."""
        out = []
        froms = [25] if pos.mover[24] else [f for f in range(24, 0, -1) if pos.mover[f - 1]]
        for die in set(left):
            for frm in froms:
                to = frm - die
                if to <= 0:
                    if any(pos.mover[6:25]) or (to < 0 and any(pos.mover[frm:24])):
                        continue
                    to = 0
                with contextlib.suppress(IllegalAction):
                    pos.apply([(frm, to)])
                    out.append((frm, to))
        return out

    def _reaches(self, pos: Position, left: list[int], depth: int, finals: set[Position]) -> bool:
        if depth == 0:
            return pos in finals
        return any(self._reaches(pos.apply([s]), self._left_after(s, left), depth - 1, finals)
                   for s in self._steps(pos, left))

    def may_double(self, player: int) -> bool:
        g = self.game
        if self.winner or self.crawford == 1 or g.cube_value >= 64 or self.points == 1:
            return False
        owner = g.cube_owner
        return (self.turn == player and g.phase is Phase.ROLL
                and (owner is None or owner == player - 1))

    # ------------------------------------------------------------------ events

    def state(self, player: int) -> dict[str, Any]:
        """The JSON board event for ``player`` (its own view: it is player 1)."""
        other = 3 - player
        g = self.game
        dice = self.dice_now()
        roll = [0, 0]
        if self.turn == 0:
            roll = [self.rolls[player], self.rolls[other]]
        elif dice is not None:
            roll = [dice[0], dice[1]]
        owner = g.cube_owner
        cube_player = 0 if owner is None else (1 if owner == player - 1 else 2)
        turn = 0 if self.turn == 0 else (1 if self.turn == player else 2)
        winner = 0 if not self.winner else (1 if self.winner == player else 2)
        offered = g.phase in (Phase.TAKE, Phase.BEAVER_TAKE)

        def flip(pairs: list[tuple[int, int]]) -> list[list[int]]:
            conv = [[BAR if a == 25 else a, b] for a, b in pairs]
            return conv if self.turn == player else [[_flip(a), _flip(b)] for a, b in conv]

        def info(p: int, number: int) -> dict[str, Any]:
            return {"Number": number, "Name": self.names[p], "Rating": 0, "Points": self.score[p],
                    "Entered": True, "Inactive": 0, "Icon": 0}

        return {
            "Type": "board", "Player": "", "Started": self.started, "Ended": self.ended,
            "Player1": info(player, 1), "Player2": info(other, 2), "Variant": 0,
            "Board": self.board_array(player), "Turn": turn, "Roll1": roll[0], "Roll2": roll[1],
            "Roll3": 0, "Moves": flip(self.pending) if self.pending else None, "Winner": winner,
            "Points": self.points, "Crawford": self.crawford, "DoubleValue": g.cube_value,
            "DoublePlayer": cube_player, "DoubleOffered": offered, "Reroll": False,
            "PlayerNumber": 1, "Available": flip(self.available()) if self.turn else None,
            "Forced": False, "Spectating": False,
        }

    def each(self) -> list[tuple[int, _Conn]]:
        return [(p, c) for p, c in self.clients.items() if c is not None]

    async def send_boards(self) -> None:
        for p, c in self.each():
            await self.server.send(c, self.state(p))

    def listing(self) -> dict[str, Any]:
        return {"ID": self.id, "Password": bool(self.password), "Points": self.points,
                "Players": len(self.each()), "Rating": 0, "Name": self.name}


class StandInServer:
    """The stand-in server on 127.0.0.1 (see the module docstring: a test double, not bgammon)."""

    def __init__(self, *, seed: int = 1, ping_interval: float = 30.0, client_timeout: float = 40.0,
                 accounts: dict[str, str] | None = None) -> None:
        self.dice = SeededDice(seed)
        self.rng = random.Random(seed)
        self.ping_interval, self.client_timeout = ping_interval, client_timeout
        self.accounts = {k.lower(): v for k, v in (accounts or {}).items()}
        self.clients: list[_Conn] = []
        self.tables: list[_Table] = []
        self.transcript: list[tuple[str, str, str]] = []
        self._next_id = 1
        self._tasks: set[asyncio.Task[Any]] = set()
        self._refuse: set[str] = set()
        self._server: asyncio.base_events.Server | None = None
        self.port = 0

    async def start(self, port: int = 0) -> int:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", port)
        self.port = self._server.sockets[0].getsockname()[1]
        return self.port

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
        tasks = [t for t in self._tasks if not t.done()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        if self._server is not None:
            await self._server.wait_closed()

    # ------------------------------------------------------------------ test hooks

    def conn(self, name: str) -> _Conn | None:
        return next((c for c in self.clients if c.name.lower() == name.lower() and not c.dead), None)

    async def cut(self, name: str, linger: float = 0.0) -> None:
        """Drop ``name``'s connection as a network failure would. With ``linger`` the server
        only notices after that many seconds (a half-open link): until then the name stays in
        use and a new login under it is refused."""
        c = self.conn(name)
        if c is None:
            raise LookupError(f"{name} is not connected")
        c.dead, c.lingering = True, linger > 0
        with contextlib.suppress(Exception):
            c.writer.transport.abort()
        if linger:
            await asyncio.sleep(linger)
        await self._remove(c)

    async def inject(self, name: str, line: str) -> None:
        """Write a raw line (e.g. a malformed event) to ``name``."""
        c = self.conn(name)
        if c is None:
            raise LookupError(f"{name} is not connected")
        await self._write(c, line)

    def refuse_next_move(self, name: str) -> None:
        """Answer ``name``'s next ``move`` with ``failedmove "Illegal move."`` whatever it is (a
        server whose move rules disagree with the client's)."""
        self._refuse.add(name)

    def table_of(self, name: str) -> _Table | None:
        c = self.conn(name)
        return c.table if c else None

    # ------------------------------------------------------------------ plumbing

    async def _write(self, c: _Conn, line: str) -> None:
        if c.dead:
            return
        self.transcript.append((c.name or "?", "<-", line))
        try:
            c.writer.write((line + "\n").encode())
            await c.writer.drain()
        except (ConnectionError, RuntimeError):
            c.dead = True

    async def send(self, c: _Conn, event: dict[str, Any]) -> None:
        await self._write(c, json.dumps(event, separators=(",", ":")))

    async def notice(self, c: _Conn, message: str) -> None:
        await self.send(c, {"Type": "notice", "Player": "", "Message": message})

    async def _terminate(self, c: _Conn, reason: str) -> None:
        await self.notice(c, "Connection terminated: " + reason)
        c.dead = True
        c.writer.close()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._tasks.add(task)
        c = _Conn(writer)
        self.clients.append(c)
        await self._write(c, HELLO)
        pinger = asyncio.create_task(self._pings(c))
        try:
            while not c.dead:
                try:
                    async with asyncio.timeout(self.client_timeout):
                        raw = await reader.readline()
                except TimeoutError:
                    await self._terminate(c, "i/o timeout")
                    break
                if not raw or c.dead:
                    break
                line = raw.decode("utf-8", "replace").strip()
                self.transcript.append((c.name or "?", "->", line))
                if line:
                    await self._command(c, line)
        except (ConnectionError, OSError):
            pass
        except asyncio.CancelledError:
            c.lingering = True  # the server is shutting down: no farewells
        finally:
            pinger.cancel()
            c.dead = True
            if not c.lingering:
                await self._remove(c)
            writer.close()

    async def _pings(self, c: _Conn) -> None:
        while not c.dead:
            await asyncio.sleep(self.ping_interval)
            if not c.name:
                await self._terminate(c, "User did not send login command within 30 seconds.")
                return
            await self.send(c, {"Type": "ping", "Player": "", "Message": str(int(time.time()))})

    async def _remove(self, c: _Conn) -> None:
        """removeClient + server.removeClient: leave the table (the seat stays rejoinable)."""
        if c in self.clients:
            self.clients.remove(c)
        if c.table is not None:
            await self._leave_table(c)

    async def _leave_table(self, c: _Conn) -> None:
        t = c.table
        assert t is not None
        t.clients[c.number] = None
        t.names[c.number] = ""
        c.table = None
        event = {"Type": "left", "Player": c.name}
        await self.send(c, event)
        for _, other in t.each():
            await self.send(other, event)
        if not t.each() and t in self.tables:
            self.tables.remove(t)

    def _by_name(self, name: str) -> _Conn | None:
        return next((c for c in self.clients if c.name.lower() == name.lower()), None)

    # ------------------------------------------------------------------ commands

    async def _command(self, c: _Conn, line: str) -> None:
        keyword, _, rest = line.partition(" ")
        keyword = keyword.lower()
        params = rest.split()
        if not c.name:
            if keyword in ("loginjson", "lj"):
                await self._login(c, params)
            elif keyword == "login":
                await self._terminate(c, "(stand-in) only loginjson is modelled")
            return
        handler = getattr(self, f"_cmd_{_ALIASES.get(keyword, keyword)}", None)
        if handler is None:
            await self.notice(c, f"Unknown command: {keyword}")
            return
        await handler(c, params)

    async def _login(self, c: _Conn, params: list[str]) -> None:
        if not params:
            await self._terminate(c, "Please specify a client name.")
            return
        user = params[1] if len(params) > 1 else f"guest{self.rng.randrange(10**6)}"
        password = "_".join(params[2:])
        if not _NAME.match(user):
            await self._terminate(c, "Invalid username: must contain only letters, numbers and underscores.")
            return
        user = user.lower()
        if user.isdigit():
            await self._terminate(c, "Invalid username: must contain at least one non-numeric character.")
            return
        if self._by_name(user) or self._by_name("Guest_" + user) or (
                user.startswith("bot_") and self._by_name("BOT_" + user[4:])):
            await self._terminate(c, "That username is already in use.")
            return
        if len(user) > 18:
            await self._terminate(c, "Invalid username: must be 18 characters or less.")
            return
        if password:
            if self.accounts.get(user) != password:
                await self._terminate(c, "No account was found with the provided username and password. "
                                         "To log in as a guest, do not enter a password.")
                return
            name = "BOT_" + user[4:] if user.startswith("bot_") else user
        elif user.startswith("bot_"):
            name = "BOT_" + user[4:]
        elif user.startswith("guest_"):
            name = "Guest_" + user[6:]
        else:
            name = "Guest_" + user
        c.name = name
        await self.send(c, {"Type": "welcome", "Player": "", "PlayerName": name,
                            "Clients": len(self.clients), "Games": len(self.tables)})
        await self._cmd_list(c, [])
        for t in list(self.tables):
            if t.winner or t.allowed is None:
                continue
            for number in (1, 2):
                if t.allowed[number] == name and t.rejoin[number] and t.clients[number] is None:
                    await self._seat(c, t, number)
                    await self.notice(c, f"Rejoined match: {t.name}")

    async def _seat(self, c: _Conn, t: _Table, number: int) -> None:
        """addClient: joined + board to the newcomer, joined (PlayerNumber 2) + board to the other."""
        t.clients[number], t.names[number] = c, c.name
        c.table, c.number = t, number
        t.rejoin[number] = True
        await self.send(c, {"Type": "joined", "Player": c.name, "GameID": t.id, "PlayerNumber": 1})
        await self.send(c, t.state(number))
        other = t.clients[3 - number]
        if other is not None:
            await self.send(other, {"Type": "joined", "Player": c.name, "GameID": t.id, "PlayerNumber": 2})
            await self.send(other, t.state(3 - number))

    async def _cmd_list(self, c: _Conn, params: list[str]) -> None:
        games = [t.listing() for t in self.tables] or None
        await self.send(c, {"Type": "list", "Player": "", "Games": games})

    async def _cmd_pong(self, c: _Conn, params: list[str]) -> None:
        return

    async def _cmd_disconnect(self, c: _Conn, params: list[str]) -> None:
        await self._remove(c)
        await self._terminate(c, "Client disconnected")

    async def _cmd_create(self, c: _Conn, params: list[str]) -> None:
        async def fail(reason: str) -> None:
            await self.send(c, {"Type": "failedcreate", "Player": "", "Reason": reason})
            await self.notice(c, f"Failed to create match: {reason}")

        if c.table is not None:
            await fail("Please leave the match you are in before creating another.")
            return
        usage = ("To create a public match please specify whether it is public or private, and also "
                 "specify how many points are needed to win the match. When creating a private match, "
                 "a password must also be provided.")
        kind = params[0].lower() if params else ""
        if kind == "public" and len(params) >= 3:
            password, points, variant, name = "", params[1], params[2], " ".join(params[3:])
        elif kind == "private" and len(params) >= 4:
            password, points, variant, name = params[1], params[2], params[3], " ".join(params[4:])
        else:
            await fail(usage)
            return
        if variant in ("1", "2"):
            await fail("(stand-in) only variant 0, backgammon, is modelled")
            return
        if variant != "0" or not points.isdigit() or int(points) < 1:
            await fail(usage)
            return
        if not name.strip():
            name = f"{c.name}{chr(39) if c.name[-1] in 'sS' else chr(39) + 's'} match"
        t = _Table(self, self._next_id, name, min(int(points), 127), password)
        self._next_id += 1
        self.tables.append(t)
        await self._seat(c, t, self.rng.choice((1, 2)))
        await self.notice(c, f"Created match: {t.name}")

    async def _cmd_join(self, c: _Conn, params: list[str]) -> None:
        async def fail(reason: str) -> None:
            await self.send(c, {"Type": "failedjoin", "Player": "", "Reason": reason})

        if c.table is not None:
            await fail("Please leave the match you are in before joining another.")
            return
        if not params:
            await self.notice(c, "To join a match please specify its ID or the name of a player in the "
                                 "match. To join a private match, a password must also be specified.")
            return
        if params[0].isdigit():
            t = next((x for x in self.tables if x.id == int(params[0])), None)
        else:
            other = self._by_name(params[0])
            t = other.table if other else None
        if t is None:
            await fail("Match not found.")
            return
        if t.password and (len(params) < 2 or params[1] != t.password):
            await fail("Invalid password.")
            return
        if c.name.lower().startswith("bot_") and any(
                o is not None and not o.name.lower().startswith("bot_") for o in t.clients.values()):
            await fail("Bots are not allowed to join player matches. Please create a match instead.")
            return
        free = [n for n in (1, 2) if t.clients[n] is None]
        if not free or (t.allowed is not None and c.name not in t.allowed.values()):
            await fail("(stand-in) spectating is not modelled")
            return
        number = free[0] if t.allowed is None else next(n for n in (1, 2) if t.allowed[n] == c.name)
        await self._seat(c, t, number)
        await self.notice(c, f"Joined match: {t.name}")

    async def _cmd_leave(self, c: _Conn, params: list[str]) -> None:
        if c.table is None:
            await self.send(c, {"Type": "failedleave", "Player": "",
                                "Reason": "You are not currently in a match."})
            return
        c.table.rejoin[c.number] = False
        await self._leave_table(c)

    async def _cmd_board(self, c: _Conn, params: list[str]) -> None:
        if c.table is None:
            await self.notice(c, "You are not currently in a match.")
            return
        await self.send(c, c.table.state(c.number))

    async def _cmd_say(self, c: _Conn, params: list[str]) -> None:
        t = c.table
        if t is None:
            await self.notice(c, "Message not sent: You are not currently in a match.")
            return
        other = t.clients[3 - c.number]
        if other is None:
            await self.notice(c, "Message not sent: There is no one else in the match.")
            return
        await self.send(other, {"Type": "say", "Player": c.name, "Message": " ".join(params)})

    async def _cmd_roll(self, c: _Conn, params: list[str]) -> None:
        t = c.table

        async def fail(reason: str) -> None:
            await self.send(c, {"Type": "failedroll", "Player": "", "Reason": reason})

        if t is None:
            await fail("You are not currently in a match.")
            return
        if t.winner:
            return
        if t.clients[3 - c.number] is None:
            await fail("You may not roll until your opponent rejoins the match.")
            return
        me = c.number
        if t.turn == 0:
            if t.rolls[me]:
                await fail("It is not your turn to roll.")
                return
            if t.opening is None:
                t.opening = t.dice.opening()
            t.rolls[me] = t.opening[me - 1]
            if t.allowed is None:
                t.allowed = {1: t.names[1], 2: t.names[2]}
            for p, o in t.each():  # each viewer sees its own die as Roll1
                await self.send(o, {"Type": "rolled", "Player": c.name, "Roll1": t.rolls[p],
                                    "Roll2": t.rolls[3 - p], "Roll3": 0, "Selected": False})
            if t.rolls[1] and t.rolls[2]:
                if not t.started:
                    t.started = int(time.time())
                while not t.game.opening_roll(t.rolls[1], t.rolls[2]):
                    t.opening = t.dice.opening()
                    t.rolls = {1: t.opening[0], 2: t.opening[1]}
                    for p, o in t.each():
                        first = [t.rolls[1], 0] if p == 1 else [0, t.rolls[1]]
                        both = [t.rolls[p], t.rolls[3 - p]]
                        await self.send(o, {"Type": "rolled", "Player": t.names[1], "Roll1": first[0],
                                            "Roll2": first[1], "Roll3": 0, "Selected": False})
                        await self.send(o, {"Type": "rolled", "Player": t.names[2], "Roll1": both[0],
                                            "Roll2": both[1], "Roll3": 0, "Selected": False})
                t.turn = 1 if t.rolls[1] > t.rolls[2] else 2
                t.turn_start = t.game.position
                await t.send_boards()
            return
        if me != t.turn or t.game.phase is not Phase.ROLL:
            await fail("It is not your turn to roll.")
            return
        await self._roll_for(t, me, c.name)

    async def _roll_for(self, t: _Table, player: int, name: str) -> None:
        dice = t.dice.roll()
        t.game.roll(dice)
        t.turn_start = t.game.position
        t.pending = []
        for _, o in t.each():
            await self.send(o, {"Type": "rolled", "Player": name, "Roll1": dice[0], "Roll2": dice[1],
                                "Roll3": 0, "Selected": False})
        await t.send_boards()

    async def _cmd_double(self, c: _Conn, params: list[str]) -> None:
        t = c.table
        if t is None:
            await self.notice(c, "You are not currently in a match.")
            return
        if t.winner:
            return
        if t.turn != c.number:
            await self.notice(c, "It is not your turn.")
            return
        if not t.may_double(c.number):
            await self.notice(c, "You may not double at this time.")
            return
        other = t.clients[3 - c.number]
        if other is None:
            await self.notice(c, "You may not double until your opponent rejoins the match.")
            return
        t.game.double()
        value = t.game.offered_cube
        await self.notice(c, f"Double offered to opponent ({value} points).")
        await self.notice(other, f"{c.name} offers a double ({value} points).")
        await t.send_boards()

    async def _cmd_resign(self, c: _Conn, params: list[str]) -> None:
        t = c.table
        if t is None:
            await self.notice(c, "You are not currently in a match.")
            return
        if t.winner:
            return
        other = t.clients[3 - c.number]
        if other is None:
            await self.notice(c, "You may not resign until your opponent rejoins the match.")
            return
        g, me = t.game, c.number
        loser_view = t.view(me)
        if g.phase is Phase.TAKE and g.seat_to_act == me - 1:
            g.drop()
            await self.notice(c, "Declined double offer.")
            await self.notice(other, f"{c.name} declined double offer.")
        elif t.turn == 0 or t.turn != me:
            await self.notice(c, "You may not resign until it is your turn.")
            return
        else:
            g.resign(me - 1, _win_points(loser_view))
            g.accept_resignation()
            await self.notice(c, "Resigned.")
            await self.notice(other, f"{c.name} resigned.")
        # The server scores a decline like a resignation: cube x winPoints(position).
        await self._win(t, 3 - me, _win_points(loser_view) * g.cube_value, resigned=c.name)

    async def _cmd_move(self, c: _Conn, params: list[str]) -> None:
        t = c.table

        async def fail(reason: str, frm: int = 0, to: int = 0) -> None:
            await self.send(c, {"Type": "failedmove", "Player": "", "From": frm, "To": to, "Reason": reason})

        if t is None:
            await fail("You are not currently in a match.")
            return
        if t.winner:
            await self.send(c, t.state(c.number))
            return
        if t.turn != c.number:
            await fail("It is not your turn to move.")
            return
        if t.clients[3 - c.number] is None:
            await fail("You may not move until your opponent rejoins the match.")
            return
        usage = "Specify one or more moves in the form FROM/TO. For example: 8/4 6/4"
        if not params:
            await fail(usage)
            return
        steps: list[tuple[int, int]] = []
        for p in params:
            parts = p.split("/")
            if len(parts) != 2:
                await fail(usage)
                return
            spaces = [_parse_space(x) for x in parts]
            if -1 in spaces:
                await fail(usage)
                return
            frm, to = spaces
            steps.append((25 if frm == BAR else frm, to))
        if c.name in self._refuse:
            self._refuse.discard(c.name)
            await fail("Illegal move.")
            return
        # Game.AddMoves checks every step against the moves legal *before* the command, then
        # adds them one by one, silently skipping a step that is no longer legal.
        legal_before = set(t.available())
        if any(step not in legal_before for step in steps):
            await fail("Illegal move.")
            return
        for step in steps:
            if step in t.available():
                t.pending.append(step)
        assert t.turn_start is not None
        if not any(t.turn_start.apply(t.pending).mover):
            t.winner = c.number  # AddMoves sets Winner before the moved/board events go out
        for p, o in t.each():
            conv = [[BAR if a == 25 else a, b] for a, b in steps]
            moves = conv if p == c.number else [[_flip(a), _flip(b)] for a, b in conv]
            await self.send(o, {"Type": "moved", "Player": c.name, "Moves": moves})
            await self.send(o, t.state(p))
        if t.winner:  # handleWin
            await self._finish_turn(t, c.number)

    async def _cmd_reset(self, c: _Conn, params: list[str]) -> None:
        """``reset``: undo the pending moves of the player on roll (online-servers.md, bgammon
        commands) and send both players the board."""
        t = c.table
        if t is None:
            await self.notice(c, "You are not currently in a match.")
            return
        if t.turn != c.number or t.winner:
            return
        if t.pending:
            t.pending = []
            await t.send_boards()

    async def _cmd_ok(self, c: _Conn, params: list[str]) -> None:
        t = c.table
        if t is None:
            await self.notice(c, "You are not currently in a match.")
            return
        if t.winner:
            return
        other = t.clients[3 - c.number]
        if other is None:
            await self.notice(c, "You must wait until your opponent rejoins the match before continuing the game.")
            return
        g = t.game
        if g.phase is Phase.TAKE:
            if t.turn != c.number:
                g.take()
                await self.notice(c, "Accepted double.")
                await self.notice(other, f"{c.name} accepted double.")
                await t.send_boards()
            else:
                await self.notice(c, "Waiting for response from opponent.")
            return
        if t.turn != c.number:
            await self.notice(c, "It is not your turn.")
            return
        if t.dice_now() is None:
            await self.notice(c, "You must roll first.")
            return
        available = t.available()
        if available:
            text = ", ".join(f"{_space_text(BAR if a == 25 else a)}/{_space_text(b)}" for a, b in available)
            await self.send(c, {"Type": "failedok", "Player": "",
                                "Reason": f"The following legal moves are available: {text}"})
            return
        await self._finish_turn(t, c.number)

    async def _finish_turn(self, t: _Table, player: int) -> None:
        """Record the turn in the core game (which checks it), then next turn or the win."""
        t.game.move(Play(t.pending))
        t.pending, t.turn_start = [], None
        if t.game.is_over:
            outcome = t.game.outcome
            assert outcome is not None
            await self._win(t, player, outcome.points, resigned="")
            return
        t.turn = 3 - player
        if not t.may_double(t.turn):
            await self._roll_for(t, t.turn, t.names[t.turn])
        else:
            await t.send_boards()

    async def _win(self, t: _Table, winner: int, points: int, resigned: str) -> None:
        """handleWin / the resign branch: score, win event, reset (or the match is over)."""
        t.winner = winner
        t.score[winner] += points
        event = {"Type": "win", "Player": t.names[winner], "Points": points if t.points > 1 else 0,
                 "Rating": 0, "Resigned": resigned}
        if t.score[winner] < t.points:
            t.reset()
        else:
            t.ended = int(time.time())
        for p, o in t.each():
            await self.send(o, event)
            await self.send(o, t.state(p))


def _parse_space(text: str) -> int:
    if text.isdigit():
        value = int(text)
        return value if 0 <= value <= 27 else -1
    return {"bar": BAR, "b": BAR, "off": HOME, "o": HOME, "home": HOME, "h": HOME}.get(text.lower(), -1)


_ALIASES = {"ls": "list", "c": "create", "j": "join", "l": "leave", "d": "double", "r": "roll",
            "m": "move", "mv": "move", "k": "ok", "s": "say", "b": "board"}


class StandInOpponent:
    """A scripted *human* guest for the stand-in: joins a player's table and plays from the
    boards (legal plays from the rules core). Test scaffolding only.

    ``double``: offer the cube at the first chance in every game; ``answer``: "take" or "drop"
    when doubled; ``smart``: choose plays with the heuristic player (deterministic)
    instead of at random.
    """

    def __init__(self, port: int, user: str, *, table_of: str, seed: int = 7, double: bool = False,
                 answer: str = "take", smart: bool = True, host: str = "127.0.0.1") -> None:
        self.host, self.port, self.user, self.table_of = host, port, user, table_of
        self.rng = random.Random(seed)
        self.double, self.answer = double, answer
        self.player: Any = None
        self.plan: Play | None = None
        if smart:  # the frozen linear evaluation: the same games while the player is retrained
            from bgbot.players.heuristic import HeuristicPlayer, shared_evaluator

            self.player = HeuristicPlayer(evaluator=shared_evaluator("linear"))
        self.name = ""
        self.events: list[Any] = []
        self.sent: list[str] = []
        self.doubled_games: set[tuple[int, int]] = set()
        self._writer: asyncio.StreamWriter | None = None
        self._acted = -1
        self._serial = 0
        self.done = asyncio.Event()

    async def _send(self, line: str) -> None:
        assert self._writer is not None
        self.sent.append(line)
        self._writer.write((line + "\n").encode())
        await self._writer.drain()

    async def run(self, *, rejoin_wait: float = 0.1) -> None:
        from bgbot.frontends.bgammon import protocol as bp

        reader, self._writer = await asyncio.open_connection(self.host, self.port)
        await self._send(f"loginjson standin-opponent/en {self.user}")
        try:
            while True:
                try:
                    async with asyncio.timeout(0.5):
                        raw = await reader.readline()
                except TimeoutError:
                    if self.name and not self._serial:
                        await self._send(f"join {self.table_of}")
                    elif self._serial:
                        await self._send("pong keepalive")
                    continue
                if not raw:
                    return
                event = bp.parse_event(raw.decode())
                self.events.append(event)
                if isinstance(event, bp.Welcome):
                    self.name = event.player_name
                    await self._send(f"join {self.table_of}")
                elif isinstance(event, bp.Failed) and event.kind == "join":
                    await asyncio.sleep(rejoin_wait)
                    await self._send(f"join {self.table_of}")
                elif isinstance(event, bp.Ping):
                    await self._send(f"pong {event.message}")
                elif isinstance(event, bp.Left) and event.player == self.name:
                    self.done.set()
                    return
                elif isinstance(event, bp.BoardState):
                    self._serial += 1
                    if event.winner and max(event.me.points, event.opponent.points) >= event.length:
                        self.done.set()  # stays at the table (to hear a farewell) until cancelled
                        continue
                    command = self._decide(event)
                    if command and self._acted != self._serial:
                        self._acted = self._serial
                        await self._send(command)
        finally:
            self._writer.close()

    def _decide(self, s: Any) -> str | None:
        if s.winner or not s.opponent_present:
            return None
        if s.turn == 0:
            return "roll" if s.may_roll_opening() else None
        if s.double_offered:
            return ("ok" if self.answer == "take" else "resign") if s.turn == 2 else None
        if s.turn != 1:
            return None
        if s.dice is None:
            key = (s.me.points, s.opponent.points)
            if self.double and s.may_double() and key not in self.doubled_games:
                self.doubled_games.add(key)
                return "double"
            return "roll"
        from bgbot.frontends.bgammon.protocol import move_command

        if not s.available:
            return "ok"
        if s.moves:  # one step per command, as a human drags chequers
            if self.plan is None or len(s.moves) >= len(self.plan):
                return "reset"
            return move_command(Play(self.plan.steps[len(s.moves):len(s.moves) + 1]))
        plays = s.position().legal_plays(s.dice)
        if not plays:
            return "ok"
        if self.player is None:
            self.plan = self.rng.choice(plays)
        else:
            from bgbot.core.context import Context

            context = Context(match_length=s.length, my_score=s.me.points, opponent_score=s.opponent.points)
            self.plan = self.player.choose_play(s.position(), s.dice, context)
        return move_command(Play(self.plan.steps[:1]))


async def _main(port: int, seed: int) -> None:
    server = StandInServer(seed=seed)
    bound = await server.start(port)
    print(f"bgammon stand-in (a test double, not bgammon) on 127.0.0.1:{bound}", flush=True)
    await asyncio.Event().wait()


if __name__ == "__main__":
    import argparse

    cli = argparse.ArgumentParser(description="Run the bgammon STAND-IN test server (not bgammon).")
    cli.add_argument("--port", type=int, default=0)
    cli.add_argument("--seed", type=int, default=1)
    options = cli.parse_args()
    asyncio.run(_main(options.port, options.seed))
