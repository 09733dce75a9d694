"""One small evaluator per position class behind one interface, and the dispatch between them.

Every evaluator answers one question, `SideEvaluator.evaluate_sides`: the cubeless chances of
the side on roll (``mover``) before rolling, for the positions of its class
(`position_class.PositionClass`). `ByClass` holds one per class and asks the one of the
position's class (`position_class.side_class`); `evaluator.HeuristicEvaluator` builds it from
what a player is given (networks, linear weights, the bear-off database) and is what players,
look-ahead, rollouts and training use. The classes' evaluators:

* ``over``: `Terminal`, the game's outcome;
* ``bearoff``: `BearoffExact`, the exact one-sided bear-off database (`bearoff.py`), the race
  formula where the database does not hold the position;
* ``race``: `race.RaceFormula`, or a race network (`network.PythonNetwork`, or in C
  `CompiledNetwork`);
* ``crashed``: a crashed network where one is given, else the contact evaluator;
* ``contact``: the contact network, or the linear heads kept for regression (``eval=linear``:
  `linear.LinearHeads`, in C `CompiledHeads`).

The C extension (``bgbot.players._contact``) dispatches the same way in its kernels
(`_kernels.h` `evaluate_by_class`); the tests hold the two equal.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping, Protocol, Sequence

from ..core.position import Position
from .base import Probabilities
from .caches import BoundedCache
from .network import chances
from .position_class import PositionClass, SideFacts, class_of, side_facts

if TYPE_CHECKING:
    from ._contact import Mlp, Net
    from .race import RaceFormula

Side = tuple[int, ...]


class SideEvaluator(Protocol):
    """Cubeless chances of the side on roll (``mover``, 25 counts in its own numbering)
    against ``opponent``, before rolling: what every class's evaluator answers."""

    def evaluate_sides(self, mover: Side, opponent: Side) -> Probabilities: ...


def game_outcome(position: Position) -> Probabilities | None:
    """Exact chances of the side on roll when the game is already over (one side has no
    chequer left), else None."""
    kind = position.win_kind()
    if kind == 0:
        return None
    if not any(position.mover):
        return Probabilities(1.0, float(kind >= 2), float(kind >= 3), 0.0, 0.0)
    return Probabilities(0.0, 0.0, 0.0, float(kind >= 2), float(kind >= 3))


class Terminal:
    """The ``over`` class: the outcome of the finished game."""

    def evaluate_sides(self, mover: Side, opponent: Side) -> Probabilities:
        found = game_outcome(Position._trusted(opponent, mover))
        if found is None:
            raise ValueError("the game is not over")
        return found


class BearoffExact:
    """The ``bearoff`` class: the bear-off database of ``formula`` (its exact two-sided
    chances), and the formula itself where the database does not hold the position (a small
    test database) or none is in use."""

    def __init__(self, formula: RaceFormula) -> None:
        self.formula = formula

    def evaluate_sides(self, mover: Side, opponent: Side) -> Probabilities:
        database = self.formula.database
        if database is not None:
            exact = database.probabilities(Position._trusted(opponent, mover))
            if exact is not None:
                return exact
        return self.formula.evaluate_sides(mover, opponent)


class CompiledNetwork:
    """A network run by the C extension (``_contact.Mlp``): its chances, from its six outcome
    probabilities as `network.chances` sums them (the same sums as C's)."""

    def __init__(self, network: Mlp) -> None:
        self.network = network

    def evaluate_sides(self, mover: Side, opponent: Side) -> Probabilities:
        return chances(self.network.outcomes(mover, opponent))


class CompiledHeads:
    """The linear heads run by the C extension (``_contact.Net``), for positions with
    contact."""

    def __init__(self, heads: Net) -> None:
        self.heads = heads

    def evaluate_sides(self, mover: Side, opponent: Side) -> Probabilities:
        found = self.heads.contact(mover, opponent)
        if found is None:
            raise ValueError("the linear heads evaluate positions with contact only")
        return Probabilities(*found)


class ByClass:
    """Chances of the side on roll from the evaluator of the position's class (module
    docstring): ``evaluators`` holds one for every `PositionClass`."""

    def __init__(self, evaluators: Mapping[PositionClass, SideEvaluator]) -> None:
        missing = [kind.value for kind in PositionClass if kind not in evaluators]
        if missing:
            raise ValueError(f"no evaluator for the class(es) {', '.join(missing)}")
        self.evaluators = dict(evaluators)
        self._facts: BoundedCache[Side, SideFacts] = BoundedCache()

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_facts": BoundedCache()}

    def _side_facts(self, side: Side) -> SideFacts:
        found = self._facts.get(side)
        if found is None:
            found = self._facts.put(side, side_facts(side))
        return found

    def classify(self, mover: Side, opponent: Side) -> PositionClass:
        """`position_class.side_class` of the board (each side's facts cached)."""
        return class_of(self._side_facts(mover), self._side_facts(opponent))

    def evaluator_for(self, kind: PositionClass) -> SideEvaluator:
        """The evaluator of class ``kind``."""
        return self.evaluators[kind]

    def evaluate_sides(self, mover: Side, opponent: Side) -> Probabilities:
        """The chances of ``mover`` on roll, by its class's evaluator."""
        return self.evaluators[self.classify(mover, opponent)].evaluate_sides(mover, opponent)

    def evaluate_many(self, boards: Sequence[tuple[Side, Side]]) -> list[Probabilities]:
        """`evaluate_sides` of many (mover, opponent) boards; the boards for an evaluator
        that takes many at once (``evaluate_batch``: a network in numpy) go to it in one call
        (the crashed and the contact class in one when they share it)."""
        out: list[Probabilities | None] = [None] * len(boards)
        batches: dict[int, tuple[Any, list[int]]] = {}
        for k, (mover, opponent) in enumerate(boards):
            evaluator = self.evaluators[self.classify(mover, opponent)]
            batch = getattr(evaluator, "evaluate_batch", None)
            if batch is not None:
                batches.setdefault(id(evaluator), (batch, []))[1].append(k)
            else:
                out[k] = evaluator.evaluate_sides(mover, opponent)
        for batch, indices in batches.values():
            for k, found in zip(indices, batch([boards[k] for k in indices])):
                out[k] = found
        return [found for found in out if found is not None]
