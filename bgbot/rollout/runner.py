"""Running rollouts: chunks of trials as tasks on any executor, counted in trial order.

`run_chunk(job, first, count)` is a pure, picklable function that plays trials ``first`` ..
``first + count - 1`` of a rollout in whatever process runs it (building the player there once
per process and thread), so the inline executor, a local process pool and a Dask cluster are
interchangeable, as for duels (`bgbot.referee.duel`). `run_rollouts` submits the chunks of one
or more rollouts (a position's, or the candidates of a roll, which share the dice: common
random numbers) and consumes them in a fixed order, each rollout's trials in index order: the
totals depend on the settings only, never on the executor or the number of workers. An SE
target is checked at every multiple of 36 trials in that order, so an early stop is
reproducible too.

Bgbot's own 0-ply player in cubeless play runs in the C kernel (`trial.kernel_trials`);
everything else (another agent, gnubg included, or the cube) is hosted by the referee
(`agent_trial`).

For a server that must stay responsive (the daemon), `rollout_position` and
`rollout_candidates` are plain blocking functions: run them in a thread (``loop.
run_in_executor``) with a ``progress`` callback (called from that thread after every chunk)
and a ``cancel`` callable (checked between chunks).
"""

from __future__ import annotations

import asyncio
import logging
import multiprocessing.util
import threading
import time
from collections import OrderedDict, deque
from concurrent.futures import Executor, Future
from typing import Callable, Sequence

from ..agents.base import Agent
from ..core.context import Context
from ..core.errors import FormatError
from ..core.position import Play, Position
from ..deciders import create_agent
from ..players.heuristic import HeuristicPlayer, shared_evaluator
from ..referee.duel import InlineExecutor
from .agent_trial import RolloutPlayer, agent_trial, start_game
from .dice import RolloutDice
from .result import CandidateResult, RolloutProgress, RolloutResult
from .settings import BLOCK, RolloutJob, RolloutSettings
from .stats import CHANCES, Estimate, RolloutStats
from .trial import Trial, kernel_trials
from .values import ValueMap

__all__ = ["InlineExecutor", "close_players", "rollout_candidates", "rollout_position",
           "run_chunk", "run_rollouts", "select_candidates"]

log = logging.getLogger(__name__)

CANDIDATES = 5
"""Candidate plays rolled out by default: the best few by the player's 0-ply ranking (as the
heuristic player's 1-ply move filter keeps at most 5 within 0.16)."""
CANDIDATE_THRESHOLD = 0.16
"""...within this much equity (EMG in match play) of the 0-ply best."""

Progress = Callable[[RolloutProgress], None]


# ---------------------------------------------------------------------- the worker side


PLAYERS_KEPT = 4
"""Players (agent spec and seed) a worker keeps started, the least recently used closed past
this: a long-lived worker (a daemon's, a Dask worker) serves rollout after rollout, each with
its own seed, and an engine's player is a process."""
DICE_KEPT = 16
"""Dice streams (by seed) a worker keeps."""


class _Worker:
    """Per-process, per-thread state of `run_chunk`: an event loop and the players."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.players: OrderedDict[tuple[str, int], RolloutPlayer] = OrderedDict()
        self.dice: OrderedDict[int, RolloutDice] = OrderedDict()
        multiprocessing.util.Finalize(self, self.close, exitpriority=10)

    def player(self, spec: str, seed: int) -> RolloutPlayer:
        key = (spec, seed)
        found = self.players.get(key)
        if found is not None:
            self.players.move_to_end(key)
            return found
        agent: Agent = create_agent(spec, seed=seed)
        self.loop.run_until_complete(agent.start())
        found = self.players[key] = RolloutPlayer(agent, shared_evaluator())
        while len(self.players) > PLAYERS_KEPT:
            _, old = self.players.popitem(last=False)
            self._close(old)
        return found

    def dice_of(self, seed: int) -> RolloutDice:
        found = self.dice.get(seed)
        if found is not None:
            self.dice.move_to_end(seed)
            return found
        found = self.dice[seed] = RolloutDice(seed)
        while len(self.dice) > DICE_KEPT:
            self.dice.popitem(last=False)
        return found

    def _close(self, player: RolloutPlayer) -> None:
        try:
            self.loop.run_until_complete(player.agent.close())
        except Exception:  # noqa: BLE001 - a player that cannot close is let go anyway
            log.debug("closing a rollout agent failed", exc_info=True)

    def close(self) -> None:
        """Close the agents (engines stop their processes)."""
        if self.loop.is_closed():
            return
        players, self.players = self.players, OrderedDict()
        for player in players.values():
            self._close(player)
        self.loop.close()


_LOCAL = threading.local()


def _worker() -> _Worker:
    found: _Worker | None = getattr(_LOCAL, "worker", None)
    if found is None:
        found = _LOCAL.worker = _Worker()
    return found


def close_players() -> None:
    """Close the players this thread built (its engines' processes); the next chunk builds
    them again."""
    found: _Worker | None = getattr(_LOCAL, "worker", None)
    if found is not None:
        _LOCAL.worker = None
        found.close()


def _kernel_utilities(player: HeuristicPlayer | None, job: RolloutJob
                      ) -> tuple[bool, tuple[tuple[float, ...], tuple[float, ...]] | None]:
    """(whether the C kernel plays ``job`` as ``player`` would, its utilities argument)."""
    if (player is None or job.cubeful or player.plies != 0 or player.noise
            or not player.evaluator.compiled):
        return False, None
    try:
        mine = player.play_utility(job.context)
        theirs = player.play_utility(job.context.swapped())
    except ValueError:
        return False, None
    if mine is None and theirs is None:
        return True, None
    if mine is None or theirs is None:
        return False, None
    return True, (mine, theirs)


def run_chunk(job: RolloutJob, first: int, count: int) -> list[Trial]:
    """Trials ``first`` .. ``first + count - 1`` of ``job``, for the side whose results are
    reported (a pool or Dask task)."""
    worker = _worker()
    settings = job.settings
    player = worker.player(settings.player, settings.seed)
    dice = worker.dice_of(settings.seed)
    kernel, utilities = _kernel_utilities(player.heuristic, job)
    if kernel:
        assert player.heuristic is not None
        found = kernel_trials(player.heuristic.evaluator, job.position, dice, first, count,
                              settings.truncate, settings.vr, utilities)
        assert found is not None
        return found if job.for_roller else [trial.flipped() for trial in found]
    values = ValueMap(job.viewer_context)

    async def play() -> list[Trial]:
        return [await agent_trial(player, job, dice, trial, values)
                for trial in range(first, first + count)]

    return worker.loop.run_until_complete(play())


# ---------------------------------------------------------------------- the counting side


class _Running:
    """One rollout being counted."""

    def __init__(self, job: RolloutJob) -> None:
        self.job = job
        self.values = ValueMap(job.viewer_context)
        self.stats = RolloutStats(self.values, cubeful=job.cubeful, vr=job.settings.vr)
        self.stopped: str | None = None

    def add(self, trials: Sequence[Trial]) -> None:
        """Count a chunk's trials in order, stopping at the SE target (checked at multiples
        of 36 trials) or at the number of trials asked for."""
        settings = self.job.settings
        stats = self.stats
        for trial in trials:
            stats.add(trial)
            if stats.trials % BLOCK:
                continue
            if stats.trials >= settings.trials:
                self.stopped = "trials"
                return
            target = settings.se_target
            if target is not None and stats.equity().se < target:
                self.stopped = "se_target"
                return

    def result(self, seconds: float, stopped: str) -> RolloutResult:
        stats = self.stats
        job = self.job
        after = Position(job.opponent, job.mover)
        return RolloutResult(after.position_id(), job.settings, job.cubeful, self.values.units,
                             stats.trials, stopped, stats.estimates(),
                             stats.plies / stats.trials if stats.trials else 0.0, seconds)


def run_rollouts(jobs: Sequence[RolloutJob], executor: Executor | None = None, *,
                 window: int = 1, progress: Progress | None = None,
                 cancel: Callable[[], bool] | None = None) -> list[RolloutResult]:
    """Roll out every job on ``executor`` (default: in this thread), chunk by chunk, up to
    ``window`` chunks in flight; the results in the jobs' order (module docstring)."""
    executor = executor if executor is not None else InlineExecutor()
    running = [_Running(job) for job in jobs]
    order = deque(_chunk_order(jobs, window))
    pending: deque[tuple[int, int, Future[list[Trial]]]] = deque()
    started = time.perf_counter()
    cancelled = False

    def report() -> None:
        if progress is not None:
            total = sum(r.stats.trials if r.stopped else r.job.settings.trials for r in running)
            progress(RolloutProgress(sum(r.stats.trials for r in running), total, tuple(
                r.stats.equity() if r.stats.trials else None for r in running)))

    report()
    try:
        while order or pending:
            if cancel is not None and cancel():
                cancelled = True
                break
            while order and len(pending) < max(1, window):
                index, first = order.popleft()
                if running[index].stopped:
                    continue
                job = jobs[index]
                count = min(job.settings.chunk_for(window), job.settings.trials - first)
                pending.append((index, first, executor.submit(run_chunk, job, first, count)))
            if not pending:
                continue
            index, first, future = pending.popleft()
            trials = future.result()
            if not running[index].stopped:
                running[index].add(trials)
            report()
    finally:
        for _, _, future in pending:
            future.cancel()
    seconds = time.perf_counter() - started
    return [r.result(seconds, r.stopped or ("cancelled" if cancelled else "trials"))
            for r in running]


def _chunk_order(jobs: Sequence[RolloutJob], window: int) -> list[tuple[int, int]]:
    """(job, first trial) of every chunk: by first trial, then job, so that the candidates
    of a roll advance together."""
    chunks = [(first, index) for index, job in enumerate(jobs)
              for first in range(0, job.settings.trials, job.settings.chunk_for(window))]
    return [(index, first) for first, index in sorted(chunks)]


# ---------------------------------------------------------------------- the API


def rollout_position(position: Position, context: Context,
                     settings: RolloutSettings = RolloutSettings(), *,
                     executor: Executor | None = None, window: int = 1,
                     progress: Progress | None = None,
                     cancel: Callable[[], bool] | None = None) -> RolloutResult:
    """Roll out ``position`` (the side on roll, before rolling or doubling) in ``context``
    (from that side): the results are that side's. Blocking; see the module docstring for
    running it off an event loop."""
    job = RolloutJob.of(position, context, settings)
    return run_rollouts([job], executor, window=window, progress=progress, cancel=cancel)[0]


def select_candidates(position: Position, dice: tuple[int, int], context: Context,
                      player: str = "heuristic", *, candidates: int = CANDIDATES,
                      threshold: float = CANDIDATE_THRESHOLD) -> list[tuple[Play, Position]]:
    """The plays of ``dice`` worth rolling out: the best ``candidates`` by the player's 0-ply
    ranking (bgbot's heuristic player; other agents are ranked by bgbot's default evaluator)
    within ``threshold`` of the best (equity, EMG in match play); each with the position after
    it (mover's view)."""
    if candidates < 1:
        raise FormatError("candidates", str(candidates), "must be at least 1")
    agent = create_agent(player)
    heuristic = RolloutPlayer(agent, shared_evaluator()).heuristic
    ranker = HeuristicPlayer(plies=0, evaluator=heuristic.evaluator if heuristic is not None
                             else shared_evaluator())
    ranked = ranker.rank_plays(position, dice, context)
    if not ranked:
        return [(Play(), position)]
    values = ValueMap(context)

    def value(entry_value: float) -> float:
        if context.is_money:
            return entry_value
        from ..players.cube import mwc_to_emg

        return mwc_to_emg(entry_value, context, values.met)

    best = value(ranked[0].value)
    return [(entry.play, entry.after) for entry in ranked[:candidates]
            if value(entry.value) >= best - threshold]


def _finished(play: Play, position: Position, dice: tuple[int, int], context: Context,
              settings: RolloutSettings) -> RolloutResult:
    """The exact result of a play that ends the game (nothing to roll out)."""
    game = start_game(position, context)
    game.roll(dice)
    game.move(play)
    outcome = game.outcome
    assert outcome is not None and outcome.winner == 0
    cubeful = settings.cubeful_for(context)
    values = ValueMap(context)
    chances = (1.0, float(outcome.kind >= 2), float(outcome.kind >= 3), 0.0, 0.0)
    exact = {name: Estimate(value, 0.0, value, 0.0) for name, value in zip(CHANCES, chances)}
    cubeless = values.cubeless(chances)
    exact["cubeless"] = Estimate(cubeless, 0.0, cubeless, 0.0)
    if cubeful:
        points = values.game_result(outcome.points)
        exact["cubeful"] = Estimate(points, 0.0, points, 0.0)
    after = position.apply(play).swapped()
    return RolloutResult(after.position_id(), settings, cubeful, values.units, 0, "over",
                         exact, 0.0, 0.0)


def rollout_candidates(position: Position, dice: tuple[int, int], context: Context,
                       settings: RolloutSettings = RolloutSettings(), *,
                       candidates: int = CANDIDATES, threshold: float = CANDIDATE_THRESHOLD,
                       executor: Executor | None = None, window: int = 1,
                       progress: Progress | None = None,
                       cancel: Callable[[], bool] | None = None) -> list[CandidateResult]:
    """Roll out the candidate plays of ``dice`` (`select_candidates`) in ``position`` (the
    side on roll, who has rolled) with the same dice for every candidate (common random
    numbers); best first by rolled-out equity, each from the mover's side."""
    chosen = select_candidates(position, dice, context, settings.player,
                               candidates=candidates, threshold=threshold)
    jobs: list[RolloutJob] = []
    exact: dict[int, RolloutResult] = {}
    for k, (play, after) in enumerate(chosen):
        if after.is_game_over():
            exact[k] = _finished(play, position, dice, context, settings)
        else:
            jobs.append(RolloutJob.of(after.swapped(), context.swapped(), settings,
                                      for_roller=False))
    rolled = iter(run_rollouts(jobs, executor, window=window, progress=progress, cancel=cancel))
    results = [CandidateResult(str(play), exact[k] if k in exact else next(rolled))
               for k, (play, _) in enumerate(chosen)]
    return sorted(results, key=lambda c: c.result.equity.mean, reverse=True)
