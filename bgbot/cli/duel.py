"""`bgbot duel A B`: mirrored pairs between two agents until a stopping rule is met.

Every game goes to a SQLite results file; the standings are computed from it, and --resume
continues a killed duel. Pairs run inline, on a local process pool (--concurrency) or on a Dask
cluster (--cluster); the same seed gives the same totals on every path.
"""

from __future__ import annotations

import argparse
import dataclasses
import signal
import json
import sys
from concurrent.futures import Executor
from pathlib import Path
from typing import Any, Callable

from ..core.errors import BgbotError
from ._args import match_length

_EPILOG = """\
agents (NAME[:key=value,...]):
{agents}

examples:
  bgbot duel heuristic pubeval --pairs 500             cubeless money, 1000 games
  bgbot duel heuristic pubeval --pairs 2000 --concurrency 2 --luck --report out/
  bgbot duel heuristic:noise=0.05 heuristic:noise=0.05 --ci-width 0.05 --luck
  bgbot duel heuristic pubeval --cubeful --jacoby --beavers --pairs 300
  bgbot duel heuristic pubeval --length 7 --pairs 100   7-point matches, result = match wins
  bgbot duel heuristic gnubg:plies=0 --pairs 200 --luck-judge gnubg:plies=0
  bgbot duel heuristic pubeval --sprt 0,0.1 --pairs 20000    stop as soon as H0 or H1 is accepted
  bgbot duel heuristic pubeval --pairs 1000 --resume    carry on where a killed run stopped
  bgbot duel heuristic pubeval --cluster tcp://scheduler:8786 --pairs 10000
  bgbot duel random random --pairs 20 --json | tail -1 | jq .ppg

A pair is one dice sequence played twice, the second time with the opening dice (and so
every roll) swapped between the seats: each agent gets the dice the other had. The
statistics are from A's side and treat the pair as one observation.

Stops after --pairs N pairs, or earlier on an SPRT verdict (--sprt) or once the 95% interval
is at most --ci-width wide (the luck-adjusted one with --luck, match wins with --length).

Results: every game is stored in --db (default duels/<A>-vs-<B>-<mode>[-luck]-seed<S>.sqlite,
the mode saying cubeless or cubeful, the rules and the match length); a pair is written in one
transaction, so a killed duel loses at most the pairs in flight. Run the same command with
--resume to continue it. Ctrl-C (or SIGTERM) stops at once and prints the standings of the
pairs stored. --mat DIR also writes gnubg .mat files (money: one per pair holding its two
games; match play: one per match). With --json stdout carries the JSON line only.

--luck judges every move of both sides at 0-ply: a duel of 0-ply players takes about 15-25
times as long, one of 2-ply players about a tenth longer (the judging is then a small part of
each move). The time per pair and the time left are printed once the pace is known.
"""


def register(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    from ..deciders import known_agents

    agents = "\n".join(f"  {name:<11}{summary}" for name, summary in known_agents().items())
    p = sub.add_parser(
        "duel",
        help="measure one agent against another with mirrored dice pairs (ppg, CI, SPRT)",
        description="Play mirrored pairs of games (or matches) between agents A and B and "
        "report A's ppg with a 95% confidence interval, outcome counts, and optionally "
        "luck-adjusted results. Every game is kept in a SQLite file.",
        epilog=_EPILOG.format(agents=agents),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("agent_a", metavar="A", help="first agent (seat 0; the statistics are its)")
    p.add_argument("agent_b", metavar="B", help="second agent")
    stop = p.add_argument_group("when to stop")
    stop.add_argument("--pairs", type=int, default=None, metavar="N",
                      help="play N pairs (2N games or matches); default 100, or at most "
                      "100000 with --sprt / --ci-width")
    stop.add_argument("--sprt", metavar="PPG0,PPG1[,ALPHA,BETA]", default=None,
                      help="sequential test of H0 ppg=PPG0 against H1 ppg=PPG1 (alpha and "
                      "beta default 0.05); money play")
    stop.add_argument("--ci-width", type=float, default=None, metavar="W",
                      help="stop once the 95%% interval is at most W wide (after 10 pairs)")
    mode = p.add_argument_group("what to play")
    mode.add_argument("--seed", type=int, default=1, metavar="S",
                      help="dice and noise seed; the same seed gives the same duel (default 1)")
    mode.add_argument("--length", type=match_length, default=0, metavar="N",
                      help="N-point matches instead of money games; result = match wins, with "
                      "each game's match-winning chances from the MET")
    mode.add_argument("--cubeful", action="store_true",
                      help="money play with the doubling cube (default: cubeless)")
    mode.add_argument("--cubeless", action="store_true",
                      help="match play without the cube (default: with it)")
    mode.add_argument("--jacoby", action="store_true", help="cubeful money: the Jacoby rule")
    mode.add_argument("--beavers", action="store_true",
                      help="cubeful money: beavers and raccoons")
    mode.add_argument("--cube-limit", type=int, default=0, metavar="V",
                      help="highest cube value, a power of two (default: none)")
    luck = p.add_argument_group("luck adjustment (money play)")
    luck.add_argument("--luck", action="store_true",
                      help="also report luck-adjusted ppg: each game's result minus A's luck "
                      "plus B's, as the judge sees it (same mean, smaller interval)")
    luck.add_argument("--luck-judge", default=None, metavar="SPEC",
                      help="the judge: heuristic (default) or gnubg[:plies=N]; implies --luck")
    run_group = p.add_argument_group("where to play")
    where = run_group.add_mutually_exclusive_group()
    where.add_argument("--concurrency", type=int, default=1, metavar="N",
                       help="play pairs on N local worker processes (default 1: in this one)")
    where.add_argument("--cluster", default=None, metavar="ADDRESS",
                       help="play pairs on the Dask cluster whose scheduler is ADDRESS "
                       "(needs Dask: pip install 'dask[distributed]')")
    out = p.add_argument_group("records and output")
    out.add_argument("--db", type=Path, default=None, metavar="FILE",
                     help="SQLite results file (default duels/<A>-vs-<B>-<mode>-seed<S>.sqlite)")
    out.add_argument("--resume", action="store_true",
                     help="continue the duel stored in the results file (same options)")
    out.add_argument("--mat", type=Path, default=None, metavar="DIR",
                     help="also write gnubg .mat files into DIR")
    out.add_argument("--report", type=Path, default=None, metavar="DIR",
                     help="write DIR/index.html with PNG plots (needs matplotlib: pip install "
                     "matplotlib)")
    out.add_argument("--json", action="store_true",
                     help="end with one JSON line on stdout (nothing else goes there): pairs, "
                     "games, ppg, ppg_ci, win_rate, ...")
    out.add_argument("--quiet", action="store_true", help="no progress bar and no text block")
    out.add_argument("--log-every", type=float, default=10.0, metavar="MINUTES",
                     help="when stderr is no terminal (a log file, nohup, systemd), where no "
                     "progress bar shows, write a line with the pairs done, the standings and "
                     "the time left every MINUTES (default 10; 0: never)")
    p.set_defaults(func=run)


def _config(args: argparse.Namespace) -> Any:
    from ..core.errors import FormatError
    from ..referee.duel import DuelConfig

    if args.length < 0:
        raise FormatError("--length", str(args.length), "must be at least 1 (omit it for money)")
    money = args.length == 0
    if args.cubeful and not money:
        raise BgbotError("--cubeful is for money play; matches use the cube unless --cubeless")
    if args.cubeless and money:
        raise BgbotError("--cubeless is for match play; money duels are cubeless by default")
    if (args.jacoby or args.beavers) and not (money and args.cubeful):
        raise BgbotError("--jacoby and --beavers need cubeful money play (--cubeful)")
    judge = args.luck_judge or ("heuristic" if args.luck else None)
    if judge is not None and not money:
        raise BgbotError("--luck is for money play: match play would need luck in "
                         "match-winning chances")
    if args.sprt is not None and not money:
        raise BgbotError("--sprt tests ppg, so it needs money play (omit --length)")
    if args.cube_limit < 0:
        raise FormatError("--cube-limit", str(args.cube_limit), "must be a power of two")
    try:
        return DuelConfig(
            agent_a=args.agent_a, agent_b=args.agent_b, seed=args.seed, length=args.length,
            cube=args.cubeful if money else not args.cubeless, jacoby=args.jacoby,
            beavers=args.beavers, cube_limit=args.cube_limit, luck_judge=judge,
            mat=args.mat is not None,
        )
    except ValueError as exc:
        if isinstance(exc, BgbotError):
            raise
        raise BgbotError(str(exc)) from None


def _sprt(args: argparse.Namespace) -> Any:
    if args.sprt is None:
        return None
    from ..referee import sprt

    if not sprt.SPRT_VALIDATED:
        raise BgbotError(
            "--sprt is refused until its error rates are confirmed by the simulation study "
            "bench/sprt_study.py (see SPRT_VALIDATED in bgbot/referee/sprt.py); "
            "use --pairs N or --ci-width W meanwhile")
    return sprt.Sprt(sprt.SprtConfig.parse(args.sprt))


def _executor(args: argparse.Namespace) -> tuple[Executor, Callable[[], Executor] | None,
                                                 Callable[[], None]]:
    """(executor, how to build a new one if it breaks, how to release it)."""
    if args.cluster:
        try:
            from distributed import Client
        except ImportError:
            raise BgbotError("--cluster needs Dask; install it into bgbot's environment with: "
                             "pip install 'dask[distributed]' (from a source checkout, "
                             "pip install '.[cluster]' does the same)") from None
        client = Client(args.cluster)  # type: ignore[no-untyped-call]
        executor: Executor = client.get_executor()  # type: ignore[no-untyped-call]
        return executor, None, client.close
    if args.concurrency < 1:
        raise BgbotError(f"--concurrency must be at least 1, got {args.concurrency}")
    if args.concurrency == 1:
        from ..referee.duel import InlineExecutor

        inline = InlineExecutor()
        return inline, None, lambda: None
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    def pool() -> Executor:
        return ProcessPoolExecutor(args.concurrency,
                                   mp_context=multiprocessing.get_context("forkserver"))

    holder = [pool()]

    def restart() -> Executor:
        holder[0] = pool()
        return holder[0]

    def release() -> None:
        holder[0].shutdown(wait=True, cancel_futures=True)

    return holder[0], restart, release


def _stop_on_sigterm() -> Any:
    """SIGTERM ends the duel as Ctrl-C does: the pairs stored so far stay, the worker
    processes are shut down (not left behind), and --resume carries on. Returns the previous
    handler (None when not in the main thread, where signals cannot be set)."""
    import threading

    if threading.current_thread() is not threading.main_thread():
        return None

    def interrupt(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    return signal.signal(signal.SIGTERM, interrupt)


def run(args: argparse.Namespace) -> int:
    from ..deciders import create_agent
    from ..referee.duel import DuelStats, StopRule, run_duel
    from ..referee.duel_report import _pyplot, write_report
    from ..referee.duel_store import default_path
    from ..util import writable_directory, write_atomically

    config = _config(args)
    sprt = _sprt(args)
    if args.ci_width is not None and args.ci_width <= 0:
        raise BgbotError(f"--ci-width must be positive, got {args.ci_width}")
    limit = args.pairs if args.pairs is not None else (
        100_000 if sprt is not None or args.ci_width is not None else 100)
    if limit < 1:
        raise BgbotError(f"--pairs must be at least 1, got {limit}")
    if args.report is not None:
        _pyplot()  # fail now, not after the duel, when matplotlib is missing
    # an unknown agent or option fails here, before any file is made; what the agents load
    # is recorded with the duel, so a resume after the shipped network changed is refused
    a, b = create_agent(config.agent_a), create_agent(config.agent_b)
    if config.luck_judge is not None:
        create_agent(config.luck_judge)
    config = dataclasses.replace(config, knowledge=(a.knowledge, b.knowledge))
    if args.mat is not None:
        writable_directory(args.mat, "--mat")
    if args.report is not None:  # checked now, not after the whole duel
        writable_directory(args.report, "--report")
    stop = StopRule(pairs=limit, ci_width=args.ci_width)
    db_path = args.db if args.db is not None else default_path(config)
    try:
        writable_directory(db_path.parent, "--db" if args.db is not None else "the results folder")
    except BgbotError as exc:
        raise BgbotError(str(exc) if args.db is not None else
                         f"{exc}; choose another place with --db FILE") from None
    created = not db_path.exists()
    if args.resume and created:
        print(f"bgbot duel: --resume: there is no results file {db_path} yet, so this duel "
              "starts from its first pair", file=sys.stderr, flush=True)
    store = _open_store(db_path, config, args.resume)
    stats = DuelStats(config, sprt=sprt)
    done = store.pairs()
    text_out = sys.stderr if args.json else sys.stdout
    try:
        executor, restart, release = _executor(args)
    except BaseException:
        _discard_if_empty(store, db_path, created)
        raise
    progress = _Progress(args, config, stop, len(done))
    clock = _Clock(args, config, limit)

    def on_pair(current: DuelStats, pair: Any) -> None:
        for suffix, text in pair.mats:
            write_atomically(args.mat / _mat_name(config, pair.index, suffix), text)
        progress.update(current)
        clock.pair_done(current)

    previous = _stop_on_sigterm()
    clock.start()
    try:
        with progress:
            result = run_duel(config, executor, stop, stats=stats, done=done, sink=store,
                              on_pair=on_pair, window=_window(args), restart=restart)
    except KeyboardInterrupt:
        release()
        stored = store.pair_count()
        if stored > stats.pairs:  # Ctrl-C fell between storing a pair and counting it
            for pair in store.pairs()[stats.pairs:]:
                stats.add(pair)
        store.mark_stopped("interrupted")
        _discard_if_empty(store, db_path, created)
        summary = stats.summary()
        summary["stopped"] = "interrupted"
        summary["results_file"] = str(db_path) if stored or not created else None
        _print_summary(args, summary, "interrupted", text_out)
        print(f"bgbot duel: interrupted after {_count(stored, 'pair')} stored in {db_path}; run the "
              "same command with --resume to continue" if stored else
              "bgbot duel: interrupted before the first pair was stored", file=sys.stderr)
        return 130
    except BaseException:
        release()
        _discard_if_empty(store, db_path, created)
        raise
    else:
        release()
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
    store.mark_stopped(result.reason)
    summary = result.stats.summary()
    summary["stopped"] = result.reason
    if result.new_pairs and result.elapsed > 0:
        new_games = sum(pair.game_count for pair in store.pairs()[-result.new_pairs:])
        summary["games_per_second"] = round(new_games / result.elapsed, 2)
    summary["results_file"] = str(db_path)
    if args.report is not None:
        page = write_report(args.report, config, store.pairs(), summary, result.reason)
        summary["report"] = str(page)
    store.close()
    _print_summary(args, summary, result.reason, text_out)
    return 0


def _open_store(path: Path, config: Any, resume: bool) -> Any:
    """The duel's results file, or an error naming it when SQLite cannot use it."""
    import sqlite3

    from ..referee.duel_store import DuelStore

    try:
        return DuelStore.open(path, config, resume=resume)
    except (sqlite3.Error, OSError) as exc:
        raise BgbotError(f"--db {path}: cannot use it as a results file ({exc})") from None


def _print_summary(args: argparse.Namespace, summary: dict[str, Any], reason: str,
                   text_out: Any) -> None:
    """The text block (stderr with --json, else stdout), then the JSON line on stdout."""
    from ..referee.duel_report import text_block

    if not args.quiet:
        print(text_block(summary, reason), file=text_out, flush=True)
        if summary.get("report"):
            print(f"report: {summary['report']}", file=text_out, flush=True)
    if args.json:
        print(json.dumps(summary), flush=True)


def _discard_if_empty(store: Any, path: Path, created: bool) -> None:
    """Close the results file; one this run created and stored nothing in goes again (a
    duel that failed to start leaves no empty database behind)."""
    try:
        empty = store.pair_count() == 0
    except Exception:
        empty = True
    store.close()
    if created and empty:
        for suffix in ("", "-wal", "-shm"):
            Path(f"{path}{suffix}").unlink(missing_ok=True)


class _Clock:
    """Says on stderr how long a pair takes and how long is left, once the pace is known:
    `TELL_AFTER` seconds after the first pair of this run was done (the start-up, loading
    networks and databases, is no pair's time; --luck makes a duel of 0-ply players 15-25
    times as long, which is said at the start). Where stderr is no terminal, so that no progress
    bar shows, it also writes a line with the standings every ``--log-every`` minutes."""

    TELL_AFTER = 10.0

    def __init__(self, args: argparse.Namespace, config: Any, limit: int) -> None:
        self.quiet = args.quiet
        self.luck = config.luck_judge is not None
        self.open_ended = args.sprt is not None or args.ci_width is not None
        self.limit = limit
        self.log_every = (None if args.quiet or args.log_every <= 0 or sys.stderr.isatty()
                          else 60.0 * args.log_every)
        self.first: tuple[float, int] | None = None  # (when, pairs) at the first pair done
        self.logged = 0.0
        self.told = False

    def start(self) -> None:
        if self.luck and not self.quiet:
            print("bgbot duel: --luck judges every move of both sides at 0-ply (a duel of "
                  "0-ply players takes 15-25 times as long); the time left follows once the "
                  "pace is known", file=sys.stderr, flush=True)

    def pair_done(self, stats: Any) -> None:
        import time

        now, pairs = time.monotonic(), stats.pairs
        if self.first is None:
            self.first = (now, pairs)
            self.logged = now
            return
        elapsed, new = now - self.first[0], pairs - self.first[1]
        if self.quiet or new <= 0:
            return
        left = self._left(elapsed / new, pairs)
        if not self.told and elapsed >= self.TELL_AFTER:
            self.told = True
            print(f"bgbot duel: {elapsed / new:.2f} s per pair; {left}", file=sys.stderr,
                  flush=True)
        if self.log_every is not None and now - self.logged >= self.log_every:
            self.logged = now
            print(f"bgbot duel: {pairs} of {self.limit} pairs, {_standings(stats)}; {left}",
                  file=sys.stderr, flush=True)

    def _left(self, per_pair: float, pairs: int) -> str:
        remaining = max(self.limit - pairs, 0)
        return (f"{'at most ' if self.open_ended else ''}{_duration(remaining * per_pair)} left "
                f"for {remaining} more pairs")


def _count(n: int, what: str) -> str:
    return f"{n} {what}{'' if n == 1 else 's'}"


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def _window(args: argparse.Namespace) -> int:
    """Pairs submitted ahead: enough to keep every worker busy."""
    if args.cluster:
        return 64
    return 2 * args.concurrency if args.concurrency > 1 else 1


def _mat_name(config: Any, index: int, suffix: str) -> str:
    from ..util import safe_name

    who = "-vs-".join(safe_name(spec, "agent") for spec in (config.agent_a, config.agent_b))
    kind = f"{config.length}pt" if config.length else "money"
    return f"{who}-{kind}-seed{config.seed}-pair{index + 1:05d}{suffix}.mat"


class _Progress:
    """A rich progress bar on stderr with the running ppg +/- half the 95 % interval."""

    def __init__(self, args: argparse.Namespace, config: Any, stop: Any, done: int) -> None:
        self.bar: Any = None
        self.task: Any = None
        if args.quiet or not sys.stderr.isatty():
            return
        from rich.console import Console
        from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn,
                                   TimeElapsedColumn, TimeRemainingColumn)

        self.bar = Progress(
            TextColumn("[bold]pairs"), BarColumn(), MofNCompleteColumn(),
            TextColumn("{task.fields[ppg]}"), TimeElapsedColumn(), TimeRemainingColumn(),
            console=Console(file=sys.stderr), transient=True,
        )
        self.task = self.bar.add_task("pairs", total=stop.pairs, completed=done, ppg="")

    def __enter__(self) -> _Progress:
        if self.bar is not None:
            self.bar.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.stop()

    def update(self, stats: Any) -> None:
        if self.bar is None:
            return
        self.bar.update(self.task, completed=stats.pairs, ppg=_standings(stats))


def _standings(stats: Any) -> str:
    """The running result, +/- half its 95 % interval: ppg or match wins, luck-adjusted too
    when the duel judges luck, and the SPRT's log-likelihood ratio when it runs one."""
    if stats.config.length:
        value, (low, high) = stats.match.ratio, stats.match.interval()
        text = f"match wins {100 * value:.1f}%"
        scale = 100.0
    else:
        value, (low, high) = stats.ppg.ratio, stats.ppg.interval()
        text = f"ppg {value:+.3f}"
        scale = 1.0
    if high - low < float("inf"):
        text += f" ± {scale * (high - low) / 2:.3f}"
    if stats.has_luck:
        adj, (alow, ahigh) = stats.adjusted.ratio, stats.adjusted.interval()
        text += f"  luck-adj {adj:+.3f}"
        if ahigh - alow < float("inf"):
            text += f" ± {(ahigh - alow) / 2:.3f}"
    if stats.sprt is not None:
        text += f"  llr {stats.sprt.llr:+.2f}"
    return text
