"""`bgbot chouette A B C [D...]`: a chouette session between three or more agents.

One agent is in the box, the others form a team with a captain (rules/README.md R31-R34; the
details and the choices where the rules leave room are in `bgbot.referee.chouette`). Prints a
running scoreboard and logs every game as a .mat file plus a JSON sidecar.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

from ..deciders import known_agents

if TYPE_CHECKING:
    from ..referee.chouette import ChouetteGame, Seating

_EPILOG = """\
agents (NAME[:key=value,...]):
{agents}

how a chouette is played (R31-R34):
  Everyone rolls one die: the highest sits "in the box" and plays alone, the second is the
  captain of the team, the rest sit in the order of their rolls (ties roll again). The captain
  moves the team's chequers after hearing each member's play (--no-consult skips that). The
  team doubles only unanimously; when the box doubles, each member takes or passes alone and
  owns his own cube from then on. The box pays or collects from each member at his own stake.
  Team lost (judged by the captain's own cube): the captain goes to the end of the team.
  Team won: the captain takes the box and the old box joins the end of the team.

examples:
  bgbot chouette heuristic heuristic pubeval                  one game, three players
  bgbot chouette heuristic pubeval random --games 50 --seed 7
  bgbot chouette heuristic:noise=0.05 heuristic pubeval random --games 20 --names ann,bob,cy,di
  bgbot chouette random:cube=on random:cube=on random:cube=on --games 100 --no-consult --json

Logs go to --out/<time>-chouette-<N>p-seed<S>/: game-001.mat (the box, left column, against the
team side: the member(s) who moved the chequers; gnubg can import it) and game-001.json (seats,
every member's cube, stake and cube actions, who moved, the consultations, the settlement),
plus session.json with the seat rolls and the running totals.
"""


def register(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    agents = "\n".join(f"  {name:<11}{summary}" for name, summary in known_agents().items())
    p = sub.add_parser(
        "chouette",
        help="play a chouette: one agent in the box against a team of two or more",
        description="A chouette session between three or more agents: one in the box, the "
        "others a team with a captain and a cube each. Prints a running scoreboard (net "
        "points per player) and logs each game as .mat + JSON.",
        epilog=_EPILOG.format(agents=agents),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("agents", nargs="+", metavar="AGENT",
                   help="three or more agent specs, e.g. heuristic pubeval random")
    p.add_argument("--games", type=int, default=1, metavar="N", help="games to play (default 1)")
    p.add_argument("--seed", type=int, default=1, metavar="S",
                   help="dice and noise seed; the same seed replays the session (default 1)")
    p.add_argument("--names", metavar="LIST",
                   help="comma-separated player names (default: the agent specs, numbered "
                   "#1, #2 ... when repeated)")
    p.add_argument("--no-consult", action="store_true",
                   help="the captain plays without asking the team first (faster)")
    p.add_argument("--cubeless", action="store_true", help="no doubling cube at all")
    p.add_argument("--jacoby", action="store_true",
                   help="Jacoby rule on each cube: gammons count single until that cube is turned")
    p.add_argument("--out", type=Path, default=Path("chouettes"), metavar="DIR",
                   help="directory for the logs (default ./chouettes)")
    p.add_argument("--no-log", action="store_true", help="write no files")
    p.add_argument("--json", action="store_true",
                   help="end with one JSON line: players, totals, games, boxes, log directory")
    p.add_argument("--quiet", action="store_true", help="no scoreboard, only the --json line")
    p.set_defaults(func=run)


class _Board:
    """The running scoreboard: a rich live table on a terminal, one line per game otherwise."""

    def __init__(self, names: Sequence[str], games: int, seed: int, live: bool,
                 quiet: bool) -> None:
        self.names = list(names)
        self.games = games
        self.seed = seed
        self.quiet = quiet
        self.totals = [0] * len(names)
        self.boxes = [0] * len(names)
        self.played = 0
        self.seating: Seating | None = None
        self._live: Any = None
        if live and not quiet:
            from rich.live import Live

            self._live = Live(self._table(), refresh_per_second=4, transient=False)
            self._live.start()

    def _table(self) -> Any:
        from rich.table import Table

        table = Table(title=f"chouette, game {self.played}/{self.games}, seed {self.seed}")
        table.add_column("player")
        table.add_column("next seat")
        table.add_column("net", justify="right")
        table.add_column("games in box", justify="right")
        for player, name in enumerate(self.names):
            table.add_row(name, self._seat(player), f"{self.totals[player]:+d}",
                          str(self.boxes[player]))
        return table

    def _seat(self, player: int) -> str:
        s = self.seating
        if s is None:
            return ""
        if player == s.box:
            return "box"
        index = s.team.index(player)
        return "captain" if index == 0 else f"team {index + 1}"

    def seated(self, seating: Seating, rounds: Sequence[Sequence[tuple[int, int]]]) -> None:
        self.seating = seating
        if self._live is not None:
            self._live.update(self._table())
        elif not self.quiet:
            rolls = "; ".join(", ".join(f"{self.names[p]} {d}" for p, d in r) for r in rounds)
            print(f"seat rolls: {rolls}" if rolls else "seats given", flush=True)

    def game(self, game: ChouetteGame, totals: Sequence[int]) -> None:
        self.played = game.number
        self.totals = list(totals)
        self.boxes[game.seating.box] += 1
        self.seating = game.next_seating
        if self._live is not None:
            self._live.update(self._table())
        elif not self.quiet:
            names = self.names
            deltas = game.deltas
            this = " ".join(f"{names[p]} {deltas[p]:+d}" for p in range(len(names)))
            total = " ".join(f"{names[p]} {t:+d}" for p, t in enumerate(totals))
            print(f"game {game.number}: box {names[game.seating.box]}, captain "
                  f"{names[game.seating.captain]} | {this} | totals {total}", flush=True)

    def stop(self) -> None:
        if self._live is not None:
            self._live.stop()
            self._live = None


def run(args: argparse.Namespace) -> int:
    from ..deciders import create_agent
    from ..core.dice import SeededDice
    from ..core.errors import BgbotError
    from ..core.rules import Rules
    from ..referee.chouette import Chouette, ChouetteLog, unique_names

    if len(args.agents) < 3:
        raise BgbotError(f"a chouette needs three or more agents, got {len(args.agents)}")
    if args.games < 1:
        raise BgbotError("--games must be at least 1")
    names = ([n.strip() for n in args.names.split(",")] if args.names
             else unique_names(list(args.agents)))
    if len(names) != len(args.agents) or len(set(names)) != len(names) or not all(names):
        raise BgbotError(f"--names: give {len(args.agents)} distinct names, got {args.names!r}")
    agents = [create_agent(spec, seed=args.seed * 100 + i) for i, spec in enumerate(args.agents)]
    rules = Rules(cube=not args.cubeless, jacoby=args.jacoby and not args.cubeless)
    logger = None if args.no_log else ChouetteLog(args.out, names, seed=args.seed)
    board = _Board(names, args.games, args.seed, live=sys.stdout.isatty(), quiet=args.quiet)

    def seated(seating: Seating, rounds: list[list[tuple[int, int]]]) -> None:
        if logger is not None:
            logger.start(seating, rounds)
        board.seated(seating, rounds)

    def on_game(game: ChouetteGame, totals: list[int]) -> None:
        if logger is not None:
            logger(game, totals)
        board.game(game, totals)

    chouette = Chouette(agents, SeededDice(f"chouette:{args.seed}"), games=args.games,
                        rules=rules, names=names, consult=not args.no_consult,
                        on_seated=seated, on_game=on_game)
    try:
        result = asyncio.run(chouette.play())
    finally:
        board.stop()
    summary: dict[str, Any] = {
        "players": names,
        "agents": list(args.agents),
        "seed": args.seed,
        "games": len(result.games),
        "totals": dict(zip(names, result.totals)),
        "games_in_box": dict(zip(names, board.boxes)),
        "first_seats": {"box": names[result.seating.box],
                        "team": [names[p] for p in result.seating.team]},
        "log_dir": None if logger is None else str(logger.directory),
    }
    if not args.quiet and logger is not None:
        print(f"logged {len(result.games)} games in {logger.directory}", flush=True)
    if args.json:
        print(json.dumps(summary), flush=True)
    return 0
