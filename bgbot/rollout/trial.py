"""One trial of a rollout by bgbot's own 0-ply player, cubeless: the definition, and the C
kernel that is held equal to it.

A trial plays the position out (or for ``truncate`` plies) with the trial's dice
(`dice.RolloutDice`), both sides played by the greedy 0-ply player of one evaluator: of the
candidates of each roll (`HeuristicEvaluator.plays`), the one whose chances after it are best
for the mover by his utility (cubeless equity, or in match play an affine utility such as
`HeuristicPlayer._affine_utility` gives), the last of equal bests: `HeuristicPlayer` at
``plies=0`` without noise plays exactly so.

Variance reduction (``vr``): each roll's luck, for the side that rolled it, is the judge's
chances after the roll that came minus their average over all 36 rolls, the judge being the
same evaluator at 0-ply, its best play of a roll the first best by cubeless equity (the
average is `heuristic.roll_average`). Luck averages zero over the rolls whatever the judge,
so subtracting its sum from the result keeps the mean and, with a judge that sees the
chances well, removes most of the noise. Everything is kept from the view of side 0, the side
on roll at the start; the other side's luck is flipped (its win is side 0's loss, its gammons
side 0's gammon losses).

`play_trial` is the definition; `kernel_trials` runs trials in C
(`bgbot.players._contact.rollout`), which gives the same numbers to the last bit (tests).
"""

from __future__ import annotations

import struct
from typing import NamedTuple, Sequence

from ..core.position import Position
from ..players.base import Probabilities
from ..players.evaluator import HeuristicEvaluator, ScoredPlay
from ..players.heuristic import roll_average
from .dice import RolloutDice

__all__ = ["MAX_PLIES", "Trial", "flip_luck", "kernel_trials", "play_trial"]

MAX_PLIES = 10_000
"""A trial still going after this many plies is cut there (two players may, in principle,
hit each other for ever)."""

Utilities = tuple[Sequence[float], Sequence[float]]
"""The affine utilities (c0, c_win, c_win_gammon, c_win_backgammon, c_lose_gammon,
c_lose_backgammon) of side 0 and side 1, or None in their place: cubeless equity."""


class Trial(NamedTuple):
    """One trial's result for the side whose results are reported (the viewer)."""

    outcome: tuple[float, float, float, float, float]
    """The viewer's five chances at the end: 0 or 1 for a finished game, the evaluation where
    the trial was cut."""
    luck: tuple[float, float, float, float, float]
    """The viewer's luck over the trial's rolls, in the five chances (zeros without VR)."""
    plies: int
    """Rolls played."""
    cubeful: float | None = None
    """A cubeful trial's value (`values.ValueMap` units), None in cubeless play."""
    cubeful_luck: float = 0.0
    """The cubeful value's luck: each roll's luck as `ValueMap.luck` values it, times the cube
    in force over the position's cube."""

    def flipped(self) -> Trial:
        """The same trial from the other side (cubeless fields only)."""
        return Trial(_flip(self.outcome), flip_luck(self.luck), self.plies)


def _flip(chances: Sequence[float]) -> tuple[float, float, float, float, float]:
    """`Probabilities.flipped`."""
    return (1.0 - chances[0], chances[3], chances[4], chances[1], chances[2])


def flip_luck(luck: Sequence[float]) -> tuple[float, float, float, float, float]:
    """A shift of one side's chances seen from the other side."""
    return (-luck[0], luck[3], luck[4], luck[1], luck[2])


def _choice(scored: list[ScoredPlay], utility: Sequence[float] | None) -> int:
    """The candidate the greedy player plays: the best utility of the mover's chances after
    it, the last of equal bests (as `HeuristicPlayer._choose_scored`)."""
    best, chosen = -1e300, 0
    for k, (_, _, _, probs) in enumerate(scored):
        if utility is None:
            value = probs.equity()
        else:
            c0, c1, c2, c3, c4, c5 = utility
            win, win_g, win_bg, lose_g, lose_bg = probs
            value = c0 + c1 * win + c2 * win_g + c3 * win_bg + c4 * lose_g + c5 * lose_bg
        if value >= best:
            best, chosen = value, k
    return chosen


def judged_after_roll(evaluator: HeuristicEvaluator, position: Position,
                      dice: tuple[int, int]) -> Probabilities:
    """The judge's chances of the roller after his best play of ``dice`` by cubeless equity
    (the first of equal bests): what `roll_average` averages, for one roll."""
    scored = evaluator.plays(position, dice)
    if not scored:
        return evaluator.evaluate_sides(position.opponent, position.mover).flipped()
    best, best_eq = scored[0][3], -1e9
    for _, _, _, probs in scored:
        eq = probs.equity()
        if eq > best_eq:
            best, best_eq = probs, eq
    return best


def play_trial(evaluator: HeuristicEvaluator, position: Position, dice: RolloutDice,
               trial: int, truncate: int = 0, vr: bool = True,
               utilities: Utilities | None = None) -> Trial:
    """Trial ``trial`` of the rollout of ``position`` (the side on roll before rolling),
    cubeless, for side 0 (module docstring); ``truncate`` > 0 cuts it after that many plies."""
    mover, opponent = position.mover, position.opponent
    side = 0
    luck = [0.0] * 5
    rolls = dice.rolls(trial)
    ply = 0
    while True:
        if (not any(mover) or not any(opponent) or (truncate > 0 and ply == truncate)
                or ply == MAX_PLIES):
            end = evaluator.evaluate_sides(mover, opponent)
            break
        board = Position._trusted(opponent, mover)
        roll = rolls.next()
        if vr:
            judged = judged_after_roll(evaluator, board, roll)
            mean = roll_average(evaluator, board)
            delta = [judged[h] - mean[h] for h in range(5)]
            if side == 0:
                for h in range(5):
                    luck[h] += delta[h]
            else:
                luck[0] += -delta[0]
                luck[1] += delta[3]
                luck[2] += delta[4]
                luck[3] += delta[1]
                luck[4] += delta[2]
        scored = evaluator.plays(board, roll)
        if scored:
            _, mover, opponent, _ = scored[_choice(scored, None if utilities is None
                                                   else utilities[side])]
        mover, opponent = opponent, mover
        side ^= 1
        ply += 1
    outcome = (end[0], end[1], end[2], end[3], end[4]) if side == 0 else _flip(end)
    return Trial(outcome, (luck[0], luck[1], luck[2], luck[3], luck[4]), ply)


_FIVE = struct.Struct("=5d")


def kernel_trials(evaluator: HeuristicEvaluator, position: Position, dice: RolloutDice,
                  first: int, count: int, truncate: int = 0, vr: bool = True,
                  utilities: Utilities | None = None) -> list[Trial] | None:
    """Trials ``first`` .. ``first + count - 1`` as `play_trial` plays them, in C; None when
    the evaluator does not run in C."""
    found = evaluator.rollout(position, dice.seed, first, count, truncate, vr, dice.table,
                              utilities)
    if found is None:
        return None
    outcomes, lucks, plies = found
    counts = struct.unpack(f"={count}i", plies)
    return [Trial(_FIVE.unpack_from(outcomes, 40 * k), _FIVE.unpack_from(lucks, 40 * k),
                  counts[k]) for k in range(count)]
