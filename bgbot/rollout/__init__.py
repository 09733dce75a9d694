"""Rollouts: Monte Carlo play-outs of a position by a player, gnubg's way (DESIGN: the referee
layer; it imports core, formats, players, agents and the referee, never the daemon or the CLI).

* `settings`: what to play (`RolloutSettings`) and the job a task carries;
* `dice`: quasi-random dice (the first two rolls rotated), a stream per trial;
* `trial`: one trial by bgbot's 0-ply player, cubeless (the definition, and its C kernel);
* `agent_trial`: one trial by any agent, cubeless or cubeful, hosted by the referee;
* `values`: what a trial is worth (equity per cube, EMG in match play);
* `stats`, `result`: running means and SEs, with and without variance reduction;
* `runner`: chunks of trials on any executor (inline, a process pool, Dask), counted in
  trial order: `rollout_position`, `rollout_candidates`.
"""

from .result import CandidateResult, RolloutProgress, RolloutResult
from .runner import close_players, rollout_candidates, rollout_position, select_candidates
from .settings import RolloutSettings
from .stats import CHANCES, Estimate

__all__ = ["CHANCES", "CandidateResult", "Estimate", "RolloutProgress", "RolloutResult",
           "RolloutSettings", "close_players", "rollout_candidates", "rollout_position",
           "select_candidates"]
