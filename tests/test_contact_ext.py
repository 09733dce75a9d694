"""The optional C contact net (bgbot/players/_contact.c) against its Python definition.

`features` must equal `features.feature_vector`; `Net.contact` must give what the pure-Python
`HeuristicEvaluator.evaluate_sides` gives (up to the Python path's 1e-7 fixed-point rounding of
per-point sums), on the same positions, and so the heuristic player must choose the same plays.
"""

from __future__ import annotations

import pickle
from typing import Any, Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bgbot.core.position import Play, Position
from bgbot.players import evaluator
from bgbot.players.base import Context
from bgbot.players.evaluator import HEADS, HeuristicEvaluator, pure_python_forced
from bgbot.players.features import FEATURE_NAMES, feature_vector
from bgbot.players.heuristic import HeuristicPlayer
from tools.gameloop import play_game

contact: Any
try:
    from bgbot.players import _contact as contact
except ImportError:  # not built: only the first test speaks (it fails unless pure is asked)
    contact = None

BUILD_HINT = (
    "the C extension bgbot.players._contact is not built: run `pip install -e .` (or "
    "`python setup.py build_ext --inplace`) with a C compiler, or set BGBOT_PURE_PYTHON=1 to "
    "test the pure-Python evaluator only"
)
needs_extension = pytest.mark.skipif(contact is None, reason=BUILD_HINT)

PURE = HeuristicEvaluator(use_bearoff=False, compiled=False)
FAST = HeuristicEvaluator(use_bearoff=False, compiled=True) if contact is not None else None


def test_extension_is_built() -> None:
    if pure_python_forced():
        pytest.skip("BGBOT_PURE_PYTHON is set: the pure-Python evaluator is under test")
    assert contact is not None, BUILD_HINT
    assert HeuristicEvaluator(use_bearoff=False).compiled


def test_pure_python_env_forces_the_fallback(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BGBOT_PURE_PYTHON", "1")
    assert not HeuristicEvaluator(use_bearoff=False).compiled
    assert not PURE.compiled
    monkeypatch.setenv("BGBOT_PURE_PYTHON", "0")
    assert HeuristicEvaluator(use_bearoff=False).compiled == (contact is not None)


@needs_extension
def test_a_stale_build_is_not_used(monkeypatch: pytest.MonkeyPatch) -> None:
    """An extension whose features differ from features.py (built from an older version) is
    refused with a warning: the evaluator falls back to Python, ``compiled=True`` raises."""
    monkeypatch.setattr(evaluator, "feature_vector",
                        lambda mover, opponent: [0.5] * len(FEATURE_NAMES))
    evaluator._extension_agrees.cache_clear()
    try:
        with pytest.warns(RuntimeWarning, match="stale"):
            assert not HeuristicEvaluator(use_bearoff=False).compiled
        with pytest.raises(RuntimeError, match="pip install"):
            HeuristicEvaluator(use_bearoff=False, compiled=True)
    finally:
        monkeypatch.undo()
        evaluator._extension_agrees.cache_clear()
    assert HeuristicEvaluator(use_bearoff=False, compiled=True).compiled


# ------------------------------------------------------------------------------- positions

LOCATION = st.integers(0, 25)
"""A chequer's own index: 0..23 = points 1..24, 24 = bar, 25 = borne off."""


@st.composite
def legal_positions(draw: st.DrawFn) -> Position:
    """15 chequers a side (bar and off included), clumped so that points get made; no point is
    held by both sides (the mover's own point i + 1 is the opponent's point 24 - i)."""
    mover = [0] * 26
    for location in draw(st.lists(st.sampled_from(draw(st.lists(LOCATION, min_size=1,
                                                                    max_size=9))),
                                  min_size=15, max_size=15)):
        mover[location] += 1
    free = [i for i in range(26) if i >= 24 or not mover[23 - i]]
    spots = draw(st.lists(st.sampled_from(free), min_size=1, max_size=9))
    opponent = [0] * 26
    for location in draw(st.lists(st.sampled_from(spots), min_size=15, max_size=15)):
        opponent[location] += 1
    return Position(opponent[:25], mover[:25])


def _self_play_positions() -> list[Position]:
    """Positions before each roll of a few seeded 0-ply self-play games."""
    player = HeuristicPlayer(evaluator=PURE)
    record: list[tuple[Position, int]] = []
    for seed in range(4):
        play_game([player, player], 7919 * seed + 3, seed % 2, record=record)
    return [position for position, _ in record]


SELF_PLAY = _self_play_positions()


def _assert_features_match(position: Position) -> None:
    ours = contact.features(position.mover, position.opponent)
    reference = feature_vector(position.mover, position.opponent)
    assert len(ours) == len(reference) == len(FEATURE_NAMES) == contact.N_FEATURES
    for name, a, b in zip(FEATURE_NAMES, ours, reference):
        assert abs(a - b) <= 1e-12, (name, a, b, position)


def _assert_evaluations_match(position: Position) -> None:
    assert FAST is not None
    mover, opponent = position.mover, position.opponent
    net_answer = FAST._net.contact(mover, opponent) if FAST._net is not None else None
    assert (net_answer is None) == (not position.is_contact()), position
    fast = FAST.evaluate_sides(mover, opponent)
    pure = PURE.evaluate_sides(mover, opponent)
    for head, a, b in zip(HEADS, fast, pure):
        assert abs(a - b) <= 1e-5, (head, a, b, position)
    if net_answer is not None:
        assert tuple(fast) == net_answer
        logits_fast = FAST.contact_logits(position)
        logits_pure = PURE.contact_logits(position)
        for head, a, b in zip(HEADS, logits_fast, logits_pure):
            assert abs(a - b) <= 1e-5, (head, a, b, position)


# ------------------------------------------------------------------------- features, values


@needs_extension
def test_features_of_the_initial_position() -> None:
    _assert_features_match(Position.initial())
    assert contact.N_HEADS == len(HEADS)


@needs_extension
def test_features_on_self_play_positions() -> None:
    assert len(SELF_PLAY) > 100
    for position in SELF_PLAY:
        _assert_features_match(position)
        _assert_features_match(position.swapped())


@needs_extension
@settings(max_examples=400, deadline=None)
@given(legal_positions())
def test_features_on_generated_positions(position: Position) -> None:
    _assert_features_match(position)


@needs_extension
def test_net_contact_matches_the_pure_evaluator_on_self_play_positions() -> None:
    assert FAST is not None and FAST.compiled
    contact_seen = 0
    for position in SELF_PLAY:
        _assert_evaluations_match(position)
        contact_seen += position.is_contact()
    assert contact_seen > 50


@needs_extension
@settings(max_examples=400, deadline=None)
@given(legal_positions())
def test_net_contact_matches_the_pure_evaluator_on_generated_positions(
        position: Position) -> None:
    _assert_evaluations_match(position)


@needs_extension
def test_net_zeroes_gammons_of_a_side_that_bore_off_and_backgammons_without_chequers_back(
) -> None:
    """§2.7 constraints: the mover has borne off one chequer (no gammon loss possible); the
    opponent has none back (no backgammon win possible), yet there is contact."""
    mover = [0] * 25
    mover[0], mover[1], mover[2], mover[20] = 5, 5, 3, 1  # 14: one off, one chequer back
    opponent = [0] * 25
    opponent[5], opponent[7], opponent[12] = 5, 5, 5
    position = Position(opponent, mover)
    assert position.is_contact()
    assert FAST is not None and FAST._net is not None
    probs = FAST._net.contact(position.mover, position.opponent)
    assert probs is not None
    win, win_g, win_bg, lose_g, lose_bg = probs
    assert lose_g == lose_bg == 0.0
    assert win_bg == 0.0
    assert 0.0 <= win_g <= win <= 1.0


@needs_extension
def test_a_compiled_evaluator_survives_pickling() -> None:
    """Evaluators travel to worker processes (duel pools, dask): the net goes with them."""
    assert FAST is not None
    clone = pickle.loads(pickle.dumps(FAST))
    assert clone.compiled
    for position in SELF_PLAY[:60]:
        assert clone.evaluate(position) == FAST.evaluate(position)


# ------------------------------------------------------------------------------ bad input

GOOD = Position.initial().mover


@needs_extension
@pytest.mark.parametrize("side, error", [
    (GOOD[:24], ValueError),                      # 24 counts
    (GOOD + (0,), ValueError),                    # 26 counts
    ((-1,) + GOOD[1:], ValueError),               # negative
    ((16,) + (0,) * 24, ValueError),              # more than 15 on a point
    ((2 ** 70,) + (0,) * 24, ValueError),         # does not fit a C long
    ((1,) * 25, ValueError),                      # 25 chequers
    ((1.0,) + GOOD[1:], TypeError),               # a float
    (("1",) + GOOD[1:], TypeError),               # a string count
    (None, TypeError),
    (15, TypeError),
    ("x" * 25, TypeError),
    ({i: 0 for i in range(25)}, TypeError),       # a mapping is not a sequence of counts
])
def test_bad_sides_are_rejected(side: Any, error: type[Exception]) -> None:
    assert FAST is not None and FAST._net is not None
    net = FAST._net
    with pytest.raises(error):
        contact.features(side, GOOD)
    with pytest.raises(error):
        contact.features(GOOD, side)
    with pytest.raises(error):
        net.contact(GOOD, side)
    with pytest.raises(error):
        net.logits(side, GOOD)


class _Count:
    """An int-like object (as numpy's integers are): it has ``__index__``."""

    def __init__(self, n: int) -> None:
        self.n = n

    def __index__(self) -> int:
        return self.n


@needs_extension
def test_other_sequences_of_ints_are_accepted() -> None:
    reference = contact.features(GOOD, GOOD)
    assert contact.features(list(GOOD), [_Count(n) for n in GOOD]) == reference


@needs_extension
def test_wrong_argument_counts_are_rejected() -> None:
    assert FAST is not None and FAST._net is not None
    with pytest.raises(TypeError):
        contact.features(GOOD)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        FAST._net.contact(GOOD, GOOD, GOOD)  # type: ignore[call-arg]


@needs_extension
@pytest.mark.parametrize("weights, error", [
    ([[0.0] * len(FEATURE_NAMES)] * 4, ValueError),
    ([[0.0] * (len(FEATURE_NAMES) - 1)] * 5, ValueError),
    ([[0.0] * len(FEATURE_NAMES)] * 4 + [["w"] * len(FEATURE_NAMES)], TypeError),
    (None, TypeError),
    ([None] * 5, TypeError),
])
def test_bad_weights_are_rejected(weights: Any, error: type[Exception]) -> None:
    with pytest.raises(error):
        contact.Net(weights)


# --------------------------------------------------------------------------------- players


class _Both:
    """Plays the compiled player's choice and counts how often the pure one agrees."""

    def __init__(self, fast: HeuristicPlayer, pure: HeuristicPlayer) -> None:
        self.fast, self.pure = fast, pure
        self.decisions = self.agreed = 0

    def choose_play(self, position: Position, dice: Sequence[int], context: Context) -> Play:
        play = self.fast.choose_play(position, dice, context)
        if len(position.play_results(dice)) > 1:
            self.decisions += 1
            self.agreed += play == self.pure.choose_play(position, dice, context)
        return play


@needs_extension
def test_compiled_and_pure_players_choose_the_same_plays() -> None:
    assert FAST is not None
    both = _Both(HeuristicPlayer(evaluator=FAST), HeuristicPlayer(evaluator=PURE))
    for seed in range(6):
        play_game([both, both], 104_729 + seed, seed % 2)
    assert both.decisions > 150
    assert both.agreed >= 0.99 * both.decisions, (both.agreed, both.decisions)
