"""`bgbot play A B`: a headless series of matches or money games, logged as .mat files."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from ..deciders import known_agents
from ..core.rules import Rules
from ._args import match_length

_EPILOG = """\
agents (NAME[:key=value,...]):
{agents}

examples:
  bgbot play                                   heuristic vs pubeval, one 7-point match
  bgbot play heuristic pubeval --length 5 --matches 20 --seed 7
  bgbot play heuristic:plies=1 pubeval --money --games 1000 --mirror --cubeless
  bgbot play random random --money --games 10 --json --out /tmp/logs

Every match (or money session) is written to --out as gnubg's .mat, at every game end.
The statistics are from the first agent's side; with --mirror each dice sequence is played
twice (the second time with the opening dice swapped, so each agent gets the other's rolls)
and the confidence interval treats the pair as one observation.
"""


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
    kind.add_argument("--length", type=match_length, default=7, metavar="N",
                      help="match length in points (default 7)")
    kind.add_argument("--money", action="store_true", help="play a money session instead")
    p.add_argument("--games", type=int, default=100, metavar="N",
                   help="money: number of games (default 100)")
    p.add_argument("--matches", type=int, default=1, metavar="K",
                   help="match play: number of matches (default 1)")
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
                   help="end with one JSON line: games, ppg, ppg_ci, win_rate, outcome counts")
    p.add_argument("--quiet", action="store_true", help="no progress bar and no table")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..core.errors import BgbotError
    from ..referee.matlog import MatLogger
    from ..referee.series import SeriesConfig, run_series_sync, schedule

    if args.length < 1 and not args.money:
        raise BgbotError("--length: a match needs at least 1 point (use --money for money play)")
    if args.games < 1 or args.matches < 1:
        raise BgbotError("--games and --matches must be at least 1")
    rules = Rules(
        cube=not args.cubeless,
        jacoby=args.jacoby and not args.cubeless,
        beavers=args.beavers,
    )
    config = SeriesConfig(
        agent_a=args.agent_a,
        agent_b=args.agent_b,
        length=0 if args.money else args.length,
        games=args.games,
        matches=args.matches,
        seed=args.seed,
        mirror=args.mirror,
        rules=rules,
    )
    logger = None if args.no_log else MatLogger(args.out, config)
    total_games = (
        sum(g for _, _, g in schedule(config)) if args.money else None
    )
    show_progress = not args.quiet and sys.stderr.isatty()
    progress_cb: Any = None
    progress: Any = None
    if show_progress:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

        progress = Progress(
            TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
            TextColumn("{task.fields[ppg]}"), TimeRemainingColumn(), transient=True,
        )
        unit = "games" if args.money else "matches"
        task = progress.add_task(unit, total=total_games or len(schedule(config)), ppg="")

        def progress_cb(tally: Any) -> None:
            done = tally.games if args.money else tally.matches
            progress.update(task, completed=done, ppg=f"ppg {tally.ppg:+.3f}")

        progress.start()
    try:
        tally, played = run_series_sync(
            config,
            listeners=logger.listeners if logger else None,
            on_game=progress_cb,
        )
    finally:
        if progress is not None:
            progress.stop()
    summary: dict[str, Any] = {
        "agents": [args.agent_a, args.agent_b],
        "mode": "money" if args.money else f"{args.length}-point match",
        "seed": args.seed,
        "mirror": args.mirror,
        **tally.as_dict(),
    }
    if logger:
        summary["mat_files"] = [str(p) for p in logger.paths]
    if not args.quiet:
        _print_table(summary, args)
    if args.json:
        print(json.dumps(summary), flush=True)
    return 0


def _print_table(s: dict[str, Any], args: argparse.Namespace) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console(file=sys.stdout)
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
                  f"win rate {100 * s['win_rate']:.1f}% over {s['games']} games", soft_wrap=True)
    for path in s.get("mat_files", [])[:5]:
        console.print(f"logged {path}", soft_wrap=True)
    more = len(s.get("mat_files", [])) - 5
    if more > 0:
        console.print(f"... and {more} more .mat files in {args.out}")
