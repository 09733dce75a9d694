"""In-process players: pubeval, random, heuristic, and the heuristic evaluator."""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bgbot.core.position import Position
from bgbot.core.rules import Rules
from bgbot.players.base import Context, Probabilities, TakeDecision
from bgbot.players.evaluator import HeuristicEvaluator, race_probabilities
from bgbot.players.features import ESCAPES, hit_rolls, shot_masks, side_info
from bgbot.players.heuristic import HeuristicPlayer
from bgbot.players.pubeval import (
    CONTACT_WEIGHTS,
    RACE_WEIGHTS,
    PubevalPlayer,
    pubeval_inputs,
    pubeval_score,
)
from bgbot.players.random_player import RandomPlayer

from .conftest import board

CTX = Context(rules=Rules(cube=False))
# Without the bear-off database: conftest gives every test run a fresh cache directory, where
# the database would first be built (about a minute). The database has its own tests.
EV = HeuristicEvaluator(use_bearoff=False)


def _sample(records: list[dict[str, Any]], n: int = 150) -> list[dict[str, Any]]:
    rng = random.Random(7)
    return rng.sample(records, min(n, len(records)))


def _result_ids(position: Position, dice: tuple[int, int], play: Any) -> str:
    return position.apply(play).position_id()


@pytest.mark.parametrize("make", [
    lambda: PubevalPlayer(),
    lambda: RandomPlayer(3),
    lambda: HeuristicPlayer(evaluator=EV),
    lambda: HeuristicPlayer(noise=0.05, seed=2, evaluator=EV),
])
def test_players_return_legal_plays(legal_move_records: list[dict[str, Any]], make: Any) -> None:
    player = make()
    for record in _sample(legal_move_records):
        position = Position.from_position_id(record["position_id"])
        dice = tuple(record["dice"])
        play = player.choose_play(position, dice, CTX)
        if not record["moves"]:
            assert not play
        else:
            assert _result_ids(position, dice, play) in set(record["moves"])


def test_heuristic_one_ply_returns_legal_plays(legal_move_records: list[dict[str, Any]]) -> None:
    player = HeuristicPlayer(plies=1, evaluator=EV)
    for record in _sample(legal_move_records, 12):
        position = Position.from_position_id(record["position_id"])
        dice = tuple(record["dice"])
        play = player.choose_play(position, dice, CTX)
        if record["moves"]:
            assert _result_ids(position, dice, play) in set(record["moves"])


# ------------------------------------------------------------------------- pubeval


def test_pubeval_encoding_by_hand() -> None:
    """A tiny race: mover has 2 on its 1-point and 1 on its 3-point, 12 off; opponent bar 0.

    By the published encoding the score is wr[5*23+2] (>=2 on point 1) + wr[5*21+1]
    (exactly 1 on point 3) + wr[121] * 12/15.
    """
    after = board({1: 2, 3: 1}, {1: 15})
    expected = RACE_WEIGHTS[117] + RACE_WEIGHTS[106] + RACE_WEIGHTS[121] * 12 / 15
    assert pubeval_score(after, race=True) == pytest.approx(expected)
    x = pubeval_inputs(after)
    assert x[117] == 1.0 and x[106] == 1.0 and x[121] == pytest.approx(0.8)


def test_pubeval_encoding_blots_bar_and_stacks() -> None:
    """Opponent blot on the mover's 20-point, two opponent chequers on the bar, 5 own on 6."""
    after = board({6: 5, 13: 10}, {5: 1, 10: 12}, opponent_bar=2)
    # Opponent's 5-point is the mover's 20-point: block 5 * (24 - 20) = 20.
    x = pubeval_inputs(after)
    assert x[20] == 1.0
    assert x[120] == 1.0  # 2 on the bar / 2
    assert x[5 * 18 + 2] == 1.0 and x[5 * 18 + 4] == 1.0  # 6-point: >=2, (5-3)/2
    expected = sum(w * v for w, v in zip(CONTACT_WEIGHTS, x))
    assert pubeval_score(after, race=False) == pytest.approx(expected)


def test_pubeval_uses_race_weights_from_position_before_move() -> None:
    """In a race pubeval must score with the race vector: the choice equals the race argmax."""
    position = board({1: 3, 2: 3, 4: 3, 6: 3, 8: 3}, {1: 5, 2: 5, 3: 5})
    assert position.is_race()
    dice = (6, 2)
    results = position.play_results(dice)
    best = max(results, key=lambda r: pubeval_score(r[1], True))
    assert PubevalPlayer().choose_play(position, dice, CTX) == best[0]


def test_pubeval_bears_off_the_last_chequers() -> None:
    position = board({1: 1, 2: 1}, {6: 15})
    play = PubevalPlayer().choose_play(position, (2, 1), CTX)
    assert not any(position.apply(play).mover)


# ------------------------------------------------------------------------- random


def test_random_player_is_deterministic_per_seed() -> None:
    position = Position.initial()
    a = [RandomPlayer(5).choose_play(position, (6, 4), CTX) for _ in range(3)]
    b = [RandomPlayer(5).choose_play(position, (6, 4), CTX) for _ in range(3)]
    assert a == b
    rng_plays = RandomPlayer(5)
    seq1 = [rng_plays.choose_play(position, (6, 4), CTX) for _ in range(20)]
    rng_plays2 = RandomPlayer(5)
    assert seq1 == [rng_plays2.choose_play(position, (6, 4), CTX) for _ in range(20)]
    assert len(set(seq1)) > 1


def test_random_player_cube_flag() -> None:
    ctx = Context()
    assert not RandomPlayer(1).should_double(Position.initial(), ctx)
    assert RandomPlayer(1).take_decision(Position.initial(), ctx) is TakeDecision.TAKE
    decisions = {RandomPlayer(s, cube=True).take_decision(Position.initial(), ctx) for s in range(20)}
    assert decisions == {TakeDecision.TAKE, TakeDecision.DROP}


# ------------------------------------------------------------------------- features


def test_shot_table_matches_single_blot_counts() -> None:
    """Direct and indirect shots at an unblocked blot (heuristic-player.md §2.2 table)."""
    expected = {1: 11, 2: 12, 3: 14, 4: 15, 5: 15, 6: 17, 7: 6, 8: 6, 9: 5, 10: 3, 11: 2,
                12: 3, 15: 1, 16: 1, 18: 1, 20: 1, 24: 1, 13: 0, 14: 0}
    for distance, rolls in expected.items():
        assert hit_rolls(distance, 0).bit_count() == rolls, distance


def test_shots_respect_blocking_points() -> None:
    # 8 away with points 4 and 2 blocked: 4-4 is blocked at 4, 2-2 at 2; 6-2 (via 6) and
    # 5-3 (via 5 or 3) still hit: 4 rolls.
    blocked = (1 << 3) | (1 << 1)
    assert hit_rolls(8, blocked).bit_count() == 4


def test_escape_counts() -> None:
    def mask(*blocked: int) -> int:
        return sum(1 << (d - 1) for d in blocked)

    assert ESCAPES[0] == 36
    assert ESCAPES[mask(1, 2, 3)] == 27
    assert ESCAPES[mask(1, 2, 3, 4, 5, 6)] == 0
    assert ESCAPES[mask(2, 3, 4, 5, 6)] == 2


def test_shots_at_a_blot_in_position() -> None:
    """Shots from two points at one blot are the union of each point's hitting rolls."""
    position = board({13: 2, 8: 13}, {19: 1, 6: 14})
    me, other = side_info(position.mover), side_info(position.opponent)
    union, _, _ = shot_masks(me, other)
    # Blot on the roller's 6-point; shooters on 8 (distance 2) and 13 (distance 7).
    assert union.bit_count() == (hit_rolls(2, 0) | hit_rolls(7, 0)).bit_count()


# ------------------------------------------------------------------------- evaluator


def _valid(p: Probabilities) -> None:
    assert 0.0 <= p.win <= 1.0
    assert 0.0 <= p.win_backgammon <= p.win_gammon <= p.win + 1e-12
    assert 0.0 <= p.lose_backgammon <= p.lose_gammon <= 1.0 - p.win + 1e-12


def _random_positions(seed: int, n: int) -> list[Position]:
    rng = random.Random(seed)
    out = []
    position = Position.initial()
    while len(out) < n:
        results = position.play_results((rng.randint(1, 6), rng.randint(1, 6)))
        after = rng.choice(results)[1] if results else position
        if not any(after.mover):
            position = Position.initial()
            continue
        position = after.swapped()
        out.append(position)
    return out


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000))
def test_evaluator_outputs_are_valid_and_constrained(seed: int) -> None:
    evaluator = EV
    for position in _random_positions(seed, 30):
        p = evaluator.evaluate(position)
        _valid(p)
        me, other = position.mover, position.opponent
        if sum(other) < 15:
            assert p.win_gammon == 0.0
        if sum(me) < 15:
            assert p.lose_gammon == 0.0
        if not (me[24] or any(me[18:24])):
            assert p.lose_backgammon == 0.0
        if not (other[24] or any(other[18:24])):
            assert p.win_backgammon == 0.0


def test_race_lead_of_30_pips_is_a_clear_favourite() -> None:
    # Roller: 15 chequers, 75 pips; other: 105 pips; no contact.
    position = board({6: 5, 5: 5, 4: 5}, {9: 5, 7: 5, 5: 5})
    assert position.is_race()
    evaluator = EV
    assert evaluator.evaluate(position).win > 0.85
    assert evaluator.evaluate(position.swapped()).win < 0.15
    assert race_probabilities(position).win > 0.85


def test_terminal_positions_are_exact() -> None:
    evaluator = EV
    # The roller has nothing left: it has won (a gammon, the other has 15 on the board).
    won = Position([0] * 6 + [15] + [0] * 18, [0] * 25)
    assert evaluator.evaluate(won) == Probabilities(1.0, 1.0, 0.0, 0.0, 0.0)


def _play_result(player: HeuristicPlayer, position: Position, dice: tuple[int, int]) -> Position:
    return position.apply(player.choose_play(position, dice, CTX))


def test_opening_31_makes_the_five_point() -> None:
    start = Position.initial()
    after = _play_result(HeuristicPlayer(evaluator=EV), start, (3, 1))
    assert after.mover[4] == 2 and after.mover[7] == 2 and after.mover[5] == 4


def test_opening_42_makes_the_four_point() -> None:
    start = Position.initial()
    after = _play_result(HeuristicPlayer(evaluator=EV), start, (4, 2))
    assert after.mover[3] == 2


def test_hits_a_blot_in_its_home_board() -> None:
    """The opponent's blot sits on our 4-point: 4-2 hits it and makes the point (8/4* 6/4)."""
    position = board({24: 2, 13: 5, 8: 3, 6: 5}, {24: 2, 13: 4, 8: 3, 6: 5, 21: 1})
    after = _play_result(HeuristicPlayer(evaluator=EV), position, (4, 2))
    assert after.opponent[24] == 1  # the blot (opponent's 21 = our 4-point) was hit


def test_noise_is_deterministic_per_seed() -> None:
    position = Position.initial()
    def plays(seed: int) -> list[Any]:
        player = HeuristicPlayer(noise=0.5, seed=seed, evaluator=EV)
        return [player.choose_play(position, (d1, d2), CTX) for d1 in range(1, 7)
                for d2 in range(1, 7)]
    assert plays(4) == plays(4)
    assert plays(4) != plays(5)


def test_resignations_through_the_resign_module() -> None:
    player = HeuristicPlayer(evaluator=EV)
    ctx = Context()
    contact = Position.initial()
    assert player.offer_resignation(contact, ctx) == 0
    # At the start a resignation of any size is worth more than playing on to the receiver.
    assert player.accept_resignation(contact, ctx, 1)


@pytest.mark.slow  # the resign module loads (in a test run: builds) the bear-off database
def test_resignations_of_a_certain_backgammon() -> None:
    player = HeuristicPlayer(evaluator=EV)
    ctx = Context()
    # The resigner has 15 chequers in the other's home board and the other bears off its last
    # two next roll: a certain backgammon. Only a backgammon offer is acceptable.
    lost = board({19: 15}, {1: 2})
    assert player.offer_resignation(lost, ctx) == 3
    assert not player.accept_resignation(lost, ctx, 1)
    assert not player.accept_resignation(lost, ctx, 2)
    assert player.accept_resignation(lost, ctx, 3)


def _play_pairs(n: int) -> float:
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from tools.gameloop import mirrored_pair

    heuristic, rnd = HeuristicPlayer(evaluator=EV), RandomPlayer(11)
    total = 0
    for seed in range(n):
        a, b, _ = mirrored_pair([heuristic, rnd], seed)
        total += a + b
    return total / (2 * n)


@pytest.mark.slow
def test_heuristic_beats_random_overwhelmingly() -> None:
    assert _play_pairs(150) > 1.0


def test_cube_hooks_give_sane_decisions() -> None:
    player = HeuristicPlayer(evaluator=EV)
    ctx = Context()
    assert not player.should_double(Position.initial(), ctx)
    assert player.take_decision(Position.initial(), ctx) is TakeDecision.TAKE
    # The doubler (on roll) bears off his last two chequers next roll with almost any roll:
    # a double here must be dropped.
    hopeless = board({1: 1, 2: 1}, {1: 3, 2: 3, 3: 3, 4: 3, 5: 3})
    assert player.take_decision(hopeless, ctx) is TakeDecision.DROP


def test_pubeval_and_random_never_resign_or_double() -> None:
    ctx = Context()
    for player in (PubevalPlayer(), RandomPlayer(1)):
        assert player.offer_resignation(Position.initial(), ctx) == 0
        assert not player.accept_resignation(Position.initial(), ctx, 1)
        assert not player.should_double(Position.initial(), ctx)


def test_shipped_weights_match_the_feature_set() -> None:
    from bgbot.players import heuristic_weights
    from bgbot.players.features import FEATURE_NAMES

    assert tuple(heuristic_weights.FEATURES) == FEATURE_NAMES
    for head, values in heuristic_weights.CONTACT.items():
        assert len(values) == len(FEATURE_NAMES), head


def test_fast_logits_equal_the_plain_feature_vector() -> None:
    """The evaluator's table-driven sums equal weights · feature_vector (training's path)."""
    from bgbot.players.evaluator import HEADS
    from bgbot.players.features import feature_vector

    for position in _random_positions(3, 200):
        if not position.is_contact():
            continue
        z = EV.contact_logits(position)
        f = feature_vector(position.mover, position.opponent)
        for h, head in enumerate(HEADS):
            assert z[h] == pytest.approx(sum(w * v for w, v in zip(EV.weights[head], f)), abs=1e-5)
        assert EV.evaluate_sides(position.mover, position.opponent) == EV.evaluate(position)


@pytest.mark.parametrize("plies", [0, 1, 2])
@pytest.mark.parametrize("context", [CTX, Context(match_length=5, my_score=1, opponent_score=3)],
                         ids=["money", "match"])
def test_rank_plays_lists_every_play_once_with_the_choice_first(plies: int,
                                                                 context: Context) -> None:
    """`rank_plays` (the hint's ranking): every legal play once, the deepest-scored first, each
    depth by value, and its first play is the one `choose_play` makes without noise."""
    player = HeuristicPlayer(plies=plies, evaluator=EV)
    rng = random.Random(plies)
    position = Position.initial()
    for turn in range(12):
        dice = (rng.randint(1, 6), rng.randint(1, 6))
        ranked = player.rank_plays(position, dice, context)
        legal = position.legal_plays(dice)
        assert sorted(map(str, (r.play for r in ranked))) == sorted(map(str, legal))
        if ranked:
            assert ranked[0].play == player.choose_play(position, dice, context)
            depths = [r.depth for r in ranked]
            assert depths == sorted(depths, reverse=True) and max(depths) <= plies
            for depth in set(depths):
                values = [r.value for r in ranked if r.depth == depth]
                assert values == sorted(values, reverse=True)
            for r in ranked:
                assert r.after == position.apply(r.play)
            position = ranked[-1].after.swapped()  # play the worst, for variety
        else:
            position = position.swapped()
        if position.is_game_over():
            break
