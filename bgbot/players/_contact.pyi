"""Type stub of the optional C extension bgbot/players/_contact.c (see its header)."""

from typing import Any, Callable, Sequence, final

_Side = tuple[int, ...]
_Five = tuple[float, float, float, float, float]
_Race = Callable[[_Side, _Side], Sequence[float]]
_Steps = tuple[tuple[int, int, bool], ...]
_Formula = tuple[Callable[[_Side], float], float]

N_FEATURES: int
"""Length of the feature vector (len(features.FEATURE_NAMES))."""
N_HEADS: int
"""Number of heads (len(linear.HEADS))."""
N_INPUTS: int
"""Number of network inputs (network.N_INPUTS)."""
N_OUTCOMES: int
"""Number of network outputs (len(network.OUTCOMES))."""
KERNELS_VERSION: int
"""The version of the kernels (_kernels.h) this module was built from (_selfplay checks it)."""
FORWARD: str
"""The copy of the network's forward pass this CPU runs: avx2 or generic (every multiply-add
fused, so both give the same values; BGBOT_FORWARD=generic asks for the slower one)."""

def features(mover: Sequence[int], opponent: Sequence[int], /) -> list[float]:
    """`features.feature_vector(mover, opponent)`: ``mover`` is on roll."""

def inputs(mover: Sequence[int], opponent: Sequence[int], /) -> list[float]:
    """`network.inputs(mover, opponent)`: ``mover`` is on roll."""

def position_class(mover: Sequence[int], opponent: Sequence[int], /) -> str:
    """`position_class.side_class(mover, opponent).value`: the class C dispatches by."""

def rollout(evaluator: Net | Mlp, race: _Race, mover: Sequence[int], opponent: Sequence[int],
            seed: int, first: int, count: int, truncate: int, vr: bool, dice: bytes,
            utilities: tuple[Sequence[float], Sequence[float]] | None = None,
            ) -> tuple[bytes, bytes, bytes]:
    """(outcomes, luck, plies) of trials first .. first + count - 1 of a cubeless rollout of
    the board (``mover`` on roll) by the greedy 0-ply player: 5 doubles per trial each (the
    chances of the side on roll at the start, its luck summed over the rolls when ``vr``) and
    an int32 per trial (bgbot/rollout/trial.py `play_trial` is the definition). Positions are
    evaluated as `_Evaluator.evaluate` does."""

class _Evaluator:
    race_network: Mlp | None
    """The network for races outside the bear-off zone, or None."""
    crashed_network: Mlp | None
    """The network for crashed positions, or None (the evaluator's own contact evaluation)."""
    race_formula: _Formula | None
    """(effective pips of a side, spread): races outside the bear-off zone without a race
    network by race.py's formula in C; None: by the race call-back."""
    has_bearoff: bool
    """Whether the evaluator holds the bear-off database (`set_bearoff`)."""

    def set_race_network(self, network: Mlp | None, /) -> None:
        """Use ``network`` for races outside the bear-off zone (None: the race formula when
        one is set, else the race call-back)."""

    def set_crashed_network(self, network: Mlp | None, /) -> None:
        """Use ``network`` for crashed positions (None: this evaluator's own evaluation)."""

    def set_race_formula(self, formula: _Formula | None, /) -> None:
        """Races outside the bear-off zone without a race network by the formula."""

    def set_bearoff(self, tables: tuple[Any, ...] | None, /) -> None:
        """The bear-off database (`bearoff.BearoffDatabase.c_tables`), read in place: the
        bear-off zone by its exact chances and the race formula's effective pips from it, no
        call-back (None: the call-backs). Not pickled."""

    def contact(self, mover: Sequence[int], opponent: Sequence[int], /) -> _Five | None:
        """This evaluator's own chances of the player on roll, or None when the position has
        no contact (a race, or a side is all off)."""

    def evaluate(self, mover: Sequence[int], opponent: Sequence[int], race: _Race, /) -> _Five:
        """The chances of the player on roll by the class of the position: its outcome when
        it is over, the crashed network for a crashed one (where set), this evaluator for
        contact, the race network or formula for a race outside the bear-off zone (where
        set), ``race(mover, opponent)`` for the rest."""

    def plays(self, mover: Sequence[int], opponent: Sequence[int], d1: int, d2: int,
              race: _Race, /) -> list[tuple[_Steps, _Side, _Side, _Five]]:
        """Every candidate of the roll with the mover's 0-ply chances after it."""

    def one_ply(self, mover: Sequence[int], opponent: Sequence[int], race: _Race, /) -> _Five:
        """`HeuristicPlayer._one_ply_probs` (every reply evaluated) of the board after
        ``mover``'s move, ``opponent`` to roll: ``mover``'s chances. ``race``: as for
        `evaluate`."""

    def two_ply(self, mover: Sequence[int], opponent: Sequence[int], race: _Race, keep: int,
                threshold: float, /) -> _Five:
        """`HeuristicPlayer._two_ply_python` of the board after ``mover``'s move."""

    def roll_average(
        self, mover: Sequence[int], opponent: Sequence[int], race: _Race, /
    ) -> _Five:
        """`heuristic.roll_average` (every play evaluated): ``mover``'s chances, on roll,
        averaged over his 21 rolls; ``race`` as for `evaluate`."""

@final
class Net(_Evaluator):
    """The five linear contact heads (linear.HEADS order), each N_FEATURES weights."""

    def __init__(self, weights: Sequence[Sequence[float]]) -> None: ...
    def logits(
        self, mover: Sequence[int], opponent: Sequence[int], /
    ) -> tuple[float, float, float, float, float]:
        """The five heads' logits (weights · features)."""

@final
class Mlp(_Evaluator):
    """A network of network.py: float32 parameters, hidden layer widths."""

    def __init__(self, weights: bytes, hidden: Sequence[int]) -> None: ...
    def outcomes(self, mover: Sequence[int], opponent: Sequence[int], /) -> tuple[float, ...]:
        """The six outcome probabilities of the player on roll."""
