"""Jittered exponential delays between reconnect attempts.

Attempt n (from 0) waits ``min(cap, base * factor**n)`` scaled by a random factor in
``[1 - jitter, 1]`` so many clients cut off at once do not return in lock-step.  Pass a seeded
``random.Random`` for deterministic tests; call :meth:`Backoff.reset` after a connection proved
healthy.
"""

from __future__ import annotations

import random

__all__ = ["Backoff"]


class Backoff:
    """Reconnect delay generator (seconds)."""

    def __init__(self, base: float = 1.0, cap: float = 300.0, factor: float = 2.0,
                 rng: random.Random | None = None, jitter: float = 0.5) -> None:
        if base <= 0 or cap < base or factor < 1 or not 0 <= jitter <= 1:
            raise ValueError("Backoff needs base > 0, cap >= base, factor >= 1, 0 <= jitter <= 1")
        self.base = float(base)
        self.cap = float(cap)
        self.factor = float(factor)
        self.jitter = float(jitter)
        self.rng = rng if rng is not None else random.Random()
        self.attempts = 0

    def ceiling(self) -> float:
        """The un-jittered delay of the next attempt."""
        # Stop growing the exponent once the cap is reached (no float overflow after many tries).
        value = self.base
        for _ in range(self.attempts):
            value *= self.factor
            if value >= self.cap:
                return self.cap
        return min(value, self.cap)

    def next_delay(self) -> float:
        """The delay before the next attempt; each call counts one attempt."""
        ceiling = self.ceiling()
        self.attempts += 1
        return ceiling * (1.0 - self.jitter * self.rng.random())

    def reset(self) -> None:
        """Start again from ``base`` (call once a connection has worked)."""
        self.attempts = 0
