"""`bgbot duel`: two agents play mirrored pairs until a stopping rule says enough.

The unit of work is a **mirrored pair**: dice sequence ``index`` played twice, once as drawn and
once with the opening dice swapped (`series.dice_for`), so each agent meets the rolls the other
had. Agent A always sits in seat 0. In money play a pair is two one-game sessions; in match play
(``length`` > 0) two matches. The statistics treat the pair as one observation.

`play_pair(config, index)` is a pure, picklable function that builds (or reuses) its agents in
the process that runs it, so a local process pool and a Dask cluster are interchangeable:
`run_duel` takes any `concurrent.futures.Executor`-like object and consumes the results in pair
order, which makes the totals depend on the seed only, never on the concurrency or the path.

Noise: an in-process agent (a `PlayerAgent`) is built afresh for every pair with a seed derived
from the duel seed, the pair index and its seat (`agent_seed`), so a self-duel of a noisy agent
is not degenerate and any worker reproduces any pair. An engine (another process: gnubg, UBGI)
is started once per worker and kept, seeded like `series.make_agents` (seed*2, seed*2+1); if it
dies, the pair is played again with a fresh one.
"""

from __future__ import annotations

import asyncio
import dataclasses
import datetime as _dt
import hashlib
import logging
import math
import multiprocessing.util
import time
from concurrent.futures import Executor, Future
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Iterable, Protocol, cast

from ..agents.base import Agent, PlayerAgent
from ..agents.spec import option_value, parse_agent_spec
from ..core.errors import FormatError
from ..core.game import Ending, GameOutcome
from ..core.rules import Rules
from ..deciders import create_agent
from . import events as ev
from .referee import Referee
from .series import dice_for, match_seed
from .stats import RunningRatio, Tally, ratio_interval

if TYPE_CHECKING:
    from ..players.met import MatchEquityTable
    from .luck import LuckJudge
    from .sprt import Sprt

log = logging.getLogger(__name__)


# ---------------------------------------------------------------------- configuration


@dataclass(frozen=True)
class DuelConfig:
    """What a duel plays; everything here decides the results (a resumed duel must match)."""

    agent_a: str
    agent_b: str
    seed: int = 1
    length: int = 0
    """0 = money play (one game per half of a pair); N = N-point matches."""
    cube: bool = False
    """Money: cubeful when True (cubeless by default). Match play: the cube in the matches."""
    jacoby: bool = False
    beavers: bool = False
    cube_limit: int = 0
    luck_judge: str | None = None
    """A judge spec (``heuristic``, ``gnubg:plies=0``) to measure luck with, or None."""
    mat: bool = False
    """Return the `.mat` text of every pair (money: one file per pair; match: one per match)."""
    knowledge: tuple[str | None, str | None] = (None, None)
    """`Agent.knowledge` of A and B (e.g. the network a heuristic agent loads, which its spec
    does not name): a duel resumed with other networks would not be the duel it began as."""

    def __post_init__(self) -> None:
        parse_agent_spec(self.agent_a)
        parse_agent_spec(self.agent_b)
        if self.length < 0:
            raise FormatError("length", str(self.length), "must be >= 0 (0 = money)")
        if self.luck_judge is not None:
            parse_agent_spec(self.luck_judge)
        self.rules  # validates the cube limit

    @property
    def is_money(self) -> bool:
        return self.length == 0

    @property
    def rules(self) -> Rules:
        return Rules(
            cube=self.cube,
            jacoby=self.jacoby and self.cube,
            beavers=self.beavers and self.cube,
            cube_limit=self.cube_limit,
        ).for_match(self.length)

    @property
    def mode(self) -> str:
        if self.length:
            return f"{self.length}-point match" + ("" if self.cube else ", cubeless")
        if not self.cube:
            return "cubeless money"
        extras = [name for name, on in (("Jacoby", self.jacoby), ("beavers", self.beavers)) if on]
        if self.cube_limit:
            extras.append(f"cube limit {self.cube_limit}")
        return "cubeful money" + (f" ({', '.join(extras)})" if extras else "")

    def identity(self) -> dict[str, Any]:
        """The fields a stored duel must share with a resumed one (not the .mat switch)."""
        data = dataclasses.asdict(self)
        data.pop("mat")
        data["knowledge"] = list(self.knowledge)  # as JSON stores it
        return data


def agent_seed(seed: int, index: int, seat: int) -> int:
    """The noise seed of the agent in ``seat`` for pair ``index`` (stable on every platform)."""
    digest = hashlib.sha256(f"bgbot-duel-agent:{seed}:{index}:{seat}".encode()).digest()
    return int.from_bytes(digest[:6], "big")


# ---------------------------------------------------------------------- one pair


@dataclass(frozen=True)
class GameRow:
    """One finished game of a pair, from the seats' point of view (A = seat 0)."""

    mirrored: bool
    number: int
    """1-based game number within its match or session."""
    winner: int
    points: int
    kind: int
    """1 single, 2 gammon, 3 backgammon (as `GameOutcome.kind`)."""
    ending: str
    cube: int
    score_a: int
    """Match score after the game (money: 0)."""
    score_b: int
    mwc_a: float | None = None
    """Match play: A's match-winning chances after this game, from the MET."""
    luck_a: float | None = None
    luck_b: float | None = None

    @property
    def delta(self) -> int:
        """A's points from this game (negative when A lost)."""
        return self.points if self.winner == 0 else -self.points


@dataclass(frozen=True)
class PairResult:
    """Everything a worker sends back about one pair (picklable)."""

    index: int
    games: tuple[GameRow, ...]
    seconds: float = 0.0
    """Wall time the worker spent on the pair."""
    mats: tuple[tuple[str, str], ...] = ()
    """(file name suffix, .mat text) when the config asks for them."""
    cpu_seconds: float = 0.0
    """CPU time of the worker's process on the pair (engines in other processes not counted)."""

    @property
    def points(self) -> int:
        return sum(g.delta for g in self.games)

    @property
    def game_count(self) -> int:
        return len(self.games)

    @property
    def has_luck(self) -> bool:
        return bool(self.games) and all(g.luck_a is not None for g in self.games)

    def adjusted_points(self) -> float:
        """A's luck-adjusted points over the pair (needs luck on every game)."""
        from .luck import adjusted_points

        return sum(adjusted_points(float(g.delta), g.luck_a or 0.0, g.luck_b or 0.0)
                   for g in self.games)

    def match_wins(self, length: int) -> int:
        """Match play: how many of the pair's two matches A won."""
        wins = 0
        for mirrored in (False, True):
            half = [g for g in self.games if g.mirrored is mirrored]
            if half and half[-1].score_a >= length:
                wins += 1
        return wins


class _Worker:
    """Per-process state of `play_pair`: the event loop, engine agents and luck judges."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.in_process: dict[str, bool] = {}
        self.engines: dict[tuple[str, int, int], Agent] = {}
        self.started: set[int] = set()
        """ids of the engines already started in this process."""
        self.judges: dict[str, LuckJudge] = {}
        self.met: MatchEquityTable | None = None
        # Pool workers leave through os._exit, past atexit; multiprocessing's own finalizers
        # still run there (and at a normal exit of the main process), so engines are closed
        # and their private directories removed either way.
        multiprocessing.util.Finalize(self, self.close, exitpriority=10)

    def agent(self, spec: str, seed: int, index: int, seat: int) -> Agent:
        if self.in_process.get(spec, True):
            agent = create_agent(spec, seed=agent_seed(seed, index, seat))
            self.in_process[spec] = isinstance(agent, PlayerAgent)
            if self.in_process[spec]:
                return agent
        key = (spec, seed, seat)
        if key not in self.engines:
            self.engines[key] = create_agent(spec, seed=seed * 2 + seat)
        return self.engines[key]

    def judge(self, spec: str) -> LuckJudge:
        if spec not in self.judges:
            self.judges[spec] = make_judge(spec)
        return self.judges[spec]

    def drop_engines(self) -> None:
        """Forget (and close) the engines, e.g. after one died; the next pair starts new ones."""
        engines, self.engines = self.engines, {}
        self.started.clear()
        for agent in engines.values():
            try:
                self.loop.run_until_complete(agent.close())
            except Exception:  # noqa: BLE001 - a dead engine may fail to close; it is gone
                log.debug("closing a dead engine failed", exc_info=True)

    def close(self) -> None:
        """Close the engines and luck judges this process started (at its exit)."""
        if self.loop.is_closed():
            return
        self.drop_engines()
        judges, self.judges = self.judges, {}
        for judge in judges.values():
            close = getattr(judge, "close", None)  # the heuristic judge holds nothing
            try:
                if close is not None:
                    close()
            except Exception:  # noqa: BLE001 - the process is leaving; nothing else to do
                log.debug("closing a luck judge failed", exc_info=True)
        self.loop.close()


_WORKER: _Worker | None = None


def _worker() -> _Worker:
    global _WORKER
    if _WORKER is None:
        _WORKER = _Worker()
    return _WORKER


def make_judge(spec: str) -> LuckJudge:
    """A luck judge from ``NAME[:key=value,...]``: `luck.NAME_judge(**options)`."""
    from . import luck

    parsed = parse_agent_spec(spec)
    factory = getattr(luck, f"{parsed.name.replace('-', '_')}_judge", None)
    if factory is None:
        known = sorted(n[: -len("_judge")] for n in dir(luck) if n.endswith("_judge"))
        raise FormatError("luck judge", parsed.name, f"unknown; known: {', '.join(known)}")
    options = {key: option_value(value) for key, value in parsed.options.items()}
    judge: LuckJudge = factory(**options)
    return judge




def play_pair(config: DuelConfig, index: int) -> PairResult:
    """Play pair ``index`` of the duel ``config`` in this process (a pool or Dask task)."""
    worker = _worker()
    started, cpu = time.perf_counter(), time.process_time()
    try:
        games, mats = worker.loop.run_until_complete(_play_pair(worker, config, index))
    except Exception:
        if not worker.engines:
            raise
        log.warning("pair %d failed; restarting the engines and playing it again", index,
                    exc_info=True)
        worker.drop_engines()
        games, mats = worker.loop.run_until_complete(_play_pair(worker, config, index))
    return PairResult(index, games, time.perf_counter() - started, mats,
                      time.process_time() - cpu)


async def _play_pair(
    worker: _Worker, config: DuelConfig, index: int
) -> tuple[tuple[GameRow, ...], tuple[tuple[str, str], ...]]:
    from ..formats.mat import MatchRecord, format_match

    a = worker.agent(config.agent_a, config.seed, index, 0)
    b = worker.agent(config.agent_b, config.seed, index, 1)
    names = (a.name, b.name) if a.name != b.name else (f"{a.name}-A", f"{b.name}-B")
    for agent in (a, b):
        if id(agent) not in worker.started:
            await agent.start()
            if not isinstance(agent, PlayerAgent):
                worker.started.add(id(agent))
    judge = worker.judge(config.luck_judge) if config.luck_judge else None
    if config.length and worker.met is None:
        from ..players.met import default_met

        worker.met = default_met()
    rules = config.rules
    rows: list[GameRow] = []
    mats: list[tuple[str, str]] = []
    when = _dt.datetime(2000, 1, 1)
    money_record = MatchRecord.create(0, names, rules, when=when) if config.mat and not config.length else None
    for mirrored in (False, True):
        ended: list[tuple[ev.GameStarted, ev.GameEnded]] = []
        starts: list[ev.GameStarted] = []

        def collect(event: ev.Event) -> None:
            if isinstance(event, ev.GameStarted):
                starts.append(event)
            elif isinstance(event, ev.GameEnded):
                ended.append((starts[-1], event))

        tracker = None
        listeners: list[ev.Listener] = [collect]
        if judge is not None:
            from .luck import LuckTracker

            tracker = LuckTracker(judge)
            listeners.append(tracker)
        referee = Referee(
            (a, b), dice_for(config.seed, index, mirrored), length=config.length, games=1,
            rules=rules, listeners=listeners, names=names,
            match_id=f"duel-{config.seed}-{index}{'m' if mirrored else ''}",
            seed=match_seed(config.seed, index, mirrored),
        )
        await referee.play()
        record = MatchRecord.create(config.length, names, rules, when=when) if config.mat and config.length else None
        for start, end in ended:
            outcome = end.outcome
            mwc = None
            if config.length and worker.met is not None:
                away_a = config.length - start.score[0]
                away_b = config.length - start.score[1]
                delta = outcome.points if outcome.winner == 0 else -outcome.points
                mwc = worker.met.after_game(
                    away_a, away_b, delta, crawford=start.crawford,
                    post_crawford=start.post_crawford, crawford_rule=rules.crawford)
            luck_a = luck_b = None
            if tracker is not None:
                luck_a, luck_b = tracker.game_luck(end.game)
            rows.append(GameRow(
                mirrored, end.game, outcome.winner, outcome.points, outcome.kind,
                str(outcome.ending), outcome.cube,
                end.score[0] if config.length else 0, end.score[1] if config.length else 0,
                mwc, luck_a, luck_b,
            ))
            if record is not None:
                record.add_game(end.record, score_before=start.score, crawford=start.crawford)
            if money_record is not None:
                before = money_record.final_score
                money_record.add_game(end.record, score_before=before)
        if record is not None:
            mats.append(("-mirror" if mirrored else "", format_match(record)))
    if money_record is not None:
        mats.append(("", format_match(money_record)))
    for agent in (a, b):
        if isinstance(agent, PlayerAgent):
            await agent.close()
    return tuple(rows), tuple(mats)


# ---------------------------------------------------------------------- statistics


@dataclass
class DuelStats:
    """Running standings of a duel from A's side, built from pair results in pair order."""

    config: DuelConfig
    tally: Tally = field(default_factory=Tally)
    ppg: RunningRatio = field(default_factory=RunningRatio)
    adjusted: RunningRatio = field(default_factory=RunningRatio)
    adjusted_units: list[float] = field(default_factory=list)
    match: RunningRatio = field(default_factory=RunningRatio)
    """Match play: A's match wins per pair over its two matches."""
    sprt: Sprt | None = None
    seconds: float = 0.0
    """Worker wall time spent on the pairs (for games per second per core)."""
    cpu_seconds: float = 0.0

    @property
    def pairs(self) -> int:
        return self.ppg.n

    @property
    def has_luck(self) -> bool:
        return self.config.luck_judge is not None and self.adjusted.n == self.ppg.n > 0

    def add(self, pair: PairResult) -> None:
        for row in pair.games:
            self.tally.add_game(_outcome(row), 0)
        points, games = float(pair.points), pair.game_count
        self.tally.add_unit(points, games)
        self.ppg.add(points, games)
        if self.config.luck_judge is not None and pair.has_luck:
            adjusted = pair.adjusted_points()
            self.adjusted.add(adjusted, games)
            self.adjusted_units.append(adjusted)
        if self.config.length:
            wins = pair.match_wins(self.config.length)
            self.tally.matches += 2
            self.tally.match_wins += wins
            self.match.add(float(wins), 2)
        if self.sprt is not None:
            self.sprt.add(points, games)
        self.seconds += pair.seconds
        self.cpu_seconds += pair.cpu_seconds

    def ppg_interval(self) -> tuple[float, float]:
        return self.ppg.interval()

    def main_interval(self) -> tuple[float, float]:
        """The interval a --ci-width rule watches: match wins in match play, else the
        luck-adjusted ppg when luck is measured, else the ppg."""
        if self.config.length:
            return self.match.interval()
        if self.has_luck:
            return self.adjusted.interval()
        return self.ppg.interval()

    def summary(self) -> dict[str, Any]:
        """The JSON summary: pairs, games, ppg, ppg_ci, win_rate, outcome counts, luck, SPRT."""
        t = self.tally
        out: dict[str, Any] = {
            "agents": [self.config.agent_a, self.config.agent_b],
            "mode": self.config.mode,
            "seed": self.config.seed,
            "pairs": self.pairs,
            **t.as_dict(),
        }
        out["ppg_ci"] = _rounded(self.ppg.interval())
        out["ppg"] = round(self.ppg.ratio, 4)
        if self.config.length:
            out["length"] = self.config.length
            out["match_win_rate"] = round(self.match.ratio, 4)
            out["match_win_ci"] = _rounded(self.match.interval())
        if self.config.luck_judge is not None:
            out["luck_judge"] = self.config.luck_judge
            if self.has_luck:
                out["luck_adjusted_ppg"] = round(self.adjusted.ratio, 4)
                out["luck_adjusted_ci"] = _rounded(self.adjusted.interval())
        if self.sprt is not None:
            out["sprt"] = self.sprt.as_dict()
            out["sprt_verdict"] = self.sprt.verdict
        if self.seconds > 0:
            out["games_per_second_per_core"] = round(t.games / self.seconds, 2)
        if self.cpu_seconds > 0:
            out["games_per_cpu_second"] = round(t.games / self.cpu_seconds, 2)
        return out


def _rounded(interval: tuple[float, float]) -> list[float | None]:
    low, high = interval
    if not math.isfinite(low):
        return [None, None]
    return [round(low, 4), round(high, 4)]


def _outcome(row: GameRow) -> GameOutcome:
    return GameOutcome(row.winner, row.points, row.kind, cast(Ending, row.ending), row.cube)


# ---------------------------------------------------------------------- stopping rules


@dataclass(frozen=True)
class StopRule:
    """When a duel ends: after ``pairs`` pairs at the most, on an SPRT verdict, or when the
    watched interval is at most ``ci_width`` wide (after ``min_pairs`` pairs)."""

    pairs: int
    ci_width: float | None = None
    min_pairs: int = 10

    def reason(self, stats: DuelStats) -> str | None:
        """Why the duel stops now, or None to go on."""
        if stats.sprt is not None and stats.sprt.verdict is not None:
            return f"SPRT accepted {stats.sprt.verdict}"
        if self.ci_width is not None and stats.pairs >= max(self.min_pairs, 2):
            low, high = stats.main_interval()
            if high - low <= self.ci_width:
                return f"interval width {high - low:.4f} <= {self.ci_width:g}"
        if stats.pairs >= self.pairs:
            return f"{self.pairs} pair{'s' if self.pairs != 1 else ''} played"
        return None


# ---------------------------------------------------------------------- the runner


class PairSink(Protocol):
    """Where finished pairs go before they count (the SQLite store)."""

    def add_pair(self, pair: PairResult) -> None: ...


class InlineExecutor(Executor):
    """Runs each task at once in this process (``--concurrency 1``): no pool, same results."""

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        future: Future[Any] = Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except BaseException as exc:  # noqa: BLE001 - handed to the caller through the future
            future.set_exception(exc)
        return future


@dataclass
class DuelResult:
    stats: DuelStats
    reason: str
    new_pairs: int
    elapsed: float = 0.0
    """Wall time of this run (the new pairs only)."""


def run_duel(
    config: DuelConfig,
    executor: Executor,
    stop: StopRule,
    *,
    stats: DuelStats | None = None,
    done: Iterable[PairResult] = (),
    sink: PairSink | None = None,
    on_pair: Callable[[DuelStats, PairResult], None] | None = None,
    window: int = 4,
    restart: Callable[[], Executor] | None = None,
) -> DuelResult:
    """Play pairs on ``executor`` until ``stop`` says so; pairs count in index order.

    ``done`` are pairs already played (a resumed duel): they are counted first and play goes on
    from the next index. Each new pair goes to ``sink`` before it counts, so a kill loses at
    most the pairs in flight. ``window`` pairs are submitted ahead; pairs finished beyond the
    stopping point are thrown away, so the totals never depend on the concurrency.
    ``restart`` builds a new executor when a local process pool breaks (a worker died).
    """
    stats = stats if stats is not None else DuelStats(config)
    for pair in done:
        if pair.index != stats.pairs:
            raise ValueError(f"stored pairs are not contiguous: expected {stats.pairs}, "
                             f"got {pair.index}")
        stats.add(pair)
    reason = stop.reason(stats)
    new = 0
    started = time.perf_counter()
    pending: dict[int, Future[PairResult]] = {}
    next_index = stats.pairs
    try:
        while reason is None:
            limit = stats.pairs + max(1, window)
            while next_index < limit and next_index < stop.pairs:
                pending[next_index] = executor.submit(play_pair, config, next_index)
                next_index += 1
            index = stats.pairs
            try:
                pair = pending.pop(index).result()
            except BrokenProcessPool:
                if restart is None:
                    raise
                log.warning("a worker process died; starting a new pool and replaying the "
                            "pairs in flight")
                executor.shutdown(wait=False, cancel_futures=True)
                executor = restart()
                pending.clear()
                next_index = stats.pairs
                continue
            if sink is not None:
                sink.add_pair(pair)
            stats.add(pair)
            new += 1
            if on_pair is not None:
                on_pair(stats, pair)
            reason = stop.reason(stats)
    finally:
        for future in pending.values():
            future.cancel()
    return DuelResult(stats, reason, new, time.perf_counter() - started)

