"""Resignations: offered only on proof, accepted only when they give up no equity."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bgbot.core.position import Position
from bgbot.core.rules import Rules
from bgbot.players.base import Context, CubeOwner, Probabilities
from bgbot.players.bearoff import BearoffDatabase
from bgbot.players.resign import (
    accept_resignation,
    max_rolls_to_finish,
    min_rolls_to_finish,
    min_rolls_to_first_off,
    offer_resignation,
    proven_loss,
)

SMALL = 6


@pytest.fixture(scope="module")
def db() -> BearoffDatabase:
    return BearoffDatabase.build(SMALL)


def side(points: dict[int, int]) -> list[int]:
    counts = [0] * 25
    for point, n in points.items():
        counts[point - 1] = n
    return counts


def pos(mover: dict[int, int], opponent: dict[int, int]) -> Position:
    return Position(side(opponent), side(mover))


class Fixed:
    """An evaluator that always gives the same chances for the player on roll."""

    def __init__(self, probs: Probabilities) -> None:
        self.probs = probs

    def evaluate(self, position: Position) -> Probabilities:
        return self.probs


class Refuses:
    def evaluate(self, position: Position) -> Probabilities:
        raise AssertionError("the evaluator should not be needed here")


# Opponent (not on roll) needs at most 2 rolls: 3 chequers on his ace point.
NEARLY_DONE = {1: 3}


def test_bounds() -> None:
    assert min_rolls_to_finish(tuple(side({13: 14}))) == 11  # 3 dice a chequer, 4 a roll
    assert min_rolls_to_finish(tuple(side({6: 5}))) == 2
    assert min_rolls_to_first_off(tuple(side({13: 15}))) == 8  # 2 dice each to come home, +1
    assert min_rolls_to_first_off(tuple(side({13: 14}))) == 0
    assert max_rolls_to_finish(tuple(side({20: 1}))) == 10  # ceil(pips / 2) outside home


def test_hopeless_race_offers_a_single(db: BearoffDatabase) -> None:
    position = pos({13: 14}, NEARLY_DONE)  # I need >= 11 rolls, he needs <= 2
    assert position.is_race()
    assert offer_resignation(position, Context(), Refuses(), database=db) == 1


def test_gammon_certain_race_offers_a_gammon(db: BearoffDatabase) -> None:
    position = pos({13: 15}, NEARLY_DONE)  # 8 rolls before my first chequer can be off
    assert offer_resignation(position, Context(), Refuses(), database=db) == 2


def test_backgammon_certain_race(db: BearoffDatabase) -> None:
    position = pos({21: 5, 13: 10}, {1: 1})  # 5 chequers in his home board, he finishes now
    assert position.is_race()
    assert offer_resignation(position, Context(), Refuses(), database=db) == 3
    assert offer_resignation(position, match_context(7, 4, 4), Refuses(), database=db) == 3


def test_jacoby_with_a_centred_cube_offers_a_single(db: BearoffDatabase) -> None:
    position = pos({13: 15}, NEARLY_DONE)
    jacoby = Context(rules=Rules(jacoby=True))
    assert offer_resignation(position, jacoby, Refuses(), database=db) == 1
    owned = Context(cube_value=2, cube_owner=CubeOwner.OPPONENT, rules=Rules(jacoby=True))
    assert offer_resignation(position, owned, Refuses(), database=db) == 2


def test_never_with_contact(db: BearoffDatabase) -> None:
    assert offer_resignation(Position.initial(), Context(), Refuses(), database=db) == 0
    # Closed out with 15 back against a nearly finished opponent that still has one
    # chequer behind me: still contact, so no resignation.
    position = pos({25: 2, 23: 13}, {1: 2, 24: 1})
    assert position.is_contact()
    assert offer_resignation(position, Context(), Refuses(), database=db) == 0


def test_no_resignation_while_a_win_is_possible(db: BearoffDatabase) -> None:
    position = pos({6: 2}, NEARLY_DONE)  # I can finish with doubles first
    assert offer_resignation(position, Context(), Refuses(), database=db) == 0
    # One roll each: I am on roll, so my minimum (1) is not above his maximum (1).
    assert proven_loss(pos({1: 1}, {1: 1}), db) == 0


def test_who_is_on_roll_matters(db: BearoffDatabase) -> None:
    # I need 2 rolls at least (5 chequers), he needs 1 at most: I lose. Swapped, he is on roll
    # needing 1 roll: he cannot lose, and I (now not on roll) am not the one asked.
    position = pos({1: 5}, {2: 1})
    assert proven_loss(position, db) == 1
    assert proven_loss(position.swapped(), db) == 0


def _cut(raw: list[int]) -> list[int]:
    out, left = [], SMALL
    for c in raw:
        out.append(min(c, left))
        left -= out[-1]
    out[0] += 1 if not any(out) else 0
    return out


home_side = st.lists(st.integers(0, 3), min_size=6, max_size=6).map(_cut)


@settings(max_examples=80, deadline=None)
@given(home_side, home_side)
def test_a_proven_loss_has_no_winning_chance(db: BearoffDatabase, mine: list[int], theirs: list[int]) -> None:
    position = Position(theirs + [0] * 19, mine + [0] * 19)
    probs = db.probabilities(position)
    assert probs is not None
    if proven_loss(position, db):
        assert probs.win == 0.0


# ---------------------------------------------------------------------- accepting


def match_context(length: int, me_away: int, opp_away: int, **kwargs: object) -> Context:
    return Context(
        match_length=length, my_score=length - me_away, opponent_score=length - opp_away,
        **kwargs,  # type: ignore[arg-type]
    )


def test_refuse_a_single_when_a_gammon_is_certain(db: BearoffDatabase) -> None:
    position = pos({13: 15}, NEARLY_DONE)  # seen from the resigner, on roll
    certain_gammon = Fixed(Probabilities(0.0, 0.0, 0.0, 1.0, 0.0))
    assert not accept_resignation(position, Context(), 1, certain_gammon, database=db)
    assert accept_resignation(position, Context(), 2, certain_gammon, database=db)
    assert accept_resignation(position, Context(), 3, certain_gammon, database=db)


def test_refuse_when_playing_on_is_worth_more(db: BearoffDatabase) -> None:
    # Contact, so the evaluator decides: the resigner wins 10 % and gets gammoned 60 %.
    evaluator = Fixed(Probabilities(0.1, 0.0, 0.0, 0.6, 0.0))
    assert not accept_resignation(Position.initial(), Context(), 1, evaluator, database=db)
    assert accept_resignation(Position.initial(), Context(), 2, evaluator, database=db)


def test_accept_a_single_when_i_cannot_win_more(db: BearoffDatabase) -> None:
    # Exact from the database: he has 5 off, so at most a single, and he cannot win.
    position = pos({6: 10}, {1: 1})
    assert db.probabilities(position) is None  # 10 chequers: beyond the small database
    small = pos({6: 5}, {1: 1})
    assert accept_resignation(small, Context(), 1, Refuses(), database=db)


def test_jacoby_counts_a_gammon_resignation_as_single(db: BearoffDatabase) -> None:
    evaluator = Fixed(Probabilities(0.0, 0.0, 0.0, 1.0, 0.0))
    jacoby = Context(rules=Rules(jacoby=True))
    position = pos({13: 15}, NEARLY_DONE)
    assert accept_resignation(position, jacoby, 1, evaluator, database=db)


def test_match_play_compares_match_winning_chances(db: BearoffDatabase) -> None:
    evaluator = Fixed(Probabilities(0.0, 0.0, 0.0, 1.0, 0.0))
    position = pos({13: 15}, NEARLY_DONE)
    # I am 1-away (post-Crawford): a single already wins me the match.
    assert accept_resignation(position, match_context(5, 1, 3, post_crawford=True), 1, evaluator, database=db)
    # At 4-away each, the gammon is worth a lot more than a single.
    assert not accept_resignation(position, match_context(7, 4, 4), 1, evaluator, database=db)
    assert accept_resignation(position, match_context(7, 4, 4), 2, evaluator, database=db)


def test_bad_resignation_value(db: BearoffDatabase) -> None:
    with pytest.raises(ValueError):
        accept_resignation(Position.initial(), Context(), 4, Refuses(), database=db)
