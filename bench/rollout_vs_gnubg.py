"""bgbot's rollouts checked against GNU Backgammon's own (issue 29 §3), on the reference set
``bench/data/rollout_positions.jsonl`` (gnubg's rollouts of 30 positions of every game plan;
format in bench/README.md).

Two modes, one table each (``--json`` adds one JSON line at the end):

``machinery`` (default): bgbot's rollout played by ``gnubg:plies=0`` (``--player``) through
bgbot's own code -- our dice, our trial loop, the referee hosting gnubg over its socket, our
variance reduction judged by bgbot's 0-ply evaluator -- against gnubg's own rollout of the
position (648 trials, 0-ply, cubeless, VR, quasi-random dice, full games). Both estimate the
same number, the value of the position when gnubg 0-ply plays both sides cubeless, so they
must agree within the noise: z = (ours - gnubg's) / sqrt(SE_ours^2 + SE_gnubg^2), a position
passes at |z| <= 2. Money positions compare the cubeless equity (points per unit cube); match
positions the winning chance (gnubg's match equities are MWC by its own MET, ours EMG by
ours). gnubg prints 4 decimals, so half a unit of the last digit (0.00005) is added to its SE
in quadrature (the bear-offs have an SE of 0.0000 as printed). Over the whole set, the sum of
z^2 is a chi-square with one degree of freedom per position and the mean z (N(0, 1/n)) shows a
bias of one sign: both are printed with their p-values.

``player``: bgbot's rollout with bgbot's own player (``--player``, default ``heuristic``: the
0-ply player, in the C kernel) against gnubg's rollouts with gnubg's 0-ply player (every
position) and with 2-ply chequer play (the 6 positions that have one: 108 trials truncated at
7 plies, no VR, so their SE is 0.04-0.09). The issue's bar: within 0.03 equity on most
positions. Money positions compare the cubeless equity; match positions the chances, through
their cubeless value in EMG at the score (one MET, ours, for both sides' chances, so the METs'
difference does not count; gammons count only as much as the score makes them: at
double-match-point not at all), with the winning chance beside it. Nothing is tuned to this
set: it is a measurement.

Cost: ``machinery`` asks gnubg for every move over a socket and judges every roll with
bgbot's evaluator in Python: about 0.3-0.5 s a trial in contact, 0.05-0.1 s in a race or
bear-off (one core, gnubg included); the whole set at 216 trials takes about half an hour.
Run it at low priority, one process: ``nice -n 19``. ``player`` runs in C, 1296 trials of
every position: about 25 CPU-minutes (contact positions play 40-60 plies a trial).

Usage:
  nice -n 19 python bench/rollout_vs_gnubg.py                          # machinery, all 30, 216 trials
  nice -n 19 python bench/rollout_vs_gnubg.py --positions race,bearoff --trials 72
  nice -n 19 python bench/rollout_vs_gnubg.py --positions vy8KAgDr7jIAAA,t50BAOD2AwAAAQ --json
  nice -n 19 python bench/rollout_vs_gnubg.py --mode player            # our player, 1296 trials
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Sequence

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from rich.console import Console  # noqa: E402
from rich.progress import (  # noqa: E402
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table  # noqa: E402

from bgbot.core.context import Context  # noqa: E402
from bgbot.core.position import Position  # noqa: E402
from bgbot.players.evaluator import extension_status  # noqa: E402
from bgbot.rollout import (  # noqa: E402
    RolloutProgress,
    RolloutResult,
    RolloutSettings,
    close_players,
    rollout_position,
)
from bgbot.rollout.settings import RolloutJob  # noqa: E402
from bgbot.rollout.values import ValueMap  # noqa: E402
from gnubg_rollouts import DATA, load  # noqa: E402

PRINTED = 0.5e-4
"""Half a unit of the last decimal gnubg prints: its figures' rounding, added to its SE."""
PASS_Z = 2.0
"""machinery: a position passes when |z| <= this."""
PLAYER_BAR = 0.03
"""player: a position passes when our equity is within this of gnubg's (the issue's bar)."""
DEFAULT_TRIALS = {"machinery": 216, "player": 1296}
DEFAULT_PLAYER = {"machinery": "gnubg:plies=0", "player": "heuristic"}


@dataclass(frozen=True)
class Figure:
    """One number with its standard error."""

    value: float
    se: float


def gnubg_figure(rollout: dict[str, Any], money: bool) -> Figure:
    """gnubg's compared figure: cubeless equity (money) or winning chance (match), its SE
    widened by the printed rounding."""
    value, se = (rollout["equity"] if money else
                 (rollout["chances"][0], rollout["chances_se"][0]))
    return Figure(value, math.hypot(se, PRINTED))


def our_figure(result: RolloutResult, money: bool) -> Figure:
    estimate = result.estimates["cubeless" if money else "win"]
    return Figure(estimate.mean, estimate.se)


def z_score(ours: Figure, theirs: Figure) -> float:
    spread = math.hypot(ours.se, theirs.se)
    difference = ours.value - theirs.value
    return difference / spread if spread > 0 else (0.0 if difference == 0 else math.inf)


def normal_two_sided(z: float) -> float:
    """P(|N(0,1)| >= |z|)."""
    return math.erfc(abs(z) / math.sqrt(2))


def chi_square_tail(x: float, k: int) -> float:
    """P(chi-square with ``k`` degrees of freedom >= ``x``) (regularised upper gamma)."""
    if x <= 0:
        return 1.0
    a, half = k / 2.0, x / 2.0
    if half < a + 1:  # series for the lower part
        term = total = 1.0 / a
        n = a
        for _ in range(500):
            n += 1
            term *= half / n
            total += term
            if term < total * 1e-15:
                break
        return max(0.0, 1.0 - total * math.exp(-half + a * math.log(half) - math.lgamma(a)))
    # continued fraction (Lentz) for the upper part
    b = half + 1 - a
    c, d = 1e300, 1 / b
    h = d
    for i in range(1, 500):
        an = -i * (i - a)
        b += 2
        d = an * d + b
        d = 1e-300 if abs(d) < 1e-300 else d
        c = b + an / c
        c = 1e-300 if abs(c) < 1e-300 else c
        d = 1 / d
        step = d * c
        h *= step
        if abs(step - 1) < 1e-15:
            break
    return math.exp(-half + a * math.log(half) - math.lgamma(a)) * h


def where(context: Context) -> str:
    if context.is_money:
        return f"money c{context.cube_value}" + ("" if context.cube_owner.name == "CENTRE"
                                                else f" {context.cube_owner.name.lower()[:3]}")
    return f"{context.my_score}-{context.opponent_score}/{context.match_length}" + (
        " cr" if context.crawford else "")


def select(records: list[dict[str, Any]], wanted: str) -> list[dict[str, Any]]:
    """The records named by ``wanted``: "all", or a comma list of Position IDs and kinds."""
    if wanted == "all":
        return records
    names = [name.strip() for name in wanted.split(",") if name.strip()]
    known = {record["id"] for record in records} | {record["kind"] for record in records}
    unknown = [name for name in names if name not in known]
    if unknown:
        kinds = sorted({record["kind"] for record in records})
        raise SystemExit(f"--positions: {', '.join(unknown)} is neither a Position ID of "
                         f"{DATA.name} nor a kind ({', '.join(kinds)}); "
                         f"`python bench/gnubg_rollouts.py` lists the set")
    return [record for record in records if record["id"] in names or record["kind"] in names]


def run(records: list[dict[str, Any]], settings: RolloutSettings,
        console: Console) -> list[RolloutResult]:
    """Our rollout of every record, one after the other in this process, with a progress bar."""
    results: list[RolloutResult] = []
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
               TimeElapsedColumn(), TimeRemainingColumn())
    try:
        with Progress(*columns, console=console, transient=True) as bar:
            task = bar.add_task("rollouts", total=len(records) * settings.trials)
            for record in records:
                done = len(results) * settings.trials
                bar.update(task, description=f"{record['kind']} {record['id']}")

                def progress(state: RolloutProgress, done: int = done) -> None:
                    bar.update(task, completed=done + state.trials)

                results.append(rollout_position(record["position"], record["context_obj"],
                                                settings, progress=progress))
                if not console.is_terminal:  # a log: one line per position instead of the bar
                    console.print(f"{len(results)}/{len(records)} {record['kind']} "
                                  f"{record['id']}: {results[-1].seconds:.0f} s")
    finally:
        close_players()  # the gnubg engine's process
    return results


def machinery_rows(records: list[dict[str, Any]],
                   results: list[RolloutResult]) -> list[dict[str, Any]]:
    rows = []
    for record, result in zip(records, results):
        money = record["context_obj"].is_money
        ours, theirs = our_figure(result, money), gnubg_figure(record["rollout"], money)
        z = z_score(ours, theirs)
        chance_z = {}
        for k, name in enumerate(("win", "win_gammon", "win_backgammon", "lose_gammon",
                                  "lose_backgammon")):
            mine = result.estimates[name]
            chance_z[name] = round(z_score(
                Figure(mine.mean, mine.se),
                Figure(record["rollout"]["chances"][k],
                       math.hypot(record["rollout"]["chances_se"][k], PRINTED))), 2)
        rows.append({"id": record["id"], "kind": record["kind"],
                     "context": where(record["context_obj"]),
                     "figure": "equity" if money else "win", "ours": asdict(ours),
                     "gnubg": asdict(theirs), "difference": ours.value - theirs.value,
                     "z": z, "pass": abs(z) <= PASS_Z, "chance_z": chance_z,
                     "trials": result.trials, "se_gain_of_vr": result.se_gain(),
                     "mean_plies": round(result.plies, 1), "seconds": round(result.seconds, 1),
                     "rollout": result.to_json()})
    return rows


def machinery_summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    zs = [row["z"] for row in rows]
    n = len(zs)
    chi2 = sum(z * z for z in zs)
    mean_z = sum(zs) / n if n else 0.0
    passed = sum(1 for row in rows if row["pass"])
    return {"positions": n, "passed": passed, "expected_to_pass": round(n * 0.9545, 1),
            "chi_square": chi2, "chi_square_p": chi_square_tail(chi2, n),
            "mean_z": mean_z, "mean_z_p": normal_two_sided(mean_z * math.sqrt(n)) if n else 1.0}


def show_machinery(rows: list[dict[str, Any]], summary: dict[str, Any], console: Console,
                   settings: RolloutSettings) -> None:
    table = Table("id", "kind", "context", "fig", "ours ± SE", "gnubg ± SE", "diff", "z", "",
                  "VR", "plies", "s", title=f"bgbot's rollout played by {settings.player} "
                  f"({settings.trials} trials, seed {settings.seed}) vs gnubg's own rollout")
    for row in rows:
        ours, theirs = row["ours"], row["gnubg"]
        gain = row["se_gain_of_vr"]
        table.add_row(row["id"], row["kind"], row["context"], row["figure"],
                      f"{ours['value']:+.4f} ± {ours['se']:.4f}",
                      f"{theirs['value']:+.4f} ± {theirs['se']:.4f}",
                      f"{row['difference']:+.4f}", f"{row['z']:+.2f}",
                      "ok" if row["pass"] else "OUT",
                      f"{gain:.1f}x" if gain else "", f"{row['mean_plies']:.0f}",
                      f"{row['seconds']:.0f}")
    console.print(table)
    console.print(f"{summary['passed']} of {summary['positions']} within {PASS_Z:g} SE "
                  f"(expected by chance alone: {summary['expected_to_pass']}); "
                  f"sum of z^2 = {summary['chi_square']:.1f} on {summary['positions']} degrees "
                  f"of freedom (p = {summary['chi_square_p']:.3f}); mean z "
                  f"{summary['mean_z']:+.2f} (p = {summary['mean_z_p']:.3f})")


def player_rows(records: list[dict[str, Any]], results: list[RolloutResult],
                settings: RolloutSettings) -> list[dict[str, Any]]:
    rows = []
    for record, result in zip(records, results):
        position, context = record["position"], record["context_obj"]
        money = context.is_money
        # one value map for both sides: in match play gnubg's chances go through our MET too
        values = ValueMap(RolloutJob.of(position, context, settings).viewer_context)
        mine = result.estimates["cubeless"]
        chances = list(result.chances)
        reference = record["rollout"]
        row: dict[str, Any] = {
            "id": record["id"], "kind": record["kind"], "context": where(context),
            "units": values.units, "ours": mine.mean, "ours_se": mine.se,
            "ours_win": chances[0], "ours_win_se": result.estimates["win"].se,
            "trials": result.trials, "seconds": round(result.seconds, 1),
            "rollout": result.to_json()}
        for key, stored in (("gnubg_0ply", reference), ("gnubg_2ply", record.get("rollout_2ply"))):
            if stored is None:
                row[key] = None
                continue
            theirs = stored["equity"][0] if money else values.cubeless(stored["chances"])
            row[key] = {"equity": theirs, "se": stored["equity"][1] if money else None,
                        "win": stored["chances"][0], "win_se": stored["chances_se"][0],
                        "difference": mine.mean - theirs,
                        "win_difference": chances[0] - stored["chances"][0],
                        "pass": abs(mine.mean - theirs) <= PLAYER_BAR}
        evaluation = record["evaluation_2ply"]
        row["gnubg_2ply_evaluation"] = (evaluation["equity"] if money
                                        else values.cubeless(evaluation["chances"]))
        rows.append(row)
    return rows


def player_summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key in ("gnubg_0ply", "gnubg_2ply"):
        compared = [row[key] for row in rows if row[key] is not None]
        if not compared:
            continue
        differences = [item["difference"] for item in compared]
        out[key] = {"positions": len(compared),
                    "within_bar": sum(1 for item in compared if item["pass"]),
                    "mean_difference": sum(differences) / len(differences),
                    "mean_abs_difference": sum(abs(d) for d in differences) / len(differences),
                    "worst": max(differences, key=abs)}
    return out


def show_player(rows: list[dict[str, Any]], summary: dict[str, Any], console: Console,
                settings: RolloutSettings) -> None:
    table = Table("id", "kind", "context", "ours", "win", "gnubg 0-ply ro", "diff", "",
                  "Δwin", "gnubg 2-ply ro", "diff", "", "2-ply eval",
                  title=f"bgbot's rollout by {settings.player} ({settings.trials} trials, "
                        f"seed {settings.seed}) vs gnubg's rollouts (cubeless equity; match: "
                        "EMG of the chances, one MET for both)")
    for row in rows:
        cells = [row["id"], row["kind"], row["context"],
                 f"{row['ours']:+.4f}" + (f" ± {row['ours_se']:.4f}" if row["ours_se"] else ""),
                 f"{row['ours_win']:.4f}"]
        for key in ("gnubg_0ply", "gnubg_2ply"):
            item = row[key]
            if item is None:
                cells += ["", "", ""] + ([""] if key == "gnubg_0ply" else [])
                continue
            cells += [f"{item['equity']:+.4f}" + (f" ± {item['se']:.4f}" if item["se"] else ""),
                      f"{item['difference']:+.4f}", "ok" if item["pass"] else "MISS"]
            if key == "gnubg_0ply":
                cells.append(f"{item['win_difference']:+.4f}")
        cells.append(f"{row['gnubg_2ply_evaluation']:+.4f}")
        table.add_row(*cells)
    console.print(table)
    for key, label in (("gnubg_0ply", "gnubg's 0-ply rollouts"),
                       ("gnubg_2ply", "gnubg's 2-ply-chequer rollouts")):
        if key in summary:
            item = summary[key]
            console.print(f"vs {label}: {item['within_bar']} of {item['positions']} within "
                          f"{PLAYER_BAR:g}; mean difference {item['mean_difference']:+.4f}, "
                          f"mean |difference| {item['mean_abs_difference']:.4f}, worst "
                          f"{item['worst']:+.4f}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     epilog=__doc__[__doc__.index("Usage:"):],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mode", choices=("machinery", "player"), default="machinery",
                        help="machinery: gnubg's player through our rollout, z-tests (default); "
                             "player: our player against gnubg's rollouts, the 0.03 bar")
    parser.add_argument("--positions", default="all",
                        help="'all' (default) or a comma list of Position IDs and kinds of the "
                             "set, e.g. race,bearoff or vy8KAgDr7jIAAA")
    parser.add_argument("--trials", type=int, default=None,
                        help="our trials per position, a multiple of 36 (default 216 in "
                             "machinery, 1296 in player)")
    parser.add_argument("--player", default=None,
                        help="the agent spec that plays our rollouts (default gnubg:plies=0 in "
                             "machinery, heuristic in player)")
    parser.add_argument("--seed", type=int, default=2,
                        help="our dice seed (default 2; gnubg's reference used its own seed 1)")
    parser.add_argument("--data", type=Path, default=DATA, help="the reference set")
    parser.add_argument("--json", action="store_true", help="end with one JSON line")
    args = parser.parse_args(argv)
    stream = sys.stderr if args.json else sys.stdout
    console = Console(stderr=args.json, width=None if stream.isatty() else 180)
    try:
        settings = RolloutSettings(player=args.player or DEFAULT_PLAYER[args.mode],
                                   trials=args.trials or DEFAULT_TRIALS[args.mode],
                                   seed=args.seed, cubeful=False, vr=True)
    except ValueError as exc:
        raise SystemExit(f"bad setting: {exc}") from None
    header, records = load(args.data)
    chosen = select(records, args.positions)
    console.print(f"{len(chosen)} positions of {args.data.name} (gnubg {header.get('gnubg')}); "
                  f"ours: {settings.player}, {settings.trials} trials, cubeless, VR, full games, "
                  f"seed {settings.seed}; C extension: {extension_status()}")
    started = time.perf_counter()
    results = run(chosen, settings, console)
    if args.mode == "machinery":
        rows = machinery_rows(chosen, results)
        summary = machinery_summary(rows)
        show_machinery(rows, summary, console, settings)
    else:
        rows = player_rows(chosen, results, settings)
        summary = player_summary(rows)
        show_player(rows, summary, console, settings)
    seconds = time.perf_counter() - started
    console.print(f"{seconds:.0f} s")
    if args.json:
        print(json.dumps({"mode": args.mode, "player": settings.player, "trials": settings.trials,
                          "seed": settings.seed, "seconds": round(seconds, 1), "rows": rows,
                          "summary": summary}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
