"""Results of many games from one agent's side: ppg with a confidence interval, outcome counts.

With mirrored dice, the two games (or matches) played on one dice sequence form one
observation: their results are correlated, so the interval is computed over pairs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

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
        n = len(self.units)
        if n < 2 or not self.games:
            return (-math.inf, math.inf)
        mean_games = sum(self.unit_games) / n
        ppg = self.ppg
        # Linearised ratio estimator: residual of each unit's points from ppg x its games.
        residuals = [u - ppg * g for u, g in zip(self.units, self.unit_games)]
        variance = sum(r * r for r in residuals) / (n - 1)
        half = Z95 * math.sqrt(variance / n) / mean_games
        return (ppg - half, ppg + half)

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
