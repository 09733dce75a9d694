"""A STAND-IN for a FIBS server, for tests only -- it is not FIBS and not a FIBS clone.

FIBS (fibs.com:4321) cannot be reached from the test machines, so this small asyncio server
speaks CLIP with ``boardstyle 3`` as the protocol tables and real transcripts of
/work/shared/reference/online-servers.md §1 show it: the ``login: `` prompt without a line end,
the numbered CLIP lines 1-8 and 12-19, the invitation, join, game, cube, resignation, score and
match-end sentences word for word, the ``board:`` line (written with
`bgbot.formats.fibsboard.format_board`), matches saved when a player drops and resumed with
``invite <name>`` / ``join``.  The game itself is a core `Game` inside a core `Match`, so moves
are validated and the dice come from a seeded `SeededDice`; the match's true record (both
players' moves) is kept as a `MatchRecord` for tests to compare against.

It also reproduces the awkward parts the reference reports (`Faults`): the second invitation
line unterminated until the next output (BaldLies), a line glued to the end of a board line
(the spec's "spanner"), a lost ``roll`` command, a malformed board line, a connection dropped
mid-game.  What it does not know, it answers ``** Unknown command: '...'``.

Run it by hand: ``python tests/fibs_standin.py --port 4321`` (any user name logs in; an unknown
one is registered on the spot).
"""

from __future__ import annotations

import argparse
import asyncio
import random
import time
from dataclasses import dataclass, field
from typing import Iterable

from bgbot.core.dice import GameDice, SeededDice
from bgbot.core.errors import FormatError, IllegalAction
from bgbot.core.game import Game, Phase
from bgbot.core.match import Match
from bgbot.core.position import Play
from bgbot.core.rules import Rules
from bgbot.formats.fibsboard import Dialect, FibsBoard, Request, Side, format_board
from bgbot.formats.mat import MatchRecord
from bgbot.formats.notation import parse_fibs_move

TOGGLES = ("allowpip", "autoboard", "autodouble", "automove", "away", "bell", "crawford",
           "double", "greedy", "moreboards", "moves", "notify", "ratings", "ready", "report",
           "silent", "telnet", "wrap")
DEFAULTS = {"allowpip": True, "autoboard": True, "crawford": True, "double": True,
            "notify": True, "report": True, "telnet": True}
"""A new account's settings, as the BaldLies transcript's CLIP 2 line shows them."""
_TOGGLE_ON = {"ready": "** You're now ready to invite or join someone.",
              "double": "** You will be asked if you want to double."}
_TOGGLE_OFF = {"ready": "** You're now refusing to play with someone.",
               "double": "** You won't be asked if you want to double."}
RULES = Rules()


@dataclass
class Faults:
    """The awkward behaviour to reproduce (counters are server-wide, 1-based; 0 = never)."""

    unterminated_invitation: bool = True
    """The second invitation line waits for the next output for its CRLF (BaldLies)."""
    glue_after_board: bool = False
    """The line after every board line follows it with no CRLF (the spec's spanner)."""
    lose_roll: int = 0
    """Silently ignore the n-th ``roll`` command."""
    malformed_board: int = 0
    """Corrupt the n-th board line sent."""
    drop_user: str = ""
    drop_after_moves: int = 0
    """Cut ``drop_user``'s connection right after the n-th move of the first match."""
    drop_on_double: int = 0
    """Cut ``drop_user``'s connection right after their n-th double (seen on BaldLies)."""
    autoroll: bool = True
    """Roll for a player who may not double (FIBS does; BaldLies does not)."""


@dataclass
class Account:
    name: str
    password: str
    rating: float = 1500.0
    experience: int = 0
    client: str = "-"
    email: str = "-"
    settings: dict[str, bool] = field(default_factory=lambda: {t: DEFAULTS.get(t, False)
                                                                for t in TOGGLES})
    last_login: int = 0
    last_host: str = "-"


class ServerMatch:
    """A match between two accounts: seat order is (inviter, joiner)."""

    def __init__(self, names: tuple[str, str], length: int, seed: int, rng: random.Random) -> None:
        self.names = names
        self.length = length
        self.match = Match(length, RULES)
        self.record = MatchRecord.create(length, names, RULES)
        self.dice_source = SeededDice(seed)
        self.dice: GameDice | None = None
        self.game: Game | None = None
        self.game_count = 0
        self.first_colour = rng.choice((1, -1))  # seat 0's colour in game 1
        self.joined: set[int] = set()
        self.moves = 0

    def colour(self, seat: int) -> int:
        first = self.first_colour if self.game_count % 2 == 1 else -self.first_colour
        return first if seat == 0 else -first

    def seat_of(self, name: str) -> int:
        return 0 if self.names[0].lower() == name.lower() else 1


class Session:
    """One client connection."""

    def __init__(self, server: StandinServer, reader: asyncio.StreamReader,
                 writer: asyncio.StreamWriter) -> None:
        self.server, self.reader, self.writer = server, reader, writer
        self.account: Account | None = None
        self.match: ServerMatch | None = None
        self.owed_eol = False
        self.boardstyle = 1
        self.invitation_from: dict[str, tuple[int | None, bool]] = {}

    @property
    def name(self) -> str:
        return self.account.name if self.account else "?"

    def send(self, line: str, *, end: str = "\r\n") -> None:
        if self.writer.is_closing():
            return
        prefix = "\r\n" if self.owed_eol else ""
        self.owed_eol = False
        self.server.transcript.append((self.name, "<-", line))
        self.writer.write((prefix + line + end).encode())

    def send_unterminated(self, line: str) -> None:
        self.send(line, end="")
        self.owed_eol = True

    def send_board_line(self, line: str) -> None:
        if self.server.faults.glue_after_board:
            self.send(line, end="")
        else:
            self.send(line)


class StandinServer:
    """The stand-in (see the module docstring). ``await start()`` returns the port."""

    def __init__(self, *, seed: int = 1, faults: Faults | None = None,
                 accounts: Iterable[Account] = (), host: str = "127.0.0.1", port: int = 0,
                 motd: str = "Welcome to the bgbot FIBS stand-in (not FIBS).") -> None:
        self.seed = seed
        self.faults = faults or Faults()
        self.accounts = {a.name.lower(): a for a in accounts}
        self.host, self.port = host, port
        self.motd = motd
        self.rng = random.Random(seed)
        self.sessions: dict[str, Session] = {}
        self.saved: dict[frozenset[str], ServerMatch] = {}
        self.finished: list[ServerMatch] = []
        self.transcript: list[tuple[str, str, str]] = []
        self._server: asyncio.base_events.Server | None = None
        self._rolls = 0
        self._boards = 0
        self._matches = 0
        self._doubles_by_drop_user = 0
        self._tasks: set[asyncio.Task[None]] = set()

    async def start(self) -> int:
        self._server = await asyncio.start_server(self._connected, self.host, self.port)
        self.port = self._server.sockets[0].getsockname()[1]
        return self.port

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
        for session in list(self.sessions.values()):
            session.writer.close()
        for task in list(self._tasks):
            task.cancel()
        if self._server is not None:
            await self._server.wait_closed()

    def sent_by(self, user: str) -> list[str]:
        """The commands ``user`` sent, in order (login lines with the password hidden)."""
        return [line for who, way, line in self.transcript if who.lower() == user.lower()
                and way == "->"]

    def received_by(self, user: str) -> list[str]:
        return [line for who, way, line in self.transcript if who.lower() == user.lower()
                and way == "<-"]

    # ------------------------------------------------------------------ connection

    async def _connected(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._tasks.add(task)
        session = Session(self, reader, writer)
        session.send("FIBS stand-in for bgbot tests")
        session.send("login: ", end="")
        try:
            while not reader.at_eof():
                raw = await reader.readline()
                if not raw:
                    break
                line = raw.decode("utf-8", "replace").strip()
                if not line:
                    continue
                who = session.name
                shown = line
                if line.startswith("login "):
                    shown = " ".join(line.split()[:4])  # never the password
                    who = line.split()[3] if len(line.split()) > 3 else who
                self.transcript.append((who, "->", shown))
                self._command(session, line)
                await writer.drain()
        except (ConnectionError, asyncio.CancelledError):
            pass
        finally:
            self._disconnected(session, "drops connection")
            if task is not None:
                self._tasks.discard(task)
            writer.close()

    def _disconnected(self, session: Session, how: str) -> None:
        account = session.account
        if account is None or self.sessions.get(account.name.lower()) is not session:
            return
        del self.sessions[account.name.lower()]
        match = session.match
        if match is not None:
            self._save(match, account.name, f"{account.name} {how}. The game was saved.")
        for other in self.sessions.values():
            if other.account and other.account.settings["notify"]:
                other.send(f"8 {account.name} {account.name} {how}.")

    def _save(self, match: ServerMatch, leaver: str, message: str) -> None:
        self.saved[frozenset(n.lower() for n in match.names)] = match
        for name in match.names:
            other = self.sessions.get(name.lower())
            if other is not None and other.match is match:
                other.match = None
                if name.lower() != leaver.lower():
                    other.send(message)
                self._broadcast_who(other.account)

    def cut(self, user: str) -> None:
        """Drop ``user``'s connection at once (as a network failure would)."""
        session = self.sessions.get(user.lower())
        if session is not None:
            transport = session.writer.transport
            self._disconnected(session, "drops connection")
            transport.abort()

    # ------------------------------------------------------------------ commands

    def _command(self, s: Session, line: str) -> None:
        words = line.split()
        verb = words[0].lower()
        if s.account is None:
            if verb == "login":
                self._login(s, words)
            else:
                s.send("login: ", end="")
            return
        handler = {
            "set": self._set, "toggle": self._toggle, "rawwho": self._rawwho, "who": self._rawwho,
            "invite": self._invite, "join": self._join, "roll": self._roll, "move": self._move,
            "m": self._move, "double": self._double, "accept": self._accept,
            "reject": self._reject, "resign": self._resign, "board": self._board_cmd,
            "leave": self._leave, "tell": self._tell, "kibitz": self._kibitz, "time": self._time,
            "show": self._show, "bye": self._bye,
        }.get(verb)
        if handler is None:
            s.send(f"** Unknown command: '{words[0]}'")
            return
        handler(s, words)

    def _login(self, s: Session, words: list[str]) -> None:
        if len(words) < 5 or len(words[1]) > 20:
            s.send("login: ", end="")
            return
        name, password = words[3], words[4]
        account = self.accounts.get(name.lower())
        if account is None:
            account = Account(name, password)
            self.accounts[name.lower()] = account
        elif account.password != password:
            s.send("login: ", end="")
            return
        if account.client == "-":
            account.client = words[1]
        old = self.sessions.get(name.lower())
        if old is not None:
            s.send("** Warning: You are already logged in.")
            self._disconnected(old, "drops connection")
            old.writer.transport.abort()
        s.account = account
        self.sessions[name.lower()] = s
        last = account.last_login or int(time.time())
        s.send(f"1 {account.name} {last} {account.last_host}")
        account.last_login, account.last_host = int(time.time()), "127.0.0.1"
        s.send(self._own_info(account))
        s.send("3")
        s.send("+" + "-" * 60 + "+")
        s.send("| " + self.motd)
        s.send("+" + "-" * 60 + "+")
        s.send("4")
        for other in self.sessions.values():
            if other.account is not None:
                s.send(self._who_line(other.account))
        s.send("6")
        for other in self.sessions.values():
            if other is not s and other.account and other.account.settings["notify"]:
                other.send(f"7 {account.name} {account.name} logs in.")
        self._broadcast_who(account, skip=s)

    def _own_info(self, a: Account) -> str:
        b = {k: int(v) for k, v in a.settings.items()}
        return (f"2 {a.name} {b['allowpip']} {b['autoboard']} {b['autodouble']} {b['automove']} "
                f"{b['away']} {b['bell']} {b['crawford']} {b['double']} {a.experience} "
                f"{b['greedy']} {b['moreboards']} {b['moves']} {b['notify']} {a.rating:.2f} "
                f"{b['ratings']} {b['ready']} 0 {b['report']} {b['silent']} UTC")

    def _who_line(self, a: Account) -> str:
        session = self.sessions.get(a.name.lower())
        opponent = "-"
        if session is not None and session.match is not None:
            opponent = [n for n in session.match.names if n.lower() != a.name.lower()][0]
        return (f"5 {a.name} {opponent} - {int(a.settings['ready'])} {int(a.settings['away'])} "
                f"{a.rating:.2f} {a.experience} 0 {a.last_login} 127.0.0.1 {a.client} {a.email}")

    def _broadcast_who(self, account: Account | None, skip: Session | None = None) -> None:
        if account is None:
            return
        line = self._who_line(account)
        for other in self.sessions.values():
            if other is not skip and other.account is not None:
                other.send(line)

    def _set(self, s: Session, words: list[str]) -> None:
        if len(words) >= 3:
            if words[1] == "boardstyle":
                s.boardstyle = int(words[2]) if words[2].isdigit() else s.boardstyle
            s.send(f"Value of '{words[1]}' set to {words[2]}.")
        else:
            s.send("** Unknown setting.")

    def _toggle(self, s: Session, words: list[str]) -> None:
        assert s.account is not None
        if len(words) < 2 or words[1] not in s.account.settings:
            s.send("** Don't know how to toggle that.")
            return
        key = words[1]
        s.account.settings[key] = not s.account.settings[key]
        on = s.account.settings[key]
        s.send((_TOGGLE_ON if on else _TOGGLE_OFF).get(key, f"** You set '{key}' to "
                                                         f"{'yes' if on else 'no'}."))
        if key in ("ready", "away"):
            self._broadcast_who(s.account)

    def _rawwho(self, s: Session, words: list[str]) -> None:
        for other in self.sessions.values():
            if other.account and (len(words) < 2 or other.account.name.lower() == words[1].lower()):
                s.send(self._who_line(other.account))
        s.send("6")

    def _invite(self, s: Session, words: list[str]) -> None:
        assert s.account is not None
        if len(words) < 2:
            s.send("** invite who?")
            return
        target = self.sessions.get(words[1].lower())
        if target is None or target.account is None:
            s.send(f"** There is no one called {words[1]}")
            return
        other = target.account.name
        if target is s:
            s.send("** You can't invite yourself.")
            return
        if s.match is not None:
            s.send("** You are already playing.")
            return
        if target.match is not None:
            s.send(f"** {other} is already playing with someone else.")
            return
        if not target.account.settings["ready"]:
            s.send(f"** {other} is refusing games.")
            return
        if not s.account.settings["ready"]:
            s.account.settings["ready"] = True
            self._broadcast_who(s.account)
        saved = self.saved.get(frozenset((s.account.name.lower(), other.lower())))
        me = s.account.name
        if len(words) < 3:
            if saved is None:
                s.send(f"** There's no saved match with {other}. Please give a match length.")
                return
            target.invitation_from[me.lower()] = (saved.length, True)
            s.send(f"** You invited {other} to resume a saved match.")
            target.send(f"{me} wants to resume a saved match with you.")
        else:
            if words[2] == "unlimited":
                length: int | None = None
            elif words[2].isdigit() and int(words[2]) > 0:
                length = int(words[2])
            else:
                s.send("** The second argument to 'invite' has to be a number or the word "
                       "'unlimited'")
                return
            target.invitation_from[me.lower()] = (length, False)
            what = "an unlimited" if length is None else f"a {length} point"
            s.send(f"** You invited {other} to {what} match.")
            target.send(f"{me} wants to play {what} match with you.")
        hint = f"Type 'join {me}' to accept."
        if saved is not None and len(words) >= 3:
            target.send(hint)
            target.send(f"WARNING: Don't accept if you want to continue the saved "
                        f"{saved.length} point match!")
        elif self.faults.unterminated_invitation:
            target.send_unterminated(hint)
        else:
            target.send(hint)

    def _join(self, s: Session, words: list[str]) -> None:
        assert s.account is not None
        if len(words) < 2:
            self._join_next_game(s)
            return
        inviter = self.sessions.get(words[1].lower())
        if inviter is None or inviter.account is None:
            s.send("** Error: Join who?")
            return
        if s.match is not None:
            s.send("** You can't play two games at once")
            return
        if inviter.match is not None:
            s.send(f"** Error: {inviter.account.name} is already playing with someone else.")
            return
        invitation = s.invitation_from.pop(inviter.account.name.lower(), None)
        if invitation is None:
            s.send(f"** {inviter.account.name} didn't invite you.")
            return
        length, resume = invitation
        key = frozenset((s.account.name.lower(), inviter.account.name.lower()))
        me, them = s.account.name, inviter.account.name
        if resume and key in self.saved:
            match = self.saved.pop(key)
            s.match = inviter.match = match
            s.send(f"You are now playing with {them}. Your running match was loaded.")
            inviter.send(f"{me} has joined you. Your running match was loaded.")
            game = match.game
            for session in (s, inviter):
                assert session.account is not None
                if game is not None and not game.is_over:
                    on_roll = match.names[game.seat_on_roll]
                    session.send(f"turn: {on_roll}.")
                session.send("match length: " + str(match.length) if match.length
                             else "unlimited matchlength")
                for seat, name in enumerate(match.names):
                    session.send(f"points for {name}: {match.match.score[seat]}")
                self._broadcast_who(session.account)
            if game is None or game.is_over:
                match.joined = set()
                for session in (s, inviter):
                    session.send("Type 'join' if you want to play the next game, type 'leave' if "
                                 "you don't.")
            # As the reference says, FIBS does not always send a board here: it is not sent.
            return
        self.saved.pop(key, None)
        self._matches += 1
        match = ServerMatch((them, me), length or 0, self.seed * 1000 + self._matches, self.rng)
        s.match = inviter.match = match
        what = "an unlimited" if length is None else f"a {length} point"
        s.send(f"** You are now playing {what} match with {them}")
        inviter.send(f"** Player {me} has joined you for {what} match."
                     if length is not None else f"Player {me} has joined you for {what} match.")
        self._broadcast_who(s.account)
        self._broadcast_who(inviter.account)
        self._start_game(match)

    # ------------------------------------------------------------------ games

    def _seat_session(self, match: ServerMatch, seat: int) -> Session | None:
        session = self.sessions.get(match.names[seat].lower())
        return session if session is not None and session.match is match else None

    def _to(self, match: ServerMatch, seat: int, line: str) -> None:
        session = self._seat_session(match, seat)
        if session is not None:
            session.send(line)

    def _both(self, match: ServerMatch, own: str, other: str, seat: int) -> None:
        """``own`` to ``seat``; ``other`` (with the name of ``seat``) to the opponent."""
        self._to(match, seat, own)
        self._to(match, 1 - seat, other)

    def board_line(self, match: ServerMatch, seat: int) -> str:
        game = match.game
        assert game is not None
        colour = match.colour(seat)
        score = match.match.score
        owner = None if game.cube_owner is None else (Side.ME if game.cube_owner == seat
                                                      else Side.OPPONENT)
        if game.is_over or game.phase is Phase.OPENING:
            kind, on_roll, position, dice = Request.GAME_OVER, Side.ME, game.board_for(seat), None
        else:
            on_roll = Side.ME if game.seat_on_roll == seat else Side.OPPONENT
            position = game.position
            dice = game.dice if game.phase in (Phase.MOVE, Phase.RESIGNED) else None
            kind = Request.MOVE if dice is not None else Request.ROLL_OR_DOUBLE
            if game.phase is Phase.TAKE and game.seat_to_act == seat:
                kind = Request.TAKE  # "was doubled" = 1, as BaldLies shows it after a resume
        board = FibsBoard(
            position=position, kind=kind, on_roll=on_roll, dice=dice, dialect=Dialect.FIBS,
            my_name="You", opponent_name=match.names[1 - seat], match_length=match.length,
            my_score=score[seat], opponent_score=score[1 - seat], cube_value=game.cube_value,
            cube_owner=owner, crawford=game.crawford if kind is not Request.GAME_OVER else False,
            post_crawford=game.post_crawford if kind is not Request.GAME_OVER else False,
            colour=colour, direction=-colour)
        tokens = format_board(board).split(":")
        if game.crawford:  # nobody may double in the Crawford game
            tokens[38] = tokens[39] = "0"
        return ":".join(tokens)

    def _send_board(self, match: ServerMatch, seat: int) -> None:
        session = self._seat_session(match, seat)
        if session is None or session.boardstyle != 3:
            return
        line = self.board_line(match, seat)
        self._boards += 1
        if self._boards == self.faults.malformed_board:
            tokens = line.split(":")
            tokens[20] = "x"  # a point that is not a number
            line = ":".join(tokens[:-3])  # and three fields short
        session.send_board_line(line)

    def _start_game(self, match: ServerMatch) -> None:
        game = match.game = match.match.new_game()
        match.game_count += 1
        match.joined = set()
        match.dice = match.dice_source.for_game(match.game_count - 1)
        names = match.names
        for seat in (0, 1):
            self._to(match, seat, f"Starting a new game with {names[1 - seat]}.")
        while True:
            die0, die1 = match.dice.opening()
            for seat, (mine, theirs) in enumerate(((die0, die1), (die1, die0))):
                self._to(match, seat, f"You rolled {mine}, {names[1 - seat]} rolled {theirs}")
            if game.opening_roll(die0, die1):
                break
        winner = game.seat_on_roll
        self._both(match, "It's your turn to move.", f"{names[winner]} makes the first move.",
                   winner)
        for seat in (0, 1):
            self._send_board(match, seat)
        self._please_move(match)

    def _please_move(self, match: ServerMatch) -> None:
        game = match.game
        assert game is not None and game.dice is not None
        seat = game.seat_on_roll
        plays = game.legal_plays()
        if not plays or not len(plays[0]):
            self._both(match, "You can't move.", f"{match.names[seat]} can't move.", seat)
            game.move(Play())
            self._advance(match)
            return
        count = max(len(p) for p in plays)
        self._to(match, seat, f"Please move {count} piece{'s' if count > 1 else ''}.")

    def _advance(self, match: ServerMatch) -> None:
        """After an action: end the game, or prompt / roll for the next player."""
        game = match.game
        assert game is not None
        if game.is_over:
            self._end_game(match)
            return
        if game.phase is not Phase.ROLL:
            return
        seat = game.seat_on_roll
        session = self._seat_session(match, seat)
        wants_cube = session is not None and session.account is not None and \
            session.account.settings["double"]
        if game.may_double() and wants_cube:
            self._to(match, seat, "It's your turn. Please roll or double.")
        elif self.faults.autoroll:
            self._do_roll(match, seat)

    def _do_roll(self, match: ServerMatch, seat: int) -> None:
        game = match.game
        assert game is not None and match.dice is not None
        dice = match.dice.roll()
        game.roll(dice)
        a, b = dice
        self._both(match, f"You roll {a} and {b}.", f"{match.names[seat]} rolls {a} and {b}.", seat)
        for s in (seat, 1 - seat):
            self._send_board(match, s)
        self._please_move(match)

    def _playing(self, s: Session) -> tuple[ServerMatch, Game, int] | None:
        match = s.match
        if match is None or match.game is None or s.account is None:
            s.send("** You're not playing.")
            return None
        return match, match.game, match.seat_of(s.account.name)

    def _roll(self, s: Session, words: list[str]) -> None:
        self._rolls += 1
        if self._rolls == self.faults.lose_roll:
            return  # "FIBS sometimes loses what we send"
        found = self._playing(s)
        if found is None:
            return
        match, game, seat = found
        if game.phase is Phase.MOVE and game.seat_on_roll == seat:
            s.send("** You did already roll the dice.")
        elif game.phase is not Phase.ROLL or game.seat_on_roll != seat:
            s.send("** It's not your turn to roll the dice.")
        else:
            self._do_roll(match, seat)

    def _move(self, s: Session, words: list[str]) -> None:
        found = self._playing(s)
        if found is None:
            return
        match, game, seat = found
        if game.phase is Phase.ROLL and game.seat_on_roll == seat:
            s.send("** You have to roll the dice before moving.")
            return
        if game.phase is not Phase.MOVE or game.seat_on_roll != seat or game.dice is None:
            s.send("** It's not your turn to move.")
            return
        pairs = words[1:]
        wanted = max((len(p) for p in game.legal_plays()), default=0)
        if len(pairs) < wanted:
            s.send(f"** You must give {wanted} moves.")
            return
        if len(pairs) > wanted:
            s.send(f"** Please don't give more than {wanted} moves.")
            return
        try:
            play = parse_fibs_move(" ".join(pairs), game.position, game.dice, -match.colour(seat))
        except (FormatError, IllegalAction):
            s.send(f"** You can't move from {pairs[0].split('-')[0]} in your first move.")
            return
        game.move(play)
        match.moves += 1
        self._send_board(match, seat)
        self._to(match, 1 - seat, f"{match.names[seat]} moves {' '.join(pairs)} .")
        self._send_board(match, 1 - seat)
        if (self.faults.drop_user and match.moves == self.faults.drop_after_moves
                and self._matches == 1):
            self.cut(self.faults.drop_user)
            return
        self._advance(match)

    def _double(self, s: Session, words: list[str]) -> None:
        found = self._playing(s)
        if found is None:
            return
        match, game, seat = found
        if game.phase is Phase.MOVE and game.seat_on_roll == seat:
            s.send("** You can only double before you roll the dice.")
            return
        if game.phase is not Phase.ROLL or game.seat_on_roll != seat or not game.may_double():
            s.send("** It's not your turn to double")
            return
        game.double()
        other = match.names[1 - seat]
        self._both(match, f"You double. Please wait for {other} to accept or reject.",
                   f"{match.names[seat]} doubles. Type 'accept' or 'reject'.", seat)
        if s.account is not None and s.account.name.lower() == self.faults.drop_user.lower():
            self._doubles_by_drop_user += 1
            if self._doubles_by_drop_user == self.faults.drop_on_double:
                self.cut(s.account.name)

    def _accept(self, s: Session, words: list[str]) -> None:
        found = self._playing(s)
        if found is None:
            return
        match, game, seat = found
        name = match.names[seat]
        if game.phase is Phase.TAKE and game.seat_to_act == seat:
            game.take()
            cube = game.cube_value
            self._both(match, f"You accept the double. The cube shows {cube}.",
                       f"{name} accepts the double. The cube shows {cube}.", seat)
            self._do_roll(match, game.seat_on_roll)
        elif game.phase is Phase.RESIGNED and game.seat_to_act == seat:
            game.accept_resignation()
            points = game.outcome.points if game.outcome else 0
            self._both(match, f"You accept and win {points} points.",
                       f"{name} accepts and wins {points} points.", seat)
            self._end_game(match)
        else:
            s.send("** You can't accept.")

    def _reject(self, s: Session, words: list[str]) -> None:
        found = self._playing(s)
        if found is None:
            return
        match, game, seat = found
        name, other = match.names[seat], match.names[1 - seat]
        if game.phase is Phase.TAKE and game.seat_to_act == seat:
            game.drop()
            points = game.outcome.points if game.outcome else 0
            self._both(match, f"You give up. {other} wins {points} points.",
                       f"{name} gives up. You win {points} points.", seat)
            self._end_game(match)
        elif game.phase is Phase.RESIGNED and game.seat_to_act == seat:
            game.reject_resignation()
            self._both(match, "You reject. The game continues.",
                       f"{name} rejects. The game continues.", seat)
            # No new board here (ParlorBot: "FIBS sends no board after a rejected resignation").
            self._advance(match)
        else:
            s.send("** You can't reject.")

    def _resign(self, s: Session, words: list[str]) -> None:
        found = self._playing(s)
        if found is None:
            return
        match, game, seat = found
        value = {"n": 1, "normal": 1, "g": 2, "gammon": 2, "b": 3, "backgammon": 3}.get(
            words[1].lower() if len(words) > 1 else "", 0)
        if not value or not game.may_resign(seat, value):
            s.send("** You can't resign now.")
            return
        game.resign(seat, value)
        points = value * game.cube_value
        self._both(match, f"You want to resign. {match.names[1 - seat]} will win {points} points.",
                   f"{match.names[seat]} wants to resign. You will win {points} points. Type "
                   "'accept' or 'reject'.", seat)

    def _end_game(self, match: ServerMatch) -> None:
        game = match.game
        assert game is not None and game.outcome is not None
        outcome = game.outcome
        score_before = match.match.score
        match.record.add_game(game, score_before, crawford=game.crawford)
        match.match.record(outcome)
        w, points = outcome.winner, outcome.points
        if outcome.ending == "normal":
            unit = "point" if points == 1 else "points"
            self._both(match, f"You win the game and get {points} {unit}. Congratulations!",
                       f"{match.names[w]} wins the game and gets {points} {unit}. Sorry.", w)
        score = match.match.score
        kind = str(match.length) if match.length else "unlimited"
        for seat in (0, 1):
            self._to(match, seat, f"score in {kind} point match: {match.names[seat]}-{score[seat]} "
                                  f"{match.names[1 - seat]}-{score[1 - seat]}")
        if match.match.is_over:
            win = match.match.winner
            assert win is not None
            text = f"{match.length} point match {score[win]}-{score[1 - win]} ."
            self._both(match, f"You win the {text}", f"{match.names[win]} wins the {text}", win)
            self.finished.append(match)
            for name in match.names:
                account = self.accounts[name.lower()]
                account.experience += match.length
                session = self._seat_session(match, match.names.index(name))
                if session is not None:
                    session.match = None
                    self._broadcast_who(account)
            return
        for seat in (0, 1):
            self._to(match, seat, "Type 'join' if you want to play the next game, type 'leave' "
                                  "if you don't.")

    def _join_next_game(self, s: Session) -> None:
        found = self._playing(s)
        if found is None:
            return
        match, game, seat = found
        if not game.is_over:
            s.send("** You're already playing a game.")
            return
        match.joined.add(seat)
        if match.joined == {0, 1}:
            self._start_game(match)
        else:
            s.send(f"** Please wait for {match.names[1 - seat]} to join too.")

    def _board_cmd(self, s: Session, words: list[str]) -> None:
        found = self._playing(s)
        if found is not None:
            match, _, seat = found
            self._send_board(match, seat)

    def _leave(self, s: Session, words: list[str]) -> None:
        if s.match is None or s.account is None:
            s.send("** You're not playing.")
            return
        match = s.match
        s.send("** You terminated the game. The game was saved.")
        self._save(match, s.account.name,
                   f"** Player {s.account.name} has left the game. The game was saved.")

    def _tell(self, s: Session, words: list[str]) -> None:
        if len(words) < 3:
            s.send("** tell who what?")
            return
        target = self.sessions.get(words[1].lower())
        if target is None:
            s.send(f"** There is no one called {words[1]}")
            return
        text = " ".join(words[2:])
        target.send(f"12 {s.name} {text}")
        s.send(f"16 {target.name} {text}")

    def _kibitz(self, s: Session, words: list[str]) -> None:
        text = " ".join(words[1:])
        if s.match is not None:
            for seat in (0, 1):
                other = self._seat_session(s.match, seat)
                if other is not None and other is not s:
                    other.send(f"15 {s.name} {text}")
        s.send(f"19 {text}")

    def _time(self, s: Session, words: list[str]) -> None:
        s.send(time.strftime("%A, %B %d %H:%M:%S %Y UTC", time.gmtime()))

    def _show(self, s: Session, words: list[str]) -> None:
        mine = [m for k, m in self.saved.items() if s.name.lower() in k]
        if not mine:
            s.send("no saved games.")
        for m in mine:
            other = [n for n in m.names if n.lower() != s.name.lower()][0]
            s.send(f"  {other:<16} {m.length:>3}  {m.match.score[m.seat_of(s.name)]} - "
                   f"{m.match.score[1 - m.seat_of(s.name)]}")

    def _bye(self, s: Session, words: list[str]) -> None:
        s.send("Goodbye.")
        self._disconnected(s, "logs out")
        s.writer.close()


async def _main(port: int, seed: int) -> None:
    server = StandinServer(seed=seed, port=port)
    actual = await server.start()
    print(f"FIBS stand-in (not FIBS) listening on 127.0.0.1:{actual}", flush=True)
    await asyncio.Event().wait()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="A FIBS stand-in for bgbot tests (not FIBS).")
    parser.add_argument("--port", type=int, default=4321)
    parser.add_argument("--seed", type=int, default=1)
    options = parser.parse_args()
    try:
        asyncio.run(_main(options.port, options.seed))
    except KeyboardInterrupt:
        pass
