"""Tune the heuristic evaluator's contact weights from our own self-play games.

The shipped ``bgbot/players/heuristic_weights.py`` was produced by (about 25 minutes on 2 cores):

    python tools/train_heuristic.py --iterations 1 --games 8000 --seed 1 --out /tmp/w0.json
    python tools/train_heuristic.py --iterations 4 --games 2500 --seed 21 --lam 0.7 \
        --init /tmp/w0.json --out /tmp/w.json
    python tools/train_heuristic.py --convert /tmp/w.json --out bgbot/players/heuristic_weights.py

then recalibrated in place (132 s wall, 102 s CPU on 2 shared cores; 3,000 self-play games):

    python tools/train_heuristic.py --calibrate 3000 --seed 31 \
        --out bgbot/players/heuristic_weights.py

Calibration (``--calibrate``, heuristic-player.md §6.1): 0-ply self-play with the current
weights; the win head's logit is refitted on the outcomes as z' = a·z + b (a = 1.158,
b = +0.004: the head was slightly under-confident) and folded into its weights, and the race
model's spread s in P(win) = Φ((lead + 4) / (s √pips)) is refitted by maximum likelihood
(1.5 -> 0.952). The gammon heads' fits are recorded but not applied (``--calibrate-heads``):
refitting them on our own games cost about 0.015 ppg against pubeval.

Method (heuristic-player.md §3): play games with a behaviour policy, record every contact
position before the roll, and fit one L2-regularised logistic regression per output (win,
gammon, backgammon, lost gammon, lost backgammon) on the features of
``bgbot/players/features.py`` (Newton's method, numpy). Targets are λ-returns seen from the
player on roll: λ = 1 is the game's result (outcome regression); λ < 1 mixes in the current
evaluator's value of the later positions (TD(λ)-style; races and bear-offs then bootstrap from
the race model and the exact bear-off database). The first run plays pubeval self-play; later
iterations play the heuristic with the weights just fitted (Gaussian noise 0.02 for variety)
and refit on the data of the last two iterations. No gnubg output and no third-party weights
are used. The output records the command, seeds and data sizes.

Look-ahead targets (``--targets oneply``, heuristic-player.md §3.3 "amplified" estimator): each
contact position's target is ``--mix``·λ-return + (1 - ``--mix``)·its 1-ply value under the
weights that played the games (`one_ply_value`: the average over the roller's 21 rolls of the
0-ply chances after his best play), distilling the look-ahead into the 0-ply heads. About 13 ms
per position (2,000 games ≈ 80,000 positions ≈ 11 min on 2 cores). Tried for issue 3
(2026-11-29), starting from the shipped weights exported to JSON (/tmp/distil/base.json):

    python tools/train_heuristic.py --targets oneply --mix 0.25 --iterations 2 --games 2000 \
        --seed 41 --lam 0.7 --init /tmp/distil/base.json --out /tmp/distil/it2m25.json

(80,334 + 80,987 positions, seeds 41 and 1041; 1-ply targets from the shipped weights, then
from the first refit). Against pubeval, 0-ply (bench/strength.py --weights): seed 11, 2,000
pairs: +0.172 ± 0.041 vs +0.155 ± 0.040 for the shipped weights; seed 12, 5,000 pairs:
+0.185 ± 0.026 vs +0.173 ± 0.026; seed 11, 10,000 pairs: +0.169 ± 0.018 (shipped: +0.171).
No real gain, so those weights were not shipped. Mixes 0, 0.25 and 0.5 on the first
iteration's data, L2 towards the old weights (``--l2-to-init``) and a third iteration (seed
2041) screened no better.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bgbot.players.evaluator import (  # noqa: E402
    HEADS,
    RACE_SPREAD,
    RACE_SPREAD_KEY,
    WEIGHTS_MODULE,
    HeuristicEvaluator,
    load_weights,
)
from bgbot.players.features import FEATURE_NAMES, feature_vector  # noqa: E402
from bgbot.core.position import Position  # noqa: E402
from bgbot.players.heuristic import (  # noqa: E402
    PREFILTER_ABOVE,
    PREFILTER_KEEP,
    HeuristicPlayer,
    roll_average,
)
from bgbot.players.pubeval import PubevalPlayer  # noqa: E402
from tools.gameloop import play_game  # noqa: E402


def _flip(v: tuple[float, ...]) -> tuple[float, ...]:
    """Five outputs seen from the other side."""
    return (1.0 - v[0], v[3], v[4], v[1], v[2])


def one_ply_value(evaluator: HeuristicEvaluator, position: Position,
                  keep: int = PREFILTER_KEEP) -> tuple[float, ...]:
    """The roller's five chances in ``position`` before rolling, looked ahead one ply
    (`bgbot.players.heuristic.roll_average`, as ``HeuristicPlayer.cube_probabilities``; only
    pubeval's best ``keep`` plays of each roll are scored: by default those of the 0-ply
    player's prefilter, ``PREFILTER_KEEP`` when there are more than ``PREFILTER_ABOVE``)."""
    above = PREFILTER_ABOVE if keep == PREFILTER_KEEP else keep
    return tuple(roll_average(evaluator, position, keep=keep, above=above))


def _generate(job: tuple[int, int, str, str | None, float, float, str, int]
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Play ``count`` games from seed ``start``; return (features, λ-targets, 1-ply targets)
    of the contact turns.

    λ-targets are λ-returns of the five outputs (λ = 1: the game's result; λ < 1 mixes in the
    evaluator's value of later positions, races and bear-offs included, TD(λ)-style).
    1-ply targets (``targets`` = "oneply"; else a copy of the λ-targets) are `one_ply_value`
    of each contact position with the evaluator that played the games.
    """
    start, count, policy, weights_path, noise, lam, targets_mode, keep = job
    weights = load_weights(Path(weights_path)) if weights_path else None
    evaluator = HeuristicEvaluator(weights)
    if policy == "pubeval":
        players: list[Any] = [PubevalPlayer(), PubevalPlayer()]
    else:
        players = [
            # No pubeval prefilter: the shipped weights were trained before it existed.
            HeuristicPlayer(noise=noise, seed=start, evaluator=evaluator, prefilter=False),
            HeuristicPlayer(noise=noise, seed=start + 1, evaluator=evaluator, prefilter=False),
        ]
    rows: list[list[float]] = []
    labels: list[tuple[float, ...]] = []
    oneply: list[tuple[float, ...]] = []
    for seed in range(start, start + count):
        record: list[Any] = []
        winner, points, _ = play_game(players, seed, seed % 2, record)
        won0 = winner == 0
        outcome = (float(won0), float(won0 and points >= 2), float(won0 and points == 3),
                   float(not won0 and points >= 2), float(not won0 and points == 3))
        # Walk backwards: G_t = (1 - λ) v_{t+1} + λ G_{t+1}, all in seat 0's view.
        target: tuple[float, ...] = outcome
        targets: list[tuple[float, ...]] = [outcome] * len(record)
        for t in range(len(record) - 1, -1, -1):
            targets[t] = target
            if lam < 1.0:
                position, seat = record[t]
                value = tuple(evaluator.evaluate(position))
                v0 = value if seat == 0 else _flip(value)
                target = tuple((1.0 - lam) * a + lam * b for a, b in zip(v0, target))
        for (position, seat), target0 in zip(record, targets):
            if not position.is_contact():
                continue
            rows.append(feature_vector(position.mover, position.opponent))
            mine = target0 if seat == 0 else _flip(target0)
            labels.append(mine)
            oneply.append(one_ply_value(evaluator, position, keep) if targets_mode == "oneply"
                          else mine)
    return (np.asarray(rows, dtype=np.float64), np.asarray(labels, dtype=np.float64),
            np.asarray(oneply, dtype=np.float64))


def generate(games: int, seed: int, policy: str, weights: str | None, noise: float,
             workers: int, lam: float, targets: str = "lambda", keep: int = PREFILTER_KEEP
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """`_generate` over ``games`` games in chunks of 100 on ``workers`` processes."""
    chunk = 100
    jobs = [
        (seed * 10_000_019 + s, min(chunk, games - s), policy, weights, noise, lam, targets, keep)
        for s in range(0, games, chunk)
    ]
    with multiprocessing.Pool(workers) as pool:
        parts = pool.map(_generate, jobs)
    return (np.vstack([p[0] for p in parts]), np.vstack([p[1] for p in parts]),
            np.vstack([p[2] for p in parts]))


def _calibration_data(job: tuple[int, int, str | None]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Play ``count`` 0-ply self-play games from seed ``start`` with the given weights.

    Returns (contact logits of the five heads, race probits, outcomes) for every position before
    the roll, seen from the player on roll: contact rows have the heads' raw logits; race rows
    (no contact, not both sides home) have the race model's probit (lead + 4) / √(pip sum), with
    NaN in the other columns. Bear-off positions (exact database) are skipped.
    """
    start, count, weights_path = job
    evaluator = HeuristicEvaluator(load_weights(Path(weights_path)) if weights_path else None)
    player = HeuristicPlayer(evaluator=evaluator)
    logits: list[list[float]] = []
    probits: list[float] = []
    labels: list[tuple[float, ...]] = []
    for seed in range(start, start + count):
        record: list[Any] = []
        winner, points, _ = play_game([player, player], seed, seed % 2, record)
        for position, seat in record:
            won = winner == seat
            outcome = (float(won), float(won and points >= 2), float(won and points == 3),
                       float(not won and points >= 2), float(not won and points == 3))
            if position.is_contact():
                logits.append(evaluator.contact_logits(position))
                probits.append(float("nan"))
            elif any(position.mover[6:]) or any(position.opponent[6:]):
                logits.append([float("nan")] * 5)
                probits.append(evaluator.race_probit(position))
            else:
                continue
            labels.append(outcome)
    return np.asarray(logits), np.asarray(probits), np.asarray(labels)


def calibrate(games: int, seed: int, weights_path: str | None, workers: int,
              weights: dict[str, list[float]], heads: tuple[str, ...] = ("win",)
              ) -> tuple[dict[str, list[float]], float, dict[str, Any]]:
    """Recalibrate the evaluator on the outcomes of ``games`` 0-ply self-play games.

    Contact: for each head in ``heads``, a logistic fit of the outcome on the head's logit,
    z' = a·z + b, folded into the weights (all weights × a, bias × a + b); the other heads'
    fits are only reported. (Refitting the gammon heads on our own games lowered them towards
    our weak gammon play and cost 0.015 ppg against pubeval, so by default only "win" is.) Race: a probit fit of P(win) on the race
    model's (lead + 4) / √(pip sum) through the origin, giving the model's new spread. Returns
    (recalibrated weights, race spread, a report for the training record).
    """
    chunk = 100
    jobs = [(seed * 10_000_019 + s, min(chunk, games - s), weights_path)
            for s in range(0, games, chunk)]
    with multiprocessing.Pool(workers) as pool:
        parts = pool.map(_calibration_data, jobs)
    z = np.vstack([p[0] for p in parts])
    r = np.concatenate([p[1] for p in parts])
    y = np.vstack([p[2] for p in parts])
    contact = ~np.isnan(z[:, 0])
    out = {head: list(weights[head]) for head in HEADS}
    report: dict[str, Any] = {"games": games, "seed": seed, "contact_positions": int(contact.sum()),
                              "race_positions": int((~contact).sum()), "contact": {}}
    for k, head in enumerate(HEADS):
        x = np.column_stack([z[contact, k], np.ones(int(contact.sum()))])
        a, b = fit_logistic(x, y[contact, k], 0.0, np.array([1.0, 0.0]))
        applied = head in heads
        if applied:
            out[head] = [a * v for v in weights[head]]
            out[head][-1] += b
        report["contact"][head] = {"a": round(float(a), 4), "b": round(float(b), 4),
                                   "applied": applied}
        print(f"    contact {head:16s} z' = {a:.4f} z {b:+.4f}"
              f"{'' if applied else '  (not applied)'}", flush=True)
    # Race: maximise the probit likelihood of the win over one scale c, win = Φ(c · t).
    t, won = r[~contact], y[~contact, 0]
    from math import erfc, sqrt
    best_c, best_ll = 1.0, -1e300
    for c in np.linspace(0.5, 2.5, 201):
        p = np.clip(0.5 * np.vectorize(erfc)(-c * t / sqrt(2.0)), 1e-9, 1 - 1e-9)
        ll = float(np.sum(won * np.log(p) + (1 - won) * np.log(1 - p)))
        if ll > best_ll:
            best_c, best_ll = float(c), ll
    spread = 1.0 / best_c
    report["race_spread"] = round(spread, 4)
    print(f"    race: probit scale {best_c:.3f} -> spread {spread:.4f}", flush=True)
    return out, spread, report


def fit_logistic(x: np.ndarray, y: np.ndarray, l2: float, start: np.ndarray | None = None,
                 iterations: int = 25, prior: np.ndarray | None = None) -> np.ndarray:
    """L2-regularised logistic regression by Newton's method (the bias is not penalised).

    The penalty pulls the weights towards ``prior`` (zero when None)."""
    n, d = x.shape
    w = np.zeros(d) if start is None else start.copy()
    centre = np.zeros(d) if prior is None else prior
    penalty = np.full(d, l2 * n)
    penalty[-1] = 0.0
    for _ in range(iterations):
        z = np.clip(x @ w, -30, 30)
        p = 1.0 / (1.0 + np.exp(-z))
        grad = x.T @ (p - y) + penalty * (w - centre)
        s = p * (1.0 - p)
        hess = (x * s[:, None]).T @ x + np.diag(penalty) + 1e-9 * np.eye(d)
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.max(np.abs(step)) < 1e-6:
            break
    return w


def fit(x: np.ndarray, y: np.ndarray, l2: float, previous: dict[str, list[float]] | None,
        prior: dict[str, list[float]] | None = None) -> dict[str, list[float]]:
    """One logistic head per output on targets ``y`` (the race spread of ``previous`` kept;
    the L2 penalty pulls towards ``prior``'s weights when given, else towards zero)."""
    out = {}
    if previous and RACE_SPREAD_KEY in previous:
        out[RACE_SPREAD_KEY] = list(previous[RACE_SPREAD_KEY])
    for k, head in enumerate(HEADS):
        start = np.asarray(previous[head]) if previous else None
        w = fit_logistic(x, y[:, k], l2, start,
                         prior=np.asarray(prior[head]) if prior else None)
        z = np.clip(x @ w, -30, 30)
        p = 1.0 / (1.0 + np.exp(-z))
        eps = 1e-12
        loss = -np.mean(y[:, k] * np.log(p + eps) + (1 - y[:, k]) * np.log(1 - p + eps))
        print(f"    {head:16s} rate {y[:, k].mean():.4f}  log-loss {loss:.4f}", flush=True)
        out[head] = [float(v) for v in w]
    return out


def _spread(weights: dict[str, list[float]]) -> float:
    return weights[RACE_SPREAD_KEY][0] if RACE_SPREAD_KEY in weights else RACE_SPREAD


def save(weights: dict[str, list[float]], path: Path, meta: dict[str, Any]) -> None:
    data = {
        "comment": (
            "Contact weights of bgbot's heuristic evaluator, one logistic head per output, in "
            "'features' order. Produced by tools/train_heuristic.py (self-play outcome "
            "regression; see 'training'). No gnubg or third-party weights were used."
        ),
        "training": meta,
        "features": list(FEATURE_NAMES),
        "contact": {head: [round(v, 6) for v in weights[head]] for head in HEADS},
        "race_spread": round(_spread(weights), 6),
    }
    path.write_text(json.dumps(data, indent=1) + "\n")


def save_module(weights: dict[str, list[float]], path: Path, meta: dict[str, Any]) -> None:
    """Write the weights as the importable module ``bgbot/players/heuristic_weights.py``."""
    lines = [
        '"""Tuned contact weights of the heuristic evaluator (generated; do not edit by hand).',
        "",
        "Produced by tools/train_heuristic.py: logistic regression of the five outputs on the",
        "features of bgbot/players/features.py, with targets from our own self-play games",
        "(game results, and TD(λ)-style λ-returns of our evaluator's values). No gnubg or",
        "third-party weights were used. TRAINING records the commands, seeds and data sizes.",
        '"""',
        "",
        "from __future__ import annotations",
        "",
        "from typing import Any",
        "",
        f"TRAINING: dict[str, Any] = {json.dumps(meta, indent=1, ensure_ascii=False)}",
        "",
        f"RACE_SPREAD = {_spread(weights):.6f}",
        '"""Spread of the race model (evaluator.race_probabilities), fitted by --calibrate."""',
        "",
        "FEATURES: tuple[str, ...] = (",
        *(f"    {name!r}," for name in FEATURE_NAMES),
        ")",
        "",
        "CONTACT: dict[str, tuple[float, ...]] = {",
    ]
    for head in HEADS:
        lines.append(f"    {head!r}: (")
        values = [f"{v:.6f}" for v in weights[head]]
        for i in range(0, len(values), 8):
            lines.append("        " + ", ".join(values[i:i + 8]) + ",")
        lines.append("    ),")
    lines.append("}")
    text = "\n".join(lines) + "\n"
    text = text.replace(": true", ": True").replace(": false", ": False").replace(": null", ": None")
    path.write_text(text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=4)
    parser.add_argument("--games", type=int, default=12000, help="games per iteration")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--noise", type=float, default=0.02)
    parser.add_argument("--l2", type=float, default=1e-5)
    parser.add_argument("--lam", type=float, default=1.0,
                        help="λ of the λ-return targets (1 = plain outcome regression)")
    parser.add_argument("--targets", default="lambda", choices=["lambda", "oneply"],
                        help="lambda: λ-returns; oneply: the evaluator's 1-ply look-ahead value "
                        "of each position (distils the look-ahead into the 0-ply heads), mixed "
                        "with the λ-returns by --mix")
    parser.add_argument("--mix", type=float, default=0.0,
                        help="with --targets oneply: target = mix·λ-return + (1 - mix)·1-ply")
    parser.add_argument("--oneply-keep", type=int, default=PREFILTER_KEEP,
                        help="with --targets oneply: plays per roll scored (pubeval's best)")
    parser.add_argument("--l2-to-init", action="store_true",
                        help="the L2 penalty pulls towards the --init weights, not zero")
    parser.add_argument("--save-data", default=None,
                        help="save the first iteration's data (features, both targets) as .npz")
    parser.add_argument("--load-data", default=None,
                        help="use this --save-data file (or comma-separated files, stacked) as "
                        "the first iteration's data instead of playing (the same seeds and "
                        "options give the same data)")
    parser.add_argument("--out", default=str(WEIGHTS_MODULE),
                        help="where the final weights go: a .py module (the shipped form) or "
                        ".json; iterations are saved next to it as <out>.iter.json")
    parser.add_argument("--start-policy", default="pubeval", choices=["pubeval", "heuristic"])
    parser.add_argument("--init", default=None,
                        help="start from this weights JSON (continue an earlier run)")
    parser.add_argument("--calibrate", type=int, default=0, metavar="GAMES",
                        help="only recalibrate the --init weights (or the shipped ones) on GAMES "
                        "0-ply self-play games and write them as --out")
    parser.add_argument("--calibrate-heads", default="win",
                        help="comma-separated heads whose recalibration is applied")
    parser.add_argument("--convert", default=None,
                        help="only rewrite this weights JSON as --out (e.g. the .py module)")
    args = parser.parse_args()
    out = Path(args.out)
    if args.convert:
        data = json.loads(Path(args.convert).read_text())
        converted = load_weights(Path(args.convert))
        meta = dict(data.get("training", {}))
        meta["converted_from"] = args.convert
        (save_module if out.suffix == ".py" else save)(converted, out, meta)
        print(f"wrote {out}")
        return
    if args.calibrate:
        t = time.perf_counter()
        start = load_weights(Path(args.init)) if args.init else load_weights()
        if not args.init:
            from bgbot.players.evaluator import load_race_spread
            start[RACE_SPREAD_KEY] = [load_race_spread()]
        previous_meta: dict[str, Any] = (
            json.loads(Path(args.init).read_text()).get("training", {}) if args.init else
            dict(getattr(__import__("bgbot.players.heuristic_weights",
                                    fromlist=["TRAINING"]), "TRAINING", {})))
        calibrated, spread, report = calibrate(args.calibrate, args.seed, args.init,
                                               args.workers, start,
                                               tuple(args.calibrate_heads.split(",")))
        calibrated[RACE_SPREAD_KEY] = [spread]
        report["command"] = " ".join(sys.argv)
        report["seconds"] = round(time.perf_counter() - t)
        meta = dict(previous_meta)
        meta["calibration"] = report
        (save_module if out.suffix == ".py" else save)(calibrated, out, meta)
        print(f"wrote {out} ({report['seconds']} s)")
        return
    tmp = out.with_suffix(".iter.json")
    history: list[tuple[np.ndarray, np.ndarray]] = []
    weights: dict[str, list[float]] | None = None
    log: list[dict[str, Any]] = []
    prior: dict[str, list[float]] | None = None
    if args.init:
        weights = prior = load_weights(Path(args.init))
        previous = json.loads(Path(args.init).read_text()).get("training", {})
        log = list(previous.get("iterations", []))
        log.append({"continued_from": args.init, "command": previous.get("command")})
        save(weights, tmp, {"iterations": log})
    for iteration in range(args.iterations):
        t = time.perf_counter()
        policy = args.start_policy if iteration == 0 and weights is None else "heuristic"
        if iteration == 0 and args.load_data:
            loaded = [np.load(name) for name in args.load_data.split(",")]
            x, y_lam, y_one = (np.vstack([d[key] for d in loaded])
                               for key in ("x", "y_lambda", "y_oneply"))
        else:
            x, y_lam, y_one = generate(args.games, args.seed + 1000 * iteration, policy,
                                       str(tmp) if weights else None, args.noise, args.workers,
                                       args.lam, args.targets, args.oneply_keep)
        if iteration == 0 and args.save_data:
            np.savez_compressed(args.save_data, x=x, y_lambda=y_lam, y_oneply=y_one)
        y = y_lam if args.targets == "lambda" else args.mix * y_lam + (1.0 - args.mix) * y_one
        history = (history + [(x, y)])[-2:]
        xs = np.vstack([h[0] for h in history])
        ys = np.vstack([h[1] for h in history])
        print(f"iteration {iteration}: {policy} {args.games} games, {len(x)} contact positions "
              f"({time.perf_counter() - t:.0f} s); fitting on {len(xs)}", flush=True)
        weights = fit(xs, ys, args.l2, weights, prior if args.l2_to_init else None)
        entry: dict[str, Any] = {}
        if args.targets != "lambda":
            entry = {"targets": args.targets, "mix": args.mix, "oneply_keep": args.oneply_keep}
        log.append({"iteration": iteration, "policy": policy, "games": args.games,
                    "lambda": args.lam, **entry,
                    "seed": args.seed + 1000 * iteration, "positions": int(len(x)),
                    "fitted_on": int(len(xs))})
        towards = " towards the --init weights" if args.l2_to_init else ""
        method = (f"logistic regression on λ-return targets (λ = {args.lam}; 1 = outcomes), "
                  f"Newton, L2 {args.l2}{towards}")
        if args.targets == "oneply":
            method = (f"logistic regression on {1 - args.mix:g}·(1-ply look-ahead value) + "
                      f"{args.mix:g}·(λ-return, λ = {args.lam}), Newton, L2 {args.l2}{towards}")
        meta = {"command": " ".join(sys.argv), "method": method,
                "noise": args.noise, "iterations": log}
        save(weights, tmp, meta)
    assert weights is not None
    if out.suffix == ".py":
        save_module(weights, out, meta)
    else:
        save(weights, out, meta)
    tmp.unlink(missing_ok=True)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
