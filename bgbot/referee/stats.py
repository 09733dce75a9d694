"""Results of many games from one agent's side: ppg with a confidence interval, outcome counts.

With mirrored dice, the two games (or matches) played on one dice sequence form one
observation: their results are correlated, so the interval is computed over pairs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Sequence

from ..core.game import GameOutcome

Z95 = 1.959964


@dataclass
class Tally:
    """Running totals from the first agent's side (agent A)."""

    games: int = 0
    points: int = 0
    """Net points of A (won minus lost)."""
    points_won: int = 0
    points_lost: int = 0
    wins: int = 0
    matches: int = 0
    match_wins: int = 0
    won: dict[str, int] = field(default_factory=lambda: {"single": 0, "gammon": 0, "backgammon": 0})
    lost: dict[str, int] = field(default_factory=lambda: {"single": 0, "gammon": 0, "backgammon": 0})
    units: list[float] = field(default_factory=list)
    """Points per statistical unit (a game, or a mirrored pair of games/matches)."""
    unit_games: list[int] = field(default_factory=list)

    def add_game(self, outcome: GameOutcome, a_seat: int) -> int:
        """Count one game; returns A's points from it (negative when A lost)."""
        kind = {1: "single", 2: "gammon", 3: "backgammon"}[outcome.kind]
        self.games += 1
        if outcome.winner == a_seat:
            self.wins += 1
            self.won[kind] += 1
            delta = outcome.points
            self.points_won += delta
        else:
            self.lost[kind] += 1
            delta = -outcome.points
            self.points_lost += outcome.points
        self.points += delta
        return delta

    def add_unit(self, points: float, games: int) -> None:
        self.units.append(points)
        self.unit_games.append(games)

    @property
    def ppg(self) -> float:
        return self.points / self.games if self.games else 0.0

    @property
    def win_rate(self) -> float:
        return self.wins / self.games if self.games else 0.0

    def ppg_interval(self) -> tuple[float, float]:
        """95 % interval of ppg: a ratio estimate over the units (games or mirrored pairs)."""
        if not self.games:
            return (-math.inf, math.inf)
        return ratio_interval(self.units, self.unit_games, self.ppg)

    def as_dict(self) -> dict[str, object]:
        low, high = self.ppg_interval()
        interval = [round(low, 4), round(high, 4)] if math.isfinite(low) else [None, None]
        return {
            "games": self.games,
            "points": self.points,
            "points_won": self.points_won,
            "points_lost": self.points_lost,
            "ppg": round(self.ppg, 4),
            "ppg_ci": interval,
            "win_rate": round(self.win_rate, 4),
            "wins": self.wins,
            "losses": self.games - self.wins,
            "won": dict(self.won),
            "lost": dict(self.lost),
            "matches": self.matches,
            "match_wins": self.match_wins,
        }


def ratio_interval(
    units: Sequence[float], weights: Sequence[float], ratio: float | None = None
) -> tuple[float, float]:
    """95 % interval of ``ratio`` = sum(units) / sum(weights), one observation per unit.

    The linearised ratio estimator: the residual of each unit from ``ratio`` x its weight
    (points of a pair against ppg x its games). (-inf, inf) with fewer than two units.
    """
    n = len(units)
    total = sum(weights)
    if n < 2 or not total:
        return (-math.inf, math.inf)
    mean_weight = total / n
    estimate = sum(units) / total if ratio is None else ratio
    squares = sum((u - estimate * w) ** 2 for u, w in zip(units, weights))
    half = _half_width(n, mean_weight, squares)
    return (estimate - half, estimate + half)


def _half_width(n: int, mean_weight: float, squared_residuals: float) -> float:
    """Half the 95 % interval from the summed squared residuals of ``n`` units."""
    variance = max(squared_residuals, 0.0) / (n - 1)
    return Z95 * math.sqrt(variance / n) / mean_weight


@dataclass
class RunningRatio:
    """`ratio_interval` kept up to date in O(1) per unit from running sums, for live displays
    and stopping rules that look at the interval after every unit."""

    n: int = 0
    sum_u: float = 0.0
    sum_w: float = 0.0
    sum_uu: float = 0.0
    sum_uw: float = 0.0
    sum_ww: float = 0.0

    def add(self, unit: float, weight: float) -> None:
        self.n += 1
        self.sum_u += unit
        self.sum_w += weight
        self.sum_uu += unit * unit
        self.sum_uw += unit * weight
        self.sum_ww += weight * weight

    @property
    def ratio(self) -> float:
        return self.sum_u / self.sum_w if self.sum_w else 0.0

    def interval(self) -> tuple[float, float]:
        if self.n < 2 or not self.sum_w:
            return (-math.inf, math.inf)
        r = self.ratio
        squares = self.sum_uu - 2 * r * self.sum_uw + r * r * self.sum_ww
        if squares <= 1e-12 * self.sum_uu:  # rounding left of an exact zero
            squares = 0.0
        half = _half_width(self.n, self.sum_w / self.n, squares)
        return (r - half, r + half)
