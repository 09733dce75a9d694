"""Networks with random weights for the tests (no training needed to check the machinery)."""

from __future__ import annotations

import numpy as np

from bgbot.players.network import N_INPUTS, OUTCOMES, WeightsFile


def random_network(hidden: tuple[int, ...], seed: int = 7, phase: str = "contact") -> WeightsFile:
    """A network with random weights, large enough that its outputs vary across positions."""
    rng = np.random.default_rng(seed)
    widths = (N_INPUTS, *hidden, len(OUTCOMES))
    layers = [((rng.standard_normal((a, b)) * (1.5 / np.sqrt(a))).astype(np.float32),
               (rng.standard_normal(b) * 0.1).astype(np.float32))
              for a, b in zip(widths, widths[1:])]
    return WeightsFile.from_arrays(layers, provenance={"test": True}, phase=phase)
