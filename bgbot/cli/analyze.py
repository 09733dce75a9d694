"""`bgbot analyze FILE.mat`: gnubg's error rates, luck and ratings for both players."""

from __future__ import annotations

import argparse
import json

_EPILOG = """\
examples:
  bgbot analyze match.mat                  0-ply analysis (fast), a table per player
  bgbot analyze match.mat --plies 2        gnubg's default strength (slower)
  bgbot analyze match.mat --json           one JSON object

Error rates are gnubg's: mEMG (milli-equivalent money games) per decision, with the MWC
percentage in match play or points in money play; errors and bad luck are negative.
The file is read with bgbot's own reader first: an illegal move or a truncated game is
named, not analysed (--unfinished analyses a file whose last game has no result yet).
gnubg judging its own play at its own depth finds no error in it: a player named
gnubg:plies=N (as bgbot names gnubg's engine) is judged with a warning unless --plies > N. The rules come from the file (bgbot writes cubeless, Jacoby and beaver
tags); --cubeless and --jacoby say them for files that do not.
GNU Backgammon must be installed (/usr/games/gnubg, or set BGBOT_GNUBG).
"""


def register(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    """Add the ``analyze`` sub-command to the bgbot command line."""
    from ..engines.gnubg import MAX_PLIES

    p = sub.add_parser(
        "analyze",
        help="have gnubg analyse a .mat match file: error rates, luck, ratings per player",
        description="Run GNU Backgammon's analysis on a Jellyfish .mat file and print, for "
        "each player, the chequer and cube error rates, the luck and gnubg's rating.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("file", metavar="FILE.mat", help="the match file (Jellyfish .mat)")
    p.add_argument("--plies", type=int, default=0, choices=range(MAX_PLIES + 1), metavar="N",
                   help=f"analysis look-ahead 0..{MAX_PLIES} (default 0; gnubg's own default is 2)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--timeout", type=float, default=1800.0, metavar="SEC",
                   help="give up after SEC seconds (default 1800)")
    p.add_argument("--cubeless", action="store_true", default=None,
                   help="judge the games as cubeless play (bgbot's files say so themselves)")
    p.add_argument("--jacoby", choices=("on", "off"), default=None,
                   help="money play: judge with or without the Jacoby rule (default: the "
                   "file's Jacoby tag, else gnubg's own default, on)")
    p.add_argument("--unfinished", action="store_true",
                   help="analyse a file whose last game has no result (a match still in play)")
    p.set_defaults(func=_cmd_analyze)


def _cmd_analyze(args: argparse.Namespace) -> int:
    from ..engines.analysis import analyze_match, format_analysis

    jacoby = None if args.jacoby is None else args.jacoby == "on"
    analysis = analyze_match(args.file, plies=args.plies, timeout=args.timeout,
                             cubeless=args.cubeless, jacoby=jacoby, unfinished=args.unfinished)
    if args.json:
        print(json.dumps(analysis.to_json()))
    else:
        print(format_analysis(analysis))
    return 0
