"""The linear heads: five logistic heads over the contact features, kept for regression.

``eval=linear`` (heuristic-player.md §2): for the side on roll, the logits of win, win a gammon,
win a backgammon, lose a gammon, lose a backgammon are each weights · `features.feature_vector`,
and the chances their sigmoids, under the hard constraints of §2.7 (a side that has borne off a
chequer cannot be gammoned; a side with no chequer on the bar or in the other's home board
cannot be backgammoned; backgammons <= gammons <= wins). The weights come from
``tools/train_heuristic.py`` (the generated module ``heuristic_weights``, or a JSON file), or
failing that are the hand-set ones here. The contact network of `network.py` replaced them as
the player's evaluation; duels against them measure it.

`LinearHeads` is the pure-Python evaluator (fixed-point per-point tables: the same logits as the
dot product to 1e-7); ``bgbot.players._contact.Net`` is the same in C.
"""

from __future__ import annotations

import json
import math
from operator import mul
from pathlib import Path
from typing import Any, Sequence

from .base import Probabilities
from .caches import BoundedCache
from .features import (
    CROSS_FEATURES,
    FACT_BITS,
    FACT_MASK,
    FEATURE_NAMES,
    GLOBAL_FEATURES,
    POINT_FEATURES,
    SideInfo,
    cross_features,
    fact_entry,
    global_features,
    global_key,
    info_from_facts,
    point_features,
)
from .race import RACE_SPREAD_KEY

HEADS: tuple[str, ...] = ("win", "win_gammon", "win_backgammon", "lose_gammon", "lose_backgammon")
WEIGHTS_MODULE = Path(__file__).with_name("heuristic_weights.py")
"""The tuned weights, a generated module (``tools/train_heuristic.py --out`` writes it)."""

# Hand-set starting weights (logit units, "me" = on roll). They encode textbook values: the
# 5-, 4-, bar and 6-points, advanced anchors, primes, shots weighted by board strength,
# containment, entry odds; gammon heads look at chequers back against a strong board.
HAND_WEIGHTS: dict[str, dict[str, float]] = {
    "win": {
        "bias": 0.15,
        "race_lead": 3.0,
        "me.made_4": 0.35, "me.made_5": 0.5, "me.made_6": 0.3, "me.made_7": 0.3,
        "me.made_3": 0.15, "me.made_8": 0.1, "me.made_20": 0.35, "me.made_21": 0.3,
        "me.made_18": 0.2, "me.made_19": 0.15,
        "other.made_4": -0.35, "other.made_5": -0.5, "other.made_6": -0.3, "other.made_7": -0.3,
        "other.made_3": -0.15, "other.made_8": -0.1, "other.made_20": -0.35,
        "other.made_21": -0.3, "other.made_18": -0.2, "other.made_19": -0.15,
        "me.blots_home": -0.15, "me.blots_outfield": -0.1, "me.blots_back": -0.05,
        "other.blots_home": 0.05, "other.blots_outfield": 0.05,
        "me.stack_home": -0.2, "me.stack_outside": -0.2,
        "other.stack_home": 0.2, "other.stack_outside": 0.2,
        "me.prime_5": 0.3, "me.prime_6": 0.5, "other.prime_5": -0.3, "other.prime_6": -0.5,
        "me.bar": -0.2, "other.bar": 0.3,
        "shots": 0.8, "shots_x_board": 1.0, "pip_loss": 2.0, "return_shots": -0.3,
        "trap_other_sq": 1.0, "trap_me_sq": -1.0,
        "enter_fail_me": -1.0, "enter_fail_other": 0.8,
        "me.buried": -0.2, "other.buried": 0.2,
    },
    "win_gammon": {
        "bias": -1.6, "race_lead": 2.0, "other_back_x_board": 4.0, "other.bar": 0.5,
        "enter_fail_other": 1.5, "me.home_made_sq": 1.0, "other.back": 0.8,
        "shots_x_board": 1.0, "other.some_off": -3.0, "me.some_off": 0.5,
    },
    "win_backgammon": {
        "bias": -4.5, "race_lead": 2.0, "other_back_x_board": 4.0, "other.bar": 0.8,
        "enter_fail_other": 1.5, "me.home_made_sq": 1.5, "other.back": 1.5,
    },
    "lose_gammon": {
        "bias": -1.8, "race_lead": -2.0, "my_back_x_board": 4.0, "me.bar": 0.5,
        "enter_fail_me": 1.5, "other.home_made_sq": 1.0, "me.back": 0.8,
        "me.some_off": -3.0, "other.some_off": 0.5,
    },
    "lose_backgammon": {
        "bias": -4.7, "race_lead": -2.0, "my_back_x_board": 4.0, "me.bar": 0.8,
        "enter_fail_me": 1.5, "other.home_made_sq": 1.5, "me.back": 1.5,
    },
}


def _by_name(names: Sequence[str], contact: dict[str, Sequence[float]]) -> dict[str, list[float]]:
    """Weights given for ``names``, reordered to FEATURE_NAMES (missing features weigh 0)."""
    out: dict[str, list[float]] = {}
    for head in HEADS:
        by_name = dict(zip(names, contact[head]))
        out[head] = [float(by_name.get(name, 0.0)) for name in FEATURE_NAMES]
    return out


def hand_weights() -> dict[str, list[float]]:
    """The hand-set weights (HAND_WEIGHTS) in FEATURE_NAMES order."""
    return {head: [HAND_WEIGHTS[head].get(name, 0.0) for name in FEATURE_NAMES] for head in HEADS}


def load_weights(path: Path | None = None) -> dict[str, list[float]]:
    """Contact weights per head, in FEATURE_NAMES order.

    ``path``: a JSON file written by ``tools/train_heuristic.py`` (keys "features" and
    "contact"). Without it: the tuned module ``heuristic_weights``, else the hand set.
    """
    if path is not None:
        data = json.loads(path.read_text())
        out = _by_name(data["features"], data["contact"])
        if "race_spread" in data:
            out[RACE_SPREAD_KEY] = [float(data["race_spread"])]
        return out
    try:
        from . import heuristic_weights as tuned  # type: ignore[attr-defined, unused-ignore]
    except ImportError:
        return hand_weights()
    module: Any = tuned
    return _by_name(module.FEATURES, module.CONTACT)


_Partial = tuple[float, float, float, float, float]
_getitem = tuple.__getitem__
# Fixed-point packing of the five heads' per-point sums above the packed facts (see
# `LinearHeads._point_tables`): 48-bit fields, 1e-7 resolution, offset 2**40 each.
_SCALE = 10_000_000.0
_INV_SCALE = 1.0 / _SCALE
_FIELD_BITS = 48
_FIELD_MASK = (1 << _FIELD_BITS) - 1
_FIELD_OFFSET = 1 << 40
_BASE = 25 * _FIELD_OFFSET
_SHIFT0, _SHIFT1, _SHIFT2, _SHIFT3, _SHIFT4 = (FACT_BITS + _FIELD_BITS * h for h in range(5))


class LinearHeads:
    """The contact class's evaluator by the linear heads (module docstring): ``weights`` per
    head (`HEADS`), in FEATURE_NAMES order.

    Keeps per-side caches (the side that did not move is the same for every candidate of a
    move; `BoundedCache`).
    """

    def __init__(self, weights: dict[str, list[float]]) -> None:
        self.weights = weights
        assert len(weights["win"]) == len(FEATURE_NAMES)
        n_point, n_global = len(POINT_FEATURES), len(GLOBAL_FEATURES)
        block = n_point + n_global
        cross_offset = 2 * block
        self._tables = (self._point_tables(0), self._point_tables(block))
        self._global_w = tuple(
            [weights[h][offset + n_point: offset + block] for h in HEADS]
            for offset in (0, block)
        )
        self._cross_w = [weights[h][cross_offset: cross_offset + len(CROSS_FEATURES)]
                         for h in HEADS]
        self._bias = [weights[h][-1] for h in HEADS]
        self._caches: tuple[BoundedCache[tuple[int, ...], tuple[SideInfo, _Partial]], ...] = (
            BoundedCache(), BoundedCache())
        self._global_caches: tuple[dict[Any, tuple[float, ...]], ...] = ({}, {})

    def __getstate__(self) -> dict[str, Any]:
        """Pickled without the caches."""
        return {**self.__dict__, "_caches": (BoundedCache(), BoundedCache()),
                "_global_caches": ({}, {})}

    def _point_tables(self, offset: int) -> tuple[tuple[int, ...], ...]:
        """Per location and count: the packed facts plus each head's weighted per-point
        features, in fixed point (``_SCALE``), offset to stay positive, one field per head."""
        rows = []
        for index in range(25):
            row = []
            for n in range(16):
                value = fact_entry(index, n)
                feats = point_features(index, n)
                for h, head in enumerate(HEADS):
                    w = self.weights[head]
                    contribution = sum(w[offset + f] * v for f, v in feats)
                    field = round(contribution * _SCALE) + _FIELD_OFFSET
                    value |= field << (FACT_BITS + _FIELD_BITS * h)
                row.append(value)
            rows.append(tuple(row))
        return tuple(rows)

    def _side(self, side: tuple[int, ...], role: int) -> tuple[SideInfo, _Partial]:
        """A side's facts and its five heads' one-sided partial logits in ``role``
        (0 = on roll, 1 = not on roll), cached per side tuple."""
        cache = self._caches[role]
        found = cache.get(side)
        if found is not None:
            return found
        total = sum(map(_getitem, self._tables[role], side))
        info = info_from_facts(total & FACT_MASK, side[24])
        key = global_key(info)
        gcache = self._global_caches[role]
        glob = gcache.get(key)
        if glob is None:
            feats = global_features(info)
            glob = gcache[key] = tuple(sum(map(mul, gw, feats)) for gw in self._global_w[role])
        base = _BASE
        partial: _Partial = (
            (((total >> _SHIFT0) & _FIELD_MASK) - base) * _INV_SCALE + glob[0],
            (((total >> _SHIFT1) & _FIELD_MASK) - base) * _INV_SCALE + glob[1],
            (((total >> _SHIFT2) & _FIELD_MASK) - base) * _INV_SCALE + glob[2],
            (((total >> _SHIFT3) & _FIELD_MASK) - base) * _INV_SCALE + glob[3],
            (((total >> _SHIFT4) & _FIELD_MASK) - base) * _INV_SCALE + glob[4],
        )
        found = cache.put(side, (info, partial))
        return found

    def logits(self, mover: tuple[int, ...], opponent: tuple[int, ...]) -> list[float]:
        """The five heads' logits (before the sigmoid), ``mover`` on roll."""
        me_info, me_part = self._side(mover, 0)
        other_info, other_part = self._side(opponent, 1)
        return self._logits(me_info, me_part, other_info, other_part)

    def _logits(self, me_info: SideInfo, me_part: _Partial, other_info: SideInfo,
                other_part: _Partial) -> list[float]:
        cross = cross_features(me_info, other_info)
        cw = self._cross_w
        bias = self._bias
        return [
            me_part[h] + other_part[h] + sum(map(mul, cw[h], cross)) + bias[h] for h in range(5)
        ]

    def evaluate_sides(self, mover: tuple[int, ...], opponent: tuple[int, ...]) -> Probabilities:
        """The constrained chances of ``mover`` on roll (a position with contact)."""
        me_info, me_part = self._side(mover, 0)
        other_info, other_part = self._side(opponent, 1)
        z = self._logits(me_info, me_part, other_info, other_part)
        exp = math.exp
        win = 1.0 / (1.0 + exp(-z[0])) if z[0] > -700.0 else 0.0
        win_g = win_bg = lose_g = lose_bg = 0.0
        if not other_info.off and z[1] > -700.0:
            win_g = min(1.0 / (1.0 + exp(-z[1])), win)
            if other_info.back and z[2] > -700.0:
                win_bg = min(1.0 / (1.0 + exp(-z[2])), win_g)
        if not me_info.off and z[3] > -700.0:
            lose_g = min(1.0 / (1.0 + exp(-z[3])), 1.0 - win)
            if me_info.back and z[4] > -700.0:
                lose_bg = min(1.0 / (1.0 + exp(-z[4])), lose_g)
        return Probabilities(win, win_g, win_bg, lose_g, lose_bg)
