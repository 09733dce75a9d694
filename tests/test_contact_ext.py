"""The optional C contact net (bgbot/players/_contact.c) against its Python definition.

`features` must equal `features.feature_vector`; `Net.contact` must give what the pure-Python
`HeuristicEvaluator.evaluate_sides` gives (up to the Python path's 1e-7 fixed-point rounding of
per-point sums), on the same positions, and so the heuristic player must choose the same plays.
"""

from __future__ import annotations

import pickle
import random
from typing import Any, Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bgbot.core.position import Play, Position
from bgbot.core.rules import Rules
from bgbot.players import evaluator, heuristic
from bgbot.players.base import Context, Probabilities
from bgbot.players.evaluator import HEADS, HeuristicEvaluator, pure_python_forced
from bgbot.players.features import FEATURE_NAMES, feature_vector
from bgbot.players.heuristic import HeuristicPlayer, _roll_average_python, roll_average
from tools.gameloop import play_game

from .conftest import board
from .strategies import legal_positions

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


PURE = HeuristicEvaluator(use_bearoff=False, compiled=False, eval="linear")
FAST = (HeuristicEvaluator(use_bearoff=False, compiled=True, eval="linear")
        if contact is not None else None)


def test_extension_is_built() -> None:
    if pure_python_forced():
        pytest.skip("BGBOT_PURE_PYTHON is set: the pure-Python evaluator is under test")
    assert contact is not None, BUILD_HINT
    assert HeuristicEvaluator(use_bearoff=False).compiled


def test_the_built_extension_is_current() -> None:
    """A build from older definitions of the features or the network inputs (a stale build)
    fails the tests, not only a warning; a missing build is `test_extension_is_built`'s."""
    if contact is None or pure_python_forced():
        pytest.skip("no extension built, or BGBOT_PURE_PYTHON is set")
    assert evaluator.extension_status() == "ok", (
        f"bgbot.players._contact is {evaluator.extension_status()}: rebuild it with "
        "`pip install -e .`")


def test_a_missing_extension_falls_back_with_a_warning(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("BGBOT_PURE_PYTHON", raising=False)
    monkeypatch.setattr(evaluator, "extension_status", lambda: "missing")
    evaluator._warn_unusable.cache_clear()
    try:
        with pytest.warns(RuntimeWarning, match="not built"):
            assert not HeuristicEvaluator(use_bearoff=False, eval="linear").compiled
    finally:
        evaluator._warn_unusable.cache_clear()


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
    monkeypatch.delenv("BGBOT_PURE_PYTHON", raising=False)
    monkeypatch.setattr(evaluator, "feature_vector",
                        lambda mover, opponent: [0.5] * len(FEATURE_NAMES))
    evaluator.extension_status.cache_clear()
    evaluator._warn_unusable.cache_clear()
    try:
        with pytest.warns(RuntimeWarning, match="stale"):
            assert not HeuristicEvaluator(use_bearoff=False).compiled
        with pytest.raises(RuntimeError, match="pip install"):
            HeuristicEvaluator(use_bearoff=False, compiled=True)
    finally:
        monkeypatch.undo()
        evaluator.extension_status.cache_clear()
    assert HeuristicEvaluator(use_bearoff=False, compiled=True).compiled


# ------------------------------------------------------------------------------- positions

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


# The compiled and pure players' choices: see the C plays section below (the compiled player
# evaluates every candidate, so the pure one is compared with ``prefilter=False``).


# ------------------------------------------------------------------------- C 1-ply kernel


def _afters() -> list[Position]:
    """Boards after a move (mover = who moved, opponent to roll) from the self-play games:
    the first and the last result of a seeded roll at every third turn."""
    rng = random.Random(2024)
    out: list[Position] = []
    for position in SELF_PLAY[::3]:
        results = position.play_results((rng.randint(1, 6), rng.randint(1, 6)))
        if results:
            out.extend({results[0][1], results[-1][1]})
    return out


AFTERS = _afters()
FAST_PLAYER = HeuristicPlayer(plies=1, evaluator=FAST, reply_keep=0) if FAST else None
PURE_PLAYER = HeuristicPlayer(plies=1, evaluator=PURE, reply_keep=0)


def _close(a: Sequence[float], b: Sequence[float], tolerance: float = 1e-5) -> bool:
    return max(abs(x - y) for x, y in zip(a, b)) <= tolerance


@needs_extension
def test_one_ply_is_the_python_loop_to_the_last_bit() -> None:
    """With the same (compiled) evaluations, the kernel gives exactly the Python loop's chances:
    it visits the replies in `play_results` order, so exact ties are broken alike too."""
    assert FAST is not None and FAST_PLAYER is not None
    assert len(AFTERS) > 80
    assert sum(a.is_race() for a in AFTERS) > 5 and sum(a.is_contact() for a in AFTERS) > 40
    for after in AFTERS:
        kernel = FAST.one_ply(after)
        assert kernel is not None and isinstance(kernel, Probabilities)
        assert FAST_PLAYER._one_ply_probs(after) == kernel
        assert tuple(kernel) == tuple(FAST_PLAYER._one_ply_python(after)), after


@needs_extension
def test_one_ply_agrees_with_the_pure_python_player() -> None:
    """Against the pure-Python evaluator (fixed-point sums, 1e-7 per head) the chances agree
    to 1e-5 unless two replies' equities come within that rounding of each other and the two
    paths choose different replies: allowed on at most 2 % of the positions."""
    assert FAST_PLAYER is not None
    agreed = sum(_close(FAST_PLAYER._one_ply_probs(after), PURE_PLAYER._one_ply_probs(after))
                 for after in AFTERS)
    assert agreed >= 0.98 * len(AFTERS), (agreed, len(AFTERS))


@needs_extension
def test_one_ply_of_a_finished_game_is_its_result() -> None:
    assert FAST is not None
    gammon = board({}, {6: 15})  # we have just borne off the last chequer: a gammon
    assert FAST.one_ply(gammon) == Probabilities(1.0, 1.0, 0.0, 0.0, 0.0)
    assert FAST.one_ply(gammon) == PURE_PLAYER._one_ply_probs(gammon)


@needs_extension
def test_roll_average_is_the_python_loop_to_the_last_bit() -> None:
    """The cube's look-ahead (the roller picks his best play): exactly the Python loop with
    the same evaluations, and within 1e-5 of the pure-Python one (but for near ties, 2 %)."""
    assert FAST is not None
    positions = SELF_PLAY[::4]
    agreed = 0
    for position in positions:
        kernel = FAST.roll_average(position)
        assert kernel is not None
        assert roll_average(FAST, position) == kernel
        assert tuple(kernel) == tuple(_roll_average_python(FAST, position, 0, None))
        agreed += _close(kernel, roll_average(PURE, position))
    assert agreed >= 0.98 * len(positions)


def test_without_the_net_there_is_no_kernel() -> None:
    assert PURE.one_ply(Position.initial()) is None
    assert PURE.roll_average(Position.initial()) is None
    assert heuristic.REPLY_KEEP == 0 and HeuristicPlayer().reply_keep == 0


def _bare_net() -> Any:
    """FAST's linear heads in C without the race formula (no class slots): every race that is
    not over goes to the race call-back."""
    assert FAST is not None
    return contact.Net([FAST.weights[head] for head in HEADS])


@needs_extension
def test_race_is_called_for_races_only_with_the_side_on_roll_first() -> None:
    assert FAST is not None and FAST._net is not None and FAST_PLAYER is not None
    net = _bare_net()
    seen: list[Position] = []

    def race(mover: tuple[int, ...], opponent: tuple[int, ...]) -> tuple[float, ...]:
        position = Position(opponent, mover)  # validates the board
        assert position.is_race() and not position.is_game_over()
        seen.append(position)
        return tuple(FAST.evaluate_sides(mover, opponent))

    for after in AFTERS:
        if after.is_race():
            assert net.one_ply(after.mover, after.opponent, race) == tuple(
                FAST_PLAYER._one_ply_python(after))
    assert len(seen) > 100
    # The replies' boards: the opponent (who rolled) is the side not on roll.
    assert any(sum(p.opponent) < 15 for p in seen)


@needs_extension
def test_one_ply_rejects_bad_input() -> None:
    assert FAST is not None and FAST._net is not None
    net = _bare_net()
    race_after = next(a for a in AFTERS if a.is_race())
    args = (race_after.mover, race_after.opponent)
    with pytest.raises(TypeError):
        net.one_ply(*args, None)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        net.one_ply(*args)  # type: ignore[call-arg]
    with pytest.raises(ValueError):
        net.one_ply(*args, lambda m, o: (0.5, 0.5))
    with pytest.raises(TypeError):
        net.roll_average(race_after.opponent, race_after.mover,
                         lambda m, o: ("a",) * 5)  # type: ignore[arg-type, return-value]

    def broken(mover: Any, opponent: Any) -> Any:
        raise ZeroDivisionError("from the call-back")

    with pytest.raises(ZeroDivisionError, match="call-back"):
        net.one_ply(*args, broken)
    overlapping = (5,) + (0,) * 24, (0,) * 23 + (3, 0)  # both on our 1-point
    with pytest.raises(ValueError, match="both sides"):
        net.one_ply(*overlapping, FAST._race_sides)
    with pytest.raises(ValueError):
        net.one_ply(GOOD[:24], GOOD, FAST._race_sides)


# ------------------------------------------------------------ C plays (the 0-ply chooser)


MATCH = Context(match_length=7, my_score=2, opponent_score=4)


class _Judge:
    """Plays the compiled player's choice (checking that it is legal) in ``context`` and counts
    how often ``other`` agrees; a disagreement must be a near tie by ``other``'s values."""

    def __init__(self, fast: HeuristicPlayer, other: HeuristicPlayer, context: Context,
                 tie: float) -> None:
        self.fast, self.other, self.context, self.tie = fast, other, context, tie
        self.decisions = self.agreed = 0
        self.ties: list[float] = []

    def choose_play(self, position: Position, dice: Sequence[int], context: Context) -> Play:
        play = self.fast.choose_play(position, dice, self.context)
        legal = position.legal_plays(dice)
        assert type(play) is Play and (play in legal if legal else play == Play())
        if len(position.play_results(dice)) > 1:
            self.decisions += 1
            theirs = self.other.choose_play(position, dice, self.context)
            if play == theirs:
                self.agreed += 1
            else:
                pair = [(p, position.apply(p)) for p in (play, theirs)]
                mine, best = self.other._after_values(pair, self.context)
                assert abs(mine - best) <= self.tie, (position, dice, play, theirs, mine, best)
                self.ties.append(best - mine)
        return play


def _python_path(evaluator_: HeuristicEvaluator) -> HeuristicEvaluator:
    """The same compiled evaluations, but the candidates from `play_results` scored one by
    one in Python (`_plays_python`) instead of `plays` in one C call."""
    clone = pickle.loads(pickle.dumps(evaluator_))
    clone.plays = clone._plays_python  # type: ignore[method-assign]
    assert clone.compiled
    return clone


@needs_extension
@pytest.mark.parametrize("context", [Context(), MATCH],
                         ids=["money", "match"])
def test_compiled_player_equals_the_pure_python_player_without_prefilter(
        context: Context) -> None:
    """Same candidates in the same order, every one evaluated: the choices of the pure-Python
    player with ``prefilter=False``, but where two candidates tie within the pure evaluator's
    rounding (1e-7 fixed point per head)."""
    assert FAST is not None
    judge = _Judge(HeuristicPlayer(evaluator=FAST),
                   HeuristicPlayer(evaluator=PURE, prefilter=False), context, 1e-5)
    for seed in range(6):
        play_game([judge, judge], 31_337 + seed, seed % 2)
    assert judge.decisions > 150
    assert judge.agreed >= 0.99 * judge.decisions, (judge.agreed, judge.decisions, judge.ties)


@needs_extension
@pytest.mark.parametrize("context", [Context(), MATCH], ids=["money", "match"])
@pytest.mark.parametrize("plies, noise", [(0, 0.0), (0, 0.3), (1, 0.0)])
def test_compiled_chooser_is_the_python_path_to_the_last_bit(
        context: Context, plies: int, noise: float) -> None:
    """With the same (compiled) evaluations, the C candidates give exactly the Python path's
    choices without prefilter: same values, same tie-breaks, the same noise draws, the same
    1-ply survivors (in match play, up to the rounding of the affine utility)."""
    assert FAST is not None
    fast = HeuristicPlayer(plies=plies, noise=noise, seed=5, evaluator=FAST)
    slow = HeuristicPlayer(plies=plies, noise=noise, seed=5, evaluator=_python_path(FAST),
                           prefilter=False)
    money = context.is_money
    judge = _Judge(fast, slow, context, 0.0 if money else 1e-12)
    for seed in range(2 if plies == 0 else 1):
        play_game([judge, judge], 7_777 + seed, seed % 2)
    assert judge.decisions > 30
    # Match play: the compiled path's affine form of the utility may round differently (1e-16)
    # and so break an exact tie differently; the judge checked that any disagreement is one.
    assert judge.agreed >= (1.0 if money else 0.99) * judge.decisions, judge.ties


@needs_extension
def test_pure_python_player_keeps_its_prefilter() -> None:
    """The prefilter still applies to the pure-Python evaluator: on a doubles roll with many
    plays only pubeval's best `PREFILTER_KEEP` are evaluated."""
    position = Position.initial()
    results = position.play_results((1, 1))
    assert len(results) > heuristic.PREFILTER_ABOVE
    seen: list[int] = []

    class Counting(HeuristicPlayer):
        def _after_values(self, results: Any, context: Context) -> list[float]:
            seen.append(len(results))
            return super()._after_values(results, context)

    Counting(evaluator=PURE).choose_play(position, (1, 1), Context())
    assert seen == [heuristic.PREFILTER_KEEP]
    # without the prefilter every candidate is scored, in one batch (`plays`)
    clone = pickle.loads(pickle.dumps(PURE))
    batches: list[int] = []

    def evaluate_many(boards: Any) -> Any:
        batches.append(len(boards))
        return PURE.evaluate_many(boards)

    clone.evaluate_many = evaluate_many  # type: ignore[method-assign]
    Counting(evaluator=clone, prefilter=False).choose_play(position, (1, 1), Context())
    assert seen == [heuristic.PREFILTER_KEEP] and batches == [len(results)]


UTILITY_CONTEXTS = [
    MATCH,
    Context(match_length=5, my_score=4, opponent_score=2, crawford=True),
    Context(match_length=5, my_score=1, opponent_score=4, post_crawford=True),
    Context(match_length=11, my_score=3, opponent_score=6, cube_value=2),
    Context(match_length=25, my_score=0, opponent_score=0),
    Context(rules=Rules(jacoby=True)),
    Context(rules=Rules(backgammon_value=2)),
]


@pytest.mark.parametrize("context", UTILITY_CONTEXTS)
def test_affine_utility_equals_the_utility(context: Context) -> None:
    """The compiled chooser's dot product gives `_utility` (match winning chances, money
    under other rules) for any chances, to float rounding."""
    player = HeuristicPlayer(evaluator=PURE)
    coefficients = player._affine_utility(context)
    assert coefficients is not None and player._affine_utility(context) is coefficients
    rng = random.Random(11)
    for _ in range(300):
        win = rng.random()
        win_g = rng.random() * win
        lose_g = rng.random() * (1.0 - win)
        probs = Probabilities(win, win_g, rng.random() * win_g, lose_g, rng.random() * lose_g)
        affine = coefficients[0] + sum(c * p for c, p in zip(coefficients[1:], probs))
        assert abs(affine - player._utility(probs, context)) <= 1e-12, (probs, context)


def test_a_utility_that_is_not_affine_is_used_as_it_is() -> None:
    class Squared(HeuristicPlayer):
        def _utility(self, probs: Probabilities, context: Context) -> float:
            return probs.win ** 2

    used = FAST if FAST is not None else PURE
    player = Squared(evaluator=used, prefilter=False)
    assert player._affine_utility(MATCH) is None
    position, dice = SELF_PLAY[5], (5, 2)
    results = position.play_results(dice)
    assert len(results) > 3
    best = max(range(len(results)),
               key=lambda i: (used.evaluate(results[i][1].swapped()).flipped().win ** 2, i))
    assert player.choose_play(position, dice, MATCH) == results[best][0]
