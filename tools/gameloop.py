"""A small synchronous cubeless game loop for benchmarks and training (not the referee).

Games are money games without cube: a win scores 1, 2 (gammon) or 3 (backgammon). Dice come
from ``random.Random(seed)``; the opening roll is rerolled until the dice differ and is played
by whoever moves first (the ``first`` argument), so a pair of games with the same seed and the
seats swapped ("mirrored") gives both players the same dice.
"""

from __future__ import annotations

import random
from typing import Protocol, Sequence

from bgbot.core.position import Play, Position
from bgbot.core.rules import Rules
from bgbot.players.base import Context

CUBELESS = Context(rules=Rules(cube=False))


class Chooser(Protocol):
    def choose_play(self, position: Position, dice: Sequence[int], context: Context) -> Play: ...


def play_game(
    players: Sequence[Chooser],
    seed: int,
    first: int = 0,
    record: list[tuple[Position, int]] | None = None,
    max_plies: int = 2000,
) -> tuple[int, int, int]:
    """Play one game; returns (winner seat, points 1..3, plies).

    ``record``, when given, receives (position before the roll, seat on roll) for every turn.
    """
    rng = random.Random(seed)
    randint = rng.randint
    d1, d2 = randint(1, 6), randint(1, 6)
    while d1 == d2:
        d1, d2 = randint(1, 6), randint(1, 6)
    position = Position.initial()
    seat = first
    plies = 0
    while plies < max_plies:
        if record is not None:
            record.append((position, seat))
        play = players[seat].choose_play(position, (d1, d2), CUBELESS)
        after = position.apply(play) if play else position
        plies += 1
        if not any(after.mover):
            return seat, after.win_kind(), plies
        position = after.swapped()
        seat = 1 - seat
        d1, d2 = randint(1, 6), randint(1, 6)
    raise RuntimeError(f"game with seed {seed} did not end in {max_plies} plies")


def mirrored_pair(players: Sequence[Chooser], seed: int) -> tuple[int, int, list[int]]:
    """Two games with the same dice, seat 0 first then seat 1 first.

    Returns (seat 0's points in game 1, in game 2, the two results as signed points for seat 0)
    with the outcome kinds kept in the list as ±1, ±2, ±3.
    """
    out = []
    for first in (0, 1):
        winner, points, _ = play_game(players, seed, first)
        out.append(points if winner == 0 else -points)
    return out[0], out[1], out
