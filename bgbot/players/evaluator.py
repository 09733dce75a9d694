"""The heuristic player's evaluator: cubeless chances for the player on roll, before rolling,
from one evaluator per position class (`by_class`), with the look-ahead kernels.

`HeuristicEvaluator` builds the classes' evaluators from what it is given:

* **bear-off** (both sides home): the exact one-sided bear-off database (`bearoff.py`), when
  ``use_bearoff`` and the position fits;
* **race**: the race network (``race_network``: a `network.WeightsFile` of phase "race") or
  the race formula of `race.py` (its spread ``race_spread``, refitted by
  ``tools/train_heuristic.py --calibrate``);
* **crashed**: the crashed network (``crashed_network``, phase "crashed"), else the contact
  evaluator;
* **contact**: the evaluation network of `network.py` over the features of `features.py` and a
  plain board encoding (``eval="net"``, the default when its weights are installed: trained by
  ``tools/train_network.py``), or the five logistic heads of `linear.py` (``eval="linear"``,
  kept for regression duels against the network);
* **over**: the game's outcome.

Every evaluator's chances obey the hard constraints (§2.7): a side that has borne off a chequer
cannot be gammoned, a side with no chequer on the bar or in the other's home board cannot be
backgammoned, backgammons <= gammons <= wins.

The evaluations also exist in C (the optional extension ``bgbot.players._contact``, built by
``pip install``): when it is built, the evaluator uses it unless ``BGBOT_PURE_PYTHON`` is set (to
anything but "0") or the constructor says ``compiled=False``. The C evaluator holds the same
classes (its slots: the race and crashed networks, the race formula) and dispatches in C for the
look-ahead and rollout kernels (`plays`, `one_ply`, `two_ply`, `roll_average`, `rollout`), the
bear-off database answering through a Python call-back. The Python code is the reference (the C
features equal ``features.feature_vector``, the C network inputs ``network.inputs``, the C race
formula `race.race_chances`, the C classes `position_class.side_class`) and the fallback; the
networks' fallback runs them with numpy. An extension built from other definitions (a stale
build) is refused with a warning, and the test suite fails on it (`extension_status`).
"""

from __future__ import annotations

import struct
import warnings
from functools import cache
from typing import TYPE_CHECKING, Any, Callable, Sequence, cast

from ..core.compiled import PURE_PYTHON_ENV, pure_python_forced
from ..core.position import Position, RawStep, check_dice
from .base import Probabilities
from .by_class import (
    BearoffExact,
    ByClass,
    CompiledHeads,
    CompiledNetwork,
    SideEvaluator,
    Terminal,
    game_outcome,
)
from .features import feature_vector
from .linear import HEADS, WEIGHTS_MODULE, LinearHeads, load_weights
from .network import (
    N_INPUTS,
    PythonNetwork,
    WeightsFile,
    inputs,
    shipped_crashed_weights,
    shipped_race_weights,
    shipped_weights,
)
from .position_class import PositionClass, side_class
from .race import (
    RACE_SPREAD,
    RACE_SPREAD_KEY,
    RaceFormula,
    effective_pips,
    load_race_spread,
    race_probabilities,
)

if TYPE_CHECKING:
    from ._contact import Mlp, Net

__all__ = [
    "EVALUATIONS", "HEADS", "PURE_PYTHON_ENV", "RACE_SPREAD", "RACE_SPREAD_KEY", "WEIGHTS_MODULE",
    "HeuristicEvaluator", "ScoredPlay", "effective_pips", "equity_after", "extension_status",
    "load_race_spread", "load_weights", "pure_python_forced", "race_probabilities",
    "training_extension_status",
]

ScoredPlay = tuple[tuple[RawStep, ...], tuple[int, ...], tuple[int, ...], Probabilities]
"""One candidate of a roll (`HeuristicEvaluator.plays`): its steps (``(from, to, hit)``,
mover's numbering, as a `Play` holds them), the mover's and the opponent's counts after it,
and the mover's 0-ply chances there (the opponent on roll)."""
EVALUATIONS = ("net", "linear")
"""The contact evaluations: the network (`network.py`) and the linear heads (`linear.py`)."""

_new_tuple = tuple.__new__


def _terminal(position: Position) -> Probabilities | None:
    """Exact chances of the side on roll when the game is already over, else None
    (`by_class.game_outcome`)."""
    return game_outcome(position)


# Positions on which the extension must give what features.py, network.py and position_class.py
# give before it is trusted (a stale build from older definitions is caught here): (mover,
# opponent), mover on roll.
_PROBES: tuple[tuple[tuple[int, ...], tuple[int, ...]], ...] = (
    ((0, 0, 0, 0, 0, 5, 0, 3, 0, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0),) * 2,
    ((0, 2, 2, 3, 2, 2, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1),
     (1, 0, 2, 0, 2, 3, 0, 2, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 2)),
    ((0, 0, 0, 2, 2, 4, 2, 2, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0),
     (2, 3, 2, 2, 0, 2, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1, 0, 0, 0, 0, 0, 0, 1, 0, 0)),
    ((8, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0),
     (0, 0, 0, 0, 0, 4, 0, 4, 0, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0)),
    ((0, 0, 3, 3, 3, 3, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0),
     (2, 2, 2, 2, 2, 2, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)),
)


def _differs(module: Any, check_classes: bool) -> str | None:
    """What in the extension ``module`` differs from the Python definitions on the probes."""
    for mover, opponent in _PROBES:
        if check_classes:
            ours = module.features(mover, opponent)
            reference = feature_vector(mover, opponent)
            if len(ours) != len(reference) or any(
                    abs(a - b) > 1e-9 for a, b in zip(ours, reference)):
                return "its features differ from features.py"
            if any(abs(a - b) > 1e-6 for a, b in zip(module.inputs(mover, opponent),
                                                     inputs(mover, opponent))):
                return "its network inputs differ from network.py"
            if module.position_class(mover, opponent) != side_class(mover, opponent).value:
                return "its position classes differ from position_class.py"
        else:
            x, _ = module.encode(bytes(mover) + bytes(opponent))
            found = struct.unpack(f"={N_INPUTS}f", x)
            if any(abs(a - b) > 1e-6 for a, b in zip(found, inputs(mover, opponent))):
                return "its network inputs differ from network.py"
    return None


@cache
def extension_status() -> str:
    """What the C extensions are: "ok", "missing" (``bgbot.players._contact`` not built: the
    pure-Python code runs) or "stale: ..." (``_contact``, or ``_selfplay`` where it is built,
    made from other definitions than features.py, network.py and position_class.py: refused,
    and the test suite fails on it). Checked once per process."""
    try:
        from . import _contact
    except ImportError:
        return "missing"
    module: Any = _contact
    if (getattr(module, "N_INPUTS", None) != N_INPUTS or not hasattr(module, "Mlp")
            or not hasattr(module, "position_class")):
        return (f"stale: it has {getattr(module, 'N_INPUTS', 'no')} network inputs, "
                f"network.py {N_INPUTS}")
    differs = _differs(module, True)
    if differs is not None:
        return f"stale: {differs}"
    training = training_extension_status()
    return "ok" if training in ("ok", "missing") else training


@cache
def training_extension_status() -> str:
    """What training's C extension ``bgbot.players._selfplay`` is: "ok", "missing" (not built,
    or built against another ``_contact``: the player does not need it, tools/train_network.py
    does) or "stale: ..." (built from other definitions)."""
    try:
        from . import _selfplay
    except ImportError:
        return "missing"
    module: Any = _selfplay
    if getattr(module, "N_INPUTS", None) != N_INPUTS or not hasattr(module, "encode"):
        return "stale: bgbot.players._selfplay was built for other network inputs"
    differs = _differs(module, False)
    return "ok" if differs is None else f"stale: bgbot.players._selfplay: {differs}"


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


def _network_option(given: WeightsFile | None | bool, shipped: WeightsFile | None,
                    ) -> WeightsFile | None:
    """A class network option: a network, or None / True for the shipped one, or False for
    none."""
    if given is None or given is True:
        return shipped
    return given or None


class HeuristicEvaluator:
    """``evaluate(position)``: gnubg-style cubeless chances for the player on roll, by the
    evaluator of the position's class (module docstring; `classes` holds them).

    ``eval``: the contact evaluation, "net" (the network of `network.py`: ``network`` or the
    shipped weights) or "linear" (the five logistic heads: ``weights`` or the tuned module);
    None (default) is "linear" when linear ``weights`` are given, else "net" when network
    weights are installed, else "linear". ``race_network``: the network for races outside
    the bear-off database (default: the shipped one with ``eval="net"``; False: none, the race
    formula decides). ``crashed_network``: the network for crashed positions (default: the
    shipped one with ``eval="net"``, where one is shipped; False: none, the contact evaluation
    decides).

    ``compiled``: True requires the C extension (RuntimeError when it is not built), False
    forces the pure-Python code, None (default) uses C when built unless `pure_python_forced`.
    ``self.compiled`` says which is in use.
    """

    ROLL_AVERAGE_CACHE = 256
    """`roll_average` results kept (the same position is asked again within a turn: the
    doubler's cube decision and the taker's, a rollout's cube decision and its luck)."""

    def __init__(self, weights: dict[str, list[float]] | None = None,
                 use_bearoff: bool = True, race_spread: float | None = None,
                 compiled: bool | None = None, *, eval: str | None = None,
                 network: WeightsFile | None = None,
                 race_network: WeightsFile | None | bool = None,
                 crashed_network: WeightsFile | None | bool = None) -> None:
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
        net = eval == "net"
        self.race_network = _network_option(race_network, shipped_race_weights() if net else None)
        """The network for races outside the bear-off zone, or None (the race formula)."""
        self.crashed_network = _network_option(
            crashed_network, shipped_crashed_weights() if net else None)
        """The network for crashed positions, or None (the contact evaluation)."""
        self.knowledge = (
            "linear" if self.network is None else f"net {self.network.sha256[:16]}") + (
            f", race net {self.race_network.sha256[:16]}" if self.race_network is not None
            else ", race formula") + (
            f", crashed net {self.crashed_network.sha256[:16]}"
            if self.crashed_network is not None else "")
        """Which evaluation this is, by the checksums of its networks (`Agent.knowledge`)."""
        self.weights = weights if weights is not None else load_weights()
        if race_spread is None:
            given = self.weights.get(RACE_SPREAD_KEY)
            race_spread = given[0] if given else (
                load_race_spread() if weights is None else RACE_SPREAD)
        self.race_spread = race_spread
        self._net: Net | Mlp | None = None
        """The C evaluator in use (linear heads or network, with its class slots), or None
        (pure Python)."""
        if compiled or (compiled is None and not pure_python_forced()):
            self._net = (compiled_network(self.network) if self.network is not None
                         else compiled_net(self.weights))
            if self._net is None and compiled:
                raise RuntimeError("the C extension bgbot.players._contact is not usable "
                                   f"({extension_status()}): build it with `pip install -e .` "
                                   "(needs a C compiler)")
        self.compiled: bool = self._net is not None
        self.formula = RaceFormula(race_spread, use_bearoff)
        """The race formula (the race class without a race network, and the bear-off class
        where the database has no answer)."""
        self.classes = ByClass(self._class_evaluators())
        """The evaluator of each position class."""
        self._linear: LinearHeads | None = None
        self._roll_average_cache: dict[tuple[tuple[int, ...], tuple[int, ...]],
                                       Probabilities] = {}

    def _network(self, weights: WeightsFile) -> SideEvaluator:
        """A class's network: in C when this evaluator is compiled (an Mlp in a slot)."""
        if self._net is None:
            return PythonNetwork(weights)
        mlp = compiled_network(weights)
        assert mlp is not None
        return CompiledNetwork(mlp)

    def _class_evaluators(self) -> dict[PositionClass, SideEvaluator]:
        """The evaluator of each class; in C, the same in the C evaluator's slots."""
        net = self._net
        contact: SideEvaluator
        if net is None:
            contact = (PythonNetwork(self.network) if self.network is not None
                       else LinearHeads(self.weights))
        elif self.network is not None:
            contact = CompiledNetwork(cast("Mlp", net))
        else:
            contact = CompiledHeads(cast("Net", net))
        race = (self._network(self.race_network) if self.race_network is not None
                else self.formula)
        crashed = (self._network(self.crashed_network) if self.crashed_network is not None
                   else contact)
        if net is not None:
            net.set_race_network(race.network if isinstance(race, CompiledNetwork) else None)
            net.set_race_formula((self.formula.effective_pips, self.race_spread)
                                 if race is self.formula else None)
            net.set_crashed_network(crashed.network if self.crashed_network is not None
                                    and isinstance(crashed, CompiledNetwork) else None)
        return {PositionClass.OVER: Terminal(), PositionClass.BEAROFF: BearoffExact(self.formula),
                PositionClass.RACE: race, PositionClass.CRASHED: crashed,
                PositionClass.CONTACT: contact}

    # ----------------------------------------------------------------- evaluation

    def evaluate(self, position: Position) -> Probabilities:
        """Cubeless win / gammon / backgammon chances for the player on roll, before rolling."""
        return self.evaluate_sides(position.mover, position.opponent)

    def evaluate_sides(self, mover: tuple[int, ...], opponent: tuple[int, ...],
                       position: Position | None = None) -> Probabilities:
        """`evaluate` of the board with ``mover`` on roll (``position``, if already built, is
        not needed: kept for callers that pass it).

        Lets a player score the board after its move without building the swapped position.
        In C when compiled (the class dispatch too), else by `classes`.
        """
        net = self._net
        if net is not None:
            return _new_tuple(Probabilities, net.evaluate(mover, opponent, self._race_sides))
        return self.classes.evaluate_sides(mover, opponent)

    def evaluate_many(self, boards: Sequence[tuple[tuple[int, ...], tuple[int, ...]]]
                      ) -> list[Probabilities]:
        """`evaluate_sides` of many (mover, opponent) boards, mover on roll: one C call each
        when compiled, else `ByClass.evaluate_many` (a network's boards in one numpy
        product)."""
        if self._net is None:
            return self.classes.evaluate_many(boards)
        evaluate = self.evaluate_sides
        return [evaluate(mover, opponent) for mover, opponent in boards]

    def _race_sides(self, mover: tuple[int, ...], opponent: tuple[int, ...],
                    position: Position | None = None) -> Probabilities:
        """The chances of ``mover`` on roll in a race that is not over, by its class's
        evaluator in Python (the bear-off database, the race network or formula): the C
        kernels' call-back for what their slots do not cover (``position`` is not needed).

        The first call hands the bear-off database, which it loads, to C (`hand_bearoff_to_c`):
        from then on C answers the bear-off zone itself."""
        net = self._net
        if net is not None and not net.has_bearoff:
            self.hand_bearoff_to_c()
        return self.classes.evaluate_sides(mover, opponent)

    def hand_bearoff_to_c(self, load: bool = True) -> bool:
        """Give the C evaluator the bear-off database's tables (read in place, not copied): it
        then answers the bear-off zone and the race formula's effective pips without calling
        back into Python, to the same last bit. ``load``: load the database if it is not loaded
        yet (seconds the first time on a machine). True when C holds the tables; False without
        the extension, with ``use_bearoff`` off, or when the database is not loaded and
        ``load`` is False. Not pickled: a copy hands them over again at its first race."""
        net = self._net
        if net is None:
            return False
        if net.has_bearoff:
            return True
        formula = self.formula
        if not formula.use_bearoff or not (load or formula.database_loaded):
            return False
        database = formula.database
        if database is None:
            return False
        net.set_bearoff(database.c_tables())
        return True

    def evaluate_race(self, position: Position) -> Probabilities:
        """A race: the bear-off database when both sides are home, else the race network
        (``race_network``) or the race formula."""
        return self._race_sides(position.mover, position.opponent, position)

    def race_probit(self, position: Position) -> float:
        """`race.race_probit` of a race with this evaluator's effective pips (for
        calibration)."""
        return self.formula.probit(position.mover, position.opponent)

    @property
    def has_bearoff(self) -> bool:
        """Whether the exact bear-off database is in use (loads it on first ask)."""
        return self.formula.database is not None

    def contact_logits(self, position: Position) -> list[float]:
        """The five linear heads' logits (before the sigmoid) for a contact position, by this
        evaluator's linear ``weights`` (whatever the contact evaluation in use)."""
        if self._net is not None and self.eval == "linear":
            logits: Callable[..., Sequence[float]] = getattr(self._net, "logits")  # a Net
            return list(logits(position.mover, position.opponent))
        linear = self.classes.evaluator_for(PositionClass.CONTACT)
        if not isinstance(linear, LinearHeads):
            if self._linear is None:
                self._linear = LinearHeads(self.weights)
            linear = self._linear
        return linear.logits(position.mover, position.opponent)

    # ----------------------------------------------------------------- look-ahead

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

        Where two replies have exactly equal equity both loops keep the first in
        `play_results` order (C generates the same order), so the two agree to the last bit.
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

        self.hand_bearoff_to_c()
        return rollout(net, self._race_sides, position.mover, position.opponent, seed, first,
                       count, truncate, vr, dice, utilities)


def equity_after(evaluator: Callable[[Position], Probabilities], after: Position) -> float:
    """Cubeless money equity for the player who just moved to ``after`` (mover's view)."""
    terminal = _terminal(after)
    if terminal is not None:
        return terminal.equity()  # _terminal reads `after` from the mover's side
    return -evaluator(after.swapped()).equity()
