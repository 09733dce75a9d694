"""Teach the contact network the values of a stronger player's rollouts, where it errs most.

TD on the 0-ply player's games has levelled off and distilling a deeper player's *order* into
the 0-ply network has given what it gives (training/README). Two thirds of what bgbot's 0-ply
player gives away against gnubg's 0-ply lie in middle games with blots and in back games
(bench/README, ``chequer_judge.py score --by-plan``). This tool relabels positions of those
game plans only, by rollouts of the 1-ply player (truncated, variance-reduced), and fits the
network to them while holding it at its own values everywhere else. No gnubg output, no
outside weights.

``label``  plays 0-ply self-play games with ``--network`` (in C, seeded per chunk), keeps
           every ``--every``-th recorded contact position whose `position_class.game_plan` is
           one of ``--plans`` and rolls it out with ``--player`` (cubeless, ``--trials``,
           cut after ``--truncate`` plies and valued there by the player; the dice seeded by
           the board, so a label does not depend on the chunking). Every ``--control-every``-th
           other contact position is kept unlabelled: the fit holds the network's own values
           there. One ``chunk_NNNNN.npz`` per chunk in ``--out``, written whole or not at all,
           so a stopped run resumes where it stopped. ``--phase race`` labels the races
           outside the bear-off database instead (the self-play of the same network with the
           race formula, every recorded race; ``--plans`` race, no controls with
           ``--control-every 0``): the labels of a race network, which a played-out rollout
           by the 0-ply player gives in a third of a second.
``fit``    starts from ``--init`` (a fresh optimiser) and minimises ``--value`` x the
           cross-entropy of the labelled positions to their rollout chances plus ``--self`` x
           the cross-entropy of every position (labelled and control) to ``--init``'s own
           chances, with ``--anchor-decay`` pulling the weights towards ``--init``'s. Each
           epoch prints, on the held-out chunks, the labelled positions' equity RMS from their
           rollouts and the control positions' drift from the start. The running mean of the
           weights from epoch ``--average-from`` on is written to ``--out``. Race labels fit
           a race network (``--init`` a race or a contact network; one made for an earlier
           bgbot's inputs is carried over with zero weights on the later ones), and the race
           formula's RMS on the held-out labels is printed beside it.

    python tools/rollout_fit.py label --out labels/ --chunks 0-199 --workers 2
    python tools/rollout_fit.py fit labels/ --out valued.bgw
    python bench/rollout_benchmark.py score bench/data/rollout-benchmark.jsonl \\
        heuristic:plies=1 heuristic:plies=1,weights=valued.bgw --jobs 2

The labels cost what the player's rollout costs: about 1.0 s of one core a position with the
defaults (the 1-ply player, 36 trials of 4 plies).

Measured (training/README, the twenty-fourth sitting): on 8,743 such labels the shipped
network is 0.039 RMS from them; a fit learns the ones it is shown (0.039 -> 0.029 at a higher
step) and nothing reaches held-out positions (0.0387 -> 0.0384 by the defaults, the same on
half the labels), and the 1-ply player errs a little more on the rollout benchmark (+0.19 +-
0.22). In those positions the labels are mostly the 2-ply look-ahead's value (0.016 RMS
from it, 0.039 from the static one), which costs a fortieth as much. Kept as the tool that
measured it, and for labels by other players or plans.
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")  # one core per process, and reproducible sums

import argparse  # noqa: E402
import hashlib  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Sequence  # noqa: E402

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tools"))

from bgbot.core.context import Context  # noqa: E402
from bgbot.core.position import Position  # noqa: E402
from bgbot.players.evaluator import HeuristicEvaluator  # noqa: E402
from bgbot.players.network import WeightsError, WeightsFile  # noqa: E402
from bgbot.players.position_class import GAME_PLANS, game_plan  # noqa: E402
from bgbot.rollout import RolloutSettings, rollout_position  # noqa: E402
from bgbot.rollout.dice import mix64  # noqa: E402
from rank_distill import (  # noqa: E402
    OUTCOME_EQUITY,
    _chunk_range,
    chunk_files,
    run_jobs,
    write_chunk,
)
from train_network import (  # noqa: E402
    Model,
    _generate,
    encode,
    fold_impossible,
    model_of_weights,
    outcomes_from_chances,
    smooth_targets,
)

DEFAULT_PLANS = ("middle_game_blots", "back_game")
LABEL_SALT = 0x56414C55
"""Mixed into each labelled position's dice seed (with the board and ``--seed``)."""
GAME_SEED = 3_000_000
"""Chunk k's games are played with the seed ``--seed`` x 1,000,000 + GAME_SEED + k (not the
games of a training run or of rank_distill's labels)."""


# ---------------------------------------------------------------------------------- label


def _plans(text: str) -> tuple[str, ...]:
    plans = tuple(p.strip() for p in text.split(",") if p.strip())
    unknown = [p for p in plans if p not in GAME_PLANS]
    if not plans or unknown:
        what = f"no game plan {', '.join(map(repr, unknown))}" if unknown else "no game plan"
        raise argparse.ArgumentTypeError(
            f"{text!r}: {what}; give game plans separated by commas, of {', '.join(GAME_PLANS)}")
    return plans


def label_chunk(network: WeightsFile, chunk: int, args: argparse.Namespace
                ) -> dict[str, np.ndarray]:
    """The labelled and control positions of one chunk of self-play games (module docstring):
    ``boards`` [n x 50] (the side on roll first), ``look`` [n x 5] (its chances by the
    rollout), ``se`` [n] (the rollout equity's standard error), ``plan`` [n] (index in
    `GAME_PLANS`), ``controls`` [m x 50]."""
    # a contact run's self-play records contact positions; a race run's, played by the same
    # network with the race formula, records the races outside the bear-off database
    contact = None if args.phase == "contact" else (network.parameters, network.hidden,
                                                    args.phase)
    blob = network.parameters if contact is None else None
    records = _generate((blob, network.hidden, contact,
                         args.seed * 1_000_000 + GAME_SEED + chunk, args.games, 0.0, 0, 0))[0]
    settings = dict(player=args.player, trials=args.trials, truncate=args.truncate, vr=True,
                    cubeful=False)
    boards: list[bytes] = []
    look: list[list[float]] = []
    se: list[float] = []
    plan_index: list[int] = []
    controls: list[bytes] = []
    chosen = others = 0
    for k in range(len(records) // 50):
        board = records[50 * k:50 * k + 50]
        position = Position._trusted(tuple(board[25:]), tuple(board[:25]))
        if args.phase == "contact" and not position.is_contact():
            continue
        plan = game_plan(position)
        if plan not in args.plans:
            others += 1
            if args.control_every and others % args.control_every == 0:
                controls.append(board)
            continue
        chosen += 1
        if chosen % args.every:
            continue
        digest = int.from_bytes(hashlib.sha256(board).digest()[:8], "little")
        seed = mix64(args.seed ^ digest ^ LABEL_SALT) >> 1
        result = rollout_position(position, Context(), RolloutSettings(seed=seed, **settings))
        boards.append(board)
        look.append([result.estimates[name].mean for name in
                     ("win", "win_gammon", "win_backgammon", "lose_gammon", "lose_backgammon")])
        se.append(result.estimates["cubeless"].se)
        plan_index.append(GAME_PLANS.index(plan))
    return {"boards": np.frombuffer(b"".join(boards), np.uint8).reshape(-1, 50),
            "look": np.array(look, dtype=np.float64).reshape(-1, 5),
            "se": np.array(se, dtype=np.float64),
            "plan": np.array(plan_index, dtype=np.int8),
            "controls": np.frombuffer(b"".join(controls), np.uint8).reshape(-1, 50)}


def _label_job(job: tuple[Path, int, argparse.Namespace]) -> str:
    network_path, chunk, args = job
    target = args.out / f"chunk_{chunk:05d}.npz"
    if target.exists():
        return f"chunk {chunk}: already there"
    started = time.time()
    found = label_chunk(WeightsFile.read(network_path), chunk, args)
    write_chunk(target, found)
    return (f"chunk {chunk}: {len(found['boards'])} labelled, {len(found['controls'])} controls,"
            f" mean SE {found['se'].mean() if len(found['se']) else 0:.4f},"
            f" {time.time() - started:.0f} s")


def label(args: argparse.Namespace) -> None:
    args.out.mkdir(parents=True, exist_ok=True)
    network = WeightsFile.read(args.network)
    settings = {"network": str(args.network),
                "network_sha256": hashlib.sha256(network.to_bytes()).hexdigest(),
                "player": args.player, "trials": args.trials, "truncate": args.truncate,
                **({} if args.phase == "contact" else {"phase": args.phase}),
                "plans": list(args.plans), "every": args.every,
                "control_every": args.control_every, "games": args.games, "seed": args.seed}
    marker = args.out / "settings.json"
    if marker.exists() and json.loads(marker.read_text()) != settings:
        sys.exit(f"{args.out} holds labels made with other settings ({marker}): give these "
                 "labels their own --out folder, or the same options as before")
    marker.write_text(json.dumps(settings, indent=1) + "\n")
    jobs = [(args.network, k, args) for k in args.chunks]
    run_jobs(_label_job, jobs, args.workers)


# ------------------------------------------------------------------------------------ fit


class Labelled:
    """The labelled and control positions of a set of label chunks, encoded for the model."""

    def __init__(self, files: Sequence[Path], init: Model, smooth: float) -> None:
        boards, look, controls = [], [], []
        for path in files:
            with np.load(path) as found:
                boards.append(found["boards"])
                look.append(found["look"])
                controls.append(found["controls"])
        labelled = np.concatenate(boards)
        self.boards = labelled
        """The labelled positions (the side on roll first), as `label_chunk` keeps them."""
        self.n_labelled = len(labelled)
        self.x, self.allowed = encode(np.concatenate([labelled, *controls]).tobytes())
        target = fold_impossible(outcomes_from_chances(np.concatenate(look)),
                                 self.allowed[:self.n_labelled])
        self.look = smooth_targets(target, self.allowed[:self.n_labelled],
                                   smooth).astype(np.float32)
        self.own = init.forward(self.x, self.allowed)[0].astype(np.float32)
        """``--init``'s own outcome probabilities: what the self term holds."""

    def __len__(self) -> int:
        return len(self.x)


def figures(model: Model, data: Labelled) -> tuple[float, float]:
    """(equity RMS of the labelled positions from their rollouts, equity RMS of the control
    positions from ``--init``'s values) on ``data``."""
    p, _ = model.forward(data.x, data.allowed)
    equity = p @ OUTCOME_EQUITY
    labelled = equity[:data.n_labelled] - data.look @ OUTCOME_EQUITY
    drift = equity[data.n_labelled:] - data.own[data.n_labelled:] @ OUTCOME_EQUITY
    return (float(np.sqrt((labelled ** 2).mean())) if len(labelled) else 0.0,
            float(np.sqrt((drift ** 2).mean())) if len(drift) else 0.0)


def formula_rms(data: Labelled) -> float:
    """The equity RMS of the race formula (what a race network replaces) from the labels of
    ``data``'s labelled positions."""
    formula = HeuristicEvaluator(race_network=False).formula
    errors = [formula.evaluate_sides(tuple(map(int, board[:25])),
                                     tuple(map(int, board[25:]))).equity()
              - float(look @ OUTCOME_EQUITY)
              for board, look in zip(data.boards, data.look)]
    return float(np.sqrt(np.mean(np.square(errors)))) if errors else 0.0


def _init_network(path: Path) -> WeightsFile:
    """``--init``: a network of this bgbot's inputs, or of an earlier bgbot's (the first of
    today's inputs), carried over by `WeightsFile.with_prefix_inputs` with zero weights on the
    others (the TD race network of 2026-12-04 is such a file)."""
    try:
        return WeightsFile.read(path)
    except WeightsError as error:
        if not path.is_file():
            sys.exit(f"--init: {error}")
        try:
            carried = WeightsFile.with_prefix_inputs(path.read_bytes(), str(path))
        except WeightsError:
            sys.exit(f"--init: {error}")
    print(f"{path}: a network of an earlier bgbot's inputs, carried over with zero weights on "
          "the inputs added since", flush=True)
    return carried


def fit_epoch(model: Model, data: Labelled, rng: np.random.Generator, args: argparse.Namespace
              ) -> None:
    """One pass over every position in shuffled batches of ``--batch``."""
    order = rng.permutation(len(data))
    for start in range(0, len(order), args.batch):
        rows = order[start:start + args.batch]
        x, allowed = data.x[rows], data.allowed[rows]
        p, acts = model.forward(x, allowed)
        grad = args.self_weight * (p - data.own[rows])
        labelled = rows < data.n_labelled
        grad[labelled] += args.value * (p[labelled] - data.look[rows[labelled]])
        grad = np.where(allowed, grad, 0.0) / len(rows)
        model.backward(acts, grad.astype(np.float32), args.lr, args.weight_decay,
                       args.output_decay, args.anchor_decay)


def fit(args: argparse.Namespace) -> None:
    files = chunk_files(args.labels)
    if len(files) <= args.hold_out:
        sys.exit(f"{args.labels} has {len(files)} label chunks: need more than --hold-out "
                 f"{args.hold_out} (make them with: rollout_fit.py label --out {args.labels})")
    init = _init_network(args.init)
    settings = json.loads((args.labels / "settings.json").read_text())
    phase = settings.get("phase", "contact")
    if init.phase not in (phase, "contact"):
        what = "a contact network" if phase == "contact" else f"a {phase} or a contact network"
        sys.exit(f"--init {args.init} is a {init.phase} network: {phase} labels fit {what}")
    contact = None
    if phase != "contact":
        # a race network's input scaling is measured on the races of the self-play of the
        # contact network that made the labels' positions
        try:
            network = WeightsFile.read(Path(settings["network"]), phase="contact")
        except WeightsError as error:
            sys.exit(f"{args.labels}: the contact network its labels were made with is needed "
                     f"to fit a {phase} network ({error})")
        contact = (network.parameters, network.hidden, phase)
    model = model_of_weights(init, args.seed, args.sd_floor, contact)
    model.anchor = [p.copy() for p in model.params]
    cut = len(files) - args.hold_out
    train = Labelled(files[:cut], model, args.smooth)
    held = Labelled(files[cut:], model, args.smooth) if args.hold_out else train
    print(f"{train.n_labelled:,} labelled and {len(train) - train.n_labelled:,} control "
          f"positions to fit; held out {held.n_labelled:,} and "
          f"{len(held) - held.n_labelled:,}", flush=True)
    rms, drift = figures(model, held)
    print(f"start: labelled RMS {rms:.5f}, control drift {drift:.5f}", flush=True)
    if phase == "race":
        print(f"the race formula: labelled RMS {formula_rms(held):.5f}", flush=True)
    rng = np.random.default_rng([args.seed, LABEL_SALT])
    for epoch in range(1, args.epochs + 1):
        started = time.time()
        fit_epoch(model, train, rng, args)
        if args.average_from and epoch >= args.average_from:
            model.fold_into_average()
        rms, drift = figures(model, held)
        print(f"epoch {epoch}: labelled RMS {rms:.5f}, control drift {drift:.5f} "
              f"({time.time() - started:.0f} s)", flush=True)
    provenance = {**init.provenance, "tool": "tools/rollout_fit.py",
                  "rollout_fit": {"init_sha256": hashlib.sha256(init.to_bytes()).hexdigest(),
                                  "labels": str(args.labels), "chunks": len(files),
                                  "label_settings": settings, "epochs": args.epochs,
                                  "lr": args.lr, "value": args.value, "self": args.self_weight,
                                  "anchor_decay": args.anchor_decay,
                                  "average_from": args.average_from, "seed": args.seed}}
    layers = model.export(average=bool(args.average_from and model.average is not None))
    sha = WeightsFile.from_arrays(layers, provenance, phase).write(args.out)
    print(f"wrote {args.out} (SHA-256 {sha[:16]}...)")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    lab = sub.add_parser("label", help="rollout labels for the positions of some game plans")
    lab.add_argument("--out", type=Path, required=True, help="the folder of label chunks")
    lab.add_argument("--chunks", type=_chunk_range, default=range(0, 200),
                     help="which chunks, FIRST-LAST (default 0-199)")
    lab.add_argument("--network", type=Path, default=ROOT / "bgbot/players/data/contact.bgw",
                     help="the network whose self-play gives the positions (default: shipped)")
    lab.add_argument("--games", type=int, default=4, help="self-play games per chunk")
    lab.add_argument("--phase", choices=("contact", "race"), default="contact",
                     help="the positions self-play records: contact positions (default), or "
                     "races outside the bear-off database, for a race network")
    lab.add_argument("--plans", type=_plans, default=None,
                     help="game plans to label, comma-separated (default: "
                     f"{','.join(DEFAULT_PLANS)}; with --phase race: race)")
    lab.add_argument("--every", type=int, default=3,
                     help="label every N-th position of those plans (positions of one game "
                     "lie close together)")
    lab.add_argument("--control-every", type=int, default=4,
                     help="keep every N-th contact position of the other plans unlabelled "
                     "(0: none)")
    lab.add_argument("--player", default="heuristic:plies=1",
                     help="the agent spec that rolls out (default: the 1-ply player)")
    lab.add_argument("--trials", type=int, default=36, help="trials a position (a multiple of 36)")
    lab.add_argument("--truncate", type=int, default=4,
                     help="plies a trial plays before the player's evaluation ends it")
    lab.add_argument("--seed", type=int, default=29)
    lab.add_argument("--workers", type=int, default=2)
    fit_parser = sub.add_parser("fit", help="fit a network to the rollout labels")
    fit_parser.add_argument("labels", type=Path, help="the folder `label` wrote")
    fit_parser.add_argument("--init", type=Path, default=ROOT / "bgbot/players/data/contact.bgw")
    fit_parser.add_argument("--out", type=Path, required=True, help="the weights file to write")
    fit_parser.add_argument("--epochs", type=int, default=8)
    fit_parser.add_argument("--lr", type=float, default=5e-5, help="Adam step size")
    fit_parser.add_argument("--value", type=float, default=1.0,
                            help="weight of the cross-entropy to the rollout labels")
    fit_parser.add_argument("--self", dest="self_weight", type=float, default=1.0,
                            help="weight of the cross-entropy to --init's own chances")
    fit_parser.add_argument("--anchor-decay", type=float, default=50.0,
                            help="decoupled decay of every parameter towards --init's, a step")
    fit_parser.add_argument("--average-from", type=int, default=2,
                            help="write the mean of the weights after epochs N..last (0: last)")
    fit_parser.add_argument("--batch", type=int, default=128)
    fit_parser.add_argument("--hold-out", type=int, default=10,
                            help="the last N chunks are not fitted, only measured on")
    fit_parser.add_argument("--weight-decay", type=float, default=0.0)
    fit_parser.add_argument("--output-decay", type=float, default=0.0)
    fit_parser.add_argument("--smooth", type=float, default=0.003)
    fit_parser.add_argument("--sd-floor", type=float, default=0.5)
    fit_parser.add_argument("--seed", type=int, default=41)
    args = parser.parse_args(argv)
    if args.command == "label":
        if args.trials % 36 or args.trials < 36:
            parser.error(f"--trials {args.trials}: a multiple of 36")
        if args.control_every < 0:
            parser.error(f"--control-every {args.control_every}: 0 (none) or more")
        if args.plans is None:
            args.plans = DEFAULT_PLANS if args.phase == "contact" else ("race",)
        label(args)
    else:
        fit(args)


if __name__ == "__main__":
    main()
