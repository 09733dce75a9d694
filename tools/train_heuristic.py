"""Tune the heuristic evaluator's contact weights from our own self-play games.

The shipped ``bgbot/players/heuristic_weights.py`` was produced by (about 25 minutes on 2 cores):

    python tools/train_heuristic.py --iterations 1 --games 8000 --seed 1 --out /tmp/w0.json
    python tools/train_heuristic.py --iterations 4 --games 2500 --seed 21 --lam 0.7 \
        --init /tmp/w0.json --out /tmp/w.json
    python tools/train_heuristic.py --convert /tmp/w.json --out bgbot/players/heuristic_weights.py

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

from bgbot.players.evaluator import HEADS, WEIGHTS_MODULE, HeuristicEvaluator, load_weights  # noqa: E402
from bgbot.players.features import FEATURE_NAMES, feature_vector  # noqa: E402
from bgbot.players.heuristic import HeuristicPlayer  # noqa: E402
from bgbot.players.pubeval import PubevalPlayer  # noqa: E402
from tools.gameloop import play_game  # noqa: E402


def _flip(v: tuple[float, ...]) -> tuple[float, ...]:
    """Five outputs seen from the other side."""
    return (1.0 - v[0], v[3], v[4], v[1], v[2])


def _generate(job: tuple[int, int, str, str | None, float, float]
              ) -> tuple[np.ndarray, np.ndarray]:
    """Play ``count`` games from seed ``start``; return (features, targets) of contact turns.

    Targets are λ-returns of the five outputs (λ = 1: the game's result; λ < 1 mixes in the
    evaluator's value of later positions, races and bear-offs included, TD(λ)-style).
    """
    start, count, policy, weights_path, noise, lam = job
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
    for seed in range(start, start + count):
        record: list[Any] = []
        winner, points, _ = play_game(players, seed, seed % 2, record)
        won0 = winner == 0
        outcome = (float(won0), float(won0 and points >= 2), float(won0 and points == 3),
                   float(not won0 and points >= 2), float(not won0 and points == 3))
        # Walk backwards: G_t = (1 - λ) v_{t+1} + λ G_{t+1}, all in seat 0's view.
        target = outcome
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
            labels.append(target0 if seat == 0 else _flip(target0))
    return np.asarray(rows, dtype=np.float64), np.asarray(labels, dtype=np.float64)


def generate(games: int, seed: int, policy: str, weights: str | None, noise: float,
             workers: int, lam: float) -> tuple[np.ndarray, np.ndarray]:
    chunk = 100
    jobs = [
        (seed * 10_000_019 + s, min(chunk, games - s), policy, weights, noise, lam)
        for s in range(0, games, chunk)
    ]
    with multiprocessing.Pool(workers) as pool:
        parts = pool.map(_generate, jobs)
    return np.vstack([p[0] for p in parts]), np.vstack([p[1] for p in parts])


def fit_logistic(x: np.ndarray, y: np.ndarray, l2: float, start: np.ndarray | None = None,
                 iterations: int = 25) -> np.ndarray:
    """L2-regularised logistic regression by Newton's method (the bias is not penalised)."""
    n, d = x.shape
    w = np.zeros(d) if start is None else start.copy()
    penalty = np.full(d, l2 * n)
    penalty[-1] = 0.0
    for _ in range(iterations):
        z = np.clip(x @ w, -30, 30)
        p = 1.0 / (1.0 + np.exp(-z))
        grad = x.T @ (p - y) + penalty * w
        s = p * (1.0 - p)
        hess = (x * s[:, None]).T @ x + np.diag(penalty) + 1e-9 * np.eye(d)
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.max(np.abs(step)) < 1e-6:
            break
    return w


def fit(x: np.ndarray, y: np.ndarray, l2: float, previous: dict[str, list[float]] | None
        ) -> dict[str, list[float]]:
    out = {}
    for k, head in enumerate(HEADS):
        start = np.asarray(previous[head]) if previous else None
        w = fit_logistic(x, y[:, k], l2, start)
        z = np.clip(x @ w, -30, 30)
        p = 1.0 / (1.0 + np.exp(-z))
        eps = 1e-12
        loss = -np.mean(y[:, k] * np.log(p + eps) + (1 - y[:, k]) * np.log(1 - p + eps))
        print(f"    {head:16s} rate {y[:, k].mean():.4f}  log-loss {loss:.4f}", flush=True)
        out[head] = [float(v) for v in w]
    return out


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
    parser.add_argument("--out", default=str(WEIGHTS_MODULE),
                        help="where the final weights go: a .py module (the shipped form) or "
                        ".json; iterations are saved next to it as <out>.iter.json")
    parser.add_argument("--start-policy", default="pubeval", choices=["pubeval", "heuristic"])
    parser.add_argument("--init", default=None,
                        help="start from this weights JSON (continue an earlier run)")
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
    tmp = out.with_suffix(".iter.json")
    history: list[tuple[np.ndarray, np.ndarray]] = []
    weights: dict[str, list[float]] | None = None
    log: list[dict[str, Any]] = []
    if args.init:
        weights = load_weights(Path(args.init))
        previous = json.loads(Path(args.init).read_text()).get("training", {})
        log = list(previous.get("iterations", []))
        log.append({"continued_from": args.init, "command": previous.get("command")})
        save(weights, tmp, {"iterations": log})
    for iteration in range(args.iterations):
        t = time.perf_counter()
        policy = args.start_policy if iteration == 0 and weights is None else "heuristic"
        x, y = generate(args.games, args.seed + 1000 * iteration, policy,
                        str(tmp) if weights else None, args.noise, args.workers, args.lam)
        history = (history + [(x, y)])[-2:]
        xs = np.vstack([h[0] for h in history])
        ys = np.vstack([h[1] for h in history])
        print(f"iteration {iteration}: {policy} {args.games} games, {len(x)} contact positions "
              f"({time.perf_counter() - t:.0f} s); fitting on {len(xs)}", flush=True)
        weights = fit(xs, ys, args.l2, weights)
        log.append({"iteration": iteration, "policy": policy, "games": args.games,
                    "lambda": args.lam,
                    "seed": args.seed + 1000 * iteration, "positions": int(len(x)),
                    "fitted_on": int(len(xs))})
        meta = {"command": " ".join(sys.argv), "method": "logistic regression on λ-return "
                f"targets (λ = {args.lam}; 1 = outcomes), Newton, L2 {args.l2}",
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
