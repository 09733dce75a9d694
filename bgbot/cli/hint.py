"""`bgbot hint ID [DICE]`: the heuristic player's advice without a daemon, as gnubg's ``hint``.

With dice (typed, or rolled in a gnubg id / XGID): every legal play, best first, with its
equity (money) or match-winning chances (match play) and the five chances after it, at the
player's look-ahead. Without dice: the cube advice for the player on roll -- no double,
double/take, double/pass with their cubeful equities (Janowski's model for money, the match
equity table in match play) and the proper cube action.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from ._position import dice_for, heuristic_player, ranked_plays, read_situation
from ._rollouts import add_rollout_options

_EPILOG = """\
examples:
  bgbot hint 4HPwATDgc/ABMA 31                   the plays of an opening 3-1, best first
  bgbot hint 4HPwATDgc/ABMA 31 --plies 1 --json  at 1-ply, as JSON
  bgbot hint 'XGID=-b----E-C---eE---c-e----AA:0:0:1:00:6:3:1:7:10'    the cube, at that score
  bgbot hint 4HPwATDgc/cAkAAAAAAAAA              a gnubg id: cube, score and dice from the id
  bgbot hint 4HPwATDgc/ABMA 31 --rollout --truncate 10 --concurrency 2   ranked by rollouts

The chances are gnubg's five, from the side of the player on roll: win, win gammon, win
backgammon, lose gammon, lose backgammon (gammons include backgammons). Money equities are
per cube; match play ranks by match-winning chances (MWC). The first play is the one the
player chooses; `bgbot show FILE.mat --game N --move M` gives a position of a match file.
"""


CHANCES_HEADER = "  win   gam    bg -  lose   gam    bg"
"""Over the six chance columns of a play (or a cube decision), each right-aligned."""
CHANCES_LEGEND = ("chances after the play, for the side that plays it: win, win a gammon, win "
                  "a backgammon - lose, lose a gammon, lose a backgammon (gammons include "
                  "backgammons)")


def register(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    p = sub.add_parser(
        "hint",
        help="rank every legal play (or give the cube advice) with the heuristic player",
        description="The heuristic player's hint, as gnubg's: every legal play of a roll "
        "ranked by equity with the five chances, or without dice the cube advice.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("id", metavar="ID", help="Position ID, PosID:MatchID, XGID=... or board:...")
    p.add_argument("dice", metavar="DICE", nargs="*",
                   help="the roll (31 or 3 1); default: the dice the id says were rolled, "
                   "else the cube advice")
    p.add_argument("--plies", type=int, choices=(0, 1, 2), default=None, metavar="N",
                   help="look-ahead 0, 1 or 2 (default 0, or the --player's)")
    p.add_argument("--player", default="heuristic", metavar="SPEC",
                   help="the heuristic player to ask (default heuristic; e.g. "
                   "heuristic:plies=1,weights=FILE)")
    p.add_argument("--cube", action="store_true",
                   help="the cube advice even when the id has dice rolled")
    p.add_argument("--json", action="store_true",
                   help='print one JSON object: {"plays": [{"move", "equity", "chances", ...}]} '
                   'best first, or {"cube": {...}}')
    p.add_argument("--rollout", action="store_true",
                   help="rank the best plays by rolling each out (as `bgbot rollout "
                   "--dice`; --player plays the trials, any agent; options below)")
    add_rollout_options(p, player=False)
    p.set_defaults(func=run)


def _spec(args: argparse.Namespace) -> str:
    if args.plies is None:
        return str(args.player)
    base = str(args.player)
    return f"{base}{',' if ':' in base else ':'}plies={args.plies}"


def _chances(probs: Any) -> dict[str, float]:
    return {name: round(float(value), 6) for name, value in probs._asdict().items()}


def run(args: argparse.Namespace) -> int:
    situation = read_situation(args.id)
    dice = None if args.cube else dice_for(situation, args.dice)
    if args.rollout:
        return _rollout(args, situation, dice)
    player = heuristic_player(_spec(args))
    context = situation.context
    unit = "equity" if context.is_money else "mwc"
    if dice is not None:
        return _plays(args, player, situation, dice, unit)
    return _cube(args, player, situation, unit)


def _plays(args: argparse.Namespace, player: Any, situation: Any, dice: tuple[int, int],
           unit: str) -> int:
    ranked = ranked_plays(player, situation, dice)
    plays = []
    for entry in ranked:
        item: dict[str, Any] = {
            "move": str(entry.play),
            "equity": round(float(entry.value if unit == "equity" else entry.chances.equity()),
                            6),
            "chances": _chances(entry.chances),
            "depth": entry.depth,
            "position_id": entry.after.position_id(),
        }
        if unit == "mwc":
            item["mwc"] = round(float(entry.value), 6)
        plays.append(item)
    if args.json:
        print(json.dumps({"position_id": situation.position.position_id(), "dice": list(dice),
                          "player": player.name, "ranked_by": unit, "plays": plays}))
        return 0
    high, low = max(dice), min(dice)
    if not plays:
        print(f"no legal play with {high}{low}")
        return 0
    key = "equity" if unit == "equity" else "mwc"
    best = plays[0][key]
    width = max(len(p["move"]) for p in plays)
    label = "equity" if unit == "equity" else "MWC"
    print(f"{player.name}, {high}{low} to play ({_where(situation.context)}); ranked by {label}")
    lead = 3 + 2 + width + 2 + len(label) + 1 + 7 + 11 + 2
    print(" " * lead + CHANCES_HEADER + "  look-ahead")
    for rank, item in enumerate(plays, 1):
        c = item["chances"]
        diff = "" if rank == 1 else f" ({item[key] - best:+.4f})"
        print(f"{rank:3d}. {item['move']:<{width}}  {label} {item[key]:+.4f}{diff:<11}"
              f"  {c['win']:.3f} {c['win_gammon']:.3f} {c['win_backgammon']:.3f} - "
              f"{1 - c['win']:.3f} {c['lose_gammon']:.3f} {c['lose_backgammon']:.3f}"
              f"  {item['depth']}-ply")
    print(CHANCES_LEGEND)
    return 0


def _rollout(args: argparse.Namespace, situation: Any, dice: tuple[int, int] | None) -> int:
    """The plays of ``dice`` ranked by rollouts (`bgbot rollout --dice`)."""
    from ..core.errors import BgbotError
    from ._rollouts import candidates_table, roll_out, settings_from

    if dice is None:
        raise BgbotError("--rollout ranks the plays of a roll: give the dice (e.g. 31); "
                         "`bgbot rollout ID` rolls out a position before the roll")
    settings = settings_from(args, _spec(args))
    results = roll_out(args, situation.position, situation.context, dice, settings)
    assert isinstance(results, list)
    if args.json:
        plays = [{"move": c.move, "equity": round(c.result.equity.mean, 6),
                  "se": round(c.result.equity.se, 6),
                  "chances": _chances(c.result.chances), "position_id": c.result.position_id,
                  "rollout": c.result.to_json()} for c in results]
        print(json.dumps({"position_id": situation.position.position_id(), "dice": list(dice),
                          "player": settings.player, "ranked_by": "rollout", "plays": plays}))
        return 0
    print(candidates_table(results, situation.context, dice))
    return 0


def _where(context: Any) -> str:
    if context.is_money:
        where = "money"
    else:
        where = (f"{context.match_length}-point match at {context.my_score}-"
                 f"{context.opponent_score}" + (", Crawford" if context.crawford else ""))
    if not context.rules.cube:
        return where + ", no cube"
    owner = {"CENTRE": "centred", "ME": "owned by the player on roll",
             "OPPONENT": "owned by the opponent"}[context.cube_owner.name]
    return f"{where}, cube {context.cube_value} {owner}"


def proper_action(analysis: Any) -> str:
    """gnubg's words for the cube analysis: no double, double/take, double/pass, too good."""
    answer = "beaver" if analysis.beaver else "take" if analysis.take else "pass"
    if analysis.double:
        return f"double, {answer}"
    if analysis.too_good:
        return "too good to double, pass"
    return f"no double, {answer}"


def _cube(args: argparse.Namespace, player: Any, situation: Any, unit: str) -> int:
    from ..players.cube import analyse_cube

    position, context = situation.position, situation.context
    probs = player.cube_probabilities(position)
    refusal = context.double_refusal()
    out: dict[str, Any] = {"position_id": position.position_id(), "player": player.name,
                           "units": unit, "chances": _chances(probs),
                           "cubeless_equity": round(float(probs.equity()), 6)}
    if refusal is not None:
        out["cube"] = {"may_double": False, "why": refusal}
    else:
        analysis = analyse_cube(probs, context, position,
                                efficiency=player._efficiency(position))
        out["cube"] = {
            "may_double": True,
            "no_double": round(float(analysis.no_double), 6),
            "double_take": round(float(analysis.double_take), 6),
            "double_pass": round(float(analysis.double_pass), 6),
            "cubeless": round(float(analysis.cubeless), 6),
            "efficiency": round(float(analysis.efficiency), 4),
            "double": analysis.double,
            "take": analysis.take,
            "beaver": analysis.beaver,
            "too_good": analysis.too_good,
            "proper": proper_action(analysis),
        }
    if args.json:
        print(json.dumps(out))
        return 0
    c = out["chances"]
    print(f"{player.name}, cube decision ({_where(context)})")
    intro = "  chances of the player on roll: "
    print(" " * len(intro) + CHANCES_HEADER)
    print(f"{intro}{c['win']:.3f} {c['win_gammon']:.3f} "
          f"{c['win_backgammon']:.3f} - {1 - c['win']:.3f} {c['lose_gammon']:.3f} "
          f"{c['lose_backgammon']:.3f}; cubeless equity {out['cubeless_equity']:+.4f}")
    cube = out["cube"]
    if not cube["may_double"]:
        print(f"  no double possible: {cube['why']}")
        return 0
    label = "equity" if unit == "equity" else "MWC"
    proper = max(cube["no_double"], min(cube["double_take"], cube["double_pass"]))
    for rank, (name, value) in enumerate((("no double", cube["no_double"]),
                                          ("double, take", cube["double_take"]),
                                          ("double, pass", cube["double_pass"])), 1):
        diff = f" ({value - proper:+.4f})" if abs(value - proper) > 5e-7 else ""
        print(f"  {rank}. {name:<13} {label} {value:+.4f}{diff}")
    print(f"  proper cube action: {cube['proper']}")
    return 0
