"""Type stub of the optional C extension bgbot/players/_contact.c (see its header)."""

from typing import Callable, Sequence, final

_Side = tuple[int, ...]
_Five = tuple[float, float, float, float, float]
_Race = Callable[[_Side, _Side], Sequence[float]]

N_FEATURES: int
"""Length of the feature vector (len(features.FEATURE_NAMES))."""
N_HEADS: int
"""Number of heads (len(evaluator.HEADS))."""

def features(mover: Sequence[int], opponent: Sequence[int], /) -> list[float]:
    """`features.feature_vector(mover, opponent)`: ``mover`` is on roll."""

def legal_plays(
    mover: Sequence[int], opponent: Sequence[int], d1: int, d2: int, /
) -> list[tuple[tuple[tuple[int, int, bool], ...], _Side, _Side]]:
    """(steps, mover after, opponent after) of each distinct result of the legal plays of
    (d1, d2), mover's numbering, in `Position.play_results` order (empty: the roll cannot be
    played); the steps ``(from_point, to_point, hit)`` (25 = bar, 0 = off) are those of the
    `Play` that `Position.play_results` pairs with the board."""

@final
class Net:
    """The five contact heads (evaluator.HEADS order), each N_FEATURES weights."""

    def __init__(self, weights: Sequence[Sequence[float]]) -> None: ...
    def logits(
        self, mover: Sequence[int], opponent: Sequence[int], /
    ) -> tuple[float, float, float, float, float]:
        """The five heads' logits (weights · features)."""

    def contact(
        self, mover: Sequence[int], opponent: Sequence[int], /
    ) -> tuple[float, float, float, float, float] | None:
        """The constrained probabilities of `HeuristicEvaluator.evaluate_sides`, or None
        when the position is not for the contact net (no contact, or a side is all off)."""

    def one_ply(self, mover: Sequence[int], opponent: Sequence[int], race: _Race, /) -> _Five:
        """`HeuristicPlayer._one_ply_probs` (every reply evaluated) of the board after
        ``mover``'s move, ``opponent`` to roll: ``mover``'s chances. ``race(m, o)``: the
        chances of ``m`` on roll in a race that is not over."""

    def roll_average(
        self, mover: Sequence[int], opponent: Sequence[int], race: _Race, /
    ) -> _Five:
        """`heuristic.roll_average` (every play evaluated): ``mover``'s chances, on roll,
        averaged over his 21 rolls; ``race`` as for `one_ply`."""
