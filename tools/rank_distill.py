"""Teach the contact network to rank a move's candidates as the 1-ply look-ahead ranks them.

The 0-ply player chooses the candidate the network values best, so what its play needs is the
right *order* of a roll's candidates, not their absolute values. TD on self-play has
levelled off (training/README); the 1-ply player errs about a third less on gnubg-judged
positions (3.3 against 5.1 milli-points a decision). This tool distils that ranking into the
network, with no gnubg output and no outside weights:

``label``  plays 0-ply self-play games with the network (in C, seeded per chunk), draws one
           roll at every recorded contact position, keeps that roll's best ``--candidates``
           plays by 0-ply and labels each with the network's own 1-ply value of it
           (`Mlp.one_ply`: every reply of the other side looked at). It also keeps the
           network's 0-ply chances of each candidate. One ``chunk_NNNNN.npz`` per chunk in
           ``--out``, written whole or not at all, so an interrupted run resumes. ``--depth
           2`` labels by the 2-ply player's look-ahead instead (`Mlp.two_ply`), about 20
           times the cost a candidate.
``fit``    starts from ``--init`` (a fresh optimiser) and minimises, over batches of whole
           decisions, ``--self`` x the cross-entropy to the network's own 0-ply chances (it
           keeps the values' level and gammon rates where they were: a 1-ply label sits
           +0.015 above 0-ply for the side on roll, the odd-even effect) plus ``--rank`` x
           the mean square of the candidates' equities centred in their decision minus the
           labels' centred the same way (only the order inside a decision is taught). The
           running mean of the weights from epoch ``--average-from`` on is written to
           ``--out``. Each epoch prints, on held-out decisions, the centred RMS and the
           regret: the teacher's best minus its value of the network's choice. ``--hidden``
           widens ``--init`` first (Net2Net: the same values to start from). It reads one
           folder of chunks or several, ``FOLDER:N`` counting each chunk of a folder N times.

Why the self term matters: with little of it (``--self 5``) the network chose better at 0-ply
but the 1-ply player valued its leaves worse (+0.28 milli-points a decision on the judged set).
With ``--self 25`` that cost fell to +0.05 ± 0.18 there while the 0-ply gain stayed, yet in play
the 1-ply player still lost 0.008 ± 0.006 a game against the shipped network, the 0-ply one won
0.006 ± 0.004 (training/README, the twentieth sitting). So it ships as the 0-ply player's
network only (the twenty-first sitting: against gnubg 0-ply −0.007 ± 0.005 luck-adjusted, where
the contact network made −0.024 on the same dice). The shipped file since the twenty-second
sitting adds 35,000 decisions labelled by the 2-ply player (``--depth 2``), each counted four
times (+0.004 ± 0.003 against the 1-ply-taught one; training/README has its exact recipe):

    python tools/rank_distill.py label --out labels/ --chunks 0-205 --workers 2   # 30 min
    python tools/rank_distill.py label --out deep/ --chunks 1000-1099 --games 10 \\
        --candidates 4 --depth 2 --workers 2                                      # 36 min
    # the 1-ply chunks once, each deep chunk but the last (held out) four times
    python tools/rank_distill.py fit labels/ deep/:4 --init bgbot/players/data/contact.bgw \\
        --out ranked.bgw --epochs 12 --lr 1e-4 --rank 10 --self 25 --average-from 4
    python tools/rank_distill.py ship ranked.bgw     # once it has passed its test

``ship`` installs the file as the network of the 0-ply player alone
(`network.SHIPPED_ZERO_PLY_FILE`): the agent ``heuristic`` at ``plies=0`` plays, doubles and
rolls out with it, while the 1-ply and 2-ply look-ahead keeps valuing its leaves with the
shipped contact network (each depth with the network that measured better at it).
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")  # one core per process, and reproducible sums

import argparse  # noqa: E402
import hashlib  # noqa: E402
import multiprocessing  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Callable, Sequence, TypeVar  # noqa: E402

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tools"))

from bgbot.core.position import Position  # noqa: E402
from bgbot.players.base import Probabilities  # noqa: E402
from bgbot.players.heuristic import TWO_PLY_REPLIES  # noqa: E402
from bgbot.players.network import WeightsFile  # noqa: E402
from train_network import (  # noqa: E402
    Model,
    _generate,
    _policy,
    _race_evaluator,
    encode,
    flip_chances,
    fold_impossible,
    install_shipped,
    model_of_weights,
    outcomes_from_chances,
    reshaped,
    smooth_targets,
)

OUTCOME_EQUITY = np.array([1, 2, 3, -1, -2, -3], dtype=np.float32)
"""Cubeless equity of each of the six exclusive outcomes (the model's output order)."""
J = TypeVar("J")
ROLL_SALT = 77
"""Chunk k draws its rolls from ``default_rng([k, ROLL_SALT])``; its games are played with the
seed ``--seed`` x 1,000,000 + k (so the labels' games are not a training run's games)."""


# ---------------------------------------------------------------------------------- label


def label_chunk(network: WeightsFile, chunk: int, games: int, candidates: int,
                seed: int, depth: int = 1) -> dict[str, np.ndarray]:
    """The decisions of one chunk of self-play games (see the module docstring): ``boards``
    [n x 50] (the side on roll after the move first), ``look`` and ``own`` [n x 5] (that side's
    chances by the look-ahead of ``depth`` plies and by 0-ply), ``decision`` [n] (which
    decision each candidate is of). Depth 2 is the 2-ply player's look-ahead
    (`heuristic.TWO_PLY_REPLIES`), about 20 times the cost of depth 1 a candidate."""
    policy = _policy(network.parameters, network.hidden, None)
    race = _race_evaluator()._race_sides
    boards = _generate((network.parameters, network.hidden, None, seed * 1_000_000 + chunk,
                        games, 0.0, 0, 0))[0]
    rng = np.random.default_rng([chunk, ROLL_SALT])
    rows: list[bytes] = []
    look: list[Sequence[float]] = []
    own: list[Sequence[float]] = []
    decision: list[int] = []
    count = 0
    for side in np.frombuffer(boards, np.uint8).reshape(-1, 2, 25):
        roll = int(rng.integers(36))
        plays = policy.plays(side[0].tolist(), side[1].tolist(), roll // 6 + 1, roll % 6 + 1,
                             race)
        if len(plays) < 2:
            continue  # nothing to rank
        plays.sort(key=lambda play: -Probabilities(*play[3]).equity())
        for _, mover, other, zero in plays[:candidates]:
            rows.append(bytes(other) + bytes(mover))
            look.append(policy.one_ply(list(mover), list(other), race) if depth == 1
                        else policy.two_ply(list(mover), list(other), race, *TWO_PLY_REPLIES))
            own.append(zero)
            decision.append(count)
        count += 1
    return {"boards": np.frombuffer(b"".join(rows), np.uint8).reshape(-1, 50),
            "look": flip_chances(np.array(look, dtype=np.float64)),
            "own": flip_chances(np.array(own, dtype=np.float64)),
            "decision": np.array(decision, dtype=np.int32)}


def write_chunk(target: Path, found: dict[str, np.ndarray]) -> None:
    """Write a chunk's arrays to ``target`` whole or not at all (a ``.partial.npz`` renamed
    into place), so that a stopped labelling run resumes at the first chunk missing."""
    partial = target.with_name(target.name.replace(".npz", ".partial.npz"))
    np.savez(partial, **found)  # type: ignore[arg-type]
    partial.rename(target)


def run_jobs(work: Callable[[J], str], jobs: Sequence[J], workers: int) -> None:
    """Run labelling jobs, on ``workers`` spawned processes when more than one, printing each
    job's line as it finishes."""
    if workers > 1:
        with multiprocessing.get_context("spawn").Pool(workers) as pool:
            for line in pool.imap_unordered(work, jobs):
                print(line, flush=True)
    else:
        for job in jobs:
            print(work(job), flush=True)


def _label_job(job: tuple[Path, Path, int, int, int, int, int]) -> str:
    network_path, out, chunk, games, candidates, seed, depth = job
    target = out / f"chunk_{chunk:05d}.npz"
    if target.exists():
        return f"chunk {chunk}: already there"
    started = time.time()
    found = label_chunk(WeightsFile.read(network_path), chunk, games, candidates, seed, depth)
    write_chunk(target, found)
    return (f"chunk {chunk}: {int(found['decision'][-1]) + 1 if len(found['decision']) else 0}"
            f" decisions, {len(found['boards'])} candidates, {time.time() - started:.0f} s")


def _chunk_range(text: str) -> range:
    try:
        first, _, last = text.partition("-")
        low, high = int(first), int(last or first)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: give chunks as FIRST-LAST, e.g. 0-179")
    if low < 0 or high < low:
        raise argparse.ArgumentTypeError(f"{text!r}: FIRST-LAST with 0 <= FIRST <= LAST")
    return range(low, high + 1)


def label(args: argparse.Namespace) -> None:
    args.out.mkdir(parents=True, exist_ok=True)
    marker = args.out / "depth"
    found = int(marker.read_text()) if marker.exists() else (
        1 if any(args.out.glob("chunk_*.npz")) else args.depth)
    if found != args.depth:  # resumed chunks would mix two teachers in one folder
        sys.exit(f"{args.out} holds labels of depth {found}, not --depth {args.depth}: "
                 "give each depth its own --out folder")
    network = WeightsFile.read(args.network)
    (args.out / "network.sha256").write_text(hashlib.sha256(network.to_bytes()).hexdigest()
                                             + f"  {args.network}\n")
    if args.depth != 1:  # the folder says what its labels are (depth 1 writes nothing more)
        (args.out / "depth").write_text(f"{args.depth}\n")
    jobs = [(args.network, args.out, k, args.games, args.candidates, args.seed, args.depth)
            for k in args.chunks]
    run_jobs(_label_job, jobs, args.workers)


# ------------------------------------------------------------------------------------ fit


class Decisions:
    """The contact candidates of a set of label chunks, each decision's rows together."""

    def __init__(self, files: Sequence[Path], smooth: float) -> None:
        boards, look, own, decision = [], [], [], []
        offset = 0
        for path in files:
            with np.load(path) as found:
                keep = np.array([Position._trusted(tuple(map(int, b[25:])),
                                                   tuple(map(int, b[:25]))).is_contact()
                                 for b in found["boards"]], dtype=bool)
                boards.append(found["boards"][keep])
                look.append(found["look"][keep])
                own.append(found["own"][keep])
                decision.append(found["decision"][keep] + offset)
                offset += int(found["decision"].max()) + 1 if len(found["decision"]) else 0
        all_boards = np.concatenate(boards)
        self.x, self.allowed = encode(all_boards.tobytes())
        self.look = self._targets(np.concatenate(look), smooth)
        self.own = self._targets(np.concatenate(own), smooth)
        # renumber the decisions 0..m-1 in order (a race candidate may have left a gap)
        _, self.decision = np.unique(np.concatenate(decision), return_inverse=True)
        self.starts = np.flatnonzero(np.r_[True, np.diff(self.decision) != 0])
        self.ends = np.r_[self.starts[1:], len(self.decision)]

    def _targets(self, chances: np.ndarray, smooth: float) -> np.ndarray:
        target = fold_impossible(outcomes_from_chances(chances), self.allowed)
        return smooth_targets(target, self.allowed, smooth).astype(np.float32)

    def __len__(self) -> int:
        return len(self.starts)

    def rows(self, decisions: np.ndarray) -> np.ndarray:
        return np.concatenate([np.arange(self.starts[d], self.ends[d]) for d in decisions])


def centred(values: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """Each value minus the mean of its group's (``groups``: 0..m-1 per row)."""
    sums = np.bincount(groups, weights=values)
    counts = np.bincount(groups)
    result: np.ndarray = values - (sums / np.maximum(counts, 1))[groups]
    return result


def ranking_figures(model: Model, data: Decisions) -> tuple[float, float]:
    """(centred RMS of the equities, regret in milli-points a decision) on ``data``: how far
    the network's order of each decision's candidates is from the 1-ply labels'."""
    p, _ = model.forward(data.x, data.allowed)
    mine = -(p @ OUTCOME_EQUITY)  # the mover's equity: the rows are the other side's
    truth = -(data.look @ OUTCOME_EQUITY)
    gap = centred(mine, data.decision) - centred(truth, data.decision)
    best = np.full(len(data), -np.inf)
    np.maximum.at(best, data.decision, truth)
    order = np.lexsort((-mine, data.decision))
    chosen = order[np.r_[True, np.diff(data.decision[order]) != 0]]
    regret = float((best[data.decision[chosen]] - truth[chosen]).mean())
    return float(np.sqrt((gap ** 2).mean())), 1000.0 * regret


def fit_epoch(model: Model, data: Decisions, rng: np.random.Generator, args: argparse.Namespace
              ) -> None:
    """One pass over the decisions in shuffled batches of ``--decisions`` whole decisions."""
    order = rng.permutation(len(data))
    for start in range(0, len(order), args.decisions):
        rows = data.rows(order[start:start + args.decisions])
        x, allowed = data.x[rows], data.allowed[rows]
        p, acts = model.forward(x, allowed)
        _, groups = np.unique(data.decision[rows], return_inverse=True)
        n, decisions = len(rows), int(groups.max()) + 1
        equity = p @ OUTCOME_EQUITY
        gap = centred(equity, groups) - centred(data.look[rows] @ OUTCOME_EQUITY, groups)
        # d(Σ gap²)/d equity_i = 2 gap_i (the centring's own term sums to 0);
        # d equity_i / d logit_ij = p_ij (equity of outcome j - equity_i)
        grad = args.self_weight * np.where(allowed, p - data.own[rows], 0.0) / n
        grad += (args.rank * 2.0 * gap / decisions)[:, None] * p * (
            OUTCOME_EQUITY[None, :] - equity[:, None])
        model.backward(acts, grad.astype(np.float32), args.lr, args.weight_decay,
                       args.output_decay)


def label_folders(text: str) -> tuple[Path, int]:
    """``FOLDER`` or ``FOLDER:N``: a folder of label chunks, each counted N times (1 if not
    given) in the fit."""
    folder, colon, copies = text.rpartition(":")
    if not colon or not copies.isdigit():
        return Path(text), 1
    if int(copies) < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: a folder is counted N >= 1 times, not {copies}")
    return Path(folder), int(copies)


def chunk_files(folder: Path) -> list[Path]:
    """The complete label chunks of ``folder`` in chunk order (an interrupted one left out)."""
    return [f for f in sorted(folder.glob("chunk_*.npz")) if not f.name.endswith(".partial.npz")]


def fit(args: argparse.Namespace) -> None:
    folders: list[tuple[Path, int]] = args.labels
    found = [(folder, copies, chunk_files(folder)) for folder, copies in folders]
    for folder, _, files in found:
        if not files:
            sys.exit(f"{folder} holds no label chunks (make them with: rank_distill.py label "
                     f"--out {folder})")
    last_folder, _, last_files = found[-1]
    if len(last_files) <= args.hold_out:
        sys.exit(f"{last_folder} has {len(last_files)} label chunks: need more than --hold-out "
                 f"{args.hold_out}, held out from the last folder (make them with: "
                 f"rank_distill.py label --out {last_folder})")
    cut = len(last_files) - args.hold_out
    # each chunk's copies together, in folder then chunk order (as one folder of copies sorts)
    train_files = [f for i, (_, copies, files) in enumerate(found)
                   for f in (files[:cut] if i == len(found) - 1 else files)
                   for _ in range(copies)]
    train = Decisions(train_files, args.smooth)
    held = Decisions(last_files[cut:], args.smooth) if args.hold_out else train
    print(f"{len(train):,} decisions ({len(train.x):,} candidates) to fit, {len(held):,} held "
          f"out", flush=True)
    init = WeightsFile.read(args.init)
    model = model_of_weights(init, args.seed, args.sd_floor)
    if args.hidden is not None:
        model = reshaped(model, args.hidden, args.seed, args.init)
    rms, regret = ranking_figures(model, held)
    print(f"start: centred RMS {rms:.5f}, regret {regret:.3f}", flush=True)
    rng = np.random.default_rng([args.seed, ROLL_SALT])
    for epoch in range(1, args.epochs + 1):
        started = time.time()
        fit_epoch(model, train, rng, args)
        if args.average_from and epoch >= args.average_from:
            model.fold_into_average()
        rms, regret = ranking_figures(model, held)
        print(f"epoch {epoch}: centred RMS {rms:.5f}, regret {regret:.3f} "
              f"({time.time() - started:.0f} s)", flush=True)
    provenance = {**init.provenance, "tool": "tools/rank_distill.py",
                  "rank_distill": {"init_sha256": hashlib.sha256(init.to_bytes()).hexdigest(),
                                   "labels": str(last_folder),
                                   "chunks": len(last_files),
                                   "epochs": args.epochs, "lr": args.lr, "rank": args.rank,
                                   "self": args.self_weight, "average_from": args.average_from,
                                   "seed": args.seed}}
    # only when given: a rebuild of the shipped file stays bit-identical
    if len(folders) > 1 or folders[0][1] > 1:
        provenance["rank_distill"]["labels"] = [f"{f}:{copies}" for f, copies in folders]
        provenance["rank_distill"]["chunks"] = [len(files) for _, _, files in found]
    if args.hidden is not None:
        provenance["rank_distill"]["hidden"] = list(model.hidden)
    layers = model.export(average=bool(args.average_from and model.average is not None))
    sha = WeightsFile.from_arrays(layers, provenance).write(args.out)
    print(f"wrote {args.out} (SHA-256 {sha[:16]}...)")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    lab = sub.add_parser("label", help="self-play decisions, candidates labelled by 1-ply")
    lab.add_argument("--out", type=Path, required=True, help="the folder of label chunks")
    lab.add_argument("--chunks", type=_chunk_range, default=range(0, 180),
                     help="which chunks, FIRST-LAST (each about 1,700 decisions; default 0-179)")
    lab.add_argument("--network", type=Path, default=ROOT / "bgbot/players/data/contact.bgw",
                     help="the network that plays, ranks and looks ahead (default: shipped)")
    lab.add_argument("--games", type=int, default=50, help="self-play games per chunk")
    lab.add_argument("--candidates", type=int, default=8,
                     help="the best N plays of each roll by 0-ply are labelled")
    lab.add_argument("--seed", type=int, default=11,
                     help="chunk k's games are played with the seed SEED x 1,000,000 + k")
    lab.add_argument("--depth", type=int, choices=(1, 2), default=1,
                     help="label each candidate by the 1-ply look-ahead (default) or by the "
                     "2-ply player's (about 20 times slower: 30 ms a candidate)")
    lab.add_argument("--workers", type=int, default=2)
    fit_parser = sub.add_parser("fit", help="fit a network to the labels' ranking")
    fit_parser.add_argument(
        "labels", type=label_folders, nargs="+", metavar="FOLDER[:N]",
        help="folders `label` wrote, each chunk of FOLDER:N counted N times (e.g. 1-ply labels "
             "once and 2-ply ones four times: `fit ones/ twos/:4`); --hold-out chunks are held "
             "out from the last folder")
    fit_parser.add_argument("--init", type=Path, default=ROOT / "bgbot/players/data/contact.bgw")
    fit_parser.add_argument("--out", type=Path, required=True, help="the weights file to write")
    fit_parser.add_argument("--hidden", type=lambda t: [int(w) for w in t.split(",")],
                            help="hidden layer widths above --init's (e.g. 192,192,192,192): "
                            "the network is widened first (Net2Net, the same play to start "
                            "from); default: --init's own layers")
    fit_parser.add_argument("--epochs", type=int, default=12)
    fit_parser.add_argument("--lr", type=float, default=1e-4, help="Adam step size")
    fit_parser.add_argument("--rank", type=float, default=10.0, help="weight of the ranking term")
    fit_parser.add_argument("--self", dest="self_weight", type=float, default=25.0,
                            help="weight of the cross-entropy to the network's own 0-ply chances")
    fit_parser.add_argument("--average-from", type=int, default=4,
                            help="write the mean of the weights after epochs N..last (0: the last)")
    fit_parser.add_argument("--decisions", type=int, default=64, help="decisions per batch")
    fit_parser.add_argument("--hold-out", type=int, default=1,
                            help="the last N chunks are not fitted, only measured on")
    fit_parser.add_argument("--weight-decay", type=float, default=0.01)
    fit_parser.add_argument("--output-decay", type=float, default=0.5)
    fit_parser.add_argument("--smooth", type=float, default=0.003)
    fit_parser.add_argument("--sd-floor", type=float, default=0.5)
    fit_parser.add_argument("--seed", type=int, default=40)
    ship_parser = sub.add_parser("ship", help="install a fitted network as the 0-ply player's "
                                 "(bgbot/players/data/contact-0ply.bgw; the look-ahead keeps "
                                 "contact.bgw)")
    ship_parser.add_argument("weights", type=Path, help="the file `fit` wrote")
    args = parser.parse_args(argv)
    if args.command == "ship":
        if WeightsFile.read(args.weights).provenance.get("tool") != "tools/rank_distill.py":
            sys.exit(f"{args.weights} was not written by rank_distill.py fit")
        install_shipped(args.weights, zero_ply=True)
    else:
        label(args) if args.command == "label" else fit(args)


if __name__ == "__main__":
    main()
