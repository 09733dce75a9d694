"""Type stub of the optional C extension bgbot/players/_contact.c (see its header)."""

from typing import Callable, Sequence, final

_Side = tuple[int, ...]
_Five = tuple[float, float, float, float, float]
_Race = Callable[[_Side, _Side], Sequence[float]]
_Steps = tuple[tuple[int, int, bool], ...]

N_FEATURES: int
"""Length of the feature vector (len(features.FEATURE_NAMES))."""
N_HEADS: int
"""Number of heads (len(evaluator.HEADS))."""
N_INPUTS: int
"""Number of network inputs (network.N_INPUTS)."""
N_OUTCOMES: int
"""Number of network outputs (len(network.OUTCOMES))."""

def features(mover: Sequence[int], opponent: Sequence[int], /) -> list[float]:
    """`features.feature_vector(mover, opponent)`: ``mover`` is on roll."""

def inputs(mover: Sequence[int], opponent: Sequence[int], /) -> list[float]:
    """`network.inputs(mover, opponent)`: ``mover`` is on roll."""

def encode(boards: bytes, /) -> tuple[bytes, bytes]:
    """(float32 network inputs, 6-byte outcome masks) of 50-byte boards."""

def selfplay(evaluator: Net | Mlp, race: _Race, seed: int, games: int, noise: float = 0.0,
             max_plies: int = 10000, phase: int = 0, alternatives: int = 0,
             search: tuple[int, float] | None = None) -> tuple[bytes, bytes, bytes, bytes]:
    """(boards, values, ends, alternatives) of the contact (phase 0) or race (1) positions of
    greedy 0-ply self-play games (with ``search`` = (limit, threshold): played at 1-ply with
    that move filter), and with ``alternatives`` K the boards of up to K runners-up of each
    move (see the C source)."""

def roll_averages(evaluator: Net | Mlp, race: _Race, boards: bytes, /) -> bytes:
    """5 doubles per 50-byte board: its roll_average."""

def duel(a: Net | Mlp, b: Net | Mlp, race: _Race, seed: int, pairs: int, /) -> list[int]:
    """a's points per game in mirrored cubeless pairs of two greedy 0-ply evaluators."""

def duel_pubeval(evaluator: Net | Mlp, race: _Race, contact_weights: Sequence[float],
                 race_weights: Sequence[float], seed: int, pairs: int, /) -> list[int]:
    """The evaluator's points per game in mirrored cubeless pairs against pubeval."""

def rollout(evaluator: Net | Mlp, race: _Race, mover: Sequence[int], opponent: Sequence[int],
            seed: int, first: int, count: int, truncate: int, vr: bool, dice: bytes,
            utilities: tuple[Sequence[float], Sequence[float]] | None = None,
            race_formula: tuple[Callable[[_Side], float], float] | None = None,
            ) -> tuple[bytes, bytes, bytes]:
    """(outcomes, luck, plies) of trials first .. first + count - 1 of a cubeless rollout of
    the board (``mover`` on roll) by the greedy 0-ply player: 5 doubles per trial each (the
    chances of the side on roll at the start, its luck summed over the rolls when ``vr``) and
    an int32 per trial (bgbot/rollout/trial.py `play_trial` is the definition).
    ``race_formula`` = (effective pips of a side, spread): races outside the bear-off zone by
    evaluator.py's race formula in C instead of ``race``."""

class _Evaluator:
    race_network: Mlp | None
    """The network for races outside the bear-off zone, or None (the race call-back)."""

    def set_race_network(self, network: Mlp | None, /) -> None:
        """Use ``network`` for races outside the bear-off zone (None: the race call-back)."""

    def contact(self, mover: Sequence[int], opponent: Sequence[int], /) -> _Five | None:
        """The chances of the player on roll, or None when the position is not for the
        contact evaluation (no contact, or a side is all off)."""

    def plays(self, mover: Sequence[int], opponent: Sequence[int], d1: int, d2: int,
              race: _Race, /) -> list[tuple[_Steps, _Side, _Side, _Five]]:
        """Every candidate of the roll with the mover's 0-ply chances after it."""

    def one_ply(self, mover: Sequence[int], opponent: Sequence[int], race: _Race, /) -> _Five:
        """`HeuristicPlayer._one_ply_probs` (every reply evaluated) of the board after
        ``mover``'s move, ``opponent`` to roll: ``mover``'s chances. ``race(m, o)``: the
        chances of ``m`` on roll in a race that is not over."""

    def two_ply(self, mover: Sequence[int], opponent: Sequence[int], race: _Race, keep: int,
                threshold: float, /) -> _Five:
        """`HeuristicPlayer._two_ply_python` of the board after ``mover``'s move."""

    def roll_average(
        self, mover: Sequence[int], opponent: Sequence[int], race: _Race, /
    ) -> _Five:
        """`heuristic.roll_average` (every play evaluated): ``mover``'s chances, on roll,
        averaged over his 21 rolls; ``race`` as for `one_ply`."""

@final
class Net(_Evaluator):
    """The five linear contact heads (evaluator.HEADS order), each N_FEATURES weights."""

    def __init__(self, weights: Sequence[Sequence[float]]) -> None: ...
    def logits(
        self, mover: Sequence[int], opponent: Sequence[int], /
    ) -> tuple[float, float, float, float, float]:
        """The five heads' logits (weights · features)."""

@final
class Mlp(_Evaluator):
    """The contact network of network.py: float32 parameters, hidden layer widths."""

    def __init__(self, weights: bytes, hidden: Sequence[int]) -> None: ...
    def outcomes(self, mover: Sequence[int], opponent: Sequence[int], /) -> tuple[float, ...]:
        """The six outcome probabilities of the player on roll."""
