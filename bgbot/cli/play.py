"""`bgbot play A B`: a headless series of matches or money games, logged as .mat files.

Ctrl-C (or SIGTERM) ends it early: the first Ctrl-C lets the game in play finish, a second one
(or SIGTERM) stops at once; either way the table (or JSON) of the games played is printed and
every `.mat` file holds the finished games, whole. With ``--json`` stdout carries the JSON line
only; the table goes to stderr.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import sys
import time
from pathlib import Path
from typing import Any, Callable, TextIO

from ..core.errors import BgbotError
from ..core.rules import Rules
from ..deciders import known_agents
from ._args import match_length

_EPILOG = """\
agents (NAME[:key=value,...]):
{agents}

examples:
  bgbot play                                   heuristic vs pubeval, one 7-point match
  bgbot play heuristic pubeval --length 5 --matches 20 --seed 7
  bgbot play heuristic:plies=1 pubeval --money --games 1000 --mirror --cubeless
  bgbot play random random --money --games 10 --json --out /tmp/logs
  bgbot play human heuristic:plies=1           play against the bot at the terminal
  bgbot play heuristic pubeval --watch --delay 0.5   watch the board after every move

Every match (or money session) is written to --out as gnubg's .mat, at every game end; a
money session starts a new file (NAME-part002.mat, ...) every 100 games, each one a session
gnubg imports. The statistics are from the first agent's side; with --mirror each dice
sequence is played twice (the second time with the opening dice swapped, so each agent gets
the other's rolls) and the confidence interval treats the pair as one observation.

Ctrl-C stops after the game in play (Ctrl-C again: at once) and prints what was played.
"""

DEFAULT_GAMES = 100


def register(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    agents = "\n".join(f"  {name:<11}{summary}" for name, summary in known_agents().items())
    p = sub.add_parser(
        "play",
        help="play a headless match or money session between two agents, logged as .mat",
        description="Two agents play matches (or a money session) headless; every match is "
        "logged as a .mat file that gnubg, XG and BGBlitz import.",
        epilog=_EPILOG.format(agents=agents),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("agent_a", nargs="?", default="heuristic", metavar="A",
                   help="first agent (seat 0, the left column of the .mat); default heuristic")
    p.add_argument("agent_b", nargs="?", default="pubeval", metavar="B",
                   help="second agent; default pubeval")
    kind = p.add_mutually_exclusive_group()
    kind.add_argument("--length", type=match_length, default=None, metavar="N",
                      help="match length in points (default 7)")
    kind.add_argument("--money", action="store_true", help="play a money session instead")
    p.add_argument("--games", type=int, default=None, metavar="N",
                   help=f"money: number of games (default {DEFAULT_GAMES}; even with --mirror)")
    p.add_argument("--matches", type=int, default=None, metavar="K",
                   help="match play: number of matches (default 1; even with --mirror)")
    p.add_argument("--seed", type=int, default=1, metavar="S",
                   help="dice and noise seed; the same seed replays the same series (default 1)")
    p.add_argument("--mirror", action="store_true",
                   help="play every dice sequence twice with the rolls swapped between the agents")
    p.add_argument("--cubeless", action="store_true",
                   help="no doubling cube (implies no Jacoby); gammons count 2, backgammons 3")
    p.add_argument("--jacoby", action="store_true", help="money: Jacoby rule")
    p.add_argument("--beavers", action="store_true", help="money: beavers (and raccoons)")
    p.add_argument("--out", type=Path, default=Path("matches"), metavar="DIR",
                   help="directory for the .mat logs (default ./matches)")
    p.add_argument("--no-log", action="store_true", help="do not write .mat files")
    p.add_argument("--json", action="store_true",
                   help="end with one JSON line on stdout (nothing else goes there): games, "
                   "ppg, ppg_ci, win_rate, outcome counts")
    p.add_argument("--quiet", action="store_true", help="no progress bar and no table")
    p.add_argument("--watch", action="store_true",
                   help="draw the board after every move (seat 0, the first agent, at the "
                   "bottom)")
    p.add_argument("--delay", type=float, default=0.0, metavar="SEC",
                   help="with --watch: pause SEC seconds after each board (default 0)")
    p.set_defaults(func=run)


def _check_options(args: argparse.Namespace) -> None:
    """Refuse what would be ignored or changed silently."""
    if args.length is not None and args.length < 1:
        raise BgbotError("--length: a match needs at least 1 point (use --money for money play)")
    if not args.money:
        if args.games is not None:
            raise BgbotError("--games counts money games: add --money (match play counts "
                             "--matches)")
        if args.jacoby or args.beavers:
            raise BgbotError("--jacoby and --beavers are money rules: add --money (match play "
                             "has neither)")
    elif args.matches is not None:
        raise BgbotError("--matches counts matches: money play counts --games")
    if args.cubeless and (args.jacoby or args.beavers):
        raise BgbotError("--jacoby and --beavers need the cube: drop --cubeless")
    count = args.games if args.money else args.matches
    if count is not None and count < 1:
        raise BgbotError(f"--{'games' if args.money else 'matches'} must be at least 1, "
                         f"got {count}")
    if args.mirror and count is not None and count % 2:
        what = "--games" if args.money else "--matches"
        raise BgbotError(f"--mirror plays every dice sequence twice, so {what} must be even "
                         f"(got {count}: use {count - 1 or 2} or {count + 1})")
    if args.delay < 0:
        raise BgbotError(f"--delay must be 0 or more seconds, got {args.delay:g}")
    if args.delay and not args.watch:
        raise BgbotError("--delay paces the boards of --watch: add --watch")
    if args.watch and args.json:
        raise BgbotError("--watch draws boards on stdout, where --json puts the JSON only: "
                         "choose one")


def mode_text(length: int, rules: Rules) -> str:
    """``money``, ``cubeless money``, ``7-point match`` or ``cubeless 7-point match``."""
    kind = "money" if length == 0 else f"{length}-point match"
    return kind if rules.cube else f"cubeless {kind}"


def run(args: argparse.Namespace) -> int:
    from ..agents.players import limit_player_caches
    from ..referee.matlog import MatLogger
    from ..referee.series import SeriesConfig, make_agents, schedule
    from ..referee.stats import Tally
    from ..util import writable_directory

    _check_options(args)
    limit_player_caches()  # a long session's memory stays flat
    rules = Rules(
        cube=not args.cubeless,
        jacoby=args.jacoby and not args.cubeless,
        beavers=args.beavers,
    )
    config = SeriesConfig(
        agent_a=args.agent_a,
        agent_b=args.agent_b,
        length=0 if args.money else (args.length or 7),
        games=args.games or DEFAULT_GAMES,
        matches=args.matches or (2 if args.mirror else 1),
        seed=args.seed,
        mirror=args.mirror,
        rules=rules,
    )
    logger = None
    if not args.no_log:
        writable_directory(args.out, "--out")
        logger = MatLogger(args.out, config)
    plan = schedule(config)
    out = sys.stderr if args.json else sys.stdout
    tally = Tally()
    agents = make_agents(config)
    progress = _progress(args, plan) if not args.quiet and sys.stderr.isatty() and not (
        args.watch or any(agent.interactive for agent in agents)) else None
    listeners = logger.listeners if logger else None
    if args.watch:
        listeners = _watching(listeners, config.length, rules.cube, args.delay)
    elif any(agent.interactive for agent in agents):  # a person: tell the other side's turns
        listeners = _telling(listeners, config.length, rules.cube)
    stopped: list[str] = []
    failure: BgbotError | None = None
    try:
        asyncio.run(_play(config, agents, listeners, progress, tally, stopped))
    except BgbotError as exc:  # a log that cannot be written, an agent that failed
        failure = exc
    finally:
        if progress is not None:
            progress.stop()
    summary: dict[str, Any] = {
        "agents": [args.agent_a, args.agent_b],
        "mode": mode_text(config.length, rules),
        "rules": {"cube": rules.cube, "jacoby": rules.jacoby, "beavers": rules.beavers},
        "seed": args.seed,
        "mirror": args.mirror,
        **tally.as_dict(),
    }
    if stopped:
        summary["stopped"] = stopped[0]
    if logger:
        summary["mat_files"] = [str(p) for p in logger.paths]
    if failure is not None and not tally.games:
        raise failure
    if not args.quiet:
        _print_table(summary, args, out)
    if args.json:
        print(json.dumps(summary), flush=True)
    if failure is not None:
        raise failure
    if stopped:
        print(f"bgbot play: interrupted ({stopped[0]}); the figures count the "
              f"{_games(tally.games)} played", file=sys.stderr)
        return 143 if stopped[0] == "terminated" else 130
    return 0


async def _play(config: Any, agents: Any, listeners: Any, progress: Any, tally: Any,
                stopped: list[str]) -> None:
    """Play the series; Ctrl-C stops after the game in play, a second one or SIGTERM at once
    (``stopped`` gets why)."""
    from ..referee.series import SeriesControl, run_series

    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    assert task is not None
    control = SeriesControl()

    def on_sigint() -> None:
        if control.stopping:
            print("bgbot play: stopping now", file=sys.stderr, flush=True)
            task.cancel()
            return
        stopped.append("Ctrl-C")
        control.stop_after_game()
        print("bgbot play: stopping after the game in play (Ctrl-C again to stop now)",
              file=sys.stderr, flush=True)

    def on_sigterm() -> None:
        stopped[:] = ["terminated"]
        task.cancel()

    loop.add_signal_handler(signal.SIGINT, on_sigint)
    loop.add_signal_handler(signal.SIGTERM, on_sigterm)
    try:
        await run_series(config, listeners=listeners, on_game=progress.update if progress else
                         None, agents=agents, tally=tally, control=control)
    except asyncio.CancelledError:
        if not stopped:
            raise
    finally:
        loop.remove_signal_handler(signal.SIGINT)
        loop.remove_signal_handler(signal.SIGTERM)


class _Bar:
    """The progress bar on stderr: games (money) or matches, with the running ppg."""

    def __init__(self, money: bool, total: int) -> None:
        from rich.console import Console
        from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn,
                                   TimeRemainingColumn)

        self.money = money
        self.bar = Progress(
            TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
            TextColumn("{task.fields[ppg]}"), TimeRemainingColumn(), transient=True,
            console=Console(file=sys.stderr),
        )
        self.task = self.bar.add_task("games" if money else "matches", total=total, ppg="")
        self.bar.start()

    def update(self, tally: Any) -> None:
        done = tally.games if self.money else tally.matches
        self.bar.update(self.task, completed=done, ppg=f"ppg {tally.ppg:+.3f}")

    def stop(self) -> None:
        self.bar.stop()


def _progress(args: argparse.Namespace, plan: list[tuple[int, bool, int]]) -> _Bar:
    return _Bar(args.money, sum(g for _, _, g in plan) if args.money else len(plan))


def _watching(inner: Any, length: int, cube: bool, delay: float, out: TextIO | None = None
              ) -> Callable[..., list[Any]]:
    """Wrap a listener factory so that every move also draws the board (`watch_listener`)."""

    def factory(index: int, mirrored: bool, names: Any) -> list[Any]:
        found = list(inner(index, mirrored, names)) if inner else []
        return [*found, watch_listener(names, length, cube, delay, out)]

    return factory


def _telling(inner: Any, length: int, cube: bool) -> Callable[..., list[Any]]:
    """Wrap a listener factory so that what happens is told on stderr, beside a human's
    prompts (`story_listener`)."""

    def factory(index: int, mirrored: bool, names: Any) -> list[Any]:
        found = list(inner(index, mirrored, names)) if inner else []
        return [*found, story_listener(names, length, cube)]

    return factory


def story_listener(names: Any, length: int, cube: bool, out: TextIO | None = None) -> Any:
    """A referee listener that tells every roll, play, cube action, resignation and result,
    with the score (`bgbot.referee.narration.Narrator`; ``out``: stderr by default, where
    the human agent draws its board)."""
    from ..referee.narration import Narrator

    narrator = Narrator(names, length, cube=cube)

    def on_event(event: Any) -> None:
        stream = out if out is not None else sys.stderr
        for line in narrator.lines(event):
            print(line, file=stream, flush=True)

    return on_event


def watch_listener(names: Any, length: int = 0, cube: bool = True, delay: float = 0.0,
                   out: TextIO | None = None) -> Any:
    """A referee listener that tells what happens (`story_listener`'s lines) and draws the
    board after each move, seat 0 at the bottom, with the score and the cube under it
    (``out``: stdout by default)."""
    from ..core.game import Moved
    from ..formats.display import draw_board
    from ..referee import events as ev
    from ..referee.narration import Narrator

    narrator = Narrator(names, length, cube=cube)

    def on_event(event: ev.Event) -> None:
        stream = out if out is not None else sys.stdout
        moved = isinstance(event, ev.Acted) and isinstance(event.action, Moved)
        for line in narrator.lines(event):
            print(("\n" if moved or isinstance(event, ev.GameStarted) else "") + line,
                  file=stream, flush=True)
        if moved:
            assert isinstance(event, ev.Acted) and isinstance(event.action, Moved)
            action = event.action
            after = action.before.apply(action.play)
            board = after if action.seat == 0 else after.swapped()
            print(draw_board(board, mover_name=names[0], opponent_name=names[1],
                             on_roll=action.seat == 1, notes=[narrator.situation()]),
                  file=stream, flush=True)
            if delay:
                time.sleep(delay)

    return on_event


def _games(n: int) -> str:
    return f"{n} game{'s' if n != 1 else ''}"


def _print_table(s: dict[str, Any], args: argparse.Namespace, out: TextIO) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console(file=out)
    a, b = s["agents"]
    table = Table(title=f"{s['mode']}, seed {s['seed']}" + (", mirrored" if s["mirror"] else ""))
    table.add_column("")
    table.add_column(a, justify="right")
    table.add_column(b, justify="right")
    if s["matches"]:
        table.add_row("matches won", str(s["match_wins"]), str(s["matches"] - s["match_wins"]))
    table.add_row("games won", str(s["wins"]), str(s["losses"]))
    for kind in ("single", "gammon", "backgammon"):
        table.add_row(f"  {kind}s", str(s["won"][kind]), str(s["lost"][kind]))
    low, high = s["ppg_ci"]
    interval = (f"95% CI [{low:+.3f}, {high:+.3f}]" if low is not None
                else "no interval from a single observation")
    table.add_row("points won", str(s["points_won"]), str(s["points_lost"]))
    console.print(table)
    console.print(f"{a}: {s['ppg']:+.3f} ppg, {interval}, "
                  f"win rate {100 * s['win_rate']:.1f}% over {_games(s['games'])}",
                  soft_wrap=True)
    files = s.get("mat_files", [])
    for path in files[:5]:
        console.print(f"logged {path}", soft_wrap=True)
    if len(files) > 5:
        console.print(f"... and {len(files) - 5} more .mat files in {args.out}", soft_wrap=True)
