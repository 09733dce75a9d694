"""Fuzz the parsers reachable from outside (targets in `tests.fuzz_targets`).

For each target: hostile variants of valid inputs from the test data and plain random text
raise only the documented error type, answer in well under a second, and re-read what the
formatter writes the same way. Every crasher ever found is replayed for good. CI runs a
bounded number of examples; ``bench/fuzz.py --inputs N`` runs a campaign.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.fuzz_targets import ACCEPTED, REJECTED, TESTDATA, Target, mutate, targets

TARGETS = targets()
IDS = [t.name for t in TARGETS]
SEEDS: dict[str, list[str]] = {}


def _seeds(t: Target) -> list[str]:
    if t.name not in SEEDS:
        SEEDS[t.name] = t.seeds()
    if not SEEDS[t.name] and not TESTDATA.is_dir():
        pytest.skip(f"no seeds for {t.name}: the reference data {TESTDATA} are not here "
                    "(set BGBOT_SHARED)")
    return SEEDS[t.name]


def hostile(t: Target) -> st.SearchStrategy[str]:
    """Mutated seeds (most examples) and plain random text of the input's own alphabet."""
    seeds = _seeds(t)
    mutated = st.builds(lambda seed, n: mutate(seed, random.Random(n), t.alphabet, seeds),
                        st.sampled_from(seeds), st.integers(0, 2**32))
    alphabet = t.alphabet or "abc0123456789:/ "
    return st.one_of(mutated, mutated, mutated, st.text(alphabet, max_size=200), st.text(max_size=80))


@pytest.mark.parametrize("t", TARGETS, ids=IDS)
def test_the_seeds_are_read(t: Target) -> None:
    """The test data the campaign starts from is valid (or, for sessions, mostly answered)."""
    seeds = _seeds(t)
    assert seeds, f"no seeds for {t.name}: is ../shared/testdata there?"
    outcomes = [t.check(s) for s in seeds]
    assert outcomes.count(ACCEPTED) >= (len(seeds) // 4 if t.group == "session" else len(seeds) - 3)


@pytest.mark.parametrize("t", TARGETS, ids=IDS)
def test_hostile_input_meets_the_error_contract(t: Target) -> None:
    @settings(max_examples=150 if t.group in ("mat", "session") else 300, deadline=1000,
              suppress_health_check=list(HealthCheck), database=None, derandomize=True)
    @given(hostile(t))
    def run(text: str) -> None:
        assert t.check(text) in (ACCEPTED, REJECTED)

    run()


@pytest.mark.parametrize("t, text", [(t, text) for t in TARGETS for text in t.regressions],
                         ids=[f"{t.name}-{i}" for t in TARGETS for i, _ in enumerate(t.regressions)])
def test_crashers_found_once_stay_fixed(t: Target, text: str) -> None:
    assert t.check(text) in (ACCEPTED, REJECTED)
