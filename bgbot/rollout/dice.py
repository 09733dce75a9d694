"""The dice of a rollout: quasi-random first two rolls, then a stream per trial.

As gnubg's rollouts do ("quasi-random dice"), the first rolls are rotated rather than drawn:
trial ``t``'s first roll is entry ``t % 36`` of a permutation of the 36 ordered rolls, and its
second roll entry ``(t // 36) % 36`` of another permutation (one per first-roll slot). Every
36 trials then hold each first roll exactly once, and every 1,296 (36 x 36) each pair of first
and second rolls exactly once: the luck of the first two rolls, the largest share of a
trial's noise, averages out exactly. The permutations come from the seed, so another seed
rotates other rolls into each slot.

The third roll on comes from splitmix64 started at `trial_state` (seed, t): a trial's dice
depend only on the seed and its index, never on which process plays it or on the trials
before it. Rolls are given low die first (the order of two dice does not change a play; the
player and the C kernel see the same order, so they generate the candidates alike).

The C kernel (`bgbot.players._contact.rollout`) reads `RolloutDice.table` and computes the
same streams (`mix64`, `trial_state` and the die are its C twins).
"""

from __future__ import annotations

from functools import cached_property

__all__ = ["MASK64", "RolloutDice", "mix64", "next_random", "roll_die", "trial_state"]

MASK64 = (1 << 64) - 1
GOLDEN = 0x9E3779B97F4A7C15
"""splitmix64's increment."""
TRIAL_SALT = 0x726F6C6C6F757421
"""Mixed into the seed of the trial streams ("rollout!")."""
TABLE_SALT = 0x7065726D75746521
"""Mixed into the seed of the permutations ("permute!")."""
ORDERED_ROLLS: tuple[tuple[int, int], ...] = tuple(
    (a, b) for a in range(1, 7) for b in range(1, 7))
"""The 36 ordered rolls; roll code ``(a - 1) * 6 + b - 1``."""


def mix64(z: int) -> int:
    """The 64-bit finaliser of splitmix64."""
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
    return z ^ (z >> 31)


def next_random(state: int) -> tuple[int, int]:
    """(new state, 64 random bits): one step of splitmix64."""
    state = (state + GOLDEN) & MASK64
    return state, mix64(state)


def roll_die(state: int) -> tuple[int, int]:
    """(new state, a die 1..6) from the top 53 bits of one splitmix64 step."""
    state, bits = next_random(state)
    return state, (bits >> 11) % 6 + 1


def trial_state(seed: int, trial: int) -> int:
    """The splitmix64 state from which trial ``trial`` draws its third roll on."""
    return mix64((mix64(seed ^ TRIAL_SALT) + trial) & MASK64)


def _permutation(state: int) -> tuple[tuple[int, ...], int]:
    """(a permutation of the 36 roll codes, the new state): Fisher-Yates from splitmix64."""
    codes = list(range(36))
    for i in range(35, 0, -1):
        state, bits = next_random(state)
        j = (bits >> 11) % (i + 1)
        codes[i], codes[j] = codes[j], codes[i]
    return tuple(codes), state


class RolloutDice:
    """The dice of every trial of a rollout with ``seed`` (module docstring)."""

    def __init__(self, seed: int) -> None:
        if not 0 <= seed <= MASK64:
            raise ValueError(f"a rollout seed is 0..2**64-1, got {seed}")
        self.seed = seed
        state = mix64(seed ^ TABLE_SALT)
        self.first, state = _permutation(state)
        """The first roll's code of each slot ``t % 36``."""
        second = []
        for _ in range(36):
            permutation, state = _permutation(state)
            second.append(permutation)
        self.second: tuple[tuple[int, ...], ...] = tuple(second)
        """Per first-roll slot, the second roll's code of each slot ``(t // 36) % 36``."""

    @cached_property
    def table(self) -> bytes:
        """The first two rolls as the C kernel reads them: the 36 first-roll codes, then the
        36 rows of second-roll codes."""
        return bytes(self.first) + b"".join(bytes(row) for row in self.second)

    def first_two(self, trial: int) -> tuple[tuple[int, int], tuple[int, int]]:
        """Trial ``trial``'s first and second rolls, low die first."""
        slot = trial % 36
        return (_roll(self.first[slot]), _roll(self.second[slot][(trial // 36) % 36]))

    def rolls(self, trial: int) -> TrialRolls:
        """The rolls of trial ``trial``, one at a time."""
        return TrialRolls(self, trial)


class TrialRolls:
    """The rolls of one trial in order (`RolloutDice.rolls`); unbounded."""

    def __init__(self, dice: RolloutDice, trial: int) -> None:
        if trial < 0:
            raise ValueError(f"a trial index is >= 0, got {trial}")
        self._first_two = dice.first_two(trial)
        self._state = trial_state(dice.seed, trial)
        self.played = 0
        """Rolls given so far."""

    def next(self) -> tuple[int, int]:
        """The next roll, low die first."""
        ply = self.played
        self.played += 1
        if ply < 2:
            return self._first_two[ply]
        self._state, d1 = roll_die(self._state)
        self._state, d2 = roll_die(self._state)
        return (d1, d2) if d1 <= d2 else (d2, d1)


def _roll(code: int) -> tuple[int, int]:
    """The roll of a code, low die first."""
    a, b = ORDERED_ROLLS[code]
    return (a, b) if a <= b else (b, a)
