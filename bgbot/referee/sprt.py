"""A sequential probability ratio test on paired backgammon results, in ppg units.

Hypotheses: H0 "A's mean points per game against B is ``ppg0``", H1 "it is ``ppg1``". The
observations are statistical units (a mirrored pair of money games adds ``(points, 2)``; an
unpaired game ``(points, 1)``; a mirrored pair of matches its points and games).

Why this test. Backgammon results are discrete and heavy-tailed (0, ±1 … ±6 per cubeless pair,
more with the cube), and their variance is not known in advance, so a textbook SPRT with a fixed
variance is not honest. We use the *generalized* SPRT with a normal model whose variance is
profiled out, as fishtest / fastchess do for pentanomial chess results (adapted from scores to
points): under hypothesis k the unit residuals ``z_i = points_i - ppg_k * games_i`` are taken as
N(0, s_k^2) with s_k^2 estimated by maximum likelihood, ``s_k^2 = mean(z_i^2)``; then

    LLR = (n / 2) * log(s_0^2 / s_1^2).

For small separations this equals fishtest's ``n (m1 - m0)(2 m - m0 - m1) / (2 var)``. Running
sums make each update O(1). Wald's bounds: stop for H1 when LLR >= log((1 - beta) / alpha), for
H0 when LLR <= log(beta / (1 - alpha)). The verdict is sticky (the first crossing decides; units
added later, e.g. games already in flight, only update the LLR), and no verdict is given before
``MIN_PAIRS`` units: with a handful of pairs the variance estimate can be near zero (most
mirrored pairs end 0) and would make the LLR jump.

Only ppg units are supported. Backgammon has no standard Elo for money play (FIBS ratings are
defined for matches of a given length), so Elo-style bounds would be an invention we could not
validate; `SprtConfig.parse` says so when given them.

The error rates of this exact class on paired heuristic-vs-pubeval results were checked by the
simulation study ``bench/sprt_study.py`` (documented in ``bench/README.md``); `SPRT_VALIDATED`
records that it passed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..core.errors import FormatError

__all__ = ["MIN_PAIRS", "SPRT_VALIDATED", "Sprt", "SprtConfig"]

SPRT_VALIDATED: bool = True
"""True because the simulation study ``python bench/sprt_study.py`` passed (full mode, 2,000
simulated duels per true mean and pair model: mirrored heuristic-vs-pubeval pairs, independent
games, cube-like heavy tails). With H0 0 / H1 0.1 ppg, alpha = beta = 0.05 it measured false
positives 0.050-0.053 and false negatives 0.043-0.052 (10,000 duels on the mirrored model: 0.052
and 0.046), all within the stated Monte-Carlo margin of 3 standard errors (bench/README.md, "SPRT
simulation study"). Set it back to False if a change to this module fails the study."""

MIN_PAIRS = 20
"""No verdict before this many units (the variance estimate needs some data)."""

_VARIANCE_FLOOR = 1e-12


def _number(field: str, text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise FormatError(field, text, "not a number") from None
    if not math.isfinite(value):
        raise FormatError(field, text, "not a finite number")
    return value


@dataclass(frozen=True)
class SprtConfig:
    """The two hypotheses (mean ppg of A under H0 and H1) and the error rates wanted."""

    ppg0: float
    ppg1: float
    alpha: float = 0.05
    """Wanted false-positive rate: accepting H1 when H0 is true."""
    beta: float = 0.05
    """Wanted false-negative rate: accepting H0 when H1 is true."""

    def __post_init__(self) -> None:
        for name in ("ppg0", "ppg1"):
            value = getattr(self, name)
            if not (math.isfinite(value) and -3.0 < value < 3.0):
                raise FormatError(f"sprt {name}", value, "a ppg strictly between -3 and 3")
        if self.ppg0 == self.ppg1:
            raise FormatError("sprt ppg1", self.ppg1, "must differ from ppg0")
        for name in ("alpha", "beta"):
            value = getattr(self, name)
            if not (0.0 < value < 0.5):
                raise FormatError(f"sprt {name}", value, "an error rate strictly between 0 and 0.5")

    @classmethod
    def parse(cls, text: str) -> SprtConfig:
        """Read ``"ppg0,ppg1"`` or ``"ppg0,ppg1,alpha,beta"`` (ppg units, e.g. ``0,0.1``)."""
        if "elo" in text.lower():
            raise FormatError("sprt", text, "Elo bounds are not supported for backgammon money "
                              "play; give the bounds in ppg units: ppg0,ppg1[,alpha,beta]")
        parts = [part.strip() for part in text.split(",")]
        if len(parts) not in (2, 4):
            raise FormatError("sprt", text, "expected ppg0,ppg1 or ppg0,ppg1,alpha,beta")
        names = ("ppg0", "ppg1", "alpha", "beta")
        values = [_number(f"sprt {name}", part) for name, part in zip(names, parts)]
        return cls(*values)

    def as_dict(self) -> dict[str, float]:
        return {"ppg0": self.ppg0, "ppg1": self.ppg1, "alpha": self.alpha, "beta": self.beta}


class Sprt:
    """The running test: `add` each unit, read `llr`, `bounds` and `verdict` (module docstring)."""

    def __init__(self, config: SprtConfig) -> None:
        self.config = config
        self.pairs = 0
        """Units added so far."""
        self.games = 0
        self.points = 0.0
        self._pp = 0.0  # sum of points^2
        self._pg = 0.0  # sum of points * games
        self._gg = 0.0  # sum of games^2
        self._verdict: str | None = None
        self.decided_at: int | None = None
        """Units seen when the verdict was reached."""

    def add(self, points: float, games: int) -> None:
        """Count one unit: A's net points over its ``games`` games."""
        if games < 1:
            raise ValueError(f"a unit has at least one game, got {games}")
        p = float(points)
        self.pairs += 1
        self.games += games
        self.points += p
        self._pp += p * p
        self._pg += p * games
        self._gg += games * games
        if self._verdict is None and self.pairs >= MIN_PAIRS:
            llr = self.llr
            lower, upper = self.bounds
            if llr >= upper:
                self._verdict, self.decided_at = "H1", self.pairs
            elif llr <= lower:
                self._verdict, self.decided_at = "H0", self.pairs

    def _mean_square(self, ppg: float) -> float:
        """mean((points - ppg * games)^2) over the units, floored above zero."""
        total = self._pp - 2.0 * ppg * self._pg + ppg * ppg * self._gg
        return max(total / self.pairs, _VARIANCE_FLOOR)

    @property
    def llr(self) -> float:
        """Generalized log-likelihood ratio of H1 against H0 (0 before two units)."""
        if self.pairs < 2:
            return 0.0
        return 0.5 * self.pairs * math.log(
            self._mean_square(self.config.ppg0) / self._mean_square(self.config.ppg1)
        )

    @property
    def bounds(self) -> tuple[float, float]:
        """Wald's (lower, upper) = (log(beta / (1 - alpha)), log((1 - beta) / alpha))."""
        a, b = self.config.alpha, self.config.beta
        return (math.log(b / (1.0 - a)), math.log((1.0 - b) / a))

    @property
    def verdict(self) -> str | None:
        """"H0", "H1", or None while undecided."""
        return self._verdict

    @property
    def ppg(self) -> float:
        return self.points / self.games if self.games else 0.0

    def as_dict(self) -> dict[str, object]:
        lower, upper = self.bounds
        return {
            "config": self.config.as_dict(),
            "llr": round(self.llr, 4),
            "bounds": [round(lower, 4), round(upper, 4)],
            "verdict": self._verdict,
            "pairs": self.pairs,
            "decided_at": self.decided_at,
            "games": self.games,
            "ppg": round(self.ppg, 4),
        }
