"""Type stub of the optional C extension bgbot/players/_contact.c (see its header)."""

from typing import Sequence, final

N_FEATURES: int
"""Length of the feature vector (len(features.FEATURE_NAMES))."""
N_HEADS: int
"""Number of heads (len(evaluator.HEADS))."""

def features(mover: Sequence[int], opponent: Sequence[int], /) -> list[float]:
    """`features.feature_vector(mover, opponent)`: ``mover`` is on roll."""

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
