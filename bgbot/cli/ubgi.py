"""`bgbot ubgi`: be a UBGI (Universal Backgammon Interface v0.2) engine on stdin/stdout."""

from __future__ import annotations

import argparse

_EPILOG = """\
examples:
  bgbot ubgi                                   the heuristic player as a UBGI engine
  bgbot ubgi --player heuristic:plies=1        with 1-ply look-ahead (UBGI engine.ply 2)
  bgbot ubgi --player gnubg:plies=0            GNU Backgammon behind the UBGI protocol
  python -m bgbot.cli ubgi --player pubeval   the same without the bgbot launcher

a session (> from the controller, < from bgbot):
  > ubgi                     < id name bgbot heuristic / id author ... / proto 0.2 / key ... / ubgiok
  > set engine.ply 2
  > isready                  < readyok
  > newgame
  > position gnubgid 4HPwATDgc/ABMA        (a Position ID; PositionID:MatchID and
  > dice 6 1                                 position xgid XGID=... carry cube and score too)
  > go                       < info time_ms 3 / bestmove 13/7 8/7
  > go cube                  < bestcube nodouble
  > go turn                  < bestturn cube=nodouble move=13/7 8/7
  > quit

Errors are one line, `error <bad_command|bad_value|bad_state|unsupported> <detail>`, and the
engine goes on. Beyond the v0.2 spec: `go take` (besttake take|drop|beaver), `go resign`
(bestresign none|single|gammon|backgammon), `go accept <single|gammon|backgammon>`
(bestaccept accept|reject). Use any UBGI engine as a bgbot player with the agent spec
`ubgi:command=/path/to/engine,engine.ply=2`.
"""


def register(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    p = sub.add_parser(
        "ubgi",
        help="be a UBGI engine on stdin/stdout (for bgci, GUIs, other controllers)",
        description="Speak the Universal Backgammon Interface v0.2 on stdin/stdout, answering "
        "with the player an agent spec names, until `quit` or the end of input.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--player", metavar="SPEC", default="heuristic",
                   help="agent spec of the player that decides (default: heuristic), e.g. "
                   "heuristic:plies=1, pubeval, random:seed=3, gnubg:plies=0")
    p.add_argument("--seed", type=int, default=0,
                   help="seed of the player's noise (the engine.seed key overrides it)")
    p.add_argument("--log-level", metavar="LEVEL", default="warning",
                   help="logging level on stderr (debug shows every line; default warning)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import logging
    import sys

    from ..core.errors import FormatError
    from ..frontends.ubgi import run_stdio

    logging.basicConfig(level=str(args.log_level).upper(), stream=sys.stderr,
                        format="%(asctime)s %(name)s %(levelname)s %(message)s")
    try:
        return run_stdio(args.player, seed=args.seed)
    except FormatError as exc:
        print(f"bgbot ubgi: {exc}", file=sys.stderr)
        return 2
