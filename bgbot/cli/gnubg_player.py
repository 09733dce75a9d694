"""`bgbot gnubg-player`: listen for GNU Backgammon and play as its external player."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from ..agents.players import SERVING_AGENT
from ..deciders import known_agents
from ._servers import add_server_options

if TYPE_CHECKING:
    from ..frontends.gnubg_player import PlayerServerConfig

_EPILOG = """\
how it works:
  gnubg connects to bgbot when you tell it that one of its seats is an external player.
  Start bgbot first, then type in gnubg (the GUI's command box or `gnubg -t`):

      set player 1 external 127.0.0.1:40001     # seat 1 (the bottom, "X") is bgbot
      new match 7                               # or: new session (money)

  gnubg rolls the dice and asks bgbot for every decision of that seat: roll or double,
  the move, take / drop / beaver. The connection stays open for every later game and match;
  `set player 1 human` (or quitting gnubg) closes it. Both seats may be external (two
  bgbot listeners, or one listener: each connection gets its own agent).

  gnubg 1.07 also accepts a Unix socket: `bgbot gnubg-player --listen /tmp/bgbot.sock`,
  then in gnubg `set player 1 external /tmp/bgbot.sock` (an argument without ':' is a path).

  Money sessions: a board line does not say which rules gnubg plays by. bgbot assumes
  gnubg's defaults (Jacoby on, `set beavers 3`); pass --no-jacoby / --beavers N to match
  what you told gnubg. After bgbot takes a beaver of its own double, gnubg 1.07 stops
  automatic play; type `play` in gnubg to continue (a gnubg quirk, not an error).

  Resignations offered to bgbot: gnubg never asks its external player; it answers itself,
  accepting only a backgammon -- it declines a single game even when that would win bgbot
  the match (seen in gnubg 1.07: "root declines the single game" in a 1-point match, with
  no request to bgbot). Resignations bgbot offers, gnubg's engine judges.

  Each connection is logged to --logs as JSON lines: every request gnubg sent, bgbot's
  reply and decision, and the games' results as seen through the score. gnubg's own
  `export match mat FILE` remains the full record (bgbot never sees gnubg's dice).

  --config FILE runs the [[gnubg_player]] listeners of bgbot's configuration file (the
  daemon's: config/bgbot.toml), as `bgbot serve` does.

agents (--agent NAME[:key=value,...]):
{agents}

examples:
  bgbot gnubg-player --listen 127.0.0.1:40001
  bgbot gnubg-player --listen 127.0.0.1:40001 --agent heuristic:plies=1 --logs logs/
  bgbot gnubg-player --listen /tmp/bgbot.sock --agent pubeval -v
  bgbot gnubg-player --config ~/.config/bgbot/bgbot.toml   every [[gnubg_player]] listener
"""


def register(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    """Add the ``gnubg-player`` sub-command to bgbot's command line."""
    parser = sub.add_parser(
        "gnubg-player",
        help="play as GNU Backgammon's external player (gnubg: set player N external HOST:PORT)",
        description="Listen for GNU Backgammon and answer its external-player requests "
        "with a bgbot agent. Runs until interrupted (Ctrl-C).",
        epilog=_EPILOG.format(agents="\n".join(
            f"  {name:<11}{summary}" for name, summary in known_agents().items())),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_arguments(parser)
    parser.set_defaults(func=run)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_server_options(parser, "gnubg-player", "gnubg_player",
                       logs_what="the JSON-lines logs, one per connection,")
    parser.add_argument("--listen", default=None, metavar="ADDRESS",
                        help="HOST:PORT (e.g. 127.0.0.1:40001; port 0 = any free port, printed) "
                        "or a Unix socket path; with --config: the listeners' own")
    parser.add_argument("--name", default=None, metavar="NAME",
                        help="with --config: only the [[gnubg_player]] listener of this name")
    parser.add_argument("--no-jacoby", action="store_true",
                        help="money: gnubg plays without the Jacoby rule (`set jacoby off`)")
    parser.add_argument("--beavers", type=int, default=3, metavar="N",
                        help="money: beavers + raccoons gnubg allows per exchange, as in "
                        "gnubg's `set beavers N` (default 3; 0 = no beavers)")
    parser.add_argument("--seed", type=int, default=0, metavar="S",
                        help="seed for agents with noise or randomness (connection k: S+k)")
    parser.add_argument("--line-timeout", type=float, default=10.0, metavar="SECONDS",
                        help="close a connection that sends half a line and then stays silent "
                        "this long (default 10)")
    parser.add_argument("--max-line", type=int, default=4096, metavar="BYTES",
                        help="close a connection that sends a longer line (default 4096)")


def config_from_args(args: argparse.Namespace) -> PlayerServerConfig:
    from ..core.errors import BgbotError
    from ..core.rules import Rules
    from ..frontends.gnubg_player import PlayerServerConfig
    from ..frontends.gnubg_session import GNUBG_MAX_CUBE
    from ._servers import default_logs

    if args.beavers < 0:
        raise BgbotError(f"--beavers: expected 0 or more, got {args.beavers}")
    if args.line_timeout <= 0 or args.max_line < 256:
        raise BgbotError("--line-timeout must be > 0 and --max-line at least 256")
    rules = Rules(jacoby=not args.no_jacoby, beavers=args.beavers > 0,
                  raccoons=args.beavers > 1, cube_limit=GNUBG_MAX_CUBE)
    return PlayerServerConfig(player=args.agent or SERVING_AGENT,
                              log_dir=args.logs or default_logs("gnubg-player"), rules=rules,
                              max_beavers=args.beavers, seed=args.seed,
                              line_timeout=args.line_timeout, max_line=args.max_line)


def listeners_from_args(args: argparse.Namespace) -> list[tuple[str, PlayerServerConfig]]:
    """(address, how it plays) of each listener to run: --listen with the options, or the
    [[gnubg_player]] tables of --config (--agent, --logs and --seed over theirs)."""
    import dataclasses

    from ..core.errors import BgbotError

    base = config_from_args(args)
    if not args.config:
        if not args.listen:
            raise BgbotError("--listen: give the address to listen on (HOST:PORT or a socket "
                             "path), or --config with [[gnubg_player]] tables")
        return [(args.listen, base)]
    if args.listen:
        raise BgbotError("--listen: --config names the listeners' addresses; leave out one "
                         "or the other")
    from ..daemon.config import frontend_name, load_config

    config = load_config(args.config)
    found = []
    for index, entry in enumerate(config.gnubg_player):
        if args.name is not None and frontend_name(entry, index) != args.name:
            continue
        log_dir = args.logs or (config.logs_dir / "gnubg-player" if entry.log_connections
                                else None)
        found.append((entry.listen, dataclasses.replace(
            base, player=args.agent or entry.agent, seed=args.seed or entry.seed,
            max_connections=entry.max_connections, log_dir=log_dir)))
    if not found:
        raise BgbotError(f"--config {args.config}: no [[gnubg_player]] table" + (
            f" named {args.name}" if args.name is not None else ""))
    return found


def run(args: argparse.Namespace) -> int:
    """Listen until interrupted; print the address gnubg should connect to."""
    from ..frontends.gnubg_player import ListenAddress, run_gnubg_player

    listeners = [(ListenAddress.parse(address), config)
                 for address, config in listeners_from_args(args)]

    def announcer(config: PlayerServerConfig) -> Callable[[ListenAddress], None]:
        def announce(bound: ListenAddress) -> None:
            where = f"logs in {config.log_dir}" if config.log_dir is not None else "no logs"
            print(f"bgbot gnubg-player: listening on {bound} with {config.player}; {where}; "
                  f"in gnubg type: set player 1 external {bound.gnubg_argument()}",
                  file=sys.stderr, flush=True)
        return announce

    async def main() -> None:
        serving = [asyncio.create_task(run_gnubg_player(address, config,
                                                        ready=announcer(config)))
                   for address, config in listeners]
        everything = asyncio.gather(*serving)
        with contextlib.suppress(NotImplementedError, RuntimeError):
            asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, everything.cancel)
        with contextlib.suppress(asyncio.CancelledError):
            await everything

    try:
        asyncio.run(main())
    except OSError as exc:
        where = ", ".join(str(address) for address, _ in listeners)
        print(f"bgbot gnubg-player: cannot listen on {where}: {exc}", file=sys.stderr)
        return 2
    return 0
