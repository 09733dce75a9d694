"""The rules of moving (R5–R19), checked by example, by property, and against gnubg's own plays."""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bgbot import IllegalAction, InvalidPosition, Play, Position
from bgbot.core.errors import FormatError

from .conftest import board


def results(pos: Position, dice: tuple[int, int]) -> set[Position]:
    return {pos.apply(p) for p in pos.legal_plays(dice)}


def step_sets(pos: Position, dice: tuple[int, int]) -> set[frozenset[tuple[int, int]]]:
    """Each legal play as the multiset-free set of its (from, to) steps, for readable asserts."""
    return {frozenset((s.from_point, s.to_point) for s in p.steps) for p in pos.legal_plays(dice)}


# --------------------------------------------------------------------------- gnubg as oracle


def test_every_gnubg_record_has_the_same_resulting_positions(
    legal_move_records: list[dict[str, Any]],
) -> None:
    mismatches = []
    for record in legal_move_records:
        pos = Position.from_board(record["board"])
        assert pos.position_id() == record["position_id"]
        got = sorted(pos.apply(p).position_id() for p in pos.legal_plays(record["dice"]))
        if got != record["moves"]:
            mismatches.append((record["position_id"], record["dice"]))
    assert not mismatches, f"{len(mismatches)} records differ from gnubg, e.g. {mismatches[:5]}"


def test_plays_per_record_are_distinct_and_counted_like_gnubg(
    legal_move_records: list[dict[str, Any]],
) -> None:
    for record in legal_move_records[:2000]:
        pos = Position.from_board(record["board"])
        plays = pos.legal_plays(record["dice"])
        assert len(plays) == record["n_plays"]
        assert len({pos.apply(p) for p in plays}) == len(plays)
        for play in plays:
            expected_dice = record["dice_used"]
            if not pos.apply(play).is_game_over():
                assert len(play) == expected_dice


def test_position_id_of_the_start_is_gnubgs() -> None:
    assert Position.initial().position_id() == "4HPwATDgc/ABMA"
    assert Position.from_position_id("4HPwATDgc/ABMA") == Position.initial()


def test_opening_31_has_the_sixteen_plays_gnubg_lists() -> None:
    plays = Position.initial().legal_plays((3, 1))
    assert len(plays) == 16


@pytest.mark.parametrize(
    "bad",
    ["", "4HPwATDgc/AB", "4HPwATDgc/ABM!", "////////////// ", "//////////////"],
)
def test_malformed_position_ids_are_rejected_with_the_field_named(bad: str) -> None:
    with pytest.raises(FormatError, match="position id"):
        Position.from_position_id(bad)


def test_impossible_boards_are_rejected() -> None:
    with pytest.raises(InvalidPosition, match="25 counts"):
        Position([0] * 24, [0] * 25)
    with pytest.raises(InvalidPosition, match="at most 15"):
        Position([0] * 25, [16] + [0] * 24)
    with pytest.raises(InvalidPosition, match="both sides"):
        # mover's 6-point is the opponent's 19-point
        Position([0] * 18 + [2] + [0] * 6, [0] * 5 + [3] + [0] * 19)


# --------------------------------------------------------------------------- rules by example


def test_r5_chequers_only_move_toward_home() -> None:
    for play in Position.initial().legal_plays((6, 5)):
        for step in play.steps:
            assert step.to_point < step.from_point


def test_r6_no_landing_on_a_point_held_by_two_opponent_chequers() -> None:
    # The opening position: our 12-point is the opponent's midpoint (5 chequers).
    pos = Position.initial()
    for play in pos.legal_plays((3, 1)):
        assert (13, 12) not in [(s.from_point, s.to_point) for s in play.steps]


def test_r7_a_combined_move_needs_an_open_intermediate_point() -> None:
    # A lone chequer on our 13 with the rest on the ace point; the opponent holds our 7 and 8.
    blocked = board({13: 1, 1: 14}, {18: 2, 17: 2, 1: 11})
    assert blocked.legal_plays((6, 5)) == []
    # Open one intermediate point (our 8): now 13/8/2 is legal.
    one_open = board({13: 1, 1: 14}, {18: 2, 1: 13})
    assert step_sets(one_open, (6, 5)) == {frozenset({(13, 8), (8, 2)})}


def test_r8_doubles_are_played_four_times() -> None:
    for play in Position.initial().legal_plays((3, 3)):
        assert len(play) == 4


def test_r9_both_dice_must_be_used_when_possible() -> None:
    # 24/18 alone would leave the 5 unplayed although 24/18 and 13/8 together are legal.
    pos = Position.initial()
    assert all(len(p) == 2 for p in pos.legal_plays((6, 5)))


def test_r9_higher_die_rule() -> None:
    # gnubg's hand case: a lone chequer on our 13, the opponent holds our 2-point:
    # 13/7 or 13/8 can be played but not both, so only the 6 (the higher die) is legal.
    pos = board({13: 1, 1: 14}, {23: 2, 13: 13})
    assert step_sets(pos, (6, 5)) == {frozenset({(13, 7)})}


def test_r9_lower_die_when_the_higher_cannot_be_played() -> None:
    # The 6 cannot be played (13/7 blocked), the 5 can (13/8) but then 8/2 is blocked.
    pos = board({13: 1, 1: 14}, {18: 2, 23: 2, 13: 11})
    assert step_sets(pos, (6, 5)) == {frozenset({(13, 8)})}


def test_r9_neither_die_playable_loses_the_turn() -> None:
    pos = board({13: 1, 1: 14}, {18: 2, 17: 2, 13: 11})
    assert pos.legal_plays((6, 5)) == []


def test_r9_partial_doubles_play_as_many_as_possible() -> None:
    # A chequer on our 24 can move 24/20/16 but our 12-point is blocked: only two 4s play.
    pos = board({24: 1, 1: 14}, {13: 2, 12: 13})
    assert step_sets(pos, (4, 4)) == {frozenset({(24, 20), (20, 16)})}


def test_r10_a_roll_is_two_moves_not_their_sum() -> None:
    # 5-3 moves a chequer 8 pips only through 5 or 3 pips first: our 8 and 10 are blocked.
    pos = board({13: 1, 1: 14}, {15: 2, 17: 2, 13: 11})
    assert all((13, 5) not in {(s.from_point, s.to_point) for s in p.steps}
               for p in pos.legal_plays((5, 3)))
    assert pos.legal_plays((5, 3)) == []


def test_r11_landing_on_a_blot_hits_it_also_on_an_intermediate_point() -> None:
    # The opponent's blot on our 10-point (its 15): 13/10*/5 hits on the way.
    pos = board({13: 1, 1: 14}, {15: 1, 1: 14})
    plays = pos.legal_plays((3, 5))
    hitting = [p for p in plays if any(s.hit for s in p.steps)]
    assert hitting
    after = pos.apply(hitting[0])
    assert after.opponent[24] == 1 and after.opponent[14] == 0
    # Hitting is never compulsory (R11): 13/8/5 avoids the blot.
    assert any(not any(s.hit for s in p.steps) for p in plays)


def test_r12_chequers_on_the_bar_enter_first() -> None:
    pos = board({6: 5, 8: 3, 13: 5, 24: 1}, {6: 5, 8: 3, 13: 5, 24: 2}, mover_bar=1)
    for play in pos.legal_plays((4, 2)):
        assert play.steps[0].from_point == 25


def test_r12_both_dice_cannot_be_combined_to_enter() -> None:
    # Entry points 21 (die 4) and 23 (die 2) blocked; 19 (= 4+2) is open but cannot be reached.
    pos = board({6: 14}, {4: 2, 2: 2, 1: 11}, mover_bar=1)
    assert pos.legal_plays((4, 2)) == []


def test_r13_enter_as_many_as_possible_the_rest_is_lost() -> None:
    # Two on the bar, only the 3 enters (our 22 open; the 5 lands on our 20, blocked).
    pos = board({6: 13}, {5: 2, 1: 13}, mover_bar=2)
    assert step_sets(pos, (5, 3)) == {frozenset({(25, 22)})}


def test_r13_after_entering_the_rest_of_the_roll_is_played() -> None:
    pos = board({6: 14}, {1: 15}, mover_bar=1)
    assert all(len(p) == 2 for p in pos.legal_plays((5, 3)))


def test_r14_no_entry_against_a_closed_board() -> None:
    closed = board({6: 13}, {1: 2, 2: 2, 3: 2, 4: 2, 5: 2, 6: 3}, mover_bar=2)
    for dice in [(6, 6), (1, 2), (5, 3)]:
        assert closed.legal_plays(dice) == []


def test_r15_bear_off_only_with_all_fifteen_home() -> None:
    pos = board({7: 1, 6: 4, 1: 10}, {23: 15})
    for play in pos.legal_plays((6, 1)):
        # 6/off would need the 7-point chequer home first; 7/1 then 6/off is not possible
        # (the 1 then must be played, 7/6 then 6/off uses both dice legally).
        offs = [s for s in play.steps if s.to_point == 0]
        if offs:
            assert play.steps[0].from_point == 7


def test_r16_a_die_bears_off_from_its_own_point() -> None:
    pos = board({6: 2, 3: 1}, {24: 15})
    assert frozenset({(6, 0), (3, 0)}) in step_sets(pos, (6, 3))


def test_r16_a_larger_die_bears_off_from_the_highest_point() -> None:
    pos = board({3: 1, 2: 1}, {24: 15})
    assert step_sets(pos, (6, 5)) == {frozenset({(3, 0), (2, 0)})}


def test_r16_a_larger_die_must_move_a_higher_chequer_first() -> None:
    # A 5 with chequers on the 6 and the 3: the 5 cannot bear off the 3 while the 6 is there.
    pos = board({6: 1, 3: 1}, {24: 15})
    for play in pos.legal_plays((5, 1)):
        for i, step in enumerate(play.steps):
            if step.from_point == 3 and step.to_point == 0:
                assert any(s.from_point == 6 for s in play.steps[:i])


def test_r17_bearing_off_is_not_forced() -> None:
    pos = board({6: 2, 5: 1, 2: 2}, {18: 15})
    afters = results(pos, (5, 1))
    assert board({6: 1, 5: 1, 2: 2}, {18: 15}) in afters  # bears one off
    assert board({5: 2, 2: 2, 1: 1}, {18: 15}) in afters  # 6/1 6/5 bears none off


def test_r18_a_hit_chequer_stops_the_bear_off() -> None:
    # All home but one chequer on the bar: it must enter and come home before bearing off.
    pos = board({6: 3, 5: 3, 4: 3, 3: 3, 2: 2}, {1: 14}, mover_bar=1)
    for play in pos.legal_plays((6, 5)):
        assert play.steps[0].from_point == 25
        assert all(s.to_point != 0 for s in play.steps)


def test_r19_bearing_off_the_last_chequer_wins() -> None:
    pos = board({1: 1}, {1: 1})
    (play,) = pos.legal_plays((2, 1))
    after = pos.apply(play)
    assert after.is_game_over()
    assert after.win_kind() == 1


def test_r20_gammon_and_backgammon_by_the_final_board() -> None:
    gammon = board({1: 1}, {6: 15})
    after = gammon.apply(gammon.legal_plays((1, 2))[0])
    assert after.win_kind() == 2
    backgammon = board({1: 1}, {6: 14, 20: 1})  # opponent's 20 = our 5: in our home board
    after = backgammon.apply(backgammon.legal_plays((1, 2))[0])
    assert after.win_kind() == 3


# --------------------------------------------------------------------------- properties


def _random_reachable(seed: int, plies: int) -> Position:
    rng = random.Random(seed)
    pos = Position.initial()
    for _ in range(plies):
        plays = pos.legal_plays((rng.randint(1, 6), rng.randint(1, 6)))
        if plays:
            pos = pos.apply(rng.choice(plays))
        if pos.is_game_over():
            break
        pos = pos.swapped()
    return pos


positions = st.builds(_random_reachable, st.integers(0, 10**9), st.integers(0, 120))
dice_rolls = st.tuples(st.integers(1, 6), st.integers(1, 6))


@settings(max_examples=300, deadline=None)
@given(positions, dice_rolls)
def test_property_fifteen_chequers_a_side_and_distinct_results(
    pos: Position, dice: tuple[int, int]
) -> None:
    plays = pos.legal_plays(dice)
    afters = [pos.apply(p) for p in plays]
    assert len(set(afters)) == len(afters)
    assert len(set(plays)) == len(plays)
    for after in afters:
        for counts in (after.mover, after.opponent):
            assert sum(counts) + (15 - sum(counts)) == 15 and sum(counts) <= 15
        assert sum(after.opponent) == sum(pos.opponent)  # hits move chequers, never remove them


@settings(max_examples=300, deadline=None)
@given(positions, dice_rolls)
def test_property_pips_fall_by_the_dice_used(pos: Position, dice: tuple[int, int]) -> None:
    before, _ = pos.pip_counts()
    for play in pos.legal_plays(dice):
        moved = sum(s.from_point - s.to_point for s in play.steps)
        after, _ = pos.apply(play).pip_counts()
        assert before - after == moved
        used = sorted(Counter(_die_of(s, dice) for s in play.steps).elements())
        exact = all(s.to_point != 0 or s.from_point in dice for s in play.steps)
        if exact:
            assert moved == sum(used)
        else:
            assert moved <= sum(used)


def _die_of(step: Any, dice: tuple[int, int]) -> int:
    distance = step.from_point - step.to_point
    if distance in dice:
        return distance
    return max(dice)  # an over-size bear-off uses the larger die


@settings(max_examples=300, deadline=None)
@given(positions)
def test_property_swapping_twice_is_identity_and_ids_round_trip(pos: Position) -> None:
    assert pos.swapped().swapped() == pos
    assert Position.from_position_id(pos.position_id()) == pos
    assert Position.from_board(pos.to_board()) == pos
    mover_pips, opponent_pips = pos.pip_counts()
    assert pos.swapped().pip_counts() == (opponent_pips, mover_pips)


@settings(max_examples=200, deadline=None)
@given(positions, dice_rolls)
def test_property_legal_plays_do_not_depend_on_dice_order(pos: Position, dice: tuple[int, int]) -> None:
    assert results(pos, dice) == results(pos, (dice[1], dice[0]))


def test_apply_rejects_a_step_without_a_chequer() -> None:
    with pytest.raises(IllegalAction, match="no chequer"):
        Position.initial().apply(Play([(20, 15)]))


@pytest.mark.parametrize("dice", [(0, 3), (7, 1), (1,)])
def test_bad_dice_are_rejected(dice: tuple[int, ...]) -> None:
    with pytest.raises(IllegalAction, match="dice|two dice"):
        Position.initial().legal_plays(dice)


def test_the_public_api_of_design_section_7() -> None:
    from bgbot import Game, Match, Play, Position, Rules

    pos = Position.from_position_id("4HPwATDgc/ABMA")
    assert pos.position_id() == "4HPwATDgc/ABMA"
    plays = pos.legal_plays((3, 1))
    after = pos.apply(plays[0])
    assert after.position_id() != pos.position_id()
    assert Play.parse("8/5 6/5", pos, (3, 1)) in plays
    assert str(Play.parse("8/5 6/5", pos, (3, 1))) == "8/5 6/5"
    assert Match(7, Rules()).new_game().phase.value == "opening"
    assert isinstance(Game(), Game)
