"""The core's optional C move generator (bgbot/core/_movegen.c, _movegen.h) against its Python
definition (`core.position._generate`) and against gnubg.

`Position.legal_plays` and `play_results` use the C generator when it is built; the Python one
stays the definition (`Position.python_play_results`) and the fallback (BGBOT_PURE_PYTHON). The
two must give the same plays, boards and order on every record of gnubg's legal-moves.jsonl and
on generated positions (R5-R19 of the rules), and the player's extension compiles the same
generator source (`_movegen.h`), so there is one generator.
"""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bgbot.core import position as position_module
from bgbot.core.compiled import pure_python_forced
from bgbot.core.errors import IllegalAction
from bgbot.core.position import Play, Position

from .conftest import board
from .strategies import bear_off_positions, entering_positions, legal_positions

movegen: Any
try:
    from bgbot.core import _movegen as movegen
except ImportError:
    movegen = None

BUILD_HINT = (
    "the C extension bgbot.core._movegen is not built: run `pip install -e .` (or "
    "`python setup.py build_ext --inplace`) with a C compiler, or set BGBOT_PURE_PYTHON=1 to "
    "test the pure-Python generator only"
)
needs_extension = pytest.mark.skipif(movegen is None, reason=BUILD_HINT)

ALL_ROLLS = [(a, b) for a in range(1, 7) for b in range(1, 7)]
"""The 36 ordered rolls (`play_results` visits the dice in the order given)."""
GOOD = Position.initial().mover


def test_extension_is_built_and_used() -> None:
    if pure_python_forced():
        assert position_module._MOVEGEN is None
        pytest.skip("BGBOT_PURE_PYTHON is set: the pure-Python generator is under test")
    assert movegen is not None, BUILD_HINT
    assert position_module._MOVEGEN is movegen


def test_pure_python_env_makes_position_use_the_python_generator() -> None:
    """A fresh interpreter with BGBOT_PURE_PYTHON=1 does not load the C generator."""
    code = ("from bgbot.core import position; from bgbot import Position; "
            "print(position._MOVEGEN is None, len(Position.initial().legal_plays((3, 1))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={**os.environ, "BGBOT_PURE_PYTHON": "1"}, check=True).stdout
    assert out.split() == ["True", "16"]


def _python(position: Position, dice: tuple[int, int]) -> list[tuple[Any, Any, Any]]:
    return [(tuple(play), after.mover, after.opponent)
            for play, after in position.python_play_results(dice)]


def _assert_same(position: Position, dice: tuple[int, int]) -> None:
    """C `results` and `plays` give the Python generator's plays, boards and order, and the
    public API gives the same."""
    reference = _python(position, dice)
    ours = movegen.results(position.mover, position.opponent, *dice)
    assert ours == reference, (position, dice)
    plays = movegen.plays(position.mover, position.opponent, *dice, Play)
    assert [tuple(p) for p in plays] == [steps for steps, _, _ in reference]
    assert all(type(p) is Play for p in plays)
    assert all(type(hit) is bool for steps, _, _ in ours for _, _, hit in steps)
    assert position.legal_plays(dice) == [Play._trusted(steps) for steps, _, _ in reference]
    assert [(tuple(p), a.mover, a.opponent) for p, a in position.play_results(dice)] == reference


@needs_extension
def test_the_same_plays_as_gnubg_and_python_on_the_reference_data(
        legal_move_records: list[dict[str, Any]]) -> None:
    """Every (position, roll) of legal-moves.jsonl (made by gnubg): the same distinct
    resulting boards as gnubg lists, and the Python generator's plays in its order."""
    assert len(legal_move_records) > 5000
    mismatches = []
    for record in legal_move_records:
        position = Position.from_board(record["board"])
        dice = tuple(record["dice"])
        ours = movegen.results(position.mover, position.opponent, *dice)
        ids = sorted(Position._trusted(opponent, mover).position_id()
                     for _, mover, opponent in ours)
        if ids != record["moves"] or ours != _python(position, dice):
            mismatches.append((record["position_id"], dice))
        else:
            _assert_same(position, dice)
    assert not mismatches, f"{len(mismatches)} records differ, e.g. {mismatches[:5]}"


def test_the_python_generator_agrees_with_gnubg_on_the_reference_data(
        legal_move_records: list[dict[str, Any]]) -> None:
    """The definition itself against gnubg (whatever is built)."""
    for record in legal_move_records:
        position = Position.from_board(record["board"])
        ids = sorted(after.position_id()
                     for _, after in position.python_play_results(tuple(record["dice"])))
        assert ids == record["moves"], (record["position_id"], record["dice"])


@needs_extension
@settings(max_examples=150, deadline=None)
@given(st.one_of(legal_positions(), bear_off_positions(), entering_positions()))
def test_the_same_plays_as_python_on_generated_positions(position: Position) -> None:
    for dice in ALL_ROLLS:
        _assert_same(position, dice)


def _boards(position: Position, dice: tuple[int, int]) -> set[Position]:
    return {after for _, after in position.play_results(dice)}


def _after(position: Position, *steps: tuple[int, int]) -> Position:
    return position.apply(steps)


def test_r9_higher_die_rule() -> None:
    # A lone chequer on our 13, the opponent holds our 2-point: 13/7 or 13/8 but not both,
    # so only the 6 (the higher die) may be played.
    position = board({13: 1, 1: 14}, {23: 2, 13: 13})
    assert _boards(position, (6, 5)) == {_after(position, (13, 7))}
    assert _boards(position, (5, 6)) == {_after(position, (13, 7))}


def test_r9_partial_doubles_and_no_play() -> None:
    position = board({24: 1, 1: 14}, {13: 2, 12: 13})  # our 12-point is blocked
    assert _boards(position, (4, 4)) == {_after(position, (24, 20), (20, 16))}
    stuck = board({13: 1, 1: 14}, {18: 2, 17: 2, 13: 11})
    assert stuck.legal_plays((6, 5)) == []


def test_r12_r14_entering_from_the_bar() -> None:
    # Two on the bar, only the 3 enters (the 5 would land on our 20, held): the rest is lost.
    position = board({6: 13}, {5: 2, 1: 13}, mover_bar=2)
    assert _boards(position, (5, 3)) == {_after(position, (25, 22))}
    closed = board({6: 13}, {1: 2, 2: 2, 3: 2, 4: 2, 5: 2, 6: 3}, mover_bar=2)
    for dice in [(6, 6), (1, 2), (5, 3)]:
        assert closed.legal_plays(dice) == []


def test_r11_a_hit_blot_goes_to_the_opponents_bar() -> None:
    # The opponent's blot on our 10-point (its 15): 13/10* hits it, 13/8/5 does not.
    position = board({13: 1, 1: 14}, {15: 1, 1: 14})
    boards = _boards(position, (3, 5))
    hit = _after(position, (13, 10), (10, 5))
    assert hit in boards and hit.opponent[24] == 1 and hit.opponent[14] == 0
    assert _after(position, (13, 8), (8, 5)) in boards
    plays = position.legal_plays((3, 5))
    assert Play(((13, 10, True), (10, 5, False))) in plays or Play(
        ((13, 8, False), (8, 5, False))) in plays


def test_r15_r16_bearing_off() -> None:
    assert _boards(board({3: 1, 2: 1}, {18: 15}), (6, 5)) == {board({}, {18: 15})}
    # A 5 cannot bear off the 3 while the 6 is there: 6/1 3/2, 6/1 1/off = 6/5 5/off.
    assert _boards(board({6: 1, 3: 1}, {18: 15}), (5, 1)) == {
        board({2: 1, 1: 1}, {18: 15}), board({3: 1}, {18: 15})}
    # One chequer on the 7 (our 2-point is held): 7/1 6/5, or 7/1 1/off = 7/6 6/off; no
    # chequer comes off before the 7 is home.
    assert _boards(board({7: 1, 6: 4, 1: 10}, {23: 15}), (6, 1)) == {
        board({6: 3, 5: 1, 1: 11}, {23: 15}), board({6: 4, 1: 10}, {23: 15})}


def test_the_public_api_checks_the_dice_as_before() -> None:
    for dice in [(0, 3), (3, 7), (1, 2, 3)]:
        with pytest.raises(IllegalAction):
            Position.initial().legal_plays(dice)
        with pytest.raises(IllegalAction):
            Position.initial().play_results(dice)


class _Count:
    """An int-like object (as numpy's integers are): it has ``__index__``."""

    def __init__(self, n: int) -> None:
        self.n = n

    def __index__(self) -> int:
        return self.n


@needs_extension
@pytest.mark.parametrize("dice, error", [
    ((0, 3), ValueError), ((3, 7), ValueError), ((1.0, 2), TypeError), (("1", 2), TypeError),
    ((None, 2), TypeError),
])
def test_bad_dice_are_rejected(dice: tuple[Any, Any], error: type[Exception]) -> None:
    with pytest.raises(error):
        movegen.results(GOOD, GOOD, *dice)
    with pytest.raises(error):
        movegen.plays(GOOD, GOOD, *dice, Play)


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
    ("x" * 25, TypeError),
    ({i: 0 for i in range(25)}, TypeError),       # a mapping is not a sequence of counts
])
def test_bad_sides_are_rejected(side: Any, error: type[Exception]) -> None:
    with pytest.raises(error):
        movegen.results(side, GOOD, 3, 1)
    with pytest.raises(error):
        movegen.results(GOOD, side, 3, 1)


@needs_extension
def test_bad_boards_and_calls_are_rejected() -> None:
    with pytest.raises(ValueError, match="both sides"):
        movegen.results((5,) + (0,) * 24, (0,) * 23 + (3, 0), 1, 2)
    with pytest.raises(TypeError):
        movegen.results(GOOD, GOOD, 1)
    with pytest.raises(TypeError, match="subclass of tuple"):
        movegen.plays(GOOD, GOOD, 3, 1, list)
    assert movegen.results(list(GOOD), [_Count(n) for n in GOOD], 3, 1) == _python(
        Position.initial(), (3, 1))
