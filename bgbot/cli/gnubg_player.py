"""`bgbot gnubg-player`: listen for GNU Backgammon and play as its external player."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from ..agents.players import SERVING_AGENT
from ..deciders import known_agents

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

  Each connection is logged to --log-dir as JSON lines: every request gnubg sent, bgbot's
  reply and decision, and the games' results as seen through the score. gnubg's own
  `export match mat FILE` remains the full record (bgbot never sees gnubg's dice).

agents (--player NAME[:key=value,...]):
{agents}

examples:
  bgbot gnubg-player --listen 127.0.0.1:40001
  bgbot gnubg-player --listen 127.0.0.1:40001 --player heuristic:plies=1 --log-dir logs/
  bgbot gnubg-player --listen /tmp/bgbot.sock --player pubeval -v
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
    parser.add_argument("--listen", required=True, metavar="ADDRESS",
                        help="HOST:PORT (e.g. 127.0.0.1:40001; port 0 = any free port, printed) "
                        "or a Unix socket path")
    parser.add_argument("--player", default=SERVING_AGENT, metavar="SPEC",
                        help=f"agent spec answering for gnubg's seat (default: {SERVING_AGENT})")
    parser.add_argument("--log-dir", type=Path, default=None, metavar="DIR",
                        help="write one JSON-lines log per connection into DIR")
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
    parser.add_argument("-v", "--verbose", action="store_true",
                        help="log every connection and decision problem (default: warnings)")


def config_from_args(args: argparse.Namespace) -> PlayerServerConfig:
    from ..core.errors import BgbotError
    from ..core.rules import Rules
    from ..frontends.gnubg_player import PlayerServerConfig
    from ..frontends.gnubg_session import GNUBG_MAX_CUBE

    if args.beavers < 0:
        raise BgbotError(f"--beavers: expected 0 or more, got {args.beavers}")
    if args.line_timeout <= 0 or args.max_line < 256:
        raise BgbotError("--line-timeout must be > 0 and --max-line at least 256")
    rules = Rules(jacoby=not args.no_jacoby, beavers=args.beavers > 0,
                  raccoons=args.beavers > 1, cube_limit=GNUBG_MAX_CUBE)
    return PlayerServerConfig(player=args.player, log_dir=args.log_dir, rules=rules,
                              max_beavers=args.beavers, seed=args.seed,
                              line_timeout=args.line_timeout, max_line=args.max_line)


def run(args: argparse.Namespace) -> int:
    """Listen until interrupted; print the address gnubg should connect to."""
    from ..frontends.gnubg_player import ListenAddress, run_gnubg_player

    config = config_from_args(args)
    address = ListenAddress.parse(args.listen)

    def announce(bound: ListenAddress) -> None:
        print(f"bgbot gnubg-player: listening on {bound} with {config.player}; in gnubg type: "
              f"set player 1 external {bound.gnubg_argument()}", file=sys.stderr, flush=True)

    async def main() -> None:
        serving = asyncio.create_task(run_gnubg_player(address, config, ready=announce))
        with contextlib.suppress(NotImplementedError, RuntimeError):
            asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, serving.cancel)
        with contextlib.suppress(asyncio.CancelledError):
            await serving

    try:
        asyncio.run(main())
    except OSError as exc:
        print(f"bgbot gnubg-player: cannot listen on {args.listen}: {exc}", file=sys.stderr)
        return 2
    return 0
