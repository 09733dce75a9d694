"""The position classes and game plans of `bgbot.players.position_class`, on hand-made boards."""

from __future__ import annotations

import pytest

from bgbot.core.position import Position
from bgbot.players.position_class import (
    GAME_PLANS,
    PositionClass,
    game_plan,
    is_crashed,
    longest_prime,
    position_class,
)

from .conftest import board, side

START = {24: 2, 13: 5, 8: 3, 6: 5}


@pytest.mark.parametrize("position, expected_class, expected_plan", [
    (Position.initial(), PositionClass.CONTACT, "opening"),
    (board({6: 5, 5: 5, 4: 5}, {6: 5, 5: 5, 3: 5}), PositionClass.BEAROFF, "bearoff"),
    (board({10: 5, 5: 5, 4: 5}, {6: 5, 5: 5, 3: 5}), PositionClass.RACE, "race"),
    (board({1: 8, 2: 4, 20: 3}, {6: 4, 8: 4, 13: 4, 22: 3}), PositionClass.CRASHED, "crashed"),
    (board({6: 4, 5: 4, 4: 3, 3: 2, 2: 2}, {24: 2, 13: 4, 8: 4, 6: 5}),
     PositionClass.CONTACT, "bearoff_contact"),
    (board({24: 2, 22: 2, 13: 3, 8: 3, 6: 3, 5: 2}, {6: 4, 5: 4, 4: 3, 7: 2, 8: 2}),
     PositionClass.CONTACT, "back_game"),
    (board({8: 2, 7: 2, 6: 3, 5: 2, 4: 2, 24: 2, 13: 2}, {9: 2, 8: 2, 7: 2, 6: 3, 24: 2, 13: 4}),
     PositionClass.CONTACT, "prime_vs_prime"),
    (board({20: 2, 13: 4, 8: 3, 6: 4, 5: 2}, {13: 3, 10: 2, 8: 3, 6: 4, 4: 3}),
     PositionClass.CONTACT, "holding"),
    (board({13: 4, 8: 3, 6: 4, 5: 2, 4: 2}, {6: 2, 8: 3, 13: 5, 24: 3, 10: 1}, opponent_bar=1),
     PositionClass.CONTACT, "blitz"),
    (board({13: 3, 9: 1, 8: 3, 6: 4, 5: 2, 22: 2}, {13: 4, 8: 3, 6: 4, 7: 2, 21: 2}),
     PositionClass.CONTACT, "middle_game_blots"),
])
def test_classes_and_plans(position: Position, expected_class: PositionClass,
                           expected_plan: str) -> None:
    assert sum(position.mover) == 15 and sum(position.opponent) == 15
    assert position_class(position) is expected_class
    assert game_plan(position) == expected_plan
    assert expected_plan in GAME_PLANS


def test_a_finished_game_is_over() -> None:
    over = board({}, {6: 3})
    assert position_class(over) is PositionClass.OVER
    assert game_plan(over) == "over"


def test_crashed_counts_working_chequers_only() -> None:
    assert is_crashed(side({1: 9, 2: 3, 20: 3}))        # 15 - 8 - 2 = 5 working
    assert not is_crashed(side({1: 2, 2: 2, 6: 5, 8: 6}))  # 15 - 1 - 1 = 13
    assert is_crashed(side({3: 4, 20: 2}))              # only 6 left in play
    assert longest_prime(side({4: 2, 5: 2, 6: 2, 7: 2, 9: 2})) == 4
    assert longest_prime(side(START)) == 1
