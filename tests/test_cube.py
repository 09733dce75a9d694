"""Cube decisions: money take points, Janowski, Jacoby, beavers, and match play through a MET."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bgbot.core.position import Position
from bgbot.core.rules import Rules
from bgbot.players.base import Context, CubeOwner, Probabilities, TakeDecision
from bgbot.players.bearoff import BearoffDatabase
from bgbot.players.cube import (
    BEAROFF_EFFICIENCY,
    CONTACT_EFFICIENCY,
    analyse_cube,
    cube_efficiency,
    cubeful_value,
    match_equity,
    match_utility,
    mwc_after_play,
    play_value,
    should_double,
    take_decision,
)
from bgbot.players.met import GNUBG_MET_DIR, MatchEquityTable, generate_met, read_met_xml

OPENING = Position.initial()


def chances(p: float, gammon: float = 0.0, lose_gammon: float = 0.0) -> Probabilities:
    """Chances with gammons as fixed fractions of the wins and losses."""
    return Probabilities(p, gammon * p, 0.0, lose_gammon * (1.0 - p), 0.0)


def take_point(
    taker: Context,
    efficiency: float,
    taker_gammons: float = 0.0,
    doubler_gammons: float = 0.0,
    met: MatchEquityTable | None = None,
) -> float:
    """The taker's win chance where take_decision turns from DROP to TAKE (by bisection)."""
    low, high = 0.0, 1.0
    for _ in range(40):
        mid = (low + high) / 2
        probs = chances(1.0 - mid, doubler_gammons, taker_gammons)
        decision = take_decision(probs, taker, OPENING, met=met, efficiency=efficiency)
        if decision is TakeDecision.DROP:
            low = mid
        else:
            high = mid
    return high


def match(length: int, me_away: int, opp_away: int, **kwargs: object) -> Context:
    return Context(
        match_length=length,
        my_score=length - me_away,
        opponent_score=length - opp_away,
        **kwargs,  # type: ignore[arg-type]
    )


@pytest.fixture(scope="module")
def kxg2() -> MatchEquityTable:
    path = GNUBG_MET_DIR / "Kazaross-XG2.xml"
    if not path.exists():
        pytest.skip("gnubg's MET files are not installed")
    return read_met_xml(path)


# ---------------------------------------------------------------------- money (§6.1, §9)


@pytest.mark.parametrize(
    ("efficiency", "expected"), [(0.0, 0.25), (1.0, 0.20), (2.0 / 3.0, 0.214)]
)
def test_money_take_point_without_gammons(efficiency: float, expected: float) -> None:
    assert take_point(Context(), efficiency) == pytest.approx(expected, abs=0.001)


@pytest.mark.parametrize(("efficiency", "expected"), [(1.0, 0.238), (0.0, 0.287), (0.68, 0.252)])
def test_money_take_point_with_gammons(efficiency: float, expected: float) -> None:
    """The reference's example: W = 1.229 and L = 1.196 for the taker."""
    tp = take_point(Context(), efficiency, taker_gammons=0.229, doubler_gammons=0.196)
    assert tp == pytest.approx(expected, abs=0.001)


def test_one_chequer_each_on_the_six_point() -> None:
    """Exact: A doubles; B is indifferent, so double/take is no better for B than passing."""
    position = Position(
        [0, 0, 0, 0, 0, 1] + [0] * 19, [0, 0, 0, 0, 0, 1] + [0] * 19
    )
    probs = BearoffDatabase.build(1).probabilities(position)
    assert probs is not None and probs.win == pytest.approx(0.8125)
    assert cube_efficiency(position) == BEAROFF_EFFICIENCY
    analysis = analyse_cube(probs, Context(), position)
    assert should_double(probs, Context(), position)
    assert analysis.double_pass == 1.0
    assert analysis.double_take >= analysis.double_pass
    assert analysis.no_double < 1.0


def test_no_double_when_too_good_and_gammonish() -> None:
    probs = chances(0.85, gammon=0.5)
    analysis = analyse_cube(probs, Context(), OPENING)
    assert analysis.no_double > 1.0 and analysis.too_good
    assert not should_double(probs, Context(), OPENING)


def test_jacoby_makes_the_gammonish_position_a_double() -> None:
    """Under Jacoby, gammons only count once the cube is turned: double and cash."""
    probs = chances(0.85, gammon=0.5)
    jacoby = Context(rules=Rules(jacoby=True))
    assert should_double(probs, jacoby, OPENING)
    # With the cube already turned, Jacoby no longer applies.
    owned = Context(cube_value=2, cube_owner=CubeOwner.ME, rules=Rules(jacoby=True))
    assert not should_double(probs, owned, OPENING)


def test_beaver_only_when_allowed_and_in_money() -> None:
    probs = chances(0.35)  # the doubler is the underdog: the taker is the favourite
    taker = Context(rules=Rules(beavers=True))
    assert take_decision(probs, taker, OPENING) is TakeDecision.BEAVER
    assert take_decision(probs, Context(), OPENING) is TakeDecision.TAKE
    in_match = match(7, 4, 4, rules=Rules(beavers=True))
    assert take_decision(probs, in_match, OPENING) is TakeDecision.TAKE
    # A slight favourite taker beavers, but not when the doubler is the favourite.
    assert take_decision(chances(0.6), taker, OPENING) is TakeDecision.TAKE


def test_no_double_without_the_cube_or_when_the_opponent_owns_it() -> None:
    probs = chances(0.75)
    assert should_double(probs, Context(), OPENING)
    assert not should_double(probs, Context(rules=Rules(cube=False)), OPENING)
    theirs = Context(cube_value=2, cube_owner=CubeOwner.OPPONENT)
    assert not should_double(probs, theirs, OPENING)
    assert not should_double(chances(0.5), Context(), OPENING)


@given(st.floats(0.0, 1.0), st.floats(0.0, 1.0), st.floats(0.0, 0.6), st.floats(0.0, 0.6))
def test_take_decisions_are_monotonic(p: float, q: float, wg: float, lg: float) -> None:
    """If the taker takes against a doubler at p, he takes against any weaker doubler."""
    low, high = sorted((p, q))
    if take_decision(chances(high, wg, lg), Context(), OPENING) is not TakeDecision.DROP:
        assert take_decision(chances(low, wg, lg), Context(), OPENING) is not TakeDecision.DROP


def test_cube_efficiency_by_position_kind() -> None:
    assert cube_efficiency(OPENING) == CONTACT_EFFICIENCY
    long_race = Position([0] * 8 + [15] + [0] * 16, [0] * 8 + [15] + [0] * 16)
    mid_race = Position([0] * 6 + [15] + [0] * 18, [0] * 6 + [15] + [0] * 18)
    short_race = Position([0] * 6 + [2] + [0] * 18, [6] + [0] * 5 + [2] + [0] * 18)
    assert cube_efficiency(long_race) == pytest.approx(0.7)  # 135 pips: above 120
    assert cube_efficiency(mid_race) == pytest.approx(0.6 + 0.1 * (105 - 40) / 80)
    assert 0.6 <= cube_efficiency(short_race) < cube_efficiency(long_race)


def test_play_value_money() -> None:
    probs = chances(0.6, gammon=0.3, lose_gammon=0.2)
    assert play_value(probs, Context()) == pytest.approx(probs.equity())
    jacoby = Context(rules=Rules(jacoby=True))
    assert play_value(probs, jacoby) == pytest.approx(2 * 0.6 - 1)
    bg2 = Probabilities(0.6, 0.3, 0.1, 0.0, 0.0)
    assert play_value(bg2, Context(rules=Rules(backgammon_value=2))) == pytest.approx(bg2.equity() - 0.1)


# ---------------------------------------------------------------------- match play (§6.2)


def test_crawford_game_never_doubles() -> None:
    crawford = match(5, 3, 1, crawford=True)
    assert not should_double(chances(0.7), crawford, OPENING)


@pytest.mark.parametrize("p", [0.5, 0.3, 0.7])
def test_post_crawford_trailer_doubles_at_once(p: float) -> None:
    trailer = match(5, 4, 1, post_crawford=True)
    assert should_double(chances(p, 0.25, 0.25), trailer, OPENING)


def test_leader_free_drop_at_two_away() -> None:
    """Trailer at 2-away: the leader passes when the trailer is the favourite, else takes."""
    leader = match(5, 1, 2, post_crawford=True)
    assert take_decision(chances(0.55), leader, OPENING) is TakeDecision.DROP
    assert take_decision(chances(0.45), leader, OPENING) is TakeDecision.TAKE


def test_automatic_redouble_when_the_opponent_wins_the_match_anyway() -> None:
    """I took at 2; my opponent is 2-away, so any loss at 2 loses me the match: redouble."""
    mine = Context(cube_value=2, cube_owner=CubeOwner.ME, match_length=7, my_score=2, opponent_score=5)
    assert should_double(chances(0.45, 0.2, 0.2), mine, OPENING)


def test_dead_cube_is_never_doubled() -> None:
    dead = Context(cube_value=2, cube_owner=CubeOwner.ME, match_length=7, my_score=5, opponent_score=0)
    assert not should_double(chances(0.8), dead, OPENING)


def test_two_away_two_away_take_point_is_the_crawford_entry(kxg2: MatchEquityTable) -> None:
    for efficiency in (0.0, 0.68, 1.0):
        tp = take_point(match(7, 2, 2), efficiency, met=kxg2)
        assert tp == pytest.approx(1.0 - kxg2.win_probability(1, 2), abs=1e-4)  # 32.26 %
    assert take_point(match(7, 2, 2), 0.68, met=kxg2) == pytest.approx(0.3226, abs=1e-3)


@pytest.mark.gnubg
@pytest.mark.parametrize(
    ("taker", "doubler", "expected"),
    [(3, 3, 0.302), (2, 3, 0.262), (3, 2, 0.368), (4, 5, 0.227), (5, 9, 0.241), (2, 7, 0.218)],
)
def test_dead_take_points_from_kazaross(
    kxg2: MatchEquityTable, taker: int, doubler: int, expected: float
) -> None:
    assert take_point(match(15, taker, doubler), 0.0, met=kxg2) == pytest.approx(expected, abs=6e-4)


@pytest.mark.gnubg
def test_live_take_point_at_three_away_three_away(kxg2: MatchEquityTable) -> None:
    """XG's 30.17 % × 75.08 % = 22.65 % with a fully live cube."""
    assert take_point(match(7, 3, 3), 1.0, met=kxg2) == pytest.approx(0.2265, abs=5e-4)


def test_our_met_take_point_near_kazaross() -> None:
    assert take_point(match(7, 3, 3), 0.0) == pytest.approx(0.302, abs=0.01)
    assert take_point(match(7, 3, 3), 1.0) == pytest.approx(0.2265, abs=0.01)


def test_match_equity_is_the_met_average_of_the_outcomes() -> None:
    met = generate_met()
    context = match(7, 3, 4)
    probs = Probabilities(0.6, 0.2, 0.05, 0.1, 0.01)
    expected = (
        0.4 * met.win_probability(2, 4)
        + 0.15 * met.win_probability(1, 4)
        + 0.05 * 1.0
        + 0.3 * met.win_probability(3, 3)
        + 0.09 * met.win_probability(3, 2)
        + 0.01 * met.win_probability(3, 1)
    )
    assert match_equity(probs, context) == pytest.approx(expected, abs=1e-12)
    assert match_utility(probs, context) == match_equity(probs, context)
    assert mwc_after_play(probs.flipped(), context) == pytest.approx(expected, abs=1e-12)
    with pytest.raises(ValueError):
        match_equity(probs, Context())


def test_match_play_gammons_matter_only_when_they_count() -> None:
    # At 1-away post-Crawford (leader) my gammons win nothing extra.
    leader = match(5, 1, 3, post_crawford=True)
    assert match_equity(chances(0.6, gammon=0.5), leader) == pytest.approx(
        match_equity(chances(0.6), leader)
    )
    pre = match(7, 4, 4)
    assert match_equity(chances(0.6, gammon=0.5), pre) > match_equity(chances(0.6), pre)


def test_cubeful_value_doubles_when_right() -> None:
    probs = chances(0.78)
    analysis = analyse_cube(probs, Context(cube_value=2), OPENING)
    value = cubeful_value(probs, Context(cube_value=2), OPENING)
    assert analysis.double
    assert value == pytest.approx(2 * min(analysis.double_take, analysis.double_pass))
    assert analyse_cube(probs, match(7, 4, 4), OPENING).units == "mwc"
