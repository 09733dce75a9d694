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
  nice -n 19 python bench/gnubg_rollouts.py --make --trials 1296 --deep 8

``--make`` is CPU-heavy (about 40 minutes on one core at the defaults, which made the committed
file): run it at low priority, one process. The file is reproducible: gnubg 1.07's rollouts
are deterministic for a seed (one fresh gnubg per rollout), and the set is chosen
deterministically from the reference matches and gnubg's 0-ply evaluation of them.
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
from rich.progress import (  # noqa: E402
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
)
from rich.table import Table  # noqa: E402

from bgbot.core.context import Context, CubeOwner  # noqa: E402
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

REFERENCE = RolloutSettings(trials=648, seed=1, plies=0, cubeful=False, truncate=None,
                            variance_reduction=True, quasi_random=True, bearoff_truncation=False)
"""The setting of every position's reference rollout. 648 trials (18 x 36) because that is what
fits the 45 CPU-minutes the whole file may cost: gnubg rolls the 30 positions out at about
2.5 s per trial for all of them together (0-ply with variance reduction, full games)."""
DEEP = RolloutSettings(trials=108, seed=1, plies=2, cubeful=False, truncate=7,
                       variance_reduction=False, quasi_random=True, bearoff_truncation=False)
"""The 2-ply chequer-play rollout of a few positions: 108 trials (3 x 36) truncated at 7 plies,
no variance reduction (with it every ply of a 2-ply rollout costs 21 more 2-ply searches),
evaluated at 2 plies at the cut; about 1.2 s a trial, so 6 positions cost some 13 minutes."""
PER_PLAN = {"blitz": 2, "middle_game": 1}
"""Positions taken of each game plan: 3 unless named here (fewer where the matches have fewer)."""
DEFAULT_PER_PLAN = 3


# --------------------------------------------------------------------------- the set


@dataclass(frozen=True)
class Candidate:
    """A position before its side rolls, in a reference match, with where it came from."""

    position: Position
    context: Context
    kind: str
    source: str
    win: float | None = None
    """gnubg's 0-ply winning chance, once `screen` has asked (for choosing open positions)."""


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


def pick(pool: Sequence[Candidate], per_plan: int | None = None) -> list[Candidate]:
    """Some positions of each game plan (`PER_PLAN`, or ``per_plan`` each), each position at
    most once, deterministically: money and match positions in turn where both exist, each
    spread evenly over the best-ranked (`_preference`) of its part of the pool."""
    chosen: list[Candidate] = []
    seen: set[str] = set()
    for plan in GAME_PLANS:
        wanted = per_plan if per_plan is not None else PER_PLAN.get(plan, DEFAULT_PER_PLAN)
        parts: dict[bool, list[Candidate]] = {True: [], False: []}
        for item in pool:
            key = item.position.position_id()
            if item.kind == plan and key not in seen and not item.position.is_game_over():
                parts[item.context.is_money].append(item)
                seen.add(key)
        for is_money, part in parts.items():
            for rank in (3, 2, 1):
                preferred = [item for item in part if _preference(item) >= rank]
                if preferred:
                    parts[is_money] = preferred
                    break
        counts = {True: 0, False: 0}
        money = True
        for _ in range(wanted):
            if not parts[money] or counts[money] >= len(parts[money]):
                money = not money
            if counts[money] >= len(parts[money]):
                break
            counts[money] += 1
            money = not money
        for is_money, part in parts.items():
            count = counts[is_money]
            if count:
                step = len(part) / count
                chosen += [part[int(i * step + step / 2)] for i in range(count)]
    return chosen


def _preference(item: Candidate) -> int:
    """How much a position is worth a rollout: 2 points for a game still open (gnubg's 0-ply
    winning chance within 10-90 %, see `screen`), 1 for a centred cube (the cubeless reference
    is then the very game a cubeless player plays)."""
    centred = item.context.cube_value == 1 and item.context.cube_owner is CubeOwner.CENTRE
    open_game = item.win is None or 0.1 <= item.win <= 0.9
    return 2 * open_game + centred


async def _screen(pool: Sequence[Candidate]) -> list[Candidate]:
    engine = GnubgEngine(plies=0)
    try:
        out = []
        for item in pool:
            result = await engine.evaluate(item.position, item.context)
            out.append(replace(item, win=result.probabilities.win))
        return out
    finally:
        await engine.close()


def screen(pool: Sequence[Candidate]) -> list[Candidate]:
    """``pool`` with gnubg's 0-ply winning chance of each position (a few seconds for all)."""
    return asyncio.run(_screen(pool))


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


def make(trials: int, deep: int, deep_trials: int, per_plan: int | None, out: Path) -> None:
    """Pick the set, roll it out with gnubg, evaluate it at 2 plies and write ``out``."""
    console = Console()
    pool = candidates()
    console.print(f"{len(pool)} positions in the reference matches; screening them at gnubg 0-ply")
    chosen = pick(screen(pool), per_plan)
    settings = replace(REFERENCE, trials=trials)
    deep_settings = replace(DEEP, trials=deep_trials)
    deep_ids = set(_deep_choice(chosen, deep))
    console.print(f"{len(chosen)} positions; reference: {settings.describe()}; "
                  f"{len(deep_ids)} with 2-ply chequer play: {deep_settings.describe()}")
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
                deep_result = rollout_position(item.position, item.context, deep_settings)
                progress.advance(task)
                record["rollout_2ply"] = _rollout_json(deep_result)
            records.append(record)
    header = {"format": FORMAT, "made": time.strftime("%Y-%m-%d"),
              "gnubg": records[0]["rollout"].get("gnubg", ""),
              "reference": settings.to_json(), "deep": deep_settings.to_json(),
              "note": "chances for the side on roll before rolling: win, win gammon, win backgammon, "
                      "lose gammon, lose backgammon (gammons include backgammons); equity: money "
                      "points per unit cube or match-winning chance (equity_unit)"}
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", encoding="utf-8") as handle:
        handle.write(json.dumps(header, separators=(",", ":")) + "\n")
        for record in records:
            handle.write(json.dumps(record, separators=(",", ":")) + "\n")
    console.print(f"wrote {out} ({len(records)} positions)")


DEEP_ORDER = ("opening", "middle_game_blots", "holding", "prime_vs_prime", "back_game", "blitz",
              "crashed", "bearoff_contact", "middle_game", "race", "bearoff")


def _deep_choice(chosen: Sequence[Candidate], count: int) -> list[str]:
    """``count`` positions for the 2-ply rollouts: one per game plan in `DEEP_ORDER`, a money
    position where the plan has one."""
    picked: list[str] = []
    for plan in DEEP_ORDER:
        options = sorted((item for item in chosen if item.kind == plan),
                         key=lambda item: not item.context.is_money)
        if options and len(picked) < count:
            picked.append(options[0].position.position_id())
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
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--make", action="store_true", help="pick the set, roll it out, write the file")
    parser.add_argument("--candidates", action="store_true", help="count the positions per kind")
    parser.add_argument("--measure", action="store_true",
                        help="gnubg's trials/s at the reference setting")
    parser.add_argument("--trials", type=int, default=REFERENCE.trials,
                        help=f"trials of each reference rollout (default {REFERENCE.trials})")
    parser.add_argument("--deep", type=int, default=6,
                        help="positions with a 2-ply rollout (default 6)")
    parser.add_argument("--deep-trials", type=int, default=DEEP.trials,
                        help=f"trials of each 2-ply rollout (default {DEEP.trials})")
    parser.add_argument("--per-kind", type=int, default=None,
                        help=f"positions per kind (default {DEFAULT_PER_PLAN}, but {PER_PLAN})")
    parser.add_argument("--out", type=Path, default=DATA,
                        help=f"the file (default {DATA.relative_to(ROOT)})")
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
        make(args.trials, args.deep, args.deep_trials, args.per_kind, args.out)
    else:
        show(args.out)


if __name__ == "__main__":
    main()
