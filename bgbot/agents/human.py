"""The ``human`` agent kind: a person at the terminal plays through the Agent interface.

Before each of its decisions it draws the board (`bgbot.formats.display.draw_board`, the
person's chequers X at the bottom) with the score and the cube on stderr -- stdout stays for
the command's own output, JSON included -- and reads the answer from stdin, a line at a time,
without blocking the event loop (Ctrl-C is heard while it waits):

- a move in gnubg notation (``8/5 6/5``, ``bar/22``, ``6/off``, ``24/18(2)``) or FIBS notation
  (``8-5 6-5``); an illegal or unreadable one is refused with the reason and asked again;
  ``plays`` lists the legal plays;
- before rolling, when the cube may be turned: Enter (or ``roll``) rolls, ``double`` doubles;
- ``resign 1|2|3`` (a single game, a gammon, a backgammon): at once before rolling, or, typed
  at a move, at the start of the next turn (the rules let a player resign before rolling);
- doubled: ``take``, ``drop`` (or ``pass``), ``beaver`` where the rules allow it;
- offered a resignation: ``y`` or ``n``.

The end of the input ends the game with `HumanQuit` (a `BgbotError`).
"""

from __future__ import annotations

import asyncio
import os
import sys
from typing import Sequence, TextIO

from ..core.errors import BgbotError, FormatError, IllegalAction
from ..core.position import Play, Position
from ..formats.display import draw_board
from ..players.base import Context, CubeOwner, TakeDecision
from .base import Agent
from .spec import AgentSpec, Options, register_agent

__all__ = ["HumanAgent", "HumanQuit", "LineInput"]

_VALUES = {1: "a single game", 2: "a gammon", 3: "a backgammon"}


class HumanQuit(BgbotError):
    """The person's input ended (end of file, the terminal closed)."""


class LineInput:
    """Lines from a file descriptor, read on the event loop without blocking it: a reader
    callback for terminals and pipes, a thread for what the loop cannot watch (a regular
    file). One per descriptor (`for_fd`), so two human agents share what is typed."""

    _instances: dict[int, LineInput] = {}

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self._buffer = b""
        self._eof = False

    @classmethod
    def for_fd(cls, fd: int) -> LineInput:
        if fd not in cls._instances:
            cls._instances[fd] = cls(fd)
        return cls._instances[fd]

    def _take_line(self) -> str | None:
        if b"\n" in self._buffer:
            line, self._buffer = self._buffer.split(b"\n", 1)
            return line.decode("utf-8", "replace").rstrip("\r")
        if self._eof and self._buffer:
            line, self._buffer = self._buffer, b""
            return line.decode("utf-8", "replace")
        return None

    async def readline(self) -> str | None:
        """The next line without its end, or None at the end of the input."""
        while True:
            line = self._take_line()
            if line is not None:
                return line
            if self._eof:
                return None
            self._feed(await self._read())

    def _feed(self, data: bytes) -> None:
        if data:
            self._buffer += data
        else:
            self._eof = True

    async def _read(self) -> bytes:
        loop = asyncio.get_running_loop()
        ready: asyncio.Future[bytes] = loop.create_future()

        def on_readable() -> None:
            if ready.done():
                return
            try:
                ready.set_result(os.read(self.fd, 4096))
            except OSError as exc:
                ready.set_exception(exc)

        try:
            loop.add_reader(self.fd, on_readable)
        except (PermissionError, ValueError, NotImplementedError, OSError):
            return await loop.run_in_executor(None, os.read, self.fd, 4096)
        try:
            return await ready
        finally:
            loop.remove_reader(self.fd)


class HumanAgent(Agent):
    """A person deciding at the terminal (see the module docstring)."""

    interactive = True

    def __init__(self, name: str = "human", *, lines: LineInput | None = None,
                 out: TextIO | None = None) -> None:
        self.name = name
        self._lines = lines
        self._out = out
        self._double = False
        self._queued_resignation = 0

    # ----------------------------------------------------------------- terminal

    @property
    def out(self) -> TextIO:
        return self._out if self._out is not None else sys.stderr

    def _say(self, text: str) -> None:
        print(text, file=self.out, flush=True)

    async def _ask(self, prompt: str) -> str:
        self.out.write(prompt)
        self.out.flush()
        lines = self._lines if self._lines is not None else LineInput.for_fd(sys.stdin.fileno())
        line = await lines.readline()
        if line is None:
            self._say("")  # end the unanswered prompt's line
            raise HumanQuit(f"{self.name}: the input ended (no answer to {prompt.strip()!r})")
        return line.strip()

    def _show(self, position: Position, context: Context, *, on_roll: bool,
              opponent: str = "opponent", notes: Sequence[str] = ()) -> None:
        self._say("")
        self._say(draw_board(position, mover_name=f"{self.name} (you)", opponent_name=opponent,
                             on_roll=on_roll, notes=[situation(context), *notes]))

    # ----------------------------------------------------------------- decisions

    async def offer_resignation(self, position: Position, context: Context) -> int:
        self._double = False
        if self._queued_resignation:
            value, self._queued_resignation = self._queued_resignation, 0
            return value
        if not context.may_double():
            return 0
        self._show(position, context, on_roll=True)
        while True:
            answer = (await self._ask("roll or double? [Enter = roll, double, resign 1|2|3]: "))
            word = answer.lower()
            if word in ("", "r", "roll"):
                return 0
            if word in ("d", "double"):
                self._double = True
                return 0
            value = _resignation(word)
            if value:
                return value
            self._say(f"not understood: {answer!r}; type roll, double, or resign 1, 2 or 3")

    async def should_double(self, position: Position, context: Context) -> bool:
        double, self._double = self._double, False
        return double

    async def choose_play(self, position: Position, dice: Sequence[int], context: Context) -> Play:
        roll = (int(dice[0]), int(dice[1]))
        high, low = max(roll), min(roll)
        self._show(position, context, on_roll=True, notes=[f"you rolled {high}{low}"])
        while True:
            answer = await self._ask(f"your move ({high}{low}): ")
            word = answer.lower()
            if word in ("plays", "?", "help"):
                plays = position.legal_plays(roll)
                self._say("legal plays: " + "; ".join(str(p) for p in plays))
                self._say("type a move (8/5 6/5 or 8-5 6-5), or resign 1|2|3 (next turn)")
                continue
            value = _resignation(word)
            if value:
                self._queued_resignation = value
                self._say(f"you will resign {_VALUES[value]} before your next roll; now "
                          "your move")
                continue
            try:
                return Play.parse(answer, position, roll)
            except (FormatError, IllegalAction) as exc:
                self._say(f"illegal move {answer!r}: {exc}")
                self._say("type plays to list the legal plays")

    async def take_decision(self, position: Position, context: Context) -> TakeDecision:
        offered = context.cube_value * 2
        beaver = context.is_money and context.rules.beavers
        self._show(position.swapped(), context, on_roll=False,
                   notes=[f"your opponent doubles to {offered}"])
        choices = "take, drop" + (" or beaver" if beaver else "")
        while True:
            answer = (await self._ask(f"{choices}? ")).lower()
            if answer in ("t", "take", "accept"):
                return TakeDecision.TAKE
            if answer in ("d", "drop", "pass", "p", "reject"):
                return TakeDecision.DROP
            if beaver and answer in ("b", "beaver"):
                return TakeDecision.BEAVER
            self._say(f"not understood: {answer!r}; type {choices}")

    async def accept_resignation(self, position: Position, context: Context, value: int) -> bool:
        points = value * context.cube_value
        self._show(position.swapped(), context, on_roll=False,
                   notes=[f"your opponent resigns {_VALUES.get(value, value)} "
                          f"({points} point{'s' if points != 1 else ''})"])
        while True:
            answer = (await self._ask("accept? [y/n]: ")).lower()
            if answer in ("y", "yes"):
                return True
            if answer in ("n", "no"):
                return False
            self._say("type y or n")


def _resignation(word: str) -> int:
    """1, 2 or 3 for ``resign N`` (or ``resign single|gammon|backgammon``), else 0."""
    parts = word.split()
    if len(parts) != 2 or parts[0] != "resign":
        return 0
    named = {"1": 1, "single": 1, "2": 2, "gammon": 2, "3": 3, "backgammon": 3}
    return named.get(parts[1], 0)


def situation(context: Context) -> str:
    """The score and the cube as one line, from the asked player's side ("you")."""
    if context.is_money:
        where = "money game"
    else:
        where = (f"{context.match_length}-point match, you {context.my_score}, opponent "
                 f"{context.opponent_score}" + (", Crawford game" if context.crawford else ""))
    if not context.rules.cube:
        return f"{where}; no cube"
    owner = {CubeOwner.CENTRE: "centred", CubeOwner.ME: "yours",
             CubeOwner.OPPONENT: "your opponent's"}[context.cube_owner]
    return f"{where}; cube {context.cube_value}, {owner}"


def _human(spec: AgentSpec, seed: int) -> Agent:
    Options(spec, {})
    return HumanAgent()


register_agent("human", _human, "you, at the terminal: the board on stderr, moves typed on "
               "stdin", interactive=True)
