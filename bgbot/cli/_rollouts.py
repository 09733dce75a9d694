"""What `bgbot rollout`, `bgbot hint --rollout` and `bgbot ctl rollout` share: the rollout
options, the progress bar, and gnubg-like tables of the results (local, or a daemon's
report)."""

from __future__ import annotations

import argparse
import math
import sys
from typing import Any, Callable, Mapping, Sequence

from ..core.context import Context
from ..core.errors import BgbotError, FormatError
from ..rollout import (CHANCES, CandidateResult, Estimate, RolloutProgress, RolloutResult,
                       RolloutSettings)
from ..rollout.settings import DEFAULT_TRIALS
from ._executors import DASK_HELP

__all__ = ["add_rollout_options", "candidates_table", "context_text", "reported_progress",
           "reported_table", "result_table", "roll_out", "rollout_progress", "settings_from"]


def add_rollout_options(parser: argparse.ArgumentParser, *, player: bool = True,
                        where: bool = True) -> None:
    """The rollout options (``player``: with --player; a command that has one already
    says False; ``where``: with --concurrency and --dask, which a daemon's rollout has not:
    it runs on the daemon's workers)."""
    group = parser.add_argument_group("rollout")
    if player:
        group.add_argument("--player", default="heuristic", metavar="SPEC",
                           help="the agent that plays both sides (default heuristic, bgbot's "
                           "0-ply player; e.g. gnubg:plies=0, heuristic:plies=1)")
    group.add_argument("--candidates", type=int, default=5, metavar="N",
                       help="with dice: how many plays to roll out, the best by the player's "
                       "0-ply ranking within 0.16 of the best (default 5)")
    group.add_argument("--trials", type=int, default=DEFAULT_TRIALS, metavar="N",
                       help=f"trials, a multiple of 36 (default {DEFAULT_TRIALS} = 36 x 36, "
                       "gnubg's: every pair of first two rolls exactly once)")
    group.add_argument("--truncate", type=int, default=0, metavar="N",
                       help="cut each trial after N plies and take the player's evaluation "
                       "there (default 0: play every game out)")
    cube = group.add_mutually_exclusive_group()
    cube.add_argument("--cubeful", dest="cubeful", action="store_true", default=None,
                      help="play with the cube, each side by the player's own cube decisions "
                      "(the default when the position's context has the cube, as gnubg does)")
    cube.add_argument("--cubeless", dest="cubeful", action="store_false",
                      help="play without the cube (bgbot's 0-ply player then runs in C, "
                      "several times faster)")
    group.add_argument("--seed", type=int, default=1, metavar="S",
                       help="dice seed; the same seed gives the same rollout bit for bit, "
                       "on any number of workers (default 1)")
    group.add_argument("--se-target", type=float, default=None, metavar="X",
                       help="stop early, at a multiple of 36 trials, once the equity's "
                       "standard error is below X")
    group.add_argument("--no-vr", dest="vr", action="store_false",
                       help="no variance reduction (luck is not subtracted)")
    if not where:
        return
    running = parser.add_argument_group("where to run")
    running.add_argument("--concurrency", type=int, default=1, metavar="N",
                         help="run trials on N local worker processes (default 1: this one)")
    running.add_argument("--dask", default=None, metavar="ADDRESS|local", help=DASK_HELP)


def settings_from(args: argparse.Namespace, player: str) -> RolloutSettings:
    """The settings the options give (a bad value is a usage error naming the option)."""
    try:
        return RolloutSettings(player=player, trials=args.trials, truncate=args.truncate,
                               seed=args.seed, vr=args.vr, cubeful=args.cubeful,
                               se_target=args.se_target)
    except FormatError as exc:
        option = {"trials": "--trials", "truncate": "--truncate", "seed": "--seed",
                  "se_target": "--se-target"}.get(exc.field)
        if option is None:
            raise BgbotError(f"--player {player}: {exc}") from None
        raise BgbotError(f"{option} {exc.value}: {exc.reason}") from None


def context_text(context: Context) -> str:
    """Money or the match score, and the cube."""
    if context.is_money:
        where = "money"
    else:
        where = (f"{context.match_length}-point match at {context.my_score}-"
                 f"{context.opponent_score}" + (", Crawford" if context.crawford else ""))
    owner = {"CENTRE": "centred", "ME": "owned by the player on roll",
             "OPPONENT": "owned by the opponent"}[context.cube_owner.name]
    return f"{where}, cube {context.cube_value} {owner}"


def _how(result: RolloutResult) -> str:
    s = result.settings
    cut = f"truncated at {s.truncate} plies" if s.truncate else "games played out"
    return (f"{result.trials} trials by {s.player}, seed {s.seed}, "
            f"{'cubeful' if result.cubeful else 'cubeless'}, {'VR' if s.vr else 'no VR'}, "
            f"{cut}")


def _footer(result: RolloutResult, rolled: int | None = None, plays: int = 1) -> str:
    """The SE gain of VR, why it stopped, and the speed (``rolled`` trials in all, over
    ``plays`` rollouts run together)."""
    gain = result.se_gain()
    equity = result.equity
    parts = []
    if gain is not None:
        parts.append(f"VR cut the equity's SE {gain:.1f}x ({equity.se:.4f}, "
                     f"{equity.raw_se:.4f} without)")
    if result.stopped == "se_target":
        parts.append(f"stopped at the SE target after {result.trials} trials")
    elif result.stopped == "cancelled":
        parts.append(f"cancelled after {result.trials} trials")
    parts.append(f"{result.plies:.1f} plies a trial")
    if result.seconds > 0:
        trials = result.trials if rolled is None else rolled
        parts.append(f"{result.seconds:.1f} s, {trials / result.seconds:.1f} trials/s"
                     + (f" ({plays} plays)" if plays > 1 else ""))
    return "; ".join(parts)


def result_table(result: RolloutResult, context: Context) -> str:
    """A position's rollout as gnubg prints one: the chances and equities, then their SEs."""
    label = "EMG" if result.units == "emg" else "equity"
    lines = [f"rollout of {result.position_id} ({context_text(context)}): {_how(result)}",
             f"{'':9}{'Win':>7}{'W(g)':>7}{'W(bg)':>7}{'L(g)':>7}{'L(bg)':>7}"
             f"{'Cubeless':>10}" + (f"{'Cubeful':>10}" if result.cubeful else "")
             + f"  ({label})"]
    est = result.estimates
    for row, key in (("mean", "mean"), ("std err", "se")):
        digits = 3 if key == "mean" else 4
        cells = "".join(f"{getattr(est[name], key):7.{digits}f}" for name in CHANCES)
        eq = f"{getattr(est['cubeless'], key):+10.4f}" if key == "mean" else \
            f"{est['cubeless'].se:10.4f}"
        if result.cubeful:
            eq += (f"{est['cubeful'].mean:+10.4f}" if key == "mean"
                   else f"{est['cubeful'].se:10.4f}")
        lines.append(f"  {row:<7}{cells}{eq}")
    lines.append(_footer(result))
    return "\n".join(lines)


def candidates_table(results: Sequence[CandidateResult], context: Context,
                     dice: tuple[int, int]) -> str:
    """The candidates of a roll, best first by rolled-out equity, as gnubg lists them."""
    if not results:
        return f"no legal play with {max(dice)}{min(dice)}"
    first = results[0].result
    label = "EMG" if first.units == "emg" else "equity"
    width = max(len(c.move) or 4 for c in results)
    best = first.equity.mean
    lines = [f"rollout of the plays of {max(dice)}{min(dice)} ({context_text(context)}): "
             f"{_how(first)}, the same dice for every play",
             f"{'':5}{'move':<{width}}{'Win':>7}{'W(g)':>7}{'W(bg)':>7}{'L(g)':>7}"
             f"{'L(bg)':>7}  {('cubeful ' if first.cubeful else 'cubeless ') + label}"]
    for rank, candidate in enumerate(results, 1):
        r = candidate.result
        cells = "".join(f"{r.estimates[name].mean:7.3f}" for name in CHANCES)
        eq = r.equity
        diff = "" if rank == 1 else f" ({eq.mean - best:+.4f})"
        exact = "  (the game ends: exact)" if r.stopped == "over" else ""
        lines.append(f"{rank:3d}. {candidate.move or 'none':<{width}}{cells}  "
                     f"{eq.mean:+.4f} ± {eq.se:.4f}{diff}{exact}")
    rolled = [c.result for c in results if c.result.stopped != "over"]
    if rolled:
        lines.append(_footer(max(rolled, key=lambda r: r.trials),
                             sum(r.trials for r in rolled), len(rolled)))
    return "\n".join(lines)


def reported_table(reply: Mapping[str, Any]) -> str:
    """The table of a daemon's rollout reply (protocol 1.3, ``rollout_reply``): the same as
    `bgbot rollout` prints for the same rollout."""
    from ..daemon.wire import context_from_wire, rules_from_wire

    context = context_from_wire(reply["context"], rules_from_wire(reply["rules"]))
    if "result" in reply:
        return result_table(RolloutResult.from_json(reply["result"]), context)
    dice = reply["dice"]
    return candidates_table([CandidateResult.from_json(c) for c in reply["candidates"]],
                            context, (int(dice[0]), int(dice[1])))


def reported_progress(event: Mapping[str, Any]) -> RolloutProgress:
    """A daemon's ``rollout_progress`` event as the progress a local rollout reports."""
    mean, se = event.get("equity"), event.get("se")
    equity = None if mean is None else Estimate(
        float(mean), math.inf if se is None else float(se), float(mean),
        math.inf if se is None else float(se))
    return RolloutProgress(int(event["trials"]), int(event["total"]), (equity,))


def rollout_progress(enabled: bool) -> tuple[Callable[[RolloutProgress], None], Any]:
    """(a progress callback, a context manager that shows and removes the bar): a rich bar on
    stderr with the best equity so far, when ``enabled`` and stderr is a terminal."""
    if not enabled or not sys.stderr.isatty():
        import contextlib

        return (lambda progress: None), contextlib.nullcontext()
    from rich.console import Console
    from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn,
                               TimeElapsedColumn, TimeRemainingColumn)

    bar = Progress(TextColumn("[bold]trials"), BarColumn(), MofNCompleteColumn(),
                   TextColumn("{task.fields[equity]}"), TimeElapsedColumn(),
                   TimeRemainingColumn(), console=Console(file=sys.stderr), transient=True)
    task = bar.add_task("trials", total=None, equity="")

    def update(progress: RolloutProgress) -> None:
        known = [e for e in progress.equities if e is not None]
        text = ""
        if known:
            best = max(known, key=lambda e: e.mean)
            text = f"{'best ' if len(progress.equities) > 1 else ''}equity {best.mean:+.4f}"
            if best.se < float("inf"):
                text += f" ± {best.se:.4f}"
        bar.update(task, completed=progress.trials, total=progress.total, equity=text)

    return update, bar


def roll_out(args: argparse.Namespace, position: Any, context: Context,
             dice: tuple[int, int] | None, settings: RolloutSettings
             ) -> RolloutResult | list[CandidateResult]:
    """Roll out the position (``dice`` None) or the candidate plays of ``dice``, where the
    options say (--concurrency, --dask), with a progress bar unless --json; the players'
    engines are closed afterwards."""
    from ..rollout import close_players, rollout_candidates, rollout_position
    from ._executors import executor_for

    progress, bar = rollout_progress(not args.json)
    with executor_for(args.concurrency, args.dask) as where, bar:
        try:
            if dice is None:
                return rollout_position(position, context, settings, executor=where.executor,
                                        window=where.window, progress=progress)
            return rollout_candidates(position, dice, context, settings,
                                      candidates=args.candidates, executor=where.executor,
                                      window=where.window, progress=progress)
        finally:
            close_players()
