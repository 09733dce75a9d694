"""Type stub of the optional C extension bgbot/players/_selfplay.c: what only training runs
(see its header)."""

from typing import Callable, Sequence

from ._contact import Mlp, Net

_Side = tuple[int, ...]
_Race = Callable[[_Side, _Side], Sequence[float]]

N_INPUTS: int
"""Number of network inputs (network.N_INPUTS)."""
KERNELS_VERSION: int
"""The version of the kernels (_kernels.h) this module was built from: _contact's."""

def encode(boards: bytes, /) -> tuple[bytes, bytes]:
    """(float32 network inputs, 6-byte outcome masks) of 50-byte boards."""

def selfplay(evaluator: Net | Mlp, race: _Race, seed: int, games: int, noise: float = 0.0,
             max_plies: int = 10000, phase: int = 0, alternatives: int = 0,
             search: tuple[int, float] | None = None) -> tuple[bytes, bytes, bytes, bytes]:
    """(boards, values, ends, alternatives) of the contact (phase 0), race (1) or crashed (2)
    positions of greedy 0-ply self-play games (with ``search`` = (limit, threshold): played
    at 1-ply with that move filter), and with ``alternatives`` K the boards of up to K
    runners-up of each move (see the C source). Positions are evaluated as
    `_contact.Mlp.evaluate` does."""

def roll_averages(evaluator: Net | Mlp, race: _Race, boards: bytes, /) -> bytes:
    """5 doubles per 50-byte board: its roll_average."""

def duel(a: Net | Mlp, b: Net | Mlp, race: _Race, seed: int, pairs: int, /) -> list[int]:
    """a's points per game in mirrored cubeless pairs of two greedy 0-ply evaluators."""

def duel_pubeval(evaluator: Net | Mlp, race: _Race, contact_weights: Sequence[float],
                 race_weights: Sequence[float], seed: int, pairs: int, /) -> list[int]:
    """The evaluator's points per game in mirrored cubeless pairs against pubeval."""
