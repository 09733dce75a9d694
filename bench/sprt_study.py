"""Simulation study: do `bgbot.referee.sprt.Sprt`'s error rates hold for paired backgammon results?

`bgbot duel --sprt` may only be used once this study passes (`SPRT_VALIDATED`). It runs many
simulated duels whose true mean ppg is known and counts how often the test decides wrongly:

* false positive rate = P(verdict H1 | true mean = ppg0), must be <= alpha;
* false negative rate = P(verdict H0 | true mean = ppg1), must be <= beta;

each within a Monte-Carlo margin of 3 standard errors of the nominal rate (``margin`` in the
table). It also reports the average number of pairs the SPRT needs and, for comparison, the
pairs a fixed-sample one-sided z-test needs for the same alpha and beta,
``n = ((z_{1-alpha} + z_{1-beta}) * sd / (ppg1 - ppg0))^2`` (sd = standard deviation of one
pair's points per game).

Pair models (a pair = two cubeless money games on the same dice, seats swapped; its points are
A's net points over both games, an integer in -6..6):

* ``mirrored``: the empirical distribution of pair totals of heuristic:plies=0 (A) against
  pubeval, 3,000 real mirrored pairs (``--collect 3000`` regenerates the counts below).
  The pairing correlation is in the data itself.
* ``independent``: two independent games from the same per-game outcome mix (no pairing
  benefit: more variance, different shape).
* ``cubeful``: the mirrored pairs with a cube turned: each pair's points doubled with
  probability 0.3 and quadrupled with 0.05 (heavier tails than any cubeless data).

Each model is shifted to a target mean by exponential tilting, p'(x) ∝ p(x) exp(theta x), with
theta chosen so the mean is exactly the target: the support and the rough shape stay, the
mean moves. Duels are truncated at ``TRUNCATE`` x the fixed-sample size (an undecided duel counts
as neither error; the table shows how many there were).

Usage::

    python bench/sprt_study.py --quick      # < 20 s, a smoke test (tests/test_sprt.py runs it)
    python bench/sprt_study.py              # the full study (minutes); exit 1 if it fails
    python bench/sprt_study.py --real 10    # also: 10 real sequential duels heuristic vs pubeval
    python bench/sprt_study.py --collect 3000   # regenerate the pair counts from real games
    python bench/sprt_study.py --luck 150   # interval width with / without luck adjustment
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import time
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from statistics import NormalDist
from typing import Callable, Sequence

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bgbot.referee.sprt import Sprt, SprtConfig  # noqa: E402

# Pair totals (A = heuristic:plies=0, B = pubeval; cubeless money; mirrored pairs, seed 2024,
# 3,000 pairs = 6,000 games; `--collect 3000`, 385 s): {A's points over the pair: count}.
# ppg +0.1547, 95 % CI (+0.122, +0.188).
PAIR_COUNTS: dict[int, int] = {
    -4: 43, -3: 187, -2: 330, -1: 270, 0: 938, 1: 334, 2: 530, 3: 284, 4: 75, 5: 9,
}
# Per-game outcomes of the same games from A's side: {points: count} (wins > 0, losses < 0).
# Singles 74.5 %, gammons 23.6 %, backgammons 1.9 %.
GAME_COUNTS: dict[int, int] = {-3: 30, -2: 625, -1: 2019, 1: 2449, 2: 793, 3: 84}

TRUNCATE = 20
"""A simulated duel stops undecided after this many times the fixed-sample size."""
MARGIN_SE = 3.0
"""Monte-Carlo margin on the error rates, in standard errors of the nominal rate."""


@dataclass(frozen=True)
class Model:
    """A distribution of pair points: values and probabilities (two games per pair)."""

    name: str
    values: tuple[float, ...]
    probs: tuple[float, ...]

    def mean(self) -> float:
        return sum(v * p for v, p in zip(self.values, self.probs))

    def sd(self) -> float:
        m = self.mean()
        return math.sqrt(sum(p * (v - m) ** 2 for v, p in zip(self.values, self.probs)))

    def tilted(self, pair_mean: float) -> Model:
        """Exponential tilting to exactly ``pair_mean`` (bisection on theta)."""
        def mean_at(theta: float) -> float:
            top = max(theta * v for v in self.values)
            w = [p * math.exp(theta * v - top) for v, p in zip(self.values, self.probs)]
            return sum(wi * v for wi, v in zip(w, self.values)) / sum(w)

        low, high = -20.0, 20.0
        for _ in range(200):
            mid = (low + high) / 2
            if mean_at(mid) < pair_mean:
                low = mid
            else:
                high = mid
        theta = (low + high) / 2
        top = max(theta * v for v in self.values)
        w = [p * math.exp(theta * v - top) for v, p in zip(self.values, self.probs)]
        total = sum(w)
        return Model(self.name, self.values, tuple(wi / total for wi in w))


def normalised(name: str, counts: dict[float, float]) -> Model:
    total = sum(counts.values())
    keys = sorted(counts)
    return Model(name, tuple(float(k) for k in keys), tuple(counts[k] / total for k in keys))


def mirrored_model() -> Model:
    return normalised("mirrored", {float(k): float(v) for k, v in PAIR_COUNTS.items()})


def independent_model() -> Model:
    games = normalised("game", {float(k): float(v) for k, v in GAME_COUNTS.items()})
    pairs: dict[float, float] = defaultdict(float)
    for v1, p1 in zip(games.values, games.probs):
        for v2, p2 in zip(games.values, games.probs):
            pairs[v1 + v2] += p1 * p2
    return normalised("independent", dict(pairs))


def cubeful_model() -> Model:
    base = mirrored_model()
    pairs: dict[float, float] = defaultdict(float)
    for v, p in zip(base.values, base.probs):
        pairs[v] += 0.65 * p
        pairs[2 * v] += 0.30 * p
        pairs[4 * v] += 0.05 * p
    return normalised("cubeful", dict(pairs))


MODELS: dict[str, Callable[[], Model]] = {
    "mirrored": mirrored_model,
    "independent": independent_model,
    "cubeful": cubeful_model,
}


def fixed_sample_pairs(config: SprtConfig, sd_pair_ppg: float) -> float:
    """Pairs a one-sided fixed-sample z-test needs for the same alpha and beta."""
    z = NormalDist().inv_cdf
    delta = abs(config.ppg1 - config.ppg0)
    return ((z(1 - config.alpha) + z(1 - config.beta)) * sd_pair_ppg / delta) ** 2


@dataclass
class Outcome:
    h0: int = 0
    h1: int = 0
    undecided: int = 0
    pairs: int = 0

    @property
    def duels(self) -> int:
        return self.h0 + self.h1 + self.undecided


def run_duels(model: Model, config: SprtConfig, duels: int, limit: int,
              rng: random.Random) -> Outcome:
    """``duels`` simulated duels on pairs drawn from ``model`` (already at its true mean)."""
    values = model.values
    cumulative: list[float] = []
    acc = 0.0
    for p in model.probs:
        acc += p
        cumulative.append(acc)
    out = Outcome()
    choices = rng.choices
    for _ in range(duels):
        sprt = Sprt(config)
        add = sprt.add
        while sprt.verdict is None and sprt.pairs < limit:
            for x in choices(values, cum_weights=cumulative, k=64):
                add(x, 2)
                if sprt.verdict is not None:
                    break
        verdict = sprt.verdict
        out.pairs += sprt.decided_at if sprt.decided_at is not None else sprt.pairs
        if verdict == "H0":
            out.h0 += 1
        elif verdict == "H1":
            out.h1 += 1
        else:
            out.undecided += 1
    return out


def study(models: Sequence[str], config: SprtConfig, duels: int, seed: int,
          extra_truths: bool) -> bool:
    """Run the study, print its table; True when every error rate is within its bound."""
    ok = True
    delta = config.ppg1 - config.ppg0
    print(f"SPRT H0 ppg={config.ppg0:+.3f}  H1 ppg={config.ppg1:+.3f}  alpha={config.alpha}"
          f"  beta={config.beta}  bounds={tuple(round(b, 3) for b in Sprt(config).bounds)}"
          f"  duels per row={duels}")
    header = (f"{'model':<12}{'true ppg':>9}{'P(H1)':>8}{'P(H0)':>8}{'undec':>7}"
              f"{'avg pairs':>11}{'fixed n':>9}{'error':>8}{'bound':>8}{'margin':>8}  ok")
    print(header)
    print("-" * len(header))
    for index, name in enumerate(models):
        base = MODELS[name]()
        fixed = fixed_sample_pairs(config, base.sd() / 2)
        limit = int(TRUNCATE * fixed) + 100
        truths: list[tuple[str, float]] = [("ppg0", config.ppg0), ("ppg1", config.ppg1)]
        if extra_truths:
            truths += [("mid", config.ppg0 + delta / 2), ("beyond", config.ppg1 + delta / 2)]
            if name == "mirrored":
                truths.append(("observed", base.mean() / 2))
        for label, truth in truths:
            model = base if label == "observed" else base.tilted(2 * truth)
            rng = random.Random(f"{seed}:{index}:{label}")
            out = run_duels(model, config, duels, limit, rng)
            p_h1, p_h0 = out.h1 / out.duels, out.h0 / out.duels
            row = (f"{name:<12}{truth:>+9.3f}{p_h1:>8.3f}{p_h0:>8.3f}{out.undecided:>7}"
                   f"{out.pairs / out.duels:>11.1f}{fixed:>9.0f}")
            if label in ("ppg0", "ppg1"):
                nominal = config.alpha if label == "ppg0" else config.beta
                error = p_h1 if label == "ppg0" else p_h0
                margin = MARGIN_SE * math.sqrt(nominal * (1 - nominal) / out.duels)
                passed = error <= nominal + margin and out.undecided <= 0.01 * out.duels
                ok &= passed
                row += f"{error:>8.3f}{nominal:>8.3f}{margin:>8.3f}  {'yes' if passed else 'NO'}"
            else:
                row += f"{'':>8}{'':>8}{'':>8}  ({label})"
            print(row, flush=True)
    return ok


def collect(pairs: int, seed: int) -> None:
    """Play ``pairs`` mirrored cubeless pairs heuristic:plies=0 vs pubeval; print the counts."""
    from bgbot.core.rules import Rules
    from bgbot.referee.series import SeriesConfig, run_series_sync

    start = time.time()
    tally, played = run_series_sync(SeriesConfig(
        "heuristic:plies=0", "pubeval", length=0, games=2 * pairs, mirror=True, seed=seed,
        rules=Rules(cube=False)))
    pair_counts = Counter(int(u) for u in tally.units)
    game_counts: Counter[int] = Counter()
    for match in played:
        for outcome in match.result.outcomes:
            game_counts[outcome.points if outcome.winner == 0 else -outcome.points] += 1
    print(f"# {tally.games} games in {time.time() - start:.0f} s; ppg {tally.ppg:+.4f}, "
          f"95% CI {tuple(round(x, 4) for x in tally.ppg_interval())}")
    print(f"PAIR_COUNTS = {dict(sorted(pair_counts.items()))}")
    print(f"GAME_COUNTS = {dict(sorted(game_counts.items()))}")


def real_duels(count: int, config: SprtConfig, seed: int) -> None:
    """Real sequential duels heuristic:plies=0 vs pubeval, pair by pair, until the verdict."""
    import asyncio

    from bgbot.core.rules import Rules
    from bgbot.referee.series import SeriesConfig, make_agents, run_series

    base = SeriesConfig("heuristic:plies=0", "pubeval", length=0, games=2, mirror=True,
                        seed=seed, rules=Rules(cube=False))
    fixed = fixed_sample_pairs(config, mirrored_model().sd() / 2)
    print(f"\nReal duels heuristic:plies=0 vs pubeval (cubeless mirrored pairs), "
          f"fixed-sample test needs {fixed:.0f} pairs")

    async def one(k: int) -> Sprt:
        sprt = Sprt(config)
        agents = make_agents(base)
        pair = 0
        while sprt.verdict is None and pair < 20 * fixed:
            cfg = SeriesConfig(base.agent_a, base.agent_b, length=0, games=2, mirror=True,
                               seed=seed * 1_000_003 + k * 100_003 + pair, rules=base.rules)
            tally, _ = await run_series(cfg, agents=agents)
            for points, games in zip(tally.units, tally.unit_games):
                sprt.add(points, games)
            pair += 1
        return sprt

    total = 0
    for k in range(count):
        start = time.time()
        sprt = asyncio.run(one(k))
        total += sprt.pairs
        print(f"duel {k + 1}: verdict {sprt.verdict} after {sprt.pairs} pairs, ppg "
              f"{sprt.ppg:+.3f}, llr {sprt.llr:.2f} ({time.time() - start:.0f} s)", flush=True)
    print(f"average {total / count:.0f} pairs (fixed-sample: {fixed:.0f})")


def luck_games(pairs: int, seed: int) -> list[tuple[int, float, float]]:
    """``pairs`` mirrored cubeless pairs heuristic:plies=0 (A) vs pubeval, played with a
    `LuckTracker` (heuristic judge): ``(pair index, A's points, A's luck-adjusted points)``
    for every game (two per pair index)."""
    from bgbot.core.rules import Rules
    from bgbot.referee.luck import LuckTracker, adjusted_points, heuristic_judge
    from bgbot.referee.series import SeriesConfig, run_series_sync

    judge = heuristic_judge()  # one judge, one cache: both games of a pair share positions
    trackers: dict[bool, LuckTracker] = {}

    def listeners(index: int, mirrored: bool, names: Sequence[str]) -> list[LuckTracker]:
        trackers[mirrored] = LuckTracker(judge)
        return [trackers[mirrored]]

    _, played = run_series_sync(SeriesConfig(
        "heuristic:plies=0", "pubeval", length=0, games=2 * pairs, mirror=True, seed=seed,
        rules=Rules(cube=False)), listeners=listeners)
    games: list[tuple[int, float, float]] = []
    for match in played:
        tracker = trackers[match.mirrored]
        for k, outcome in enumerate(match.result.outcomes):
            points = outcome.points if outcome.winner == 0 else -outcome.points
            luck_a, luck_b = tracker.game_luck(k + 1)
            games.append((k, float(points), adjusted_points(points, luck_a, luck_b)))
    return games


def pair_sums(games: Sequence[tuple[int, float, float]]) -> tuple[list[float], list[float]]:
    """Raw and adjusted points per pair (the two games with the same pair index)."""
    pairs = 1 + max(k for k, _, _ in games)
    raw, adjusted = [0.0] * pairs, [0.0] * pairs
    for k, points, adj in games:
        raw[k] += points
        adjusted[k] += adj
    return raw, adjusted


def interval(units: Sequence[float], games_per_unit: int = 2) -> tuple[float, float]:
    """(ppg, half-width of its 95 % interval) over units of ``games_per_unit`` games."""
    n = len(units)
    mean = sum(units) / n
    variance = sum((u - mean) ** 2 for u in units) / (n - 1)
    return mean / games_per_unit, 1.959964 * math.sqrt(variance / n) / games_per_unit


def luck_report(pairs: int, seed: int) -> None:
    """Interval width with and without luck adjustment on the same real games."""
    start = time.time()
    games = luck_games(pairs, seed)
    print(f"\nLuck adjustment, {pairs} mirrored cubeless pairs heuristic:plies=0 vs pubeval "
          f"(seed {seed}, judge: heuristic 0-ply, {time.time() - start:.0f} s)")
    raw, adjusted = pair_sums(games)
    views = [("pairs", raw, adjusted, 2),
             ("games (unpaired)", [g[1] for g in games], [g[2] for g in games], 1)]
    for label, plain, adj, per in views:
        ppg, half = interval(plain, per)
        ppg_adj, half_adj = interval(adj, per)
        ratio = half_adj / half
        print(f"{label:<17} raw ppg {ppg:+.4f} +/- {half:.4f}   adjusted {ppg_adj:+.4f} +/- "
              f"{half_adj:.4f}   width ratio {ratio:.3f}, variance -{1 - ratio ** 2:.1%}, "
              f"worth {1 / ratio ** 2:.1f}x the units")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="a < 20 s smoke run")
    parser.add_argument("--duels", type=int, help="simulated duels per row")
    parser.add_argument("--sprt", default="0,0.1,0.05,0.05", help="ppg0,ppg1[,alpha,beta]")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--models", default=",".join(MODELS), help="comma-separated models")
    parser.add_argument("--real", type=int, default=0, help="also run N real duels")
    parser.add_argument("--luck", type=int, default=0,
                        help="only measure the luck adjustment on N real pairs, then exit")
    parser.add_argument("--collect", type=int, default=0,
                        help="play N real pairs and print the pair counts, then exit")
    args = parser.parse_args(argv)
    if args.luck:
        luck_report(args.luck, seed=args.seed)
        return 0
    if args.collect:
        collect(args.collect, seed=2024)
        return 0
    config = SprtConfig.parse(args.sprt)
    models = [m for m in args.models.split(",") if m]
    for name in models:
        if name not in MODELS:
            parser.error(f"unknown model {name!r}; known: {', '.join(MODELS)}")
    if args.quick:
        duels = args.duels or 300
        models = models[:1]
    else:
        duels = args.duels or 2000
    start = time.time()
    ok = study(models, config, duels, args.seed, extra_truths=not args.quick)
    print(f"study {'PASSED' if ok else 'FAILED'} in {time.time() - start:.0f} s "
          f"(margin = {MARGIN_SE:g} standard errors of the nominal rate)")
    if args.real:
        real_duels(args.real, config, args.seed)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
