"""The heuristic position evaluator: cubeless chances for the player on roll, before rolling.

Phases (heuristic-player.md §2.8):

* **bear-off**: both sides entirely in their home boards: the exact one-sided bear-off database
  (`bgbot.players.bearoff`), when it is installed and the position fits;
* **race** (no contact): a normal approximation on effective pip counts for the win
  (§5.3, the Kleinman/EPC model, with its spread refitted on self-play outcomes: the textbook
  1.5 was under-confident, 0.25 predicted where 0.13 happened) and the same model on "rolls to get a first chequer off"
  against "rolls to finish" for gammons and backgammons;
* **contact**: the evaluation network of `network.py` over the features of `features.py` and a
  plain board encoding (``eval="net"``, the default when its weights are installed: trained by
  ``tools/train_network.py``), or today's five logistic heads, linear in the features
  (``eval="linear"``, weights from ``heuristic_weights.py``, tuned by
  ``tools/train_heuristic.py``, or failing that the hand-set weights below), kept for
  regression duels against the network.

Hard constraints (§2.7) are applied to every output: a side that has borne off a chequer cannot
be gammoned; a side with no chequer on the bar or in the other's home board cannot be
backgammoned; backgammons <= gammons <= wins.

The contact phase also exists in C (the optional extension ``bgbot.players._contact``, built by
``pip install``): when it is built, the evaluator uses it unless ``BGBOT_PURE_PYTHON`` is set (to
anything but "0") or the constructor says ``compiled=False``. The Python code here is the
reference (the C features equal ``features.feature_vector``, the C network inputs
``network.inputs``) and the fallback; the network's fallback evaluates it with numpy.
An extension built from other definitions (a stale build) is refused with a warning, and the
test suite fails on it (`extension_status`).
"""

from __future__ import annotations

import json
import math
import warnings
from functools import cache
from operator import mul
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, NamedTuple, Protocol, Sequence

from ..core.compiled import PURE_PYTHON_ENV, pure_python_forced
from ..core.position import Position, RawStep, check_dice
from .base import Probabilities
from .network import (
    N_INPUTS,
    PythonNetwork,
    WeightsFile,
    chances,
    inputs,
    outcome_mask,
    shipped_race_weights,
    shipped_weights,
)
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
    feature_vector,
    global_features,
    global_key,
    info_from_facts,
    point_features,
)

if TYPE_CHECKING:
    import numpy as np

    from ._contact import Mlp, Net

ScoredPlay = tuple[tuple[RawStep, ...], tuple[int, ...], tuple[int, ...], Probabilities]
"""One candidate of a roll (`HeuristicEvaluator.plays`): its steps (``(from, to, hit)``,
mover's numbering, as a `Play` holds them), the mover's and the opponent's counts after it,
and the mover's 0-ply chances there (the opponent on roll)."""
EVALUATIONS = ("net", "linear")
"""The contact evaluations: the network (`network.py`) and the linear heads."""

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


class BearoffDatabase(Protocol):
    """What the evaluator needs from `bgbot.players.bearoff.default_database`."""

    def probabilities(self, position: Position) -> Probabilities | None: ...

    def expected_rolls(self, side: Sequence[int]) -> float: ...


def _load_bearoff() -> BearoffDatabase | None:
    """The other helper's one-sided bear-off database, or None while it is not installed."""
    try:
        from . import bearoff  # type: ignore[attr-defined, unused-ignore]
    except ImportError:
        return None
    factory: Any = getattr(bearoff, "default_database", None)
    if factory is None:
        return None
    database: Any = factory if hasattr(factory, "probabilities") else factory()
    return database if hasattr(database, "probabilities") else None


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


def load_race_spread(path: Path | None = None) -> float:
    """The race model's spread (see `race_probabilities`): from the weights JSON ``path``
    (key "race_spread") or the tuned module, else `RACE_SPREAD`."""
    if path is not None:
        return float(json.loads(path.read_text()).get("race_spread", RACE_SPREAD))
    try:
        from . import heuristic_weights as tuned  # type: ignore[attr-defined, unused-ignore]
    except ImportError:
        return RACE_SPREAD
    module: Any = tuned
    return float(getattr(module, "RACE_SPREAD", RACE_SPREAD))


RACE_SPREAD = 1.5
RACE_SPREAD_KEY = "race_spread"
"""`load_weights` of a JSON file puts its race spread under this key, as a 1-element list."""
"""Default spread s of the race model P(win) = Φ((lead + 4) / (s √(pip sum))) (§5.3);
``tools/train_heuristic.py --calibrate`` refits it on self-play outcomes."""
_NORMAL_SCALE = 1.0 / math.sqrt(2.0)
PIPS_PER_ROLL = 49.0 / 6.0
ROLL_VARIANCE_PER_PIP = 0.0339
"""Variance of the number of rolls needed to move N pips is about 0.0339 N (renewal theory)."""


def _phi(x: float) -> float:
    return 0.5 * math.erfc(-x * _NORMAL_SCALE)


def effective_pips(side: Sequence[int], database: BearoffDatabase | None = None) -> float:
    """Pip count plus a wastage estimate.

    With the bear-off database: the exact wastage (EPC - pips, §5.1) of the home board you get
    by putting every chequer still outside on the 6-point. Without: Keith's adjustments (§5.4).
    """
    pips = 0
    for index in range(25):
        pips += side[index] * (index + 1)
    if database is not None:
        home = list(side[:6])
        home[5] += sum(side[6:])
        home_pips = sum(n * (i + 1) for i, n in enumerate(home))
        try:
            return pips + database.expected_rolls(home) * PIPS_PER_ROLL - home_pips
        except ValueError:  # a small test database that does not hold 15 chequers
            pass
    extra = 2 * max(0, side[0] - 1) + max(0, side[1] - 1) + max(0, side[2] - 3)
    extra += (side[3] == 0) + (side[4] == 0) + (side[5] == 0)
    return pips + extra


def _rolls_beyond(side: Sequence[int], boundary: int) -> float:
    """Pips one side must move so that no chequer stays above own point ``boundary``."""
    return float(sum(side[i] * (i + 1 - boundary) for i in range(boundary, 25)))


def _lag_probability(loser_pips: float, loser_extra: float, winner_epc: float,
                     loser_on_roll: bool) -> float:
    """P(the loser needs more turns for ``loser_pips`` than the winner needs to finish).

    The loser's turns are ``loser_pips`` / 8.17 + ``loser_extra``; the player on roll gets the
    first turn, so the loser on roll is late only when strictly slower.
    """
    mean = loser_pips / PIPS_PER_ROLL + loser_extra - winner_epc / PIPS_PER_ROLL
    var = ROLL_VARIANCE_PER_PIP * (loser_pips + winner_epc) + 0.25
    threshold = 0.5 if loser_on_roll else -0.5
    return _phi((mean - threshold) / math.sqrt(var))


def race_probit(my_epc: float, other_epc: float) -> float:
    """(lead + 4) / √(pip sum) on effective pips, for the player on roll (§5.3)."""
    return (other_epc - my_epc + 4.0) / math.sqrt(max(my_epc + other_epc, 1.0))


class RaceSide(NamedTuple):
    """What the race model needs of one side (the evaluator caches it per side)."""

    epc: float
    """Effective pip count."""
    full: bool
    """No chequer borne off yet (it can still be gammoned)."""
    home_lag: float
    """Pips to move before every chequer is home (`_rolls_beyond` 6)."""
    back: bool
    """A chequer on the bar or in the other side's home board (it can be backgammoned)."""
    back_lag: float
    """Pips to move before no chequer is in the other side's home board or on the bar."""


def race_side(side: Sequence[int], epc: float) -> RaceSide:
    """`RaceSide` of ``side`` (25 counts) with effective pip count ``epc``."""
    return RaceSide(epc, sum(side) == 15, _rolls_beyond(side, 6), any(side[18:25]),
                    _rolls_beyond(side, 18))


def race_probabilities(position: Position, database: BearoffDatabase | None = None,
                       epc: Callable[[tuple[int, ...]], float] | None = None,
                       spread: float = RACE_SPREAD) -> Probabilities:
    """Cubeless chances in a race (no contact) for the player on roll, from formulas
    (effective pip counts from ``database`` when given; ``epc`` may supply them cached):
    P(win) = Φ(`race_probit` / ``spread``)."""
    me, other = position.mover, position.opponent
    if epc is None:
        my_epc, other_epc = effective_pips(me, database), effective_pips(other, database)
    else:
        my_epc, other_epc = epc(me), epc(other)
    return race_chances(race_side(me, my_epc), race_side(other, other_epc), spread)


def race_chances(me: RaceSide, other: RaceSide, spread: float = RACE_SPREAD) -> Probabilities:
    """`race_probabilities` from the two sides' `RaceSide` facts (``me`` on roll)."""
    my_epc, other_epc = me.epc, other.epc
    win = _phi(race_probit(my_epc, other_epc) / spread)
    win_g = win_bg = lose_g = lose_bg = 0.0
    if other.full:
        win_g = _lag_probability(other.home_lag, 1.0, my_epc, False)
        if other.back:
            win_bg = _lag_probability(other.back_lag, 0.5, my_epc, False)
    if me.full:
        lose_g = _lag_probability(me.home_lag, 1.0, other_epc, True)
        if me.back:
            lose_bg = _lag_probability(me.back_lag, 0.5, other_epc, True)
    # The hard constraints of heuristic-player.md §2.7 and the ordering of outputs.
    win = min(max(win, 0.0), 1.0)
    lose = 1.0 - win
    if not other.full:
        win_g = win_bg = 0.0
    elif not other.back:
        win_bg = 0.0
    if not me.full:
        lose_g = lose_bg = 0.0
    elif not me.back:
        lose_bg = 0.0
    win_g = min(max(win_g, 0.0), win)
    win_bg = min(max(win_bg, 0.0), win_g)
    lose_g = min(max(lose_g, 0.0), lose)
    lose_bg = min(max(lose_bg, 0.0), lose_g)
    return Probabilities(win, win_g, win_bg, lose_g, lose_bg)


def _terminal(position: Position) -> Probabilities | None:
    """Exact outputs when the game is already over (one side has no chequer left)."""
    kind = position.win_kind()
    if kind == 0:
        return None
    if not any(position.mover):
        return Probabilities(1.0, float(kind >= 2), float(kind >= 3), 0.0, 0.0)
    return Probabilities(0.0, 0.0, 0.0, float(kind >= 2), float(kind >= 3))


# Positions on which the extension must give what features.py and network.py give before it
# is trusted (a stale build from older definitions is caught here): (mover, opponent), mover on
# roll.
_PROBES: tuple[tuple[tuple[int, ...], tuple[int, ...]], ...] = (
    ((0, 0, 0, 0, 0, 5, 0, 3, 0, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0),) * 2,
    ((0, 2, 2, 3, 2, 2, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1),
     (1, 0, 2, 0, 2, 3, 0, 2, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 2)),
    ((0, 0, 0, 2, 2, 4, 2, 2, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0),
     (2, 3, 2, 2, 0, 2, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1, 0, 0, 0, 0, 0, 0, 1, 0, 0)),
)


@cache
def extension_status() -> str:
    """What the C extension ``bgbot.players._contact`` is: "ok", "missing" (not built: the
    pure-Python code runs) or "stale: ..." (built from other definitions than features.py and
    network.py: refused, and the test suite fails on it). Checked once per process."""
    try:
        from . import _contact
    except ImportError:
        return "missing"
    module: Any = _contact
    if getattr(module, "N_INPUTS", None) != N_INPUTS or not hasattr(module, "Mlp"):
        return (f"stale: it has {getattr(module, 'N_INPUTS', 'no')} network inputs, "
                f"network.py {N_INPUTS}")
    for mover, opponent in _PROBES:
        ours, reference = module.features(mover, opponent), feature_vector(mover, opponent)
        if len(ours) != len(reference) or any(
                abs(a - b) > 1e-9 for a, b in zip(ours, reference)):
            return "stale: its features differ from features.py"
        if any(abs(a - b) > 1e-6 for a, b in zip(module.inputs(mover, opponent),
                                                 inputs(mover, opponent))):
            return "stale: its network inputs differ from network.py"
    return "ok"


def _extension_agrees() -> bool:
    """Whether the C extension is built and current (warns once when it is not)."""
    status = extension_status()
    if status != "ok":
        _warn_unusable(status)
    return status == "ok"


@cache
def _warn_unusable(status: str) -> None:
    if status == "missing":
        warnings.warn("bgbot.players._contact is not built (no C compiler at install?): the "
                      "player runs in pure Python, 4-14x slower; install gcc and the Python "
                      "headers and reinstall bgbot", RuntimeWarning, stacklevel=5)
    else:
        warnings.warn(f"bgbot.players._contact is {status} (a stale build?): using the "
                      "pure-Python evaluator; rebuild with `pip install -e .`", RuntimeWarning,
                      stacklevel=5)


def compiled_net(weights: dict[str, list[float]]) -> Net | None:
    """The C linear heads (``bgbot.players._contact.Net``) for ``weights`` (a dict of HEADS,
    FEATURE_NAMES order), or None when the extension is not built or is stale."""
    if not _extension_agrees():
        return None
    from ._contact import Net

    return Net([weights[head] for head in HEADS])


def compiled_network(network: WeightsFile) -> Mlp | None:
    """The C network (``bgbot.players._contact.Mlp``) for ``network``, or None when the
    extension is not built or is stale."""
    if not _extension_agrees():
        return None
    from ._contact import Mlp

    return Mlp(network.parameters, network.hidden)


_Partial = tuple[float, float, float, float, float]
_getitem = tuple.__getitem__
_new_tuple = tuple.__new__
# Fixed-point packing of the five heads' per-point sums above the packed facts (see
# `HeuristicEvaluator._point_tables`): 48-bit fields, 1e-7 resolution, offset 2**40 each.
_SCALE = 10_000_000.0
_INV_SCALE = 1.0 / _SCALE
_FIELD_BITS = 48
_FIELD_MASK = (1 << _FIELD_BITS) - 1
_FIELD_OFFSET = 1 << 40
_BASE = 25 * _FIELD_OFFSET
_SHIFT0, _SHIFT1, _SHIFT2, _SHIFT3, _SHIFT4 = (FACT_BITS + _FIELD_BITS * h for h in range(5))


class HeuristicEvaluator:
    """``evaluate(position)``: gnubg-style cubeless chances for the player on roll.

    ``eval``: the contact evaluation, "net" (the network of `network.py`: ``network`` or the
    shipped weights) or "linear" (the five logistic heads: ``weights`` or the tuned module);
    None (default) is "linear" when linear ``weights`` are given, else "net" when network
    weights are installed, else "linear". ``race_network``: the network for races outside
    the bear-off database (default: the shipped one with ``eval="net"``; False: none, the
    race formulas decide).

    Keeps per-side caches (the side that did not move is the same for every candidate of a
    move); they are bounded and cleared when full.

    ``compiled``: True requires the C extension (RuntimeError when it is not built), False
    forces the pure-Python code, None (default) uses C when built unless `pure_python_forced`.
    ``self.compiled`` says which is in use.
    """

    CACHE_LIMIT = 200_000
    ROLL_AVERAGE_CACHE = 256
    """`roll_average` results kept (the same position is asked again within a turn: the
    doubler's cube decision and the taker's, a rollout's cube decision and its luck)."""

    def __init__(self, weights: dict[str, list[float]] | None = None,
                 use_bearoff: bool = True, race_spread: float | None = None,
                 compiled: bool | None = None, *, eval: str | None = None,
                 network: WeightsFile | None = None,
                 race_network: WeightsFile | None | bool = None) -> None:
        if eval is None:
            eval = "linear" if weights is not None and network is None else (
                "net" if network is not None or shipped_weights() is not None else "linear")
        if eval not in EVALUATIONS:
            raise ValueError(f"eval must be one of {', '.join(EVALUATIONS)}, got {eval!r}")
        if eval == "net" and network is None:
            network = shipped_weights()
            if network is None:
                raise ValueError("eval='net' needs network weights, and none are installed: "
                                 "train them with tools/train_network.py, or use eval='linear'")
        self.eval = eval
        self.network = network if eval == "net" else None
        if race_network is None or race_network is True:
            race_network = shipped_race_weights() if eval == "net" else None
        self.race_network: WeightsFile | None = race_network or None
        """The network for races outside the bear-off zone, or None (the race formulas)."""
        self.knowledge = (
            "linear" if self.network is None else f"net {self.network.sha256[:16]}") + (
            f", race net {self.race_network.sha256[:16]}" if self.race_network is not None
            else ", race formula")
        """Which evaluation this is, by the checksums of its networks (`Agent.knowledge`)."""
        self.weights = weights if weights is not None else load_weights()
        if race_spread is None:
            given = self.weights.get(RACE_SPREAD_KEY)
            race_spread = given[0] if given else (
                load_race_spread() if weights is None else RACE_SPREAD)
        self.race_spread = race_spread
        self._use_bearoff = use_bearoff
        self._bearoff: BearoffDatabase | None = None
        self._bearoff_loaded = False
        n_point, n_global = len(POINT_FEATURES), len(GLOBAL_FEATURES)
        block = n_point + n_global
        self._me_off, self._other_off = 0, block
        self._cross_off = 2 * block
        self._n_point, self._n_global = n_point, n_global
        self._tables = (self._point_tables(0), self._point_tables(block))
        self._global_w = tuple(
            [self.weights[h][offset + n_point: offset + block] for h in HEADS]
            for offset in (0, block)
        )
        self._cross_w = [
            self.weights[h][self._cross_off: self._cross_off + len(CROSS_FEATURES)] for h in HEADS
        ]
        self._bias = [self.weights[h][-1] for h in HEADS]
        self._caches: tuple[dict[tuple[int, ...], tuple[SideInfo, _Partial]], ...] = ({}, {})
        self._global_caches: tuple[dict[Any, tuple[float, ...]], ...] = ({}, {})
        self._epc_cache: dict[tuple[int, ...], float] = {}
        self._race_cache: dict[tuple[int, ...], RaceSide] = {}
        self._roll_average_cache: dict[tuple[tuple[int, ...], tuple[int, ...]],
                                       Probabilities] = {}
        assert len(self.weights["win"]) == len(FEATURE_NAMES)
        self._net: Net | Mlp | None = None
        """The C evaluator in use (linear heads or network), or None (pure Python)."""
        if compiled or (compiled is None and not pure_python_forced()):
            self._net = (compiled_network(self.network) if self.network is not None
                         else compiled_net(self.weights))
            if self._net is None and compiled:
                raise RuntimeError("the C extension bgbot.players._contact is not usable "
                                   f"({extension_status()}): build it with `pip install -e .` "
                                   "(needs a C compiler)")
        self.compiled: bool = self._net is not None
        self._python_network = (PythonNetwork(self.network)
                                if self.network is not None and not self.compiled else None)
        self._race_mlp: Mlp | None = None
        self._python_race: PythonNetwork | None = None
        if self.race_network is not None:
            if self._net is not None:
                self._race_mlp = compiled_network(self.race_network)
                self._net.set_race_network(self._race_mlp)
            else:
                self._python_race = PythonNetwork(self.race_network)
        elif self._net is not None:
            self._net.set_race_formula((self._loaded_effective_pips, self.race_spread))

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

    # ----------------------------------------------------------------- caches

    def _side(self, side: tuple[int, ...], role: int) -> tuple[SideInfo, _Partial]:
        """A side's facts and its five heads' one-sided partial logits in ``role``
        (0 = on roll, 1 = not on roll), cached per side tuple."""
        cache = self._caches[role]
        found = cache.get(side)
        if found is not None:
            return found
        if len(cache) > self.CACHE_LIMIT:
            cache.clear()
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
        found = cache[side] = (info, partial)
        return found

    # ----------------------------------------------------------------- evaluation

    def contact_logits(self, position: Position) -> list[float]:
        """The five linear heads' logits (before the sigmoid) for a contact position."""
        if self._net is not None and self.eval == "linear":
            logits: Callable[..., Sequence[float]] = getattr(self._net, "logits")  # a Net
            return list(logits(position.mover, position.opponent))
        me_info, me_part = self._side(position.mover, 0)
        other_info, other_part = self._side(position.opponent, 1)
        return self._logits(me_info, me_part, other_info, other_part)

    def _logits(self, me_info: SideInfo, me_part: _Partial, other_info: SideInfo,
                other_part: _Partial) -> list[float]:
        cross = cross_features(me_info, other_info)
        cw = self._cross_w
        bias = self._bias
        return [
            me_part[h] + other_part[h] + sum(map(mul, cw[h], cross)) + bias[h] for h in range(5)
        ]

    def evaluate(self, position: Position) -> Probabilities:
        """Cubeless win / gammon / backgammon chances for the player on roll, before rolling."""
        return self.evaluate_sides(position.mover, position.opponent, position)

    def evaluate_sides(self, mover: tuple[int, ...], opponent: tuple[int, ...],
                       position: Position | None = None) -> Probabilities:
        """`evaluate` of the board with ``mover`` on roll (``position`` if already built).

        Lets a player score the board after its move without building the swapped position.
        """
        net = self._net
        if net is not None:
            return _new_tuple(Probabilities, net.evaluate(mover, opponent, self._race_sides))
        me_info, me_part = self._side(mover, 0)
        other_info, other_part = self._side(opponent, 1)
        if me_info.off == 15 or other_info.off == 15 or me_info.rearmost + other_info.rearmost <= 25:
            if position is None:
                position = Position._trusted(opponent, mover)
            if me_info.off == 15 or other_info.off == 15:
                terminal = _terminal(position)
                assert terminal is not None
                return terminal
            return self.evaluate_race(position)
        if self._python_network is not None:
            return self._python_network.chances_for(mover, opponent)
        cross = cross_features(me_info, other_info)
        cw = self._cross_w
        bias = self._bias
        z = [me_part[h] + other_part[h] + sum(map(mul, cw[h], cross)) + bias[h] for h in range(5)]
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

    def evaluate_many(self, boards: Sequence[tuple[tuple[int, ...], tuple[int, ...]]]
                      ) -> list[Probabilities]:
        """`evaluate_sides` of many (mover, opponent) boards, mover on roll: the contact ones
        in one numpy product when the network runs in Python, one C call each otherwise."""
        network = self._python_network
        if network is None:
            evaluate = self.evaluate_sides
            return [evaluate(mover, opponent) for mover, opponent in boards]
        out: list[Probabilities | None] = [None] * len(boards)
        contact: list[int] = []
        for k, (mover, opponent) in enumerate(boards):
            me_info, _ = self._side(mover, 0)
            other_info, _ = self._side(opponent, 1)
            if (me_info.off == 15 or other_info.off == 15
                    or me_info.rearmost + other_info.rearmost <= 25):
                out[k] = self.evaluate_sides(mover, opponent)
            else:
                contact.append(k)
        if contact:
            import numpy as np

            x = np.asarray([inputs(*boards[k]) for k in contact], dtype=np.float32)
            allowed = np.asarray([outcome_mask(*boards[k]) for k in contact])
            for k, row in zip(contact, network.outcomes_batch(x, allowed)):
                out[k] = chances([float(v) for v in row])
        return [found for found in out if found is not None]

    def plays(self, position: Position, dice: Sequence[int]) -> list[ScoredPlay]:
        """Every candidate of ``dice`` with the mover's 0-ply chances after it (the opponent on
        roll), in `Position.play_results` order: in one C call when compiled (the move
        generator, the evaluations, no Python positions or plays), else from `play_results`
        and `evaluate_many`."""
        net = self._net
        if net is None:
            return self._plays_python(position, dice)
        d1, d2 = check_dice(dice)
        return [(steps, mover, opponent, _new_tuple(Probabilities, probs))
                for steps, mover, opponent, probs in net.plays(
                    position.mover, position.opponent, d1, d2, self._race_sides)]

    def _plays_python(self, position: Position, dice: Sequence[int]) -> list[ScoredPlay]:
        """`plays` from `play_results` and `evaluate_many` (the definition of the C call)."""
        results = position.play_results(dice)
        scored = self.evaluate_many([(after.opponent, after.mover) for _, after in results])
        return [(tuple(play), after.mover, after.opponent, probs.flipped())
                for (play, after), probs in zip(results, scored)]

    def one_ply(self, after: Position) -> Probabilities | None:
        """`HeuristicPlayer._one_ply_probs(after)` with every reply evaluated (``reply_keep``
        0), in C: the chances of ``after.mover``, who has just moved, averaged over the
        opponent's 21 rolls, each answered by the reply that minimises our cubeless equity.
        None when the C extension is not in use (the caller runs the Python loop).

        Races after a reply are evaluated by `evaluate_race` (called back from C). Where two
        replies have exactly equal equity both loops keep the first in `play_results` order (C
        generates the same order), so the two agree to the last bit.
        """
        net = self._net
        if net is None:
            return None
        return _new_tuple(Probabilities, net.one_ply(after.mover, after.opponent,
                                                     self._race_sides))

    def two_ply(self, after: Position, keep: int, threshold: float) -> Probabilities | None:
        """`HeuristicPlayer._two_ply_python(after, keep, threshold)` in C: the chances of
        ``after.mover`` two plies ahead (the opponent's replies filtered at 0-ply, the best
        ``keep`` within ``threshold`` looked at one ply deeper). None without the extension."""
        net = self._net
        if net is None:
            return None
        return _new_tuple(Probabilities, net.two_ply(after.mover, after.opponent,
                                                     self._race_sides, keep, threshold))

    def roll_average(self, position: Position) -> Probabilities | None:
        """`heuristic.roll_average(self, position)` (every play evaluated) in C: the chances
        of the player on roll before rolling, averaged over his 21 rolls, each played to his
        best cubeless equity. None when the C extension is not in use."""
        net = self._net
        if net is None:
            return None
        cache = self._roll_average_cache
        key = (position.mover, position.opponent)
        found = cache.get(key)
        if found is None:
            if len(cache) >= self.ROLL_AVERAGE_CACHE:
                cache.clear()
            found = cache[key] = _new_tuple(Probabilities, net.roll_average(
                position.mover, position.opponent, self._race_sides))
        return found

    def rollout(self, position: Position, seed: int, first: int, count: int, truncate: int,
                vr: bool, dice: bytes,
                utilities: tuple[Sequence[float], Sequence[float]] | None = None,
                ) -> tuple[bytes, bytes, bytes] | None:
        """Trials ``first`` .. ``first + count - 1`` of a cubeless rollout of ``position`` by
        this evaluator's greedy 0-ply player, in C (`bgbot.rollout.trial.play_trial` is the
        definition): (outcomes, luck, plies) as bytes, 5 doubles per trial each (the chances
        of the side on roll at the start, its luck) and an int32 per trial. ``dice``: the
        first two rolls' table (`bgbot.rollout.dice.RolloutDice.table`). None when the C
        extension is not in use."""
        net = self._net
        if net is None:
            return None
        from ._contact import rollout

        return rollout(net, self._race_sides, position.mover, position.opponent, seed, first,
                       count, truncate, vr, dice, utilities)

    def _race_sides(self, mover: tuple[int, ...], opponent: tuple[int, ...],
                    position: Position | None = None) -> Probabilities:
        """`evaluate_race` of the board with ``mover`` on roll (``position`` if already built;
        the C look-ahead's call-back for races that are not over)."""
        if not self._bearoff_loaded:
            self._bearoff = _load_bearoff() if self._use_bearoff else None
            self._bearoff_loaded = True
        database = self._bearoff
        if not any(mover[6:]) and not any(opponent[6:]):  # the bear-off zone
            if database is not None:
                exact = database.probabilities(
                    position if position is not None else Position._trusted(opponent, mover))
                if exact is not None:
                    return exact
        elif self._race_mlp is not None:
            return chances(self._race_mlp.outcomes(mover, opponent))
        elif self._python_race is not None:
            return self._python_race.chances_for(mover, opponent)
        return race_chances(self._race_side(mover), self._race_side(opponent), self.race_spread)

    def evaluate_race(self, position: Position) -> Probabilities:
        """A race: the bear-off database when both sides are home, else the race network
        (``race_network``) or the race formulas."""
        return self._race_sides(position.mover, position.opponent, position)

    def race_probit(self, position: Position) -> float:
        """`race_probit` of a race with this evaluator's effective pips (for calibration)."""
        if not self._bearoff_loaded:
            self._bearoff = _load_bearoff() if self._use_bearoff else None
            self._bearoff_loaded = True
        return race_probit(self._effective_pips(position.mover),
                           self._effective_pips(position.opponent))

    def _race_side(self, side: tuple[int, ...]) -> RaceSide:
        """`race_side` with this evaluator's effective pips, cached per side."""
        found = self._race_cache.get(side)
        if found is None:
            if len(self._race_cache) > self.CACHE_LIMIT:
                self._race_cache.clear()
            found = self._race_cache[side] = race_side(side, self._effective_pips(side))
        return found

    def _loaded_effective_pips(self, side: tuple[int, ...]) -> float:
        self.has_bearoff  # noqa: B018 - loads the database the effective pips use
        return self._effective_pips(side)

    def _effective_pips(self, side: tuple[int, ...]) -> float:
        """`effective_pips` with this evaluator's database, cached per side."""
        found = self._epc_cache.get(side)
        if found is None:
            if len(self._epc_cache) > self.CACHE_LIMIT:
                self._epc_cache.clear()
            found = self._epc_cache[side] = effective_pips(side, self._bearoff)
        return found

    @property
    def has_bearoff(self) -> bool:
        """Whether the exact bear-off database is in use (loads it on first ask)."""
        if not self._bearoff_loaded:
            self._bearoff = _load_bearoff() if self._use_bearoff else None
            self._bearoff_loaded = True
        return self._bearoff is not None


def equity_after(evaluator: Callable[[Position], Probabilities], after: Position) -> float:
    """Cubeless money equity for the player who just moved to ``after`` (mover's view)."""
    terminal = _terminal(after)
    if terminal is not None:
        return terminal.equity()  # _terminal reads `after` from the mover's side
    return -evaluator(after.swapped()).equity()
