"""The invitation policy shared by the server frontends, its persisted state, and Backoff."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bgbot.frontends.backoff import Backoff
from bgbot.frontends.invitations import Invitation, InvitationPolicy, PolicyState, judge

NOW = 1_000_000.0


def verdict(policy: InvitationPolicy, invitation: Invitation, state: PolicyState | None = None,
            now: float = NOW) -> tuple[bool, str]:
    result = judge(policy, invitation, state or PolicyState(None), now)
    assert result.reason and result.reason.endswith(".")
    return result.accept, result.reason


def test_default_policy_accepts_a_short_match() -> None:
    accept, reason = verdict(InvitationPolicy(), Invitation("alice", 5))
    assert accept and "alice" in reason


@pytest.mark.parametrize(("policy", "invitation", "words"), [
    (InvitationPolicy(max_length=7), Invitation("alice", 9), "9-point"),
    (InvitationPolicy(min_length=3), Invitation("alice", 1), "accepted lengths are 3 to 25"),
    (InvitationPolicy(), Invitation("alice", None), "unlimited"),
    (InvitationPolicy(min_rating=1600), Invitation("alice", 5, rating=1500.5), "below the minimum"),
    (InvitationPolicy(max_rating=1600), Invitation("alice", 5, rating=1700), "above the maximum"),
    (InvitationPolicy(min_rating=1600), Invitation("alice", 5), "rating is unknown"),
    (InvitationPolicy(min_experience=100), Invitation("alice", 5, experience=20), "below"),
    (InvitationPolicy(max_experience=100), Invitation("alice", 5, experience=200), "above"),
    (InvitationPolicy(allow=("Bob",)), Invitation("alice", 5), "allow list"),
    (InvitationPolicy(block=("ALICE",)), Invitation("alice", 5), "block list"),
    (InvitationPolicy(allow_bots=False), Invitation("alice", 5, is_bot=True), "bot"),
])
def test_each_rule_declines_with_a_reason(policy: InvitationPolicy, invitation: Invitation,
                                          words: str) -> None:
    accept, reason = verdict(policy, invitation)
    assert not accept
    assert words in reason


def test_allow_list_and_names_compare_case_insensitively() -> None:
    assert verdict(InvitationPolicy(allow=("ALICE",)), Invitation("alice", 3))[0]
    assert verdict(InvitationPolicy(allow_unlimited=True), Invitation("alice", None))[0]


def test_one_match_at_a_time() -> None:
    state = PolicyState(None)
    state.set_busy(True)
    accept, reason = verdict(InvitationPolicy(), Invitation("alice", 3), state)
    assert not accept and "one match at a time" in reason
    assert verdict(InvitationPolicy(one_match_at_a_time=False), Invitation("alice", 3), state)[0]


def test_cooldown_counts_from_the_last_match_end() -> None:
    state = PolicyState(None)
    state.record_match_end("Alice", NOW - 100)
    policy = InvitationPolicy(cooldown_seconds=300)
    accept, reason = verdict(policy, Invitation("alice", 3), state)
    assert not accept and "cool-down" in reason and "200 s left" in reason
    assert verdict(policy, Invitation("alice", 3), state, now=NOW + 201)[0]
    assert verdict(policy, Invitation("bob", 3), state)[0]


def test_resumed_match_is_accepted_despite_other_rules_but_not_the_block_list() -> None:
    strict = InvitationPolicy(max_length=1, allow=("bob",), allow_bots=False, min_rating=3000,
                              cooldown_seconds=1e9)
    state = PolicyState(None)
    state.set_busy(True)
    state.record_match_end("alice", NOW)
    resume = Invitation("alice", 7, rating=1000, is_bot=True, resume=True)
    accept, reason = verdict(strict, resume, state)
    assert accept and "Resuming" in reason
    blocked = InvitationPolicy(block=("alice",))
    assert not verdict(blocked, resume)[0]


def test_state_persists_across_restarts_and_survives_a_bad_file(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "policy.json"
    state = PolicyState(path)
    state.record_match_end("Alice", 123.5)
    state.set_busy(True)
    again = PolicyState(path)
    assert again.last_match_end("ALICE") == 123.5
    assert again.last_match_end("bob") is None
    assert not again.busy  # the server says whether a match is still on
    assert json.loads(path.read_text())["match_ends"] == {"alice": 123.5}
    assert not list(path.parent.glob(".*tmp"))  # written atomically, no leftovers
    path.write_text("{not json")
    assert PolicyState(path).last_match_end("alice") is None


@given(st.integers(0, 50), st.floats(0.01, 10), st.floats(1, 4), st.integers(0, 2**32))
def test_backoff_grows_up_to_the_cap_with_jitter(attempts: int, base: float, factor: float,
                                                  seed: int) -> None:
    cap = base * 20
    backoff = Backoff(base, cap, factor, random.Random(seed), jitter=0.5)
    ceilings = []
    for _ in range(attempts):
        ceiling = backoff.ceiling()
        delay = backoff.next_delay()
        assert ceiling * 0.5 <= delay <= ceiling <= cap
        ceilings.append(ceiling)
    assert ceilings == sorted(ceilings)
    backoff.reset()
    assert backoff.ceiling() == base


def test_backoff_is_deterministic_with_a_seeded_rng_and_jittered() -> None:
    first = [Backoff(1, 60, 2, random.Random(7)).next_delay() for _ in range(1)]
    second = [Backoff(1, 60, 2, random.Random(7)).next_delay() for _ in range(1)]
    assert first == second
    delays = {round(Backoff(1, 60, 2, random.Random(seed)).next_delay(), 6) for seed in range(20)}
    assert len(delays) > 10  # clients cut off together do not return together
    with pytest.raises(ValueError):
        Backoff(0, 1)
