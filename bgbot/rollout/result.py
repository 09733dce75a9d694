"""What a rollout reports: its figures with their standard errors, and how it ran."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping, NamedTuple

from ..players.base import Probabilities
from .settings import RolloutSettings
from .stats import CHANCES, Estimate

__all__ = ["CandidateResult", "RolloutProgress", "RolloutResult"]

STOPPED = ("trials", "se_target", "cancelled", "over")
"""Why a rollout stopped: it played its trials, its equity's SE fell below the target, it was
cancelled, or there was nothing to roll out (the game is over: the figures are exact)."""


@dataclass(frozen=True)
class RolloutResult:
    """A rollout of one position, from the side whose results are reported: the side on roll
    (a position's rollout), or the side that just moved (a candidate play's)."""

    position_id: str
    """The position rolled out, the side on roll first (gnubg's Position ID)."""
    settings: RolloutSettings
    cubeful: bool
    units: str
    """"equity" (money, per unit of the position's cube) or "emg" (match play)."""
    trials: int
    stopped: str
    estimates: dict[str, Estimate]
    """The five chances (`stats.CHANCES`), ``cubeless`` and, cubeful, ``cubeful``."""
    plies: float
    """Mean plies a trial played."""
    seconds: float

    @property
    def equity(self) -> Estimate:
        """The figure a rollout is judged by: cubeful equity where the cube is played."""
        return self.estimates["cubeful" if self.cubeful else "cubeless"]

    @property
    def chances(self) -> Probabilities:
        return Probabilities(*(self.estimates[name].mean for name in CHANCES))

    @property
    def trials_per_second(self) -> float:
        return self.trials / self.seconds if self.seconds > 0 else math.inf

    def se_gain(self) -> float | None:
        """How many times smaller variance reduction made the equity's SE (None without VR
        or trials)."""
        equity = self.equity
        if not self.settings.vr or not equity.se or not math.isfinite(equity.raw_se):
            return None
        return equity.raw_se / equity.se

    def to_json(self) -> dict[str, Any]:
        s = self.settings
        gain = self.se_gain()
        return {
            "position_id": self.position_id,
            "player": s.player, "trials": self.trials, "requested_trials": s.trials,
            "stopped": self.stopped, "seed": s.seed, "truncate": s.truncate, "vr": s.vr,
            "cubeful": self.cubeful, "units": self.units,
            "chances": {name: self.estimates[name].to_json() for name in CHANCES},
            "cubeless_equity": self.estimates["cubeless"].to_json(),
            "cubeful_equity": self.estimates["cubeful"].to_json() if self.cubeful else None,
            "equity": self.equity.mean, "se": self.equity.se,
            "se_gain_of_vr": None if gain is None else round(gain, 3),
            "mean_plies": round(self.plies, 2), "seconds": round(self.seconds, 3),
            "trials_per_second": (round(self.trials_per_second, 2)
                                  if math.isfinite(self.trials_per_second) else None),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RolloutResult:
        """A result from its `to_json` form, as another process (a daemon) reported it."""
        cubeful = bool(data["cubeful"])
        settings = RolloutSettings.reported(
            player=str(data["player"]), trials=int(data["requested_trials"]),
            truncate=int(data["truncate"]), seed=int(data["seed"]), vr=bool(data["vr"]),
            cubeful=cubeful)
        estimates = {name: Estimate.from_json(data["chances"][name]) for name in CHANCES}
        estimates["cubeless"] = Estimate.from_json(data["cubeless_equity"])
        if cubeful:
            estimates["cubeful"] = Estimate.from_json(data["cubeful_equity"])
        return cls(str(data["position_id"]), settings, cubeful, str(data["units"]),
                   int(data["trials"]), str(data["stopped"]), estimates,
                   float(data["mean_plies"]), float(data["seconds"]))


@dataclass(frozen=True)
class CandidateResult:
    """One candidate play of a roll, rolled out: ``result`` is from the mover's side (the
    position after the play, the opponent to roll)."""

    move: str
    """gnubg's notation of the play."""
    result: RolloutResult

    def to_json(self) -> dict[str, Any]:
        return {"move": self.move, **self.result.to_json()}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> CandidateResult:
        return cls(str(data["move"]), RolloutResult.from_json(data))


class RolloutProgress(NamedTuple):
    """Where running rollouts stand (what a progress callback gets)."""

    trials: int
    """Trials counted so far, all rollouts together."""
    total: int
    """Trials planned in all (it falls when a rollout stops early)."""
    equities: tuple[Estimate | None, ...]
    """Each rollout's equity so far (None before its first trial)."""
