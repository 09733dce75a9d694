"""Train the heuristic player's evaluation network (bgbot/players/network.py) by self-play.

Self-play only (issue 14): no gnubg output and no third-party weights. Each iteration

1. plays ``--games`` games of the greedy 0-ply player against itself with the current network
   (iteration 1: today's linear evaluator, ``--start linear``, or a random network), in C
   (``bgbot.players._selfplay.selfplay``: dice from seeds derived from ``--seed``, the
   iteration and the chunk, so the data do not depend on ``--workers``), recording every
   contact position before the roll; ``--play-plies 1`` plays them at 1-ply instead (the 1-ply
   player's move filter; about 60 times slower), so the labels learn the value of its play;
2. labels each position with its λ-return (``--lam``): the mix, along the game, of the
   network's value of the next position and, at the end of the record, the game's result or,
   where contact ends, the race model's value (the exact bear-off database where it fits);
   with ``--oneply F`` a fraction F of the positions gets the network's own 1-ply look-ahead
   value (`roll_average`, in C) mixed in as well (``--oneply-mix``), and with
   ``--oneply-only`` only those positions are fitted (look-ahead distilled into the network);
   with ``--alternatives K`` the runners-up of each move (positions the play never visits,
   where candidates are ranked) are fitted too, a fraction ``--alt-fraction`` of them,
   labelled by their 1-ply value; ``--label-plies 2`` makes both look-ahead labels 2-ply
   (each roll's 0-ply play valued at 1-ply, as the 2-ply player looks: ~25 ms a position);
3. fits the network to those labels (cross-entropy over the six outcomes, Adam, ``--epochs``
   passes over the iteration's data; weights carried over from the previous iteration);
4. screens it against pubeval (``--screen`` mirrored pairs, in C) and writes a checkpoint;
   with ``--average-from K`` the running mean of the weights after each iteration from K on
   (stochastic weight averaging: the iterations' weights scatter around a better point) is
   kept in the checkpoint, written as ``average.bgw`` and screened instead of the latest.

Everything a run needs to continue is in its folder (``--run``): ``checkpoint.npz`` (weights,
optimiser state, input scaling, the iteration reached), ``state.json`` (the configuration,
seeds, data sizes and the screening history) and ``network.bgw`` (the latest network as a
weights file the player can load: ``heuristic:weights=RUN/network.bgw``). Starting the same
command again resumes after the last finished iteration, and ends bit-identical to a run that
was never interrupted (single-threaded BLAS, every random choice seeded). Ship a network with
``--ship`` (copies it to bgbot/players/data/ and records its checksum; ``--ship-which``
chooses the best screened, the average or the latest; ``window`` with ``--window-since M``
the mean of the weights after iterations M+1 to the last, from the running average the run
kept after M with ``--keep-averages-every``: the mean from iteration 1 lags behind a run that
still improves).

    python tools/train_network.py --run training/contact --iterations 40 --games 20000
    python tools/train_network.py --run training/contact --ship
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")  # one core per process, and reproducible sums

import argparse  # noqa: E402
import dataclasses  # noqa: E402
import functools  # noqa: E402
import hashlib  # noqa: E402
import json  # noqa: E402
import multiprocessing  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any, Callable, Sequence  # noqa: E402

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bgbot.players import _contact, _selfplay  # noqa: E402
from bgbot.players.base import Probabilities  # noqa: E402
from bgbot.players.evaluator import HeuristicEvaluator  # noqa: E402
from bgbot.players.features import ROLLS  # noqa: E402
from bgbot.players.heuristic import MOVE_FILTERS, TWO_PLY_REPLIES  # noqa: E402
from bgbot.players.network import (  # noqa: E402
    N_INPUTS,
    OUTCOMES,
    WeightsFile,
)
from bgbot.players.pubeval import CONTACT_WEIGHTS, RACE_WEIGHTS  # noqa: E402

N_OUT = len(OUTCOMES)
SHIP_DIR = ROOT / "bgbot" / "players" / "data"
CHUNK = 500
"""Games per generation job (the unit of seeding; independent of --workers)."""
CONFIG_DEFAULTS: dict[str, Any] = {"output_decay": 0.0, "smooth": 0.0, "average_from": 0,
                                   "init_which": "latest", "label_plies": 1,
                                   "label_keep": 0, "anchor_decay": 0.0, "play_plies": 0,
                                   "label_rollout": None}
"""Options added since runs were started, with the value a run started without them had."""


# ------------------------------------------------------------------------- self-play data

_WORKER: dict[str, Any] = {}


def _race_evaluator() -> HeuristicEvaluator:
    """The evaluator whose race model and bear-off database label the ends of contact."""
    if "race" not in _WORKER:
        _WORKER["race"] = HeuristicEvaluator()
    evaluator: HeuristicEvaluator = _WORKER["race"]
    return evaluator


PHASE_RECORDS = {"contact": 0, "race": 1, "crashed": 2}
"""The records self-play keeps for each phase a run trains (`_selfplay.selfplay`'s phase)."""
Contact = tuple[bytes, tuple[int, ...], str] | None
"""The fixed contact network of a race or crashed run (parameters, hidden widths, the phase
being trained), or None."""


def _policy(blob: bytes | None, hidden: tuple[int, ...], contact: Contact) -> Any:
    """The C evaluator that plays: in a contact run the network being trained (``blob``) or
    at first the linear heads; in a race (crashed) run the fixed contact network, with the race
    (crashed) network being trained (none at first: the race formulas, the contact
    network)."""
    if contact is not None:
        parameters, widths, phase = contact
        policy = _contact.Mlp(parameters, widths)
        if blob is not None:
            trained = _contact.Mlp(blob, hidden)
            if phase == "crashed":
                policy.set_crashed_network(trained)
            else:
                policy.set_race_network(trained)
        return policy
    if blob is None:
        return _race_evaluator()._net
    return _contact.Mlp(blob, hidden)


def _generate(job: tuple[bytes | None, tuple[int, ...], Contact, int, int, float, int, int]
              ) -> tuple[bytes, bytes, bytes, bytes]:
    """Self-play records of one chunk of games; ``play_plies`` 1 plays them at 1-ply (the
    1-ply player's move filter, `MOVE_FILTERS`), so the TD labels follow the 1-ply player's
    games."""
    blob, hidden, contact, seed, games, noise, alternatives, play_plies = job
    race = _race_evaluator()
    result: tuple[bytes, bytes, bytes, bytes] = _selfplay.selfplay(
        _policy(blob, hidden, contact), race._race_sides, seed, games, noise,
        phase=0 if contact is None else PHASE_RECORDS[contact[2]], alternatives=alternatives,
        search=MOVE_FILTERS[1][0] if play_plies else None)
    return result


def _roll_averages(job: tuple[bytes | None, tuple[int, ...], Contact, bytes]) -> bytes:
    blob, hidden, contact, boards = job
    race = _race_evaluator()
    values: bytes = _selfplay.roll_averages(_policy(blob, hidden, contact), race._race_sides,
                                           boards)
    return values


def _two_plies(job: tuple[bytes | None, tuple[int, ...], Contact, bytes]) -> bytes:
    """The 2-ply labels of boards (the side on roll first): each board is the position just
    after the other side's move, so `two_ply` from that side (every roll of the side on roll
    played at 0-ply, then looked at one ply deeper), seen from the side on roll."""
    blob, hidden, contact, boards = job
    race = _race_evaluator()
    policy = _policy(blob, hidden, contact)
    keep, threshold = TWO_PLY_REPLIES
    sides = np.frombuffer(boards, dtype=np.uint8).reshape(-1, 2, 25)
    theirs = np.array([policy.two_ply(s[1].tolist(), s[0].tolist(), race._race_sides, keep,
                                      threshold) for s in sides], dtype=np.float64)
    result: bytes = flip_chances(theirs.reshape(-1, 5)).tobytes()
    return result


def _searched_values(job: tuple[bytes | None, tuple[int, ...], Contact, bytes], keep: int
                     ) -> bytes:
    """The 2-ply labels of boards as the 1-ply player values them: over the side on roll's 21
    rolls, his best ``keep`` plays by 0-ply looked at one ply deeper (`one_ply`) and the best of
    them there taken. Unlike `_two_plies` the play is chosen by the value it is labelled with,
    so a 0-ply misjudgement of the choice does not lower the label."""
    blob, hidden, contact, boards = job
    race = _race_evaluator()
    policy = _policy(blob, hidden, contact)
    sides = np.frombuffer(boards, dtype=np.uint8).reshape(-1, 2, 25)
    out = np.zeros((len(sides), 5))

    def equity(chances: Sequence[float]) -> float:
        return Probabilities(*chances).equity()

    for k, board in enumerate(sides):
        roller, other = board[0].tolist(), board[1].tolist()
        for a, b, weight in ROLLS:
            plays = policy.plays(roller, other, a, b, race._race_sides)
            if not plays:  # he stands pat: the other side rolls
                best = policy.one_ply(roller, other, race._race_sides)
            else:
                order = sorted(range(len(plays)), key=lambda i: -equity(plays[i][3]))[:keep]
                deeper = [policy.one_ply(plays[i][1], plays[i][2], race._race_sides)
                          for i in sorted(order)]
                best = max(deeper, key=equity)
            out[k] += weight * np.array(best)
    result: bytes = (out / 36.0).tobytes()
    return result


_ROLLOUT_SALT = 0x524F4C4C
"""Mixed into the dice seeds of rollout labels (`_rollout_values`)."""


def _rollout_values(job: tuple[bytes | None, tuple[int, ...], Contact, bytes],
                    truncate: int, trials: int, seed: int) -> bytes:
    """Rollout labels of boards (the side on roll first): each position rolled out ``trials``
    times by the network's greedy 0-ply player (`bgbot.rollout.trial`, the C kernel),
    cubeless, with variance reduction, cut after ``truncate`` plies (0: played out) and
    valued there by the same network; its mean outcome minus luck, the side on roll's chances.
    Board k's dice seed is ``seed`` mixed with the board itself, so a label does not depend on
    how the boards are split into jobs."""
    from bgbot.core.position import Position
    from bgbot.rollout.dice import RolloutDice, mix64
    from bgbot.rollout.trial import kernel_trials

    blob, hidden, contact, boards = job
    evaluator = _rollout_evaluator(blob, hidden, contact)
    out = np.zeros((len(boards) // 50, 5))
    for k in range(len(out)):
        board = boards[50 * k:50 * k + 50]
        position = Position._trusted(tuple(board[25:]), tuple(board[:25]))
        digest = int.from_bytes(hashlib.sha256(board).digest()[:8], "little")
        dice = RolloutDice(mix64(seed ^ digest ^ _ROLLOUT_SALT) >> 1)
        found = kernel_trials(evaluator, position, dice, 0, trials, truncate, True)
        assert found is not None, "rollout labels need the C extension"
        for trial in found:
            out[k] += np.subtract(trial.outcome, trial.luck)
        out[k] /= trials
    result: bytes = out.tobytes()
    return result


def _rollout_evaluator(blob: bytes | None, hidden: tuple[int, ...], contact: Contact
                       ) -> HeuristicEvaluator:
    """The evaluator whose 0-ply player rolls out labels: the network being trained (its
    races by the race formula and the bear-off database, as self-play's); one per process and
    network."""
    key = ("rollout", blob, hidden)
    if _WORKER.get("rollout_key") != key:
        if blob is None or contact is not None:
            raise ValueError("rollout labels are for contact runs with a network to play")
        network = WeightsFile(hidden, blob)
        _WORKER["rollout_key"] = key
        _WORKER["rollout"] = HeuristicEvaluator(network=network, race_network=False)
    evaluator: HeuristicEvaluator = _WORKER["rollout"]
    return evaluator


def look_ahead(pool: Any, workers: int, blob: bytes | None, hidden: tuple[int, ...],
               contact: Contact, boards: bytes, plies: int, keep: int = 0,
               rollout: tuple[int, int, int] | None = None) -> np.ndarray:
    """[n x 5] look-ahead values of boards (the side on roll's chances): ``plies`` 1 is
    `roll_average`, 2 is `two_ply` of the move that led there (about 25 ms a board), or with
    ``keep`` the 1-ply player's own value (`_searched_values`, about ``keep`` times that);
    ``rollout`` (truncate, trials, seed): a rollout by the 0-ply player (`_rollout_values`)."""
    work: Callable[[tuple[bytes | None, tuple[int, ...], Contact, bytes]], bytes]
    if rollout is not None:
        truncate, trials, seed = rollout
        work = functools.partial(_rollout_values, truncate=truncate, trials=trials, seed=seed)
        piece = 50
    elif plies == 1:
        work, piece = _roll_averages, 2000
    elif keep:
        work, piece = functools.partial(_searched_values, keep=keep), 100
    else:
        work, piece = _two_plies, 250
    n = len(boards) // 50
    jobs = [(blob, hidden, contact, boards[50 * s:50 * (s + piece)]) for s in range(0, n, piece)]
    done = pool.map(work, jobs) if workers > 1 else [work(j) for j in jobs]
    return np.frombuffer(b"".join(done), dtype=np.float64).reshape(-1, 5)


def _screen(job: tuple[bytes, tuple[int, ...], Contact, int, int]) -> list[int]:
    blob, hidden, contact, seed, pairs = job
    race = _race_evaluator()
    points: list[int] = _selfplay.duel_pubeval(_policy(blob, hidden, contact), race._race_sides,
                                              CONTACT_WEIGHTS, RACE_WEIGHTS, seed, pairs)
    return points


def chunk_seed(seed: int, iteration: int, chunk: int) -> int:
    """The dice seed of one generation job (a 63-bit hash of run seed, iteration, chunk)."""
    digest = hashlib.sha256(f"{seed}/{iteration}/{chunk}".encode()).digest()
    return int.from_bytes(digest[:8], "little") >> 1


# ------------------------------------------------------------------------------- targets


def outcomes_from_chances(c: np.ndarray) -> np.ndarray:
    """[n x 5] chances (win, wg, wbg, lg, lbg) -> [n x 6] exclusive outcome probabilities."""
    win, wg, wbg, lg, lbg = (c[:, k] for k in range(5))
    out = np.stack([win - wg, wg - wbg, wbg, (1.0 - win) - lg, lg - lbg, lbg], axis=1)
    out = np.clip(out, 0.0, None)
    total: np.ndarray = out.sum(axis=1, keepdims=True)
    result: np.ndarray = out / total
    return result


def fold_impossible(target: np.ndarray, allowed: np.ndarray) -> np.ndarray:
    """Targets [n x 6] with the mass of each outcome that cannot happen (``allowed`` False)
    moved to the next smaller one of the same side: backgammon to gammon, gammon to single.

    A λ-return may give a backgammon where the mask rules it out (the loser's last chequer
    outside the winner's home board can still be hit); the network cannot represent it there.
    """
    out = target.copy()
    for side in (0, 3):
        for kind in (2, 1):
            column, smaller = side + kind, side + kind - 1
            moved = np.where(allowed[:, column], 0.0, out[:, column])
            out[:, smaller] += moved
            out[:, column] -= moved
    return out


def smooth_targets(target: np.ndarray, allowed: np.ndarray, epsilon: float) -> np.ndarray:
    """(1 - ε) target + ε spread evenly over the outcomes ``allowed`` (label smoothing)."""
    even = allowed / allowed.sum(axis=1, keepdims=True)
    result: np.ndarray = (1.0 - epsilon) * target + epsilon * even
    return result


def flip_chances(c: np.ndarray) -> np.ndarray:
    """The same chances seen from the other side."""
    return np.stack([1.0 - c[:, 0], c[:, 3], c[:, 4], c[:, 1], c[:, 2]], axis=1)


def lambda_returns(values: np.ndarray, ends: np.ndarray, lam: float) -> np.ndarray:
    """λ-returns [n x 5] of the records, from the side on roll at each.

    ``values[t]``: the chances of the side on roll at record t + 1 (or, where ``ends[t]``, of
    the finished game / race that follows record t). G_t = flip(v_t) at an end, else
    flip((1 - λ) v_t + λ G_t+1).
    """
    n = len(ends)
    out = np.empty((n, 5))
    flipped = flip_chances(values)
    g_next = np.zeros(5)
    for t in range(n - 1, -1, -1):
        if ends[t]:
            g = flipped[t]
        else:
            # flip is affine: flip(a·x + b·y) = a·flip(x) + b·flip(y) when a + b = 1
            g = (1.0 - lam) * flipped[t] + lam * np.array(
                [1.0 - g_next[0], g_next[3], g_next[4], g_next[1], g_next[2]])
        out[t] = g
        g_next = g
    return out


# --------------------------------------------------------------------------------- model


class Model:
    """The network in numpy for training: ReLU layers, six masked softmax outputs, Adam."""

    def __init__(self, params: list[np.ndarray], mu: np.ndarray, sd: np.ndarray) -> None:
        self.params = params  # W1, b1, W2, b2, ...
        self.mu, self.sd = mu, sd
        self.m = [np.zeros_like(p) for p in params]
        self.v = [np.zeros_like(p) for p in params]
        self.t = 0
        self.average: list[np.ndarray] | None = None
        """The running mean of the weights after each iteration since ``--average-from``."""
        self.averaged = 0
        self.anchor: list[np.ndarray] | None = None
        """The weights ``--anchor-decay`` pulls towards (the ``--init`` network's)."""

    def fold_into_average(self) -> None:
        """Add the current weights to the running mean (stochastic weight averaging)."""
        self.averaged += 1
        if self.average is None:
            self.average = [p.astype(np.float64) for p in self.params]
        else:
            for mean, p in zip(self.average, self.params):
                mean += (p - mean) / self.averaged

    @classmethod
    def new(cls, hidden: Sequence[int], mu: np.ndarray, sd: np.ndarray, seed: int) -> Model:
        rng = np.random.default_rng([seed, 0xBEEF])
        widths = (N_INPUTS, *hidden, N_OUT)
        params: list[np.ndarray] = []
        for k, (a, b) in enumerate(zip(widths, widths[1:])):
            scale = np.sqrt(2.0 / a) if k < len(hidden) else 0.1 / np.sqrt(a)
            params.append((rng.standard_normal((a, b)) * scale).astype(np.float32))
            params.append(np.zeros(b, dtype=np.float32))
        return cls(params, mu, sd)

    def widened(self, widths: Sequence[int], seed: int) -> Model:
        """The same function with each hidden layer as wide as ``widths`` says (Net2Net):
        each new unit copies an old one's input weights (with a little noise, so the copies
        can part) and the copies share that unit's output weights, layer after layer."""
        if len(widths) != len(self.hidden):
            raise ValueError(f"cannot widen hidden layers {list(self.hidden)} to {list(widths)}"
                             " (one width for each layer)")
        params = [p.copy() for p in self.params]
        rng = np.random.default_rng([seed, 0x71DE])
        for k, width in enumerate(widths):
            w_in, b_in, w_out = params[2 * k], params[2 * k + 1], params[2 * k + 2]
            old = w_in.shape[1]
            if width < old:
                raise ValueError(f"cannot widen {old} hidden units to {width}")
            source = np.concatenate([np.arange(old), rng.choice(old, width - old, replace=True)])
            copies = np.bincount(source, minlength=old).astype(np.float32)
            noise = rng.standard_normal((w_in.shape[0], width)).astype(np.float32)
            new_in = w_in[:, source] + 0.01 * w_in.std() * noise * (np.arange(width) >= old)
            params[2 * k] = new_in.astype(np.float32)
            params[2 * k + 1] = b_in[source].copy()
            params[2 * k + 2] = (w_out[source] / copies[source][:, None]).astype(np.float32)
        return Model(params, self.mu, self.sd)

    def deepened(self) -> Model:
        """The same function with one more hidden layer as wide as the last (Net2Net): the
        new layer starts as the identity, which a ReLU passes unchanged since its inputs are
        ReLU outputs (never negative); training then bends it."""
        width = int(self.params[-2].shape[0])
        params = [p.copy() for p in self.params[:-2]]
        params += [np.eye(width, dtype=np.float32), np.zeros(width, dtype=np.float32)]
        params += [self.params[-2].copy(), self.params[-1].copy()]
        return Model(params, self.mu, self.sd)

    @property
    def hidden(self) -> tuple[int, ...]:
        return tuple(int(w.shape[1]) for w in self.params[0:-2:2])

    def forward(self, x: np.ndarray, allowed: np.ndarray
                ) -> tuple[np.ndarray, list[np.ndarray]]:
        """Probabilities [n x 6] and the activations (standardised input first)."""
        h = (x - self.mu) / self.sd
        acts = [h]
        layers = len(self.params) // 2
        for k in range(layers):
            w, b = self.params[2 * k], self.params[2 * k + 1]
            z = h @ w + b
            if k < layers - 1:
                h = np.maximum(z, 0.0)
                acts.append(h)
        z = np.where(allowed, z, -1e30)
        z = z - z.max(axis=1, keepdims=True)
        e = np.exp(z)
        p = e / e.sum(axis=1, keepdims=True)
        return p, acts

    def step(self, x: np.ndarray, allowed: np.ndarray, target: np.ndarray, lr: float,
             weight_decay: float = 0.0, output_decay: float = 0.0,
             anchor_decay: float = 0.0) -> float:
        """One Adam step on a batch; returns its mean cross-entropy. ``weight_decay``:
        decoupled decay of every weight matrix; ``output_decay``: more of it on the output
        layer's weights (it shrinks quickly what a network trained before the masked-logit fix
        grew there); ``anchor_decay``: decoupled decay of every parameter towards `anchor`
        (a proximal pull: fine-tuning keeps near the network it started from)."""
        p, acts = self.forward(x, allowed)
        n = len(x)
        loss = float(-(target * np.log(np.maximum(p, 1e-12))).sum() / n)
        # a masked outcome's logit does not reach the loss: no gradient through it (else a
        # target with mass on it pushes that logit up for ever, and the hidden layer with it)
        grad = (np.where(allowed, p - target, 0.0) / n).astype(np.float32)
        self.backward(acts, grad, lr, weight_decay, output_decay, anchor_decay)
        return loss

    def backward(self, acts: list[np.ndarray], grad: np.ndarray, lr: float,
                 weight_decay: float = 0.0, output_decay: float = 0.0,
                 anchor_decay: float = 0.0) -> None:
        """Back-propagate ``grad`` (the loss's gradient by the output logits, [n x 6] float32)
        through the layers whose activations `forward` returned, and take one Adam step;
        the decays as in `step`, which uses it (as does tools/rank_distill.py)."""
        grads: list[np.ndarray] = [np.empty(0)] * len(self.params)
        layers = len(self.params) // 2
        for k in range(layers - 1, -1, -1):
            a = acts[k]
            grads[2 * k] = a.T @ grad
            grads[2 * k + 1] = grad.sum(axis=0)
            if k:
                grad = (grad @ self.params[2 * k].T) * (acts[k] > 0)
        self.t += 1
        b1, b2, eps = 0.9, 0.999, 1e-8
        c1, c2 = 1.0 - b1 ** self.t, 1.0 - b2 ** self.t
        for i, g in enumerate(grads):
            decay = weight_decay + (output_decay if i == len(self.params) - 2 else 0.0)
            if decay and i % 2 == 0:  # weight matrices, not biases
                self.params[i] -= (lr * decay * self.params[i]).astype(np.float32)
            if anchor_decay and self.anchor is not None:
                self.params[i] -= (lr * anchor_decay * (self.params[i] - self.anchor[i])
                                   ).astype(np.float32)
            self.m[i] = b1 * self.m[i] + (1 - b1) * g
            self.v[i] = b2 * self.v[i] + (1 - b2) * g * g
            self.params[i] -= (lr * (self.m[i] / c1) / (np.sqrt(self.v[i] / c2) + eps)
                               ).astype(np.float32)

    def export(self, average: bool = False) -> list[tuple[np.ndarray, np.ndarray]]:
        """Per-layer (weights, biases) with the input scaling folded into the first layer,
        for raw inputs (what network.py and the C evaluator take); of the averaged weights
        with ``average``."""
        params = self.average if average and self.average is not None else self.params
        w1, b1 = params[0].astype(np.float64), params[1].astype(np.float64)
        scale = (1.0 / self.sd).astype(np.float64)
        w1_raw = w1 * scale[:, None]
        b1_raw = b1 - (self.mu.astype(np.float64) * scale) @ w1
        layers = [(w1_raw.astype(np.float32), b1_raw.astype(np.float32))]
        for k in range(1, len(params) // 2):
            layers.append((params[2 * k].astype(np.float32), params[2 * k + 1].astype(np.float32)))
        return layers

    def state(self) -> dict[str, np.ndarray]:
        out: dict[str, np.ndarray] = {"mu": self.mu, "sd": self.sd, "t": np.array(self.t)}
        for i, (p, m, v) in enumerate(zip(self.params, self.m, self.v)):
            out[f"p{i}"], out[f"m{i}"], out[f"v{i}"] = p, m, v
        if self.average is not None:
            out["averaged"] = np.array(self.averaged)
            for i, mean in enumerate(self.average):
                out[f"a{i}"] = mean
        if self.anchor is not None:
            for i, weights in enumerate(self.anchor):
                out[f"anchor{i}"] = weights
        return out

    @classmethod
    def from_state(cls, state: Any) -> Model:
        count = sum(1 for key in state.files if key.startswith("p"))
        model = cls([state[f"p{i}"] for i in range(count)], state["mu"], state["sd"])
        model.m = [state[f"m{i}"] for i in range(count)]
        model.v = [state[f"v{i}"] for i in range(count)]
        model.t = int(state["t"])
        if "averaged" in state.files:
            model.averaged = int(state["averaged"])
            model.average = [state[f"a{i}"] for i in range(count)]
        if "anchor0" in state.files:
            model.anchor = [state[f"anchor{i}"] for i in range(count)]
        return model


def encode(boards: bytes) -> tuple[np.ndarray, np.ndarray]:
    x, allowed = _selfplay.encode(boards)
    n = len(boards) // 50
    return (np.frombuffer(x, dtype=np.float32).reshape(n, N_INPUTS),
            np.frombuffer(allowed, dtype=np.uint8).reshape(n, N_OUT).astype(bool))


def fit(model: Model, x: np.ndarray, allowed: np.ndarray, target: np.ndarray, epochs: int,
        batch: int, lr: float, rng: np.random.Generator, weight_decay: float = 0.0,
        output_decay: float = 0.0, anchor_decay: float = 0.0) -> float:
    """``epochs`` passes of Adam over the data in shuffled batches; the last pass's loss."""
    n = len(x)
    loss = 0.0
    for _ in range(epochs):
        order = rng.permutation(n)
        total = 0.0
        for start in range(0, n, batch):
            index = order[start:start + batch]
            total += model.step(x[index], allowed[index], target[index], lr,
                                weight_decay, output_decay, anchor_decay) * len(index)
        loss = total / n
    return loss


# ---------------------------------------------------------------------------------- runs


def _save(run: Path, model: Model, state: dict[str, Any], best: bool = False) -> None:
    """The checkpoint, the state and the current network (and, when weights are averaged,
    their average: ``average.bgw``; with ``best``: what was screened, as the best so far,
    ``best.bgw``), each replaced atomically."""
    temporary = run / "checkpoint.tmp.npz"
    np.savez(temporary, **model.state())  # type: ignore[arg-type]  # numpy's stub: keywords
    temporary.replace(run / "checkpoint.npz")
    network = WeightsFile.from_arrays(model.export(), provenance=_provenance(state),
                                      phase=state["config"]["phase"])
    state["network_sha256"] = network.write(run / "network.bgw")
    screened = network
    if model.average is not None:
        provenance = {**_provenance(state), "averaged_iterations": [
            state["iteration"] - model.averaged + 1, state["iteration"]]}
        screened = WeightsFile.from_arrays(model.export(average=True), provenance=provenance,
                                           phase=state["config"]["phase"])
        state["average_sha256"] = screened.write(run / "average.bgw")
    if best:
        screened.write(run / "best.bgw")
    text = run / "state.tmp.json"
    text.write_text(json.dumps(state, indent=1, sort_keys=True) + "\n")
    text.replace(run / "state.json")


def _provenance(state: dict[str, Any]) -> dict[str, Any]:
    config = state["config"]
    return {
        "tool": "tools/train_network.py", "config": config,
        "iterations": state["iteration"], "games": state["games"],
        "positions": state["positions"],
        "command": (f"python tools/train_network.py --run RUN --seed {config['seed']} "
                    f"--games {config['games']} --hidden {','.join(map(str, config['hidden']))} "
                    f"--lam {config['lam']} --epochs {config['epochs']} --lr {config['lr']} "
                    f"--start {config['start']} --phase {config['phase']}"),
    }


def _log(run: Path, line: str) -> None:
    print(line, flush=True)
    with open(run / "log.txt", "a") as log:
        log.write(line + "\n")


def _config(args: argparse.Namespace) -> dict[str, Any]:
    return {
        "seed": args.seed, "games": args.games, "hidden": list(args.hidden), "lam": args.lam,
        "epochs": args.epochs, "lr": args.lr, "lr_decay": args.lr_decay, "batch": args.batch,
        "start": args.start, "noise": args.noise, "oneply": args.oneply,
        "init": str(args.init) if args.init else None,
        "init_sha256": hashlib.sha256(args.init.read_bytes()).hexdigest() if args.init else None,
        "init_which": args.init_which,
        "oneply_mix": args.oneply_mix, "oneply_only": args.oneply_only, "screen": args.screen, "screen_every": args.screen_every,
        "phase": args.phase, "sd_floor": args.sd_floor, "weight_decay": args.weight_decay,
        "output_decay": args.output_decay, "smooth": args.smooth,
        "anchor_decay": args.anchor_decay,
        "average_from": args.average_from,
        "alternatives": args.alternatives, "alt_fraction": args.alt_fraction,
        "label_plies": args.label_plies, "label_keep": args.label_keep,
        "play_plies": args.play_plies, "label_rollout": args.label_rollout,
        "contact": str(args.contact) if args.contact else None,
        "contact_sha256": (hashlib.sha256(args.contact.read_bytes()).hexdigest()
                           if args.contact else None),
    }


def _rollout_setting(config: dict[str, Any], iteration: int) -> tuple[int, int, int] | None:
    """(truncate, trials, dice seed) of this iteration's rollout labels, or None."""
    if config["label_rollout"] is None:
        return None
    truncate, trials = config["label_rollout"]
    return truncate, trials, chunk_seed(config["seed"], iteration, 30_000)


def iterate(run: Path, model: Model | None, state: dict[str, Any], pool: Any,
            workers: int) -> Model:
    """One iteration: data, labels, fit, screen, checkpoint."""
    config = state["config"]
    iteration = state["iteration"] + 1
    hidden = tuple(config["hidden"])
    started = time.time()
    contact: Contact = None
    if config["phase"] in ("race", "crashed"):
        fixed = WeightsFile.read(Path(config["contact"]), expected_sha256=config["contact_sha256"],
                                 phase="contact")
        contact = (fixed.parameters, fixed.hidden, config["phase"])
    blob = None if model is None else WeightsFile.from_arrays(model.export()).parameters
    policy_hidden = hidden if model is not None else ()
    chunks = [(blob, policy_hidden, contact, chunk_seed(config["seed"], iteration, c),
               min(CHUNK, config["games"] - c * CHUNK), config["noise"], config["alternatives"],
               config["play_plies"])
              for c in range((config["games"] + CHUNK - 1) // CHUNK)]
    parts = pool.map(_generate, chunks) if workers > 1 else [_generate(c) for c in chunks]
    boards = b"".join(p[0] for p in parts)
    values = np.frombuffer(b"".join(p[1] for p in parts), dtype=np.float64).reshape(-1, 5)
    ends = np.frombuffer(b"".join(p[2] for p in parts), dtype=np.uint8)
    generated = time.time()
    targets = lambda_returns(values, ends, config["lam"])
    x, allowed = encode(boards)
    rng = np.random.default_rng([config["seed"], iteration])
    if config["oneply"] > 0:
        picked = np.sort(rng.choice(len(ends), int(config["oneply"] * len(ends)), replace=False))
        picked_boards = b"".join(boards[50 * i:50 * i + 50] for i in picked)
        oneply = look_ahead(pool, workers, blob, policy_hidden, contact, picked_boards,
                            config["label_plies"], config["label_keep"],
                            _rollout_setting(config, iteration))
        mix = config["oneply_mix"]
        targets[picked] = mix * oneply + (1.0 - mix) * targets[picked]
        if config["oneply_only"]:  # train on the looked-ahead positions alone
            targets, x, allowed = targets[picked], x[picked], allowed[picked]
    if config["alternatives"]:
        # the runners-up of the moves, labelled by their own look-ahead: where the
        # network must rank candidates that its play never visits
        alt_boards = b"".join(p[3] for p in parts)
        n_alt = len(alt_boards) // 50
        chosen = np.sort(rng.choice(n_alt, min(n_alt, int(config["alt_fraction"] * n_alt)),
                                    replace=False))
        picked_boards = b"".join(alt_boards[50 * i:50 * i + 50] for i in chosen)
        alt_targets = look_ahead(pool, workers, blob, policy_hidden, contact, picked_boards,
                                 config["label_plies"], config["label_keep"],
                                 _rollout_setting(config, iteration))
        alt_x, alt_allowed = encode(picked_boards)
        targets = np.concatenate([targets, alt_targets])
        x, allowed = np.concatenate([x, alt_x]), np.concatenate([allowed, alt_allowed])
    labelled = time.time()
    target = fold_impossible(outcomes_from_chances(targets), allowed)
    if config["smooth"]:
        # a little of every outcome still possible, so that no logit is driven towards
        # minus infinity (a target of exactly 0 has no finite optimum)
        target = smooth_targets(target, allowed, config["smooth"])
    target = target.astype(np.float32)
    if model is None:
        # A floor on the scale: an input that is almost always 0 in the first data (a point
        # hardly ever made) must not become a 20-sigma input where it does occur.
        mu = x.mean(axis=0).astype(np.float32)
        sd = np.maximum(x.std(axis=0), config["sd_floor"]).astype(np.float32)
        model = Model.new(hidden, mu, sd, config["seed"])
    lr = config["lr"] * config["lr_decay"] ** (iteration - 1)
    loss = fit(model, x, allowed, target, config["epochs"], config["batch"], lr, rng,
               config["weight_decay"], config["output_decay"], config["anchor_decay"])
    fitted = time.time()
    if config["average_from"] and iteration >= config["average_from"]:
        model.fold_into_average()
    # what is screened (and would ship): the average once there is one
    screen_blob = WeightsFile.from_arrays(model.export(average=True)).parameters
    pairs = config["screen"]
    result: dict[str, Any] = {}
    if pairs and iteration % config["screen_every"] == 0:
        per = (pairs + workers - 1) // workers
        screens = [(screen_blob, hidden, contact,
                    chunk_seed(config["seed"], iteration, 10_000 + k), min(per, pairs - k * per))
                   for k in range(workers) if pairs - k * per > 0]
        points = np.concatenate([np.array(p) for p in (
            pool.map(_screen, screens) if workers > 1 else [_screen(j) for j in screens])])
        by_pair = points.reshape(-1, 2).mean(axis=1)
        result = {"ppg": float(points.mean()),
                  "se": float(by_pair.std(ddof=1) / np.sqrt(len(by_pair))),
                  "pairs": int(len(by_pair)), "wins": float((points > 0).mean())}
    screened = time.time()
    state["iteration"] = iteration
    state["games"] += config["games"]
    state["positions"] += int(len(ends))
    entry = {"iteration": iteration, "positions": int(len(ends)), "loss": round(loss, 5),
             "lr": lr, "seconds": {"play": round(generated - started, 1),
                                   "label": round(labelled - generated, 1),
                                   "fit": round(fitted - labelled, 1),
                                   "screen": round(screened - fitted, 1)}, **result}
    state["history"].append(entry)
    best = state.get("best")
    if result and (best is None or result["ppg"] > best["ppg"]):
        state["best"] = {"iteration": iteration, "ppg": result["ppg"], "se": result["se"]}
        _save(run, model, state, best=True)
    else:
        _save(run, model, state)
    screen_text = (f"vs pubeval {result['ppg']:+.3f} ± {1.96 * result['se']:.3f} "
                   f"({result['pairs']} pairs)" if result else "not screened")
    _log(run, f"iteration {iteration}: {len(ends):,} positions, loss {loss:.4f}, lr {lr:.2e}, "
              f"{screen_text}; {screened - started:.0f} s (play {generated - started:.0f}, "
              f"label {labelled - generated:.0f}, fit {fitted - labelled:.0f}, "
              f"screen {screened - fitted:.0f})")
    return model


def snapshot_path(run: Path, iteration: int) -> Path:
    """Where ``--keep-averages-every`` keeps the running average after ``iteration``."""
    return run / "averages" / f"{iteration:04d}.bgw"


def window_average(later: WeightsFile, earlier: WeightsFile) -> WeightsFile:
    """The mean of one run's weights after iterations m+1..n, from its running means over s..n
    (``later``) and s..m (``earlier``): (k_n A_n - k_m A_m) / (k_n - k_m), in float64.

    The running mean from the first iteration lags behind a run that still improves: in
    training/contact-deep the mean of iterations 49-80 alone erred less on the judged
    positions than the mean of 1-80 (1-ply 5.13 against 5.62 milli-points a decision).
    """
    def window(weights: WeightsFile) -> list[int]:
        span = weights.provenance.get("averaged_iterations")
        if not (isinstance(span, list) and len(span) == 2
                and all(isinstance(i, int) for i in span)):
            raise ValueError("not a running average of a run (no averaged_iterations)")
        return span

    def options(weights: WeightsFile) -> dict:
        # an option added to the trainer after the run began is recorded from then on as
        # None (not used): the same run's configuration, not another
        config = weights.provenance.get("config") or {}
        return {key: value for key, value in config.items() if value is not None}

    (start, n), (first, m) = window(later), window(earlier)
    if (start != first or m >= n or later.hidden != earlier.hidden
            or later.phase != earlier.phase or options(later) != options(earlier)):
        raise ValueError(f"iterations {first}-{m} and {start}-{n} are not two running means "
                         "of one run's weights, the second the longer")
    k_n, k_m = n - start + 1, m - first + 1
    a_n = np.frombuffer(later.parameters, "<f4").astype(np.float64)
    a_m = np.frombuffer(earlier.parameters, "<f4").astype(np.float64)
    mean = ((k_n * a_n - k_m * a_m) / (k_n - k_m)).astype("<f4")
    provenance = {**later.provenance, "averaged_iterations": [m + 1, n],
                  "window_of": [f"{first}-{m}", f"{start}-{n}"]}
    return dataclasses.replace(later, parameters=mean.tobytes(), provenance=provenance)


def ship(run: Path, which: str = "best", since: int | None = None,
         until: int | None = None) -> None:
    """Copy one of the run's networks (``which``: the best screened, else the latest; the
    average; the latest; the window: the mean of the weights after iterations ``since``+1 to
    the last, or to ``until``, from the running averages kept after ``since`` and ``until``)
    into the package and record its checksum in network.py (contact.bgw and SHIPPED_SHA256, or race.bgw and
    SHIPPED_RACE_SHA256)."""
    source = run / {"best": "best.bgw", "average": "average.bgw", "latest": "network.bgw",
                    "window": "average.bgw"}[which]
    if which == "best" and not source.exists():
        source = run / "network.bgw"
    if not source.exists() and which != "best" and (run / "checkpoint.npz").exists():
        # weights files are not committed (training/.gitignore): write them again from the
        # checkpoint, which holds the latest weights and their average
        state = json.loads((run / "state.json").read_text())
        _save(run, Model.from_state(np.load(run / "checkpoint.npz")), state)
    if not source.exists():
        sys.exit(f"{source} does not exist: nothing to ship")
    if which == "window" and until is not None:
        source = snapshot_path(run, until)
        if not source.exists():
            sys.exit(f"{source} does not exist: the run kept no running average after "
                     f"iteration {until} (see --keep-averages-every)")
    if which == "window":
        if since is None:
            sys.exit("--ship-which window needs --window-since M (an iteration whose running "
                     "average the run kept: --keep-averages-every)")
        earlier = snapshot_path(run, since)
        if not earlier.exists():
            sys.exit(f"{earlier} does not exist: the run kept no running average after "
                     f"iteration {since} (see --keep-averages-every)")
        try:
            weights = window_average(WeightsFile.read(source), WeightsFile.read(earlier))
        except ValueError as error:
            sys.exit(f"cannot take the window since iteration {since}: {error}")
        first, last = weights.provenance["averaged_iterations"]
        source = run / f"window-{first:04d}-{last:04d}.bgw"
        weights.write(source)
    install_shipped(source)


def install_shipped(source: Path, zero_ply: bool = False) -> None:
    """Copy a weights file to bgbot/players/data/ as the shipped network of its phase (or, with
    ``zero_ply``, as the 0-ply player's contact network: `tools/rank_distill.py ship`) and
    record its checksum in network.py."""
    weights = WeightsFile.read(source)
    if zero_ply and weights.phase != "contact":
        raise ValueError(f"{source} is a {weights.phase} network: the 0-ply network is a "
                         "contact network")
    SHIP_DIR.mkdir(exist_ok=True)
    name, constant = ("contact-0ply.bgw", "SHIPPED_ZERO_PLY_SHA256") if zero_ply else {
        "contact": ("contact.bgw", "SHIPPED_SHA256"),
        "race": ("race.bgw", "SHIPPED_RACE_SHA256"),
        "crashed": ("crashed.bgw", "SHIPPED_CRASHED_SHA256")}[weights.phase]
    digest = weights.write(SHIP_DIR / name)
    module = ROOT / "bgbot" / "players" / "network.py"
    text = module.read_text()
    start = text.index(f'\n{constant} = "') + len(f'\n{constant} = "')
    end = text.index('"', start)
    module.write_text(text[:start] + digest + text[end:])
    print(f"shipped {source} as {SHIP_DIR / name} (sha256 {digest}); network.py updated")


def _rollout_option(text: str) -> list[int]:
    """``TRUNCATE,TRIALS`` of --label-rollout."""
    try:
        truncate, trials = (int(part) for part in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: expected TRUNCATE,TRIALS, e.g. 5,36")
    if truncate < 0 or trials < 36 or trials % 36:
        raise argparse.ArgumentTypeError(f"{text!r}: TRUNCATE >= 0 plies, TRIALS a multiple "
                                         "of 36 (quasi-random first rolls)")
    return [truncate, trials]


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--run", type=Path, required=True, help="the run's folder")
    parser.add_argument("--iterations", type=int, default=1,
                        help="iterations to reach in all (resumes after the last one done)")
    parser.add_argument("--games", type=int, default=20000, help="self-play games per iteration")
    parser.add_argument("--hidden", type=lambda t: [int(w) for w in t.split(",")],
                        default=[128], help="hidden layer widths, e.g. 128 or 128,64; with "
                        "--init, widths above its layers' widen that network (Net2Net: the "
                        "same play to start from), and one more width equal to its last adds an "
                        "identity layer there (the same play again)")
    parser.add_argument("--lam", type=float, default=0.7, help="λ of the λ-returns")
    parser.add_argument("--epochs", type=int, default=2, help="passes over each iteration's data")
    parser.add_argument("--lr", type=float, default=1e-3, help="Adam step size")
    parser.add_argument("--lr-decay", type=float, default=0.97, help="step size factor per iteration")
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--sd-floor", type=float, default=0.5,
                        help="least scale of an input in the standardisation")
    parser.add_argument("--weight-decay", type=float, default=0.0,
                        help="decoupled weight decay per step (AdamW), on weight matrices")
    parser.add_argument("--output-decay", type=float, default=0.0,
                        help="more decoupled weight decay on the output layer's weights")
    parser.add_argument("--anchor-decay", type=float, default=0.0,
                        help="with --init: decoupled decay of every parameter towards the "
                             "--init network's, per step (a proximal pull, e.g. 50: "
                             "fine-tuning keeps near the network it starts from)")
    parser.add_argument("--smooth", type=float, default=0.0,
                        help="label smoothing: this share of each target spread over the "
                             "outcomes still possible")
    parser.add_argument("--average-from", type=int, default=0,
                        help="from this iteration on, keep the running mean of the weights after "
                             "each iteration (average.bgw; screened instead of the latest); 0: off")
    parser.add_argument("--start", choices=("linear", "random"), default="linear",
                        help="who plays the first iteration's games")
    parser.add_argument("--init", type=Path, default=None,
                        help="start from another run's checkpoint.npz (its weights; a fresh "
                             "optimiser), or from a network file (.bgw, e.g. the shipped "
                             "bgbot/players/data/contact.bgw), instead of --start")
    parser.add_argument("--init-which", choices=("latest", "average"), default="latest",
                        help="with --init: that run's latest weights, or its running average "
                             "(what it shipped with --ship-which average)")
    parser.add_argument("--noise", type=float, default=0.0,
                        help="exploration noise on the equities of self-play moves (the λ-returns "
                             "then value the noisier player: the shipped network's last run, "
                             "training/contact-nonoise, measured better without it)")
    parser.add_argument("--oneply", type=float, default=0.0,
                        help="fraction of positions labelled with the look-ahead too")
    parser.add_argument("--alternatives", type=int, default=0,
                        help="record up to K runners-up of each self-play move ...")
    parser.add_argument("--alt-fraction", type=float, default=0.1,
                        help="... and fit this fraction of them, labelled by their look-ahead")
    parser.add_argument("--oneply-only", action="store_true",
                        help="fit only the positions labelled with the look-ahead")
    parser.add_argument("--oneply-mix", type=float, default=0.5,
                        help="weight of the look-ahead value in those labels")
    parser.add_argument("--label-plies", type=int, choices=(1, 2), default=1,
                        help="depth of the look-ahead labels (--oneply, --alternatives): 1, the "
                             "position's 21 rolls each played at 0-ply; 2, each of those plays "
                             "valued one ply deeper (as the 2-ply player looks; ~25 ms a "
                             "position, so label a few tens of thousands an iteration)")
    parser.add_argument("--label-keep", type=int, default=0,
                        help="with --label-plies 2: choose each roll's play among its best K "
                             "by 0-ply by their 1-ply values (the 1-ply player's own value of "
                             "the position; about K times slower); 0: the 0-ply choice")
    parser.add_argument("--label-rollout", type=_rollout_option, default=None,
                        metavar="TRUNCATE,TRIALS",
                        help="the look-ahead labels (--oneply, --alternatives) are rollouts "
                             "instead: TRIALS (a multiple of 36) trials by the network's 0-ply "
                             "player, variance-reduced, cut after TRUNCATE plies (0: played "
                             "out) and valued there by the network, e.g. 5,36 (about 0.25 s of "
                             "CPU a position)")
    parser.add_argument("--play-plies", type=int, choices=(0, 1), default=0,
                        help="depth of the self-play games: 0, the greedy 0-ply player (~450 "
                             "games/s a core); 1, the 1-ply player (its move filter; ~7 "
                             "games/s a core), so the TD labels learn the value of the 1-ply player's "
                             "play; not with --alternatives")
    parser.add_argument("--screen", type=int, default=2000,
                        help="mirrored pairs against pubeval after each iteration (0: none)")
    parser.add_argument("--screen-every", type=int, default=1,
                        help="screen after every N-th iteration")
    parser.add_argument("--phase", choices=tuple(PHASE_RECORDS), default="contact",
                        help="train the contact network, or (with --contact) the race network "
                             "or the network for crashed positions (position_class.py)")
    parser.add_argument("--contact", type=Path, default=None,
                        help="race and crashed runs: the contact network that plays the "
                             "contact positions (the shipped one: bgbot/players/data/contact.bgw)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--workers", type=int, default=1, help="processes for self-play")
    parser.add_argument("--ship-which", choices=("best", "average", "latest", "window"),
                        default="best",
                        help="with --ship: the best screened network, the average, the latest, "
                             "or the window: the mean of the iterations after --window-since")
    parser.add_argument("--window-since", type=int, default=None, metavar="M",
                        help="with --ship-which window: the mean of the weights after iterations "
                             "M+1 to the last (needs the running average kept after M)")
    parser.add_argument("--window-until", type=int, default=None, metavar="N",
                        help="with --ship-which window: end the window at iteration N instead "
                             "of the last (needs the running average kept after N)")
    parser.add_argument("--keep-averages-every", type=int, default=0, metavar="N",
                        help="keep the running average after every N-th iteration as "
                             "averages/NNNN.bgw (for --ship-which window; does not change the "
                             "training)")
    parser.add_argument("--ship", action="store_true",
                        help="copy the run's network into the package and stop")
    args = parser.parse_args(argv)
    if (args.phase != "contact") != (args.contact is not None):
        parser.error("--contact goes with --phase race or crashed, and they need it")
    if args.anchor_decay and args.init is None:
        parser.error("--anchor-decay pulls towards the --init network: give --init")
    if args.label_keep < 0 or (args.label_keep and args.label_plies != 2):
        parser.error("--label-keep K (K >= 1) chooses the plays of 2-ply labels: it goes with "
                     "--label-plies 2")
    if args.label_rollout is not None and (args.label_plies != 1 or args.label_keep):
        parser.error("--label-rollout replaces the look-ahead labels: not with --label-plies 2 "
                     "or --label-keep")
    if args.label_rollout is not None and not (args.oneply or args.alternatives):
        parser.error("--label-rollout labels the positions --oneply F (or --alternatives) "
                     "picks: give one of them")
    if args.play_plies and args.alternatives:
        parser.error("--alternatives records the runners-up of 0-ply moves: it goes with "
                     "--play-plies 0")
    run: Path = args.run
    if args.ship:
        ship(run, args.ship_which, args.window_since, args.window_until)
        return
    if args.window_since is not None or args.window_until is not None:
        parser.error("--window-since and --window-until go with --ship --ship-which window")
    run.mkdir(parents=True, exist_ok=True)
    model: Model | None = None
    if (run / "state.json").exists():
        state = json.loads((run / "state.json").read_text())
        for key, default in CONFIG_DEFAULTS.items():  # runs from before the option existed
            state["config"].setdefault(key, default)
        if state["config"] != _config(args):
            changed = sorted(k for k in state["config"] if state["config"][k] != _config(args).get(k))
            sys.exit(f"{run} was started with other settings ({', '.join(changed)}): use the "
                     "same ones to resume, or another --run")
        if state["iteration"]:
            if not (run / "checkpoint.npz").exists():
                sys.exit(f"{run} has done {state['iteration']} iterations but keeps no "
                         "checkpoint.npz (a run kept as a record): run the same options "
                         "with another --run to do it again")
            model = Model.from_state(np.load(run / "checkpoint.npz"))
        _log(run, f"resuming {run} after iteration {state['iteration']}")
    else:
        state = {"config": _config(args), "iteration": 0, "games": 0, "positions": 0,
                 "history": []}
        if args.init and args.init.suffix == ".bgw":
            start = WeightsFile.read(args.init)
            if start.phase not in (args.phase, "contact"):
                sys.exit(f"{args.init} is a {start.phase} network: a {args.phase} run starts "
                         f"from a {args.phase} or a contact network")
            fixed: Contact = None
            if args.contact is not None:
                network = WeightsFile.read(args.contact, phase="contact")
                fixed = (network.parameters, network.hidden, args.phase)
            model = model_of_weights(start, args.seed, args.sd_floor, fixed)
            model = reshaped(model, args.hidden, args.seed, args.init)
            model.anchor = [p.copy() for p in model.params] if args.anchor_decay else None
        elif args.init:
            model = Model.from_state(np.load(args.init))
            if args.init_which == "average":
                if model.average is None:
                    sys.exit(f"{args.init} keeps no average (its run had no --average-from)")
                model.params = [mean.astype(np.float32) for mean in model.average]
            model = reshaped(model, args.hidden, args.seed, args.init)
            model.m = [np.zeros_like(p) for p in model.params]
            model.v = [np.zeros_like(p) for p in model.params]
            model.t = 0
            model.average, model.averaged = None, 0
            model.anchor = [p.copy() for p in model.params] if args.anchor_decay else None
    context = multiprocessing.get_context("fork")
    with context.Pool(args.workers) if args.workers > 1 else _NoPool() as pool:
        while state["iteration"] < args.iterations:
            model = iterate(run, model, state, pool, args.workers)
            every = args.keep_averages_every
            if every and state["iteration"] % every == 0 and (run / "average.bgw").exists():
                keep = snapshot_path(run, state["iteration"])
                keep.parent.mkdir(exist_ok=True)
                keep.write_bytes((run / "average.bgw").read_bytes())


def reshaped(model: Model, hidden: Sequence[int], seed: int, source: Path) -> Model:
    """``model`` with the hidden layers ``hidden`` and the same function (Net2Net): its
    hidden layers widened, one identity layer added after the last, or both; exits naming
    ``source`` when neither reaches ``hidden``."""
    n = len(model.hidden)
    if (len(hidden) in (n, n + 1) and tuple(hidden[:n]) != model.hidden
            and all(h >= m for h, m in zip(hidden, model.hidden))):
        model = model.widened(hidden[:n], seed)  # more units, same function
    if list(hidden) == [*model.hidden, model.hidden[-1]]:
        model = model.deepened()  # one more layer, same function
    if list(model.hidden) != list(hidden):
        sys.exit(f"{source} has hidden layers {list(model.hidden)}, not --hidden "
                 f"{','.join(map(str, hidden))}")
    return model


def model_of_weights(weights: WeightsFile, seed: int, sd_floor: float,
                     contact: Contact = None) -> Model:
    """A fresh model (new optimiser) computing what the weights file computes (``--init
    FILE.bgw``, e.g. the shipped network): the input scaling is measured on the positions of
    the run's phase in 200 self-play games with that network (seeded; ``contact``: a race or
    crashed run's fixed contact network) and taken out of the first layer, which the file
    holds for raw inputs (`Model.export` folds it in)."""
    layers = weights.arrays()
    games = 200 if contact is None else 1000  # crashed positions are rarer
    boards = _generate((weights.parameters, weights.hidden, contact, chunk_seed(seed, 0, 0),
                        games, 0.0, 0, 0))[0]
    x, _ = encode(boards)
    mu = x.mean(axis=0).astype(np.float32)
    sd = np.maximum(x.std(axis=0), sd_floor).astype(np.float32)
    w1_raw, b1_raw = (a.astype(np.float64) for a in layers[0])
    params = [(w1_raw * sd[:, None]).astype(np.float32),
              (b1_raw + mu.astype(np.float64) @ w1_raw).astype(np.float32)]
    for w, b in layers[1:]:
        params += [w.astype(np.float32).copy(), b.astype(np.float32).copy()]
    return Model(params, mu, sd)


class _NoPool:
    """Stands in for a pool with one worker (everything runs in this process)."""

    def __enter__(self) -> _NoPool:
        return self

    def __exit__(self, *exc: object) -> None:
        return None


if __name__ == "__main__":
    main()
