"""gnubg's rollouts of a fixed position set: the reference bgbot's rollouts are checked against.

The set (``bench/data/rollout_positions.jsonl``, committed; format in bench/README.md) holds
positions of every game plan (`bgbot.players.position_class.game_plan`) drawn from real play:
the gnubg-vs-gnubg reference matches in shared/testdata/matches, replayed with the rules core,
each position taken before its side rolls, with its match context. For each position the file
stores gnubg's own rollout at one documented setting (`REFERENCE`), gnubg's 2-ply evaluation,
and for a handful of positions a rollout with 2-ply chequer play (`DEEP`).

Usage:
  python bench/gnubg_rollouts.py                 print the stored set and its reference figures
  python bench/gnubg_rollouts.py --candidates    how many positions of each kind the matches give
  python bench/gnubg_rollouts.py --measure       gnubg's trials/s at REFERENCE on a few positions
  nice -n 19 python bench/gnubg_rollouts.py --make       pick the set, roll it out, write the file
  nice -n 19 python bench/gnubg_rollouts.py --make --trials 648 --deep 6

``--make`` is CPU-heavy (tens of minutes on one core): run it at low priority, one process.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Iterator, Sequence

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rich.console import Console  # noqa: E402
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn  # noqa: E402
from rich.table import Table  # noqa: E402

from bgbot.core.context import Context  # noqa: E402
from bgbot.core.game import (  # noqa: E402
    AutoDoubled,
    Beavered,
    Doubled,
    Dropped,
    Game,
    Moved,
    OpeningRolled,
    Raccooned,
    Resigned,
    ResignationAccepted,
    ResignationRejected,
    Rolled,
    Taken,
)
from bgbot.core.position import Position  # noqa: E402
from bgbot.engines.gnubg import GnubgEngine  # noqa: E402
from bgbot.engines.gnubg_rollout import (  # noqa: E402
    GnubgRollout,
    RolloutSettings,
    context_from_json,
    context_to_json,
    rollout_position,
)
from bgbot.formats.mat import MatchRecord, parse_match  # noqa: E402
from bgbot.players.position_class import GAME_PLANS, game_plan, position_class  # noqa: E402

SHARED = Path(os.environ.get("BGBOT_SHARED", ROOT.parent / "shared"))
MATCHES = SHARED / "testdata" / "matches"
DATA = ROOT / "bench" / "data" / "rollout_positions.jsonl"
FORMAT = "bgbot-gnubg-rollouts-1"

REFERENCE = RolloutSettings(trials=1296, seed=1, plies=0, cubeful=False, truncate=None,
                            variance_reduction=True, quasi_random=True, bearoff_truncation=False)
"""The setting of every position's reference rollout (``--trials`` may lower the trials)."""
DEEP = RolloutSettings(trials=144, seed=1, plies=2, cubeful=False, truncate=7,
                       variance_reduction=False, quasi_random=True, bearoff_truncation=False)
"""The 2-ply chequer-play rollout of a few positions: truncated, no variance reduction (with it
every ply of a 2-ply rollout costs 21 more 2-ply searches), evaluated at 2 plies at the cut."""
PER_PLAN = 3
"""Positions taken of each game plan (fewer where the matches have fewer)."""


# --------------------------------------------------------------------------- the set


@dataclass(frozen=True)
class Candidate:
    """A position before its side rolls, in a reference match, with where it came from."""

    position: Position
    context: Context
    kind: str
    source: str


def pre_roll_positions(record: MatchRecord, name: str) -> Iterator[Candidate]:
    """Every position of ``record`` at which a side is about to roll (or double), replayed with
    the rules core; the opening roll (played at once) is not one."""
    rules = record.rules
    if not record.length and record.tags.get("Beaver", "").lower() != "off":
        # as the .mat reader replays money files: gnubg's default `set beavers 3`
        rules = replace(rules, beavers=True, raccoons=True, beaver_limit=max(rules.beaver_limit, 3))
    for game_record in record.games:
        actions = game_record.actions
        cube = 1 << sum(1 for action in actions if isinstance(action, AutoDoubled))
        if actions and isinstance(actions[0], OpeningRolled):
            game = Game(rules, record.length, game_record.score, game_record.crawford,
                        post_crawford=game_record.post_crawford)
        else:  # the file's first entry was not a non-double opening roll
            first = next(action for action in actions if isinstance(action, (Rolled, Moved)))
            game = Game.start_from(Position.initial(), first.seat, rules=rules,
                                   match_length=record.length, score=game_record.score,
                                   crawford=game_record.crawford,
                                   post_crawford=game_record.post_crawford, cube_value=cube)
        turn = 0
        taken = False
        for action in game_record.actions:
            if isinstance(action, (Rolled, Doubled)) and not taken:
                turn += 1
                taken = True
                seat = game.seat_on_roll
                yield Candidate(game.board_for(seat), game.context_for(seat),
                                game_plan(game.board_for(seat)),
                                f"{name} game {game_record.number} turn {turn}")
            if isinstance(action, OpeningRolled):
                game.opening_roll(action.die0, action.die1)
            elif isinstance(action, Rolled):
                game.roll(action.dice)
            elif isinstance(action, Moved):
                game.move(action.play)
                taken = False
            elif isinstance(action, Doubled):
                game.double()
            elif isinstance(action, Taken):
                game.take()
            elif isinstance(action, Dropped):
                game.drop()
            elif isinstance(action, Beavered):
                game.beaver()
            elif isinstance(action, Raccooned):
                game.raccoon()
            elif isinstance(action, Resigned):
                game.resign(action.seat, action.value)
            elif isinstance(action, ResignationAccepted):
                game.accept_resignation()
            elif isinstance(action, ResignationRejected):
                game.reject_resignation()


def candidates() -> list[Candidate]:
    """Every pre-roll position of the reference matches, in file order."""
    found: list[Candidate] = []
    for path in sorted(MATCHES.glob("*.mat")):
        record = parse_match(path.read_bytes())
        found += pre_roll_positions(record, path.name)
    return found


def pick(pool: Sequence[Candidate], per_plan: int = PER_PLAN) -> list[Candidate]:
    """``per_plan`` positions of each game plan, spread evenly over the pool (deterministic),
    each position at most once."""
    chosen: list[Candidate] = []
    seen: set[str] = set()
    for plan in GAME_PLANS:
        pool_plan = []
        for item in pool:
            key = item.position.position_id()
            if item.kind == plan and key not in seen and not item.position.is_game_over():
                pool_plan.append(item)
                seen.add(key)
        if not pool_plan:
            continue
        step = len(pool_plan) / min(per_plan, len(pool_plan))
        chosen += [pool_plan[int(i * step + step / 2)] for i in range(min(per_plan, len(pool_plan)))]
    return chosen


# --------------------------------------------------------------------------- gnubg


async def _evaluate(items: Sequence[Candidate], plies: int) -> list[dict[str, Any]]:
    engine = GnubgEngine(plies=plies, timeout=600)
    try:
        out = []
        for item in items:
            result = await engine.evaluate(item.position, item.context, plies=plies)
            out.append({"plies": plies, "chances": [round(x, 6) for x in result.probabilities],
                        "equity": round(result.equity, 6),
                        "equity_unit": "mwc" if result.match_play else "points"})
        return out
    finally:
        await engine.close()


def _rollout_json(result: GnubgRollout) -> dict[str, Any]:
    data = result.to_json()
    for key in ("position_id", "context"):
        data.pop(key)
    return data


def measure(trials: int) -> None:
    """gnubg's trials/s at REFERENCE (with ``trials``) on one position of each evaluator class."""
    console = Console()
    pool = candidates()
    seen = set()
    for item in pool:
        kind = position_class(item.position)
        if kind in seen or kind.value == "over":
            continue
        seen.add(kind)
        result = rollout_position(item.position, item.context, replace(REFERENCE, trials=trials))
        console.print(f"{kind.value:8} {item.kind:18} {item.position.position_id()}  "
                      f"{result.trials} trials in {result.seconds:6.1f} s = "
                      f"{result.trials_per_second:6.1f} trials/s")


def make(trials: int, deep: int, per_plan: int, out: Path) -> None:
    """Pick the set, roll it out with gnubg, evaluate it at 2 plies and write ``out``."""
    console = Console()
    chosen = pick(candidates(), per_plan)
    settings = replace(REFERENCE, trials=trials)
    deep_ids = set(_deep_choice(chosen, deep))
    console.print(f"{len(chosen)} positions; reference: {settings.describe()}; "
                  f"{len(deep_ids)} with 2-ply chequer play: {DEEP.describe()}")
    evaluations = asyncio.run(_evaluate(chosen, 2))
    records = []
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
               TimeElapsedColumn())
    with Progress(*columns, console=console) as progress:
        task = progress.add_task("gnubg rollouts", total=len(chosen) + len(deep_ids))
        for item, evaluation in zip(chosen, evaluations):
            progress.update(task, description=f"{item.kind} {item.position.position_id()}")
            result = rollout_position(item.position, item.context, settings)
            progress.advance(task)
            record: dict[str, Any] = {
                "id": item.position.position_id(),
                "kind": item.kind,
                "class": position_class(item.position).value,
                "context": context_to_json(item.context),
                "source": item.source,
                "pips": list(item.position.pip_counts()),
                "rollout": _rollout_json(result),
                "evaluation_2ply": evaluation,
            }
            if record["id"] in deep_ids:
                deep_result = rollout_position(item.position, item.context, DEEP)
                progress.advance(task)
                record["rollout_2ply"] = _rollout_json(deep_result)
            records.append(record)
    header = {"format": FORMAT, "made": time.strftime("%Y-%m-%d"), "gnubg": records[0]["rollout"].get("gnubg", ""),
              "reference": settings.to_json(), "deep": DEEP.to_json(),
              "note": "chances for the side on roll before rolling: win, win gammon, win backgammon, "
                      "lose gammon, lose backgammon (gammons include backgammons); equity: money "
                      "points per unit cube or match-winning chance (equity_unit)"}
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", encoding="utf-8") as handle:
        handle.write(json.dumps(header, separators=(",", ":")) + "\n")
        for record in records:
            handle.write(json.dumps(record, separators=(",", ":")) + "\n")
    console.print(f"wrote {out} ({len(records)} positions)")


def _deep_choice(chosen: Sequence[Candidate], count: int) -> list[str]:
    """``count`` positions for the 2-ply rollouts: one per game plan in turn, contact first."""
    order = [plan for plan in GAME_PLANS if plan not in ("bearoff", "race")] + ["race", "bearoff"]
    picked: list[str] = []
    for plan in order:
        for item in chosen:
            if item.kind == plan and len(picked) < count:
                picked.append(item.position.position_id())
                break
    return picked


# --------------------------------------------------------------------------- reading


def load(path: Path = DATA) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The file's header and its position records (context decoded as a `Context`)."""
    with path.open(encoding="utf-8") as handle:
        lines = [json.loads(line) for line in handle if line.strip()]
    if not lines or lines[0].get("format") != FORMAT:
        raise SystemExit(f"{path}: not a {FORMAT} file")
    records = lines[1:]
    for record in records:
        record["context_obj"] = context_from_json(record["context"])
        record["position"] = Position.from_position_id(record["id"])
    return lines[0], records


def show(path: Path) -> None:
    header, records = load(path)
    console = Console()
    console.print(f"{path}: {len(records)} positions, gnubg {header.get('gnubg')}; reference "
                  f"{RolloutSettings.from_json(header['reference']).describe()}")
    table = Table("id", "kind", "context", "win", "wg", "lg", "equity ± SE", "2-ply eval",
                  "2-ply rollout", "trials/s")
    for record in records:
        rollout = record["rollout"]
        chances = rollout["chances"]
        context = record["context"]
        where = "money" if not context["match_length"] else (
            f"{context['my_score']}-{context['opponent_score']}/{context['match_length']}")
        deep = record.get("rollout_2ply")
        table.add_row(record["id"], record["kind"], where, f"{chances[0]:.3f}", f"{chances[1]:.3f}",
                      f"{chances[3]:.3f}", f"{rollout['equity'][0]:+.3f} ± {rollout['equity'][1]:.3f}",
                      f"{record['evaluation_2ply']['equity']:+.3f}",
                      "" if deep is None else f"{deep['equity'][0]:+.3f} ± {deep['equity'][1]:.3f}",
                      f"{rollout['trials'] / max(rollout['seconds'], 1e-9):.1f}")
    console.print(table)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--make", action="store_true", help="pick the set, roll it out, write the file")
    parser.add_argument("--candidates", action="store_true", help="count the positions per kind")
    parser.add_argument("--measure", action="store_true", help="gnubg's trials/s at the reference setting")
    parser.add_argument("--trials", type=int, default=REFERENCE.trials,
                        help=f"trials of each reference rollout (default {REFERENCE.trials})")
    parser.add_argument("--deep", type=int, default=6, help="positions with a 2-ply rollout (default 6)")
    parser.add_argument("--per-kind", type=int, default=PER_PLAN, help=f"positions per kind (default {PER_PLAN})")
    parser.add_argument("--out", type=Path, default=DATA, help=f"the file (default {DATA.relative_to(ROOT)})")
    args = parser.parse_args(argv)
    if args.candidates:
        pool = candidates()
        counts = {plan: sum(1 for item in pool if item.kind == plan) for plan in GAME_PLANS}
        for plan, count in counts.items():
            print(f"{plan:18} {count}")
        print(f"{'total':18} {len(pool)}")
    elif args.measure:
        measure(args.trials if args.trials != REFERENCE.trials else 144)
    elif args.make:
        make(args.trials, args.deep, args.per_kind, args.out)
    else:
        show(args.out)


if __name__ == "__main__":
    main()
