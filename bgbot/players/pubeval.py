"""Tesauro's public evaluation function ("pubeval"), the standard benchmark opponent.

pubeval scores the position *after* a candidate move, seen from the mover, with a linear
function of 122 inputs (heuristic-player.md §1):

* for each of the mover's points 24 down to 1, five inputs: [opponent blot there],
  [exactly 1 own], [at least 2 own], [exactly 3 own], (n - 3) / 2 when n >= 4 own;
* opponent chequers on the bar / 2; own chequers borne off / 15.

Two weight vectors exist, one for races and one for contact; the caller picks one from the
position *before* the move. The candidate with the highest score is played.

Source of the weights: Gerald Tesauro, "FTPable benchmark evaluation function",
rec.games.backgammon, 11 Feb 1993 (bkgm.com/rgb/rgb.cgi?view+610), released to the public
domain; the numbers below were read from the public-domain file
``games/backgammon/common_source/pubeval.c`` in OpenBSD ("Public domain, Gerry Tesauro").
Only the numbers are used; the encoding is re-implemented here.
"""

from __future__ import annotations

from typing import Sequence

from ..core.position import Play, Position
from .base import Context, TakeDecision

# fmt: off
CONTACT_WEIGHTS: tuple[float, ...] = (
    0.25696, -0.66937, -1.66135, -2.02487, -2.53398, -0.16092, -1.11725, -1.06654,
    -0.92830, -1.99558, -1.10388, -0.80802, 0.09856, -0.62086, -1.27999, -0.59220,
    -0.73667, 0.89032, -0.38933, -1.59847, -1.50197, -0.60966, 1.56166, -0.47389,
    -1.80390, -0.83425, -0.97741, -1.41371, 0.24500, 0.10970, -1.36476, -1.05572,
    1.15420, 0.11069, -0.38319, -0.74816, -0.59244, 0.81116, -0.39511, 0.11424,
    -0.73169, -0.56074, 1.09792, 0.15977, 0.13786, -1.18435, -0.43363, 1.06169,
    -0.21329, 0.04798, -0.94373, -0.22982, 1.22737, -0.13099, -0.06295, -0.75882,
    -0.13658, 1.78389, 0.30416, 0.36797, -0.69851, 0.13003, 1.23070, 0.40868,
    -0.21081, -0.64073, 0.31061, 1.59554, 0.65718, 0.25429, -0.80789, 0.08240,
    1.78964, 0.54304, 0.41174, -1.06161, 0.07851, 2.01451, 0.49786, 0.91936,
    -0.90750, 0.05941, 1.83120, 0.58722, 1.28777, -0.83711, -0.33248, 2.64983,
    0.52698, 0.82132, -0.58897, -1.18223, 3.35809, 0.62017, 0.57353, -0.07276,
    -0.36214, 4.37655, 0.45481, 0.21746, 0.10504, -0.61977, 3.54001, 0.04612,
    -0.18108, 0.63211, -0.87046, 2.47673, -0.48016, -1.27157, 0.86505, -1.11342,
    1.24612, -0.82385, -2.77082, 1.23606, -1.59529, 0.10438, -1.30206, -4.11520,
    5.62596, -2.75800,
)

RACE_WEIGHTS: tuple[float, ...] = (
    0.00000, -0.17160, 0.27010, 0.29906, -0.08471, 0.00000, -1.40375, -1.05121,
    0.07217, -0.01351, 0.00000, -1.29506, -2.16183, 0.13246, -1.03508, 0.00000,
    -2.29847, -2.34631, 0.17253, 0.08302, 0.00000, -1.27266, -2.87401, -0.07456,
    -0.34240, 0.00000, -1.34640, -2.46556, -0.13022, -0.01591, 0.00000, 0.27448,
    0.60015, 0.48302, 0.25236, 0.00000, 0.39521, 0.68178, 0.05281, 0.09266,
    0.00000, 0.24855, -0.06844, -0.37646, 0.05685, 0.00000, 0.17405, 0.00430,
    0.74427, 0.00576, 0.00000, 0.12392, 0.31202, -0.91035, -0.16270, 0.00000,
    0.01418, -0.10839, -0.02781, -0.88035, 0.00000, 1.07274, 2.00366, 1.16242,
    0.22520, 0.00000, 0.85631, 1.06349, 1.49549, 0.18966, 0.00000, 0.37183,
    -0.50352, -0.14818, 0.12039, 0.00000, 0.13681, 0.13978, 1.11245, -0.12707,
    0.00000, -0.22082, 0.20178, -0.06285, -0.52728, 0.00000, -0.13597, -0.19412,
    -0.09308, -1.26062, 0.00000, 3.05454, 5.16874, 1.50680, 5.35000, 0.00000,
    2.19605, 3.85390, 0.88296, 2.30052, 0.00000, 0.92321, 1.08744, -0.11696,
    -0.78560, 0.00000, -0.09795, -0.83050, -1.09167, -4.94251, 0.00000, -1.00316,
    -3.66465, -2.56906, -9.67677, 0.00000, -2.77982, -7.26713, -3.40177, -12.32252,
    0.00000, 3.42040,
)
# fmt: on

ALL_OFF_SCORE = 99999999.0
"""Tesauro's score for a position with all fifteen chequers borne off."""


def pubeval_inputs(after: Position) -> list[float]:
    """The 122 inputs for ``after`` (the board after the move, seen from the mover).

    Slow and literal, for tests and documentation; `pubeval_score` uses the same encoding
    through precomputed tables.
    """
    x = [0.0] * 122
    for point in range(24, 0, -1):
        block = 5 * (24 - point)
        own = after.mover[point - 1]
        if after.opponent[24 - point] == 1:
            x[block] = 1.0
        if own == 1:
            x[block + 1] = 1.0
        if own >= 2:
            x[block + 2] = 1.0
        if own == 3:
            x[block + 3] = 1.0
        if own >= 4:
            x[block + 4] = (own - 3) / 2.0
    x[120] = after.opponent[24] / 2.0
    x[121] = (15 - sum(after.mover)) / 15.0
    return x


def _own_tables(weights: Sequence[float]) -> tuple[tuple[float, ...], ...]:
    """Per mover index i (point i + 1): the score of having n (0..15) own chequers there."""
    tables = []
    for index in range(24):
        block = 5 * (23 - index)
        row = []
        for n in range(16):
            value = 0.0
            if n == 1:
                value += weights[block + 1]
            if n >= 2:
                value += weights[block + 2]
            if n == 3:
                value += weights[block + 3]
            if n >= 4:
                value += weights[block + 4] * (n - 3) / 2.0
            row.append(value)
        tables.append(tuple(row))
    return tuple(tables)


def _blot_tables(weights: Sequence[float]) -> tuple[tuple[float, ...], ...]:
    """Per opponent index j: the score of the opponent's count there (a blot only counts).

    Opponent index j is the mover's index 23 - j, i.e. the mover's point 24 - j.
    """
    tables = []
    for j in range(24):
        block = 5 * j  # the mover's point 24 - j, whose block is 5 * (24 - point)
        row = [0.0] * 16
        row[1] = weights[block]
        tables.append(tuple(row))
    return tuple(tables)


_TABLES = {
    False: (_own_tables(CONTACT_WEIGHTS), _blot_tables(CONTACT_WEIGHTS), CONTACT_WEIGHTS),
    True: (_own_tables(RACE_WEIGHTS), _blot_tables(RACE_WEIGHTS), RACE_WEIGHTS),
}
_getitem = tuple.__getitem__


def pubeval_score(after: Position, race: bool) -> float:
    """pubeval's score of ``after`` (mover's view); ``race`` is judged before the move."""
    mover = after.mover
    off = 15 - sum(mover)
    if off == 15:
        return ALL_OFF_SCORE
    own, blots, weights = _TABLES[race]
    opponent = after.opponent
    return (
        sum(map(_getitem, own, mover[:24]))
        + sum(map(_getitem, blots, opponent[:24]))
        + weights[120] * opponent[24] / 2.0
        + weights[121] * off / 15.0
    )


class PubevalPlayer:
    """Plays pubeval's choice; cubeless by nature (Tesauro: its score cannot drive a cube).

    Never doubles, always takes, never resigns, and never accepts a resignation: pubeval's
    score is not a probability, so it has no honest basis for either (a benchmark opponent
    should play every game out).
    """

    name = "pubeval"

    def choose_play(self, position: Position, dice: Sequence[int], context: Context) -> Play:
        results = position.play_results(dice)
        if not results:
            return Play()
        if len(results) == 1:
            return results[0][0]
        race = position.is_race()
        best_play, best_score = results[0][0], -1e300
        for play, after in results:
            score = pubeval_score(after, race)
            if score > best_score:
                best_play, best_score = play, score
        return best_play

    def should_double(self, position: Position, context: Context) -> bool:
        return False

    def take_decision(self, position: Position, context: Context) -> TakeDecision:
        return TakeDecision.TAKE

    def offer_resignation(self, position: Position, context: Context) -> int:
        return 0

    def accept_resignation(self, position: Position, context: Context, value: int) -> bool:
        return False
