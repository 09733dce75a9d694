"""Running means and standard errors of a rollout, trial by trial in index order.

Each reported figure (the five chances, the cubeless equity, the cubeful equity) is a column
of per-trial values; with variance reduction the value counted is the trial's value minus its
luck (a control variate of mean zero: the mean stays, the variance falls). The values without
the luck are kept too: they are what the same trials give without variance reduction (the
play does not depend on it), so the SE gain of VR is measured in the same run.

Trials are added one at a time in trial-index order, so the running figures (Welford's
updates) are the same bit for bit however the trials were split between processes or
machines.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping

from .trial import Trial
from .values import ValueMap

__all__ = ["CHANCES", "Column", "Estimate", "RolloutStats"]

CHANCES = ("win", "win_gammon", "win_backgammon", "lose_gammon", "lose_backgammon")
"""gnubg's five chances, in its order (gammons include backgammons)."""


@dataclass(frozen=True)
class Estimate:
    """A mean with its standard error, and the same without variance reduction."""

    mean: float
    se: float
    raw_mean: float
    """The plain mean of the trials' values (without subtracting the luck)."""
    raw_se: float

    def to_json(self) -> dict[str, float]:
        return {"mean": self.mean, "se": self.se, "mean_without_vr": self.raw_mean,
                "se_without_vr": self.raw_se}

    @classmethod
    def from_json(cls, data: Mapping[str, float | None]) -> Estimate:
        """The inverse of `to_json`; a missing figure (None: JSON has no NaN) is NaN."""

        def number(key: str) -> float:
            value = data.get(key)
            return math.nan if value is None else float(value)

        return cls(number("mean"), number("se"), number("mean_without_vr"),
                   number("se_without_vr"))


class _Running:
    """Welford's running mean and sum of squared deviations (exact enough for an SE near 0,
    where sums of squares cancel)."""

    __slots__ = ("mean", "m2")

    def __init__(self) -> None:
        self.mean = self.m2 = 0.0

    def add(self, n: int, value: float) -> None:
        """Count ``value`` as the ``n``-th."""
        delta = value - self.mean
        self.mean += delta / n
        self.m2 += delta * (value - self.mean)

    def mean_se(self, n: int) -> tuple[float, float]:
        if n == 0:
            return math.nan, math.nan
        if n == 1:
            return self.mean, math.inf
        return self.mean, math.sqrt(self.m2 / (n - 1) / n)


class Column:
    """One figure's values, with and without the luck taken off."""

    __slots__ = ("n", "raw", "adjusted")

    def __init__(self) -> None:
        self.n = 0
        self.raw = _Running()
        self.adjusted = _Running()

    def add(self, value: float, luck: float) -> None:
        self.n += 1
        self.raw.add(self.n, value)
        self.adjusted.add(self.n, value - luck)

    def estimate(self, vr: bool) -> Estimate:
        raw_mean, raw_se = self.raw.mean_se(self.n)
        if not vr:
            return Estimate(raw_mean, raw_se, raw_mean, raw_se)
        mean, se = self.adjusted.mean_se(self.n)
        return Estimate(mean, se, raw_mean, raw_se)


class RolloutStats:
    """The running figures of one rollout."""

    def __init__(self, values: ValueMap, *, cubeful: bool, vr: bool) -> None:
        self.values = values
        self.cubeful = cubeful
        self.vr = vr
        self.chances = [Column() for _ in CHANCES]
        self.cubeless = Column()
        self.cubeful_column = Column() if cubeful else None
        self.plies = 0

    @property
    def trials(self) -> int:
        return self.cubeless.n

    def add(self, trial: Trial) -> None:
        """Count the next trial (in index order)."""
        for column, value, luck in zip(self.chances, trial.outcome, trial.luck):
            column.add(value, luck)
        values = self.values
        self.cubeless.add(values.cubeless(trial.outcome), values.luck(trial.luck))
        if self.cubeful_column is not None:
            if trial.cubeful is None:
                raise ValueError("a cubeless trial in a cubeful rollout")
            self.cubeful_column.add(trial.cubeful, trial.cubeful_luck)
        self.plies += trial.plies

    def estimates(self) -> dict[str, Estimate]:
        """Every figure: the five chances, ``cubeless`` and (cubeful) ``cubeful``."""
        out = {name: column.estimate(self.vr) for name, column in zip(CHANCES, self.chances)}
        out["cubeless"] = self.cubeless.estimate(self.vr)
        if self.cubeful_column is not None:
            out["cubeful"] = self.cubeful_column.estimate(self.vr)
        return out

    def equity(self) -> Estimate:
        """The equity a rollout is judged by: cubeful where the cube is played, else
        cubeless."""
        column = self.cubeful_column if self.cubeful_column is not None else self.cubeless
        return column.estimate(self.vr)
