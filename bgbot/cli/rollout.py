"""`bgbot rollout POSITION [--dice D1D2]`: roll a position out, or every candidate play of a
roll, gnubg's way (quasi-random dice, variance reduction, truncation), on this machine or on
Dask."""

from __future__ import annotations

import argparse
import json

from ._rollouts import (add_rollout_options, candidates_table, context_text, result_table,
                        roll_out, settings_from)

_EPILOG = """\
examples:
  bgbot rollout 4HPwATDgc/ABMA --dice 31           the best plays of an opening 3-1
  bgbot rollout 'XGID=-b----E-C---eE---c-e----AA:0:0:1:00:6:3:1:7:10'
                                                   that position, at its score and cube
  bgbot rollout 4HPwATDgc/ABMA --cubeless --truncate 10 --concurrency 2
                                                   quick: 1296 trials of 10 plies, 2 cores
  bgbot rollout 4HPwATDgc/ABMA --trials 12960 --se-target 0.005
                                                   stop once the equity's SE is below 0.005
  bgbot rollout 4HPwATDgc/ABMA --player gnubg:plies=0 --trials 144
                                                   gnubg's 0-ply play through bgbot's rollout
  bgbot rollout 4HPwATDgc/ABMA --trials 12960 --dask tcp://scheduler:8786
                                                   on a Dask cluster (--dask local: this one)
  bgbot rollout 4HPwATDgc/ABMA --trials 72 --json | jq .equity

A rollout plays the position out many times (trials) with the player on both sides and
averages the results: gnubg's five chances (win, win gammon, win backgammon, lose gammon,
lose backgammon; gammons include backgammons) and the equity, each with its standard error.
Without --dice the position is rolled out for the player on roll, before rolling (or
doubling); with --dice (or dice rolled in a gnubg id / XGID) each candidate play of that roll
is rolled out (the best --candidates by the player's 0-ply ranking within 0.16), all with the
same dice, and ranked.

gnubg's tools: trials come in multiples of 36 with quasi-random dice (the first roll of every
36 trials is each of the 36 rolls once, the first two of every 1296 each pair once; the rest
from a stream per trial, so the seed alone fixes every trial); variance reduction subtracts
each roll's luck as the player's 0-ply evaluation sees it (bgbot's evaluator judges for other
agents; the SE gain is printed); --truncate N evaluates after N plies. Money equities are per
unit of the position's cube; match play reports EMG (match-winning chances converted to
money equity at the cube). Cubeful trials play the cube with the player's own decisions
(cubeful by default when the position has the cube in use, as gnubg does); bgbot's 0-ply
player without the cube runs in C.

The same seed gives the same figures bit for bit with --concurrency N or --dask: trials are
counted in trial order whichever worker played them. With --json stdout carries one JSON
object only.
"""


def register(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    p = sub.add_parser(
        "rollout",
        help="roll out a position, or the candidate plays of a roll (gnubg-style: quasi-random "
        "dice, variance reduction, truncation; local or on Dask)",
        description="Roll a position out with a player on both sides and report the chances "
        "and equity with their standard errors; with dice, roll out and rank the candidate "
        "plays.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("position", metavar="POSITION",
                   help="Position ID, PosID:MatchID (gnubg id), XGID=... or board:...")
    p.add_argument("--dice", default=None, metavar="D1D2",
                   help="roll out the candidate plays of this roll (e.g. 31)")
    add_rollout_options(p)
    p.add_argument("--json", action="store_true",
                   help="print one JSON object on stdout (nothing else goes there)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..core.errors import BgbotError
    from ..rollout import RolloutResult
    from ._position import dice_for, read_situation

    situation = read_situation(args.position)
    dice = dice_for(situation, [args.dice] if args.dice else [])
    settings = settings_from(args, args.player)
    if args.candidates < 1:
        raise BgbotError(f"--candidates must be at least 1, got {args.candidates}")
    if situation.position.is_game_over():
        raise BgbotError(f"{args.position}: the game is over: there is nothing to roll out")
    found = roll_out(args, situation.position, situation.context, dice, settings)
    where = context_text(situation.context)
    if isinstance(found, RolloutResult):
        print(json.dumps({**found.to_json(), "context": where}) if args.json
              else result_table(found, situation.context))
        return 0
    assert dice is not None
    if args.json:
        print(json.dumps({"position_id": situation.position.position_id(), "dice": list(dice),
                          "context": where, "candidates": [c.to_json() for c in found]}))
    else:
        print(candidates_table(found, situation.context, dice))
    return 0
