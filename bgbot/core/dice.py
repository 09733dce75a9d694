"""Where dice come from: seeded, scripted or mirrored streams, one stream per game.

Each game of a match gets its own stream (`DiceSource.for_game(k)`, ``k`` = 0-based game
number), so game k gets the same dice in two matches however long the earlier games were:
that is what duplicate-dice tournaments need. A stream gives the opening dice
(`GameDice.opening`, one die per seat, asked again after a tie) and then the rolls
(`GameDice.roll`), all drawn from the same sequence in the order they are asked for.
"""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from typing import Sequence

from .errors import BgbotError
from .position import check_dice

Dice = tuple[int, int]


class DiceExhausted(BgbotError, LookupError):
    """A scripted stream was asked for more dice than its script holds."""


class GameDice(ABC):
    """The dice of one game."""

    @abstractmethod
    def opening(self) -> Dice:
        """One die for each seat: (seat 0's die, seat 1's die)."""

    @abstractmethod
    def roll(self) -> Dice:
        """Two dice for the seat on roll."""


class DiceSource(ABC):
    """A family of per-game dice streams."""

    @abstractmethod
    def for_game(self, game: int) -> GameDice:
        """The stream of game ``game`` (0-based); asking twice gives the same dice again."""


class _RandomGameDice(GameDice):
    __slots__ = ("_random",)

    def __init__(self, rng: random.Random) -> None:
        self._random = rng

    def opening(self) -> Dice:
        return self.roll()

    def roll(self) -> Dice:
        randint = self._random.randint
        return randint(1, 6), randint(1, 6)


class SeededDice(DiceSource):
    """Reproducible random dice.

    Game ``k`` draws from ``random.Random("bgbot-dice:{seed}:{k}")`` with ``randint(1, 6)``
    for each die, first die first. A string seed is hashed with SHA-512 by `random.seed`
    (version 2), so the streams are the same on every run and platform (never Python's
    randomised ``hash()``).
    """

    def __init__(self, seed: int | str) -> None:
        self.seed = seed

    def for_game(self, game: int) -> GameDice:
        if game < 0:
            raise ValueError(f"game number must be >= 0, got {game}")
        return _RandomGameDice(random.Random(f"bgbot-dice:{self.seed}:{game}"))

    def __repr__(self) -> str:
        return f"SeededDice({self.seed!r})"


class _ScriptedGameDice(GameDice):
    __slots__ = ("_openings", "_rolls", "_next_opening", "_next_roll")

    def __init__(self, openings: tuple[Dice, ...], rolls: tuple[Dice, ...]) -> None:
        self._openings = openings
        self._rolls = rolls
        self._next_opening = 0
        self._next_roll = 0

    def opening(self) -> Dice:
        if self._next_opening >= len(self._openings):
            raise DiceExhausted(f"the script has only {len(self._openings)} opening rolls")
        self._next_opening += 1
        return self._openings[self._next_opening - 1]

    def roll(self) -> Dice:
        if self._next_roll >= len(self._rolls):
            raise DiceExhausted(f"the script has only {len(self._rolls)} rolls")
        self._next_roll += 1
        return self._rolls[self._next_roll - 1]


_Script = tuple[tuple[Dice, ...], tuple[Dice, ...]]


def _script(openings: Sequence[Sequence[int]], rolls: Sequence[Sequence[int]]) -> _Script:
    return tuple(check_dice(d) for d in openings), tuple(check_dice(d) for d in rolls)


class ScriptedDice(DiceSource):
    """Fixed dice for tests: every game replays ``openings`` then ``rolls`` from the start.

    `per_game` gives each game its own script. Asking past the end raises `DiceExhausted`.
    """

    def __init__(
        self, openings: Sequence[Sequence[int]] = (), rolls: Sequence[Sequence[int]] = ()
    ) -> None:
        self._scripts: tuple[_Script, ...] = (_script(openings, rolls),)
        self._per_game = False

    @classmethod
    def per_game(
        cls, scripts: Sequence[tuple[Sequence[Sequence[int]], Sequence[Sequence[int]]]]
    ) -> ScriptedDice:
        """Game k plays ``scripts[k] = (openings, rolls)``."""
        source = cls()
        source._scripts = tuple(_script(o, r) for o, r in scripts)
        source._per_game = True
        return source

    def for_game(self, game: int) -> GameDice:
        if game < 0:
            raise ValueError(f"game number must be >= 0, got {game}")
        if not self._per_game:
            return _ScriptedGameDice(*self._scripts[0])
        if game >= len(self._scripts):
            raise DiceExhausted(f"the script has only {len(self._scripts)} games")
        return _ScriptedGameDice(*self._scripts[game])


class _MirroredGameDice(GameDice):
    __slots__ = ("_inner",)

    def __init__(self, inner: GameDice) -> None:
        self._inner = inner

    def opening(self) -> Dice:
        die0, die1 = self._inner.opening()
        return die1, die0

    def roll(self) -> Dice:
        return self._inner.roll()


class MirroredDice(DiceSource):
    """``source``'s streams with the opening dice swapped between the seats.

    The other seat wins each opening, and every later roll goes to the other seat too: in
    the mirrored match each agent plays the dice its opponent had in the original one.
    """

    def __init__(self, source: DiceSource) -> None:
        self.source = source

    def for_game(self, game: int) -> GameDice:
        return _MirroredGameDice(self.source.for_game(game))

    def __repr__(self) -> str:
        return f"MirroredDice({self.source!r})"
