"""A player that picks uniformly among the legal plays: the floor of every strength ladder."""

from __future__ import annotations

import random
from typing import Sequence

from ..core.position import Play, Position
from .base import Context, TakeDecision


class RandomPlayer:
    """Uniform over ``position.legal_plays(dice)``, deterministic for a given seed.

    With ``cube=True`` it also doubles at random (when allowed, with probability
    ``double_rate``) and takes or drops a double with even odds (beavering never); without it,
    it never doubles and always takes. It never resigns and never accepts a resignation.
    """

    name = "random"

    def __init__(self, seed: int = 0, cube: bool = False, double_rate: float = 0.1) -> None:
        self.seed = seed
        self.cube = cube
        self.double_rate = double_rate
        self._rng = random.Random(seed)

    def reseed(self, key: str) -> None:
        """Restart the random stream from this player's seed and ``key`` (`Agent.reseed`)."""
        self._rng = random.Random(f"{self.seed}:{key}")

    def choose_play(self, position: Position, dice: Sequence[int], context: Context) -> Play:
        plays = position.legal_plays(dice)
        if not plays:
            return Play()
        return plays[self._rng.randrange(len(plays))]

    def should_double(self, position: Position, context: Context) -> bool:
        if not self.cube or not context.may_double():
            return False
        return self._rng.random() < self.double_rate

    def take_decision(self, position: Position, context: Context) -> TakeDecision:
        if not self.cube:
            return TakeDecision.TAKE
        return TakeDecision.TAKE if self._rng.random() < 0.5 else TakeDecision.DROP

    def offer_resignation(self, position: Position, context: Context) -> int:
        return 0

    def accept_resignation(self, position: Position, context: Context, value: int) -> bool:
        return False
