"""The game state machine: opening, turns, the cube, resignations and scoring (R3-R27)."""

from __future__ import annotations

import random
import re
import subprocess
import tempfile
from typing import Any, Callable

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from bgbot import IllegalAction, Play, Position, Rules
from bgbot.core.game import (
    AutoDoubled,
    Beavered,
    Doubled,
    Dropped,
    Game,
    GameOutcome,
    Moved,
    OpeningRolled,
    Phase,
    Raccooned,
    Resigned,
    ResignationAccepted,
    ResignationRejected,
    Rolled,
    Taken,
)

from .conftest import board

MONEY_BEAVERS = Rules(beavers=True, raccoons=True)


def after_opening(rules: Rules | None = None, **kwargs: Any) -> Game:
    """A game whose opening seat 0 won with 3-1 and played 8/5 6/5: seat 1 is in phase ROLL."""
    game = Game(rules, **kwargs)
    assert game.opening_roll(3, 1)
    game.move(Play([(8, 5), (6, 5)]))
    return game


def play_any(game: Game) -> None:
    """Roll 2-1 for the seat on roll and make its first legal play."""
    game.roll((2, 1))
    plays = game.legal_plays()
    game.move(plays[0] if plays else Play())


# A final position: the mover has one chequer left on its 1-point, any roll bears it off.
LAST_CHEQUER = {1: 1}


def bear_off_last(loser: dict[int, int], *, loser_bar: int = 0, rules: Rules | None = None,
                  cube_value: int = 1, cube_owner: int | None = None, seat: int = 0,
                  match_length: int = 0) -> GameOutcome:
    pos = board(LAST_CHEQUER, loser, opponent_bar=loser_bar)
    game = Game.start_from(pos, seat, dice=(2, 1), rules=rules, cube_value=cube_value,
                           cube_owner=cube_owner, match_length=match_length)
    game.move(Play([(1, 0)]))
    assert game.phase is Phase.OVER
    assert game.outcome is not None
    return game.outcome


# --------------------------------------------------------------------------- opening (R3, R4)


def test_r3_opening_tie_is_rerolled() -> None:
    game = Game()
    assert game.phase is Phase.OPENING
    assert game.seat_to_act is None
    assert game.opening_roll(4, 4) is False
    assert game.phase is Phase.OPENING
    assert game.cube_value == 1  # automatic doubles are off by default
    assert game.opening_roll(2, 5) is True
    assert game.seat_on_roll == 1
    assert game.phase is Phase.MOVE
    assert game.dice == (2, 5)  # the winner plays both opening dice
    assert game.history == (OpeningRolled(4, 4, None), OpeningRolled(2, 5, 1))


def test_r3_higher_die_moves_first_with_the_board_turned() -> None:
    start = board({24: 2, 13: 5, 8: 3, 6: 4, 5: 1}, {24: 2, 13: 5, 8: 3, 6: 5})
    game = Game(position=start)  # seen from seat 0
    game.opening_roll(1, 6)
    assert game.seat_on_roll == 1
    assert game.position == start.swapped()
    assert game.board_for(0) == start
    assert game.board_for(1) == start.swapped()


def test_r3_then_players_alternate() -> None:
    game = after_opening()
    assert (game.phase, game.seat_on_roll, game.dice) == (Phase.ROLL, 1, None)
    play_any(game)
    assert (game.phase, game.seat_on_roll) == (Phase.ROLL, 0)
    play_any(game)
    assert game.seat_on_roll == 1


def test_r4_opening_reroll_option() -> None:
    game = Game(Rules(opening_reroll=True))
    assert game.opening_roll(6, 1)
    assert game.phase is Phase.ROLL and game.seat_on_roll == 0 and game.dice is None
    with pytest.raises(IllegalAction, match="has not rolled yet"):
        game.move(Play([(24, 18), (8, 7)]))
    game.roll((5, 2))
    assert game.dice == (5, 2)
    assert game.history[-1] == Rolled(0, (5, 2))
    with pytest.raises(IllegalAction):
        game.move(Play([(24, 18), (8, 7)]))  # the opening 6-1 is no longer the roll
    game.move(Play([(13, 8), (13, 11)]))
    assert game.seat_on_roll == 1


def test_opening_dice_must_be_dice() -> None:
    with pytest.raises(IllegalAction, match="1..6"):
        Game().opening_roll(0, 3)


# --------------------------------------------------------------------------- moving (R9 via Game)


def test_r9_game_rejects_a_lower_die_play() -> None:
    # gnubg's hand case APD/ARj/PwAEAA: 6-5 with a lone chequer on the 13 and our 2-point held:
    # either die can be played, not both, so the higher (13/7) must be.
    pos = Position.from_position_id("APD/ARj/PwAEAA")
    game = Game.start_from(pos, 0, dice=(6, 5))
    with pytest.raises(IllegalAction) as err:
        game.move(Play([(13, 8)]))
    message = str(err.value)
    assert "13/8" in message and "not a legal play for 6-5" in message
    assert "legal plays: 13/7" in message
    assert game.phase is Phase.MOVE  # nothing changed
    game.move(Play([(13, 7)]))
    assert game.seat_on_roll == 1


def test_move_is_compared_by_resulting_position() -> None:
    game = Game()
    game.opening_roll(3, 1)
    # Steps in another order and without the hit flags still reach the same board.
    recorded = game.move(Play([(6, 5), (8, 5)]))
    assert {(s.from_point, s.to_point) for s in recorded.steps} == {(8, 5), (6, 5)}
    last = game.history[-1]
    assert isinstance(last, Moved) and last.play == recorded and last.dice == (3, 1)
    assert last.before == Position.initial()
    assert game.board_for(0) == Position.initial().apply(Play([(8, 5), (6, 5)]))


def test_empty_play_only_when_nothing_is_legal() -> None:
    # Two on the bar against a closed board: gnubg's hand case 27YdAADgA/4BYA with 6-6.
    closed = Position.from_position_id("27YdAADgA/4BYA")
    game = Game.start_from(closed, 1, dice=(6, 6))
    assert game.legal_plays() == []
    with pytest.raises(IllegalAction, match="only legal play is the empty play"):
        game.move(Play([(25, 19)]))
    game.move(Play())
    assert game.seat_on_roll == 0 and game.phase is Phase.ROLL

    game = Game()
    game.opening_roll(6, 5)
    with pytest.raises(IllegalAction, match="empty play is legal only when no play"):
        game.move(Play())


def test_bad_step_is_reported_with_the_legal_plays() -> None:
    game = Game()
    game.opening_roll(6, 5)
    with pytest.raises(IllegalAction) as err:
        game.move(Play([(13, 7), (3, 1)]))  # nothing on the 3-point
    assert "legal plays:" in str(err.value) and "24/13" in str(err.value)


def test_long_lists_of_legal_plays_are_truncated() -> None:
    game = Game()
    game.opening_roll(3, 1)  # 16 distinct plays
    with pytest.raises(IllegalAction, match=r"\(and 4 more\)"):
        game.move(Play([(24, 21), (24, 20)]))


# --------------------------------------------------------------------------- scoring (R19, R20)


@pytest.mark.parametrize(
    ("loser", "loser_bar", "kind"),
    [
        ({6: 14}, 0, 1),            # the loser has borne one off: single
        ({6: 15}, 0, 2),            # none off: gammon
        ({6: 14}, 1, 3),            # none off and one on the bar: backgammon
        ({6: 14, 19: 1}, 0, 3),     # none off and one in the winner's home board: backgammon
    ],
)
@pytest.mark.parametrize("backgammon_value", [3, 2])
@pytest.mark.parametrize(("cube", "owner"), [(1, None), (4, 1)])
def test_r20_single_gammon_backgammon(loser: dict[int, int], loser_bar: int, kind: int,
                                      backgammon_value: int, cube: int, owner: int | None) -> None:
    rules = Rules(backgammon_value=backgammon_value)
    outcome = bear_off_last(loser, loser_bar=loser_bar, rules=rules, cube_value=cube,
                            cube_owner=owner, seat=1)
    multiplier = {1: 1, 2: 2, 3: backgammon_value}[kind]
    assert outcome == GameOutcome(winner=1, points=cube * multiplier, kind=kind, ending="normal",
                                  cube=cube)


def test_r19_game_ends_only_when_all_fifteen_are_off() -> None:
    pos = board({1: 2}, {6: 15})
    game = Game.start_from(pos, 0, dice=(1, 1))
    game.move(Play([(1, 0), (1, 0)]))
    assert game.is_over and game.outcome is not None and game.outcome.kind == 2
    pos = board({1: 1, 2: 1}, {6: 15})
    game = Game.start_from(pos, 0, dice=(1, 1))
    # 1/off, 2/1, 1/off bears both off, and the game ends before the fourth 1.
    game.move(Play([(1, 0), (2, 1), (1, 0)]))
    assert game.is_over
    game = Game.start_from(board({6: 2}, {6: 15}), 0, dice=(2, 1))
    game.move(game.legal_plays()[0])
    assert not game.is_over and game.phase is Phase.ROLL


def test_actions_after_the_end_are_illegal() -> None:
    game = Game.start_from(board(LAST_CHEQUER, {6: 14}), 0, dice=(2, 1))
    game.move(Play([(1, 0)]))
    assert game.legal_actions() == []
    assert game.seat_on_roll == 0 and game.board_for(0).borne_off()[0] == 15
    for action in (lambda: game.roll((3, 2)), game.double, game.take, game.drop,
                   lambda: game.resign(1, 1), game.accept_resignation):
        with pytest.raises(IllegalAction, match="legal now: nothing"):
            action()


# --------------------------------------------------------------------------- cube (R21-R23)


def test_r21_either_player_may_double_at_the_start() -> None:
    game = after_opening()
    assert game.seat_on_roll == 1 and game.may_double()
    game = Game.start_from(Position.initial(), 0)
    assert game.may_double()
    assert game.legal_actions() == ["roll", "double", "resign"]


def test_r21_r22_double_take_and_ownership() -> None:
    game = after_opening()
    game.double()
    assert game.phase is Phase.TAKE
    assert game.seat_to_act == 0 and game.offered_cube == 2 and game.cube_value == 1
    assert game.legal_actions() == ["take", "drop", "resign"]
    game.take()
    assert (game.cube_value, game.cube_owner, game.offered_cube) == (2, 0, None)
    # The doubler still rolls, and now may not double: the cube is on the other side.
    assert game.phase is Phase.ROLL and game.seat_on_roll == 1
    with pytest.raises(IllegalAction) as err:
        game.double()
    assert str(err.value) == (
        "seat 1 cannot double: the cube is owned by seat 0; legal now: roll, resign"
    )
    play_any(game)
    assert game.seat_on_roll == 0 and game.may_double()  # only the owner may redouble
    assert game.history[-4:-2] == (Doubled(1, 2), Taken(0, 2))


def test_r22_drop_loses_the_value_before_the_double() -> None:
    game = Game.start_from(Position.initial(), 1, cube_value=4, cube_owner=1)
    game.double()
    game.drop()
    assert game.outcome == GameOutcome(winner=1, points=4, kind=1, ending="drop", cube=4)
    assert game.history[-1] == Dropped(0, 8)
    assert game.phase is Phase.OVER


def test_r23_redoubles_without_limit() -> None:
    game = after_opening()
    seat = game.seat_on_roll
    for expected in (2, 4, 8, 16, 32, 64, 128):
        game.double()
        game.take()
        assert game.cube_value == expected and game.cube_owner == 1 - seat
        play_any(game)
        seat = 1 - seat
        assert game.seat_on_roll == seat and game.may_double()


def test_r23_cube_limit() -> None:
    game = after_opening(Rules(cube_limit=4))
    game.double()
    game.take()
    play_any(game)
    game.double()
    game.take()
    play_any(game)
    assert game.cube_value == 4 and game.cube_owner == game.seat_on_roll
    assert not game.may_double()
    with pytest.raises(IllegalAction, match="limit of 4; legal now: roll, resign"):
        game.double()


def test_r23_player_who_cannot_move_may_still_double() -> None:
    closed = Position.from_position_id("27YdAADgA/4BYA")
    game = Game.start_from(closed, 0)
    assert game.may_double()
    game.double()
    game.take()
    game.roll((6, 6))
    assert game.legal_plays() == []
    game.move(Play())


def test_cubeless_play_never_doubles() -> None:
    game = after_opening(Rules(cube=False))
    with pytest.raises(IllegalAction, match="cubeless"):
        game.double()


# --------------------------------------------------------------------------- beaver, raccoon (R24)


def test_r24_beaver_then_take() -> None:
    game = after_opening(MONEY_BEAVERS)
    game.double()  # seat 1 doubles to 2
    assert "beaver" in game.legal_actions()
    game.beaver()  # seat 0 takes at 2 and redoubles to 4 at once
    assert game.phase is Phase.BEAVER_TAKE
    assert (game.seat_to_act, game.cube_value, game.offered_cube) == (1, 2, 4)
    assert game.history[-1] == Beavered(0, 4)
    game.take()
    assert (game.cube_value, game.cube_owner) == (4, 0)  # the beaverer keeps the cube
    assert game.phase is Phase.ROLL and game.seat_on_roll == 1 and not game.may_double()


def test_r24_original_doubler_may_pass_the_beaver() -> None:
    game = after_opening(MONEY_BEAVERS)
    game.double()
    game.beaver()
    game.drop()
    assert game.outcome == GameOutcome(winner=0, points=2, kind=1, ending="drop", cube=2)


def test_r24_raccoon_then_take_leaves_the_cube_with_the_beaverer() -> None:
    game = after_opening(MONEY_BEAVERS)
    game.double()  # seat 1 doubles to 2
    game.beaver()  # seat 0 beavers to 4
    assert "raccoon" in game.legal_actions()
    game.raccoon()  # seat 1 takes at 4 and redoubles to 8
    assert game.history[-1] == Raccooned(1, 8)
    assert (game.phase, game.seat_to_act, game.cube_value) == (Phase.BEAVER_TAKE, 0, 4)
    with pytest.raises(IllegalAction, match="a beaver can only answer a double"):
        game.beaver()
    game.take()
    # gnubg: the doubled seat owns the cube after any chain, not the last redoubler
    assert (game.cube_value, game.cube_owner) == (8, 0)
    assert game.phase is Phase.ROLL and game.seat_on_roll == 1 and not game.may_double()


def test_r24_raccoon_drop_pays_the_beavered_value() -> None:
    game = after_opening(MONEY_BEAVERS)
    game.double()
    game.beaver()
    game.raccoon()
    game.drop()  # seat 0 refuses 8, loses 4
    assert game.outcome == GameOutcome(winner=1, points=4, kind=1, ending="drop", cube=4)


def test_r24_no_raccoons_without_the_option() -> None:
    game = after_opening(Rules(beavers=True, raccoons=False))
    game.double()
    game.beaver()
    assert game.legal_actions() == ["take", "drop", "resign"]
    with pytest.raises(IllegalAction, match="raccoons are not in use"):
        game.raccoon()


def test_r24_beaver_respects_the_cube_limit() -> None:
    game = after_opening(Rules(beavers=True, cube_limit=2))
    game.double()
    assert not game.may_beaver()
    with pytest.raises(IllegalAction, match="limit of 2"):
        game.beaver()


def test_r24_beavers_are_off_by_default() -> None:
    game = after_opening()
    game.double()
    with pytest.raises(IllegalAction) as err:
        game.beaver()
    assert str(err.value) == (
        "seat 0 cannot beaver: beavers are not in use; legal now: take, drop, resign"
    )


def redouble(game: Game, times: int) -> None:
    """Answer the pending double with ``times`` instant redoubles (a beaver, then raccoons)."""
    for k in range(times):
        (game.beaver if k == 0 else game.raccoon)()


# gnubg 1.07, `set beavers 3`, seat 1 doubling a centred cube (see the Game module docstring and
# test_gnubg_beaver_chains for the live check): after 0..3 instant redoubles, a take leaves the
# cube with the doubled seat 0; a drop pays the last redoubler the value before its redouble.
@pytest.mark.parametrize("redoubles", [0, 1, 2, 3])
def test_r24_chain_take_leaves_the_cube_with_the_doubled_seat(redoubles: int) -> None:
    game = after_opening(MONEY_BEAVERS)
    game.double()
    redouble(game, redoubles)
    assert game.seat_to_act == (0 if redoubles % 2 == 0 else 1)
    game.take()
    assert (game.cube_value, game.cube_owner) == (2 << redoubles, 0)
    assert game.phase is Phase.ROLL and game.seat_on_roll == 1 and not game.may_double()
    play_any(game)
    assert game.may_double()  # seat 0 owns the cube


@pytest.mark.parametrize("redoubles", [0, 1, 2, 3])
def test_r24_chain_drop_pays_the_last_redoubler(redoubles: int) -> None:
    game = after_opening(MONEY_BEAVERS)
    game.double()
    redouble(game, redoubles)
    game.drop()
    last = 1 if redoubles % 2 == 0 else 0
    assert game.outcome == GameOutcome(winner=last, points=1 << redoubles, kind=1, ending="drop",
                                       cube=1 << redoubles)


def test_r24_chain_alternates_seats_and_records_each_redouble() -> None:
    game = after_opening(MONEY_BEAVERS)
    game.double()
    redouble(game, 3)
    assert game.history[-4:] == (Doubled(1, 2), Beavered(0, 4), Raccooned(1, 8), Raccooned(0, 16))
    assert (game.seat_to_act, game.cube_value, game.offered_cube) == (1, 8, 16)
    assert game.legal_actions() == ["take", "drop", "resign"]
    with pytest.raises(IllegalAction, match="limit of 3 beavers and raccoons"):
        game.raccoon()


@pytest.mark.parametrize("limit", [0, 1, 2, 3, 4])
@pytest.mark.parametrize("raccoons", [True, False])
def test_r24_chain_stops_at_the_beaver_limit(limit: int, raccoons: bool) -> None:
    rules = Rules(beavers=True, raccoons=raccoons, beaver_limit=limit)
    game = after_opening(rules)
    game.double()
    made = 0
    while game.may_beaver() or game.may_raccoon():
        redouble(game, 1) if made == 0 else game.raccoon()
        made += 1
    assert made == rules.max_redoubles == (limit if raccoons else min(limit, 1))
    game.take()
    assert (game.cube_value, game.cube_owner) == (2 << made, 0)


def test_r24_chain_from_an_owned_cube() -> None:
    # gnubg: seat 1 owns a 2-cube and doubles to 4; beaver, raccoon, take: 16 with seat 0.
    game = Game.start_from(Position.initial(), 1, rules=MONEY_BEAVERS, cube_value=2, cube_owner=1)
    game.double()
    redouble(game, 2)
    game.take()
    assert (game.cube_value, game.cube_owner) == (16, 0)


def test_r24_chain_respects_the_cube_limit() -> None:
    game = after_opening(Rules(beavers=True, cube_limit=8))
    game.double()
    redouble(game, 2)  # 2, 4, 8
    assert not game.may_raccoon()
    with pytest.raises(IllegalAction, match="limit of 8"):
        game.raccoon()


def test_r24_beaver_limit_is_money_only_and_not_negative() -> None:
    rules = Rules(beavers=True, beaver_limit=5)
    assert rules.for_match(0).max_redoubles == 5
    assert rules.for_match(7).beaver_limit == rules.for_match(7).max_redoubles == 0
    assert Rules(beaver_limit=5).max_redoubles == 0  # beavers off
    assert Rules(beavers=True, cube=False).max_redoubles == 0
    with pytest.raises(IllegalAction, match="beaver_limit must be >= 0"):
        Rules(beaver_limit=-1)
    game = after_opening(Rules(beavers=True, beaver_limit=0))
    game.double()
    with pytest.raises(IllegalAction, match="beaver_limit is 0"):
        game.beaver()


def _gnubg_chain(gnubg: str, prefs: str, beavers: int, doubler: int, redoubles: int,
                 answer: str) -> str:
    """gnubg's text after ``double``, ``redoubles`` beavers and ``answer`` in a fresh money
    session (both players human, seat ``doubler`` on roll), then ``show cube`` and ``double``."""
    commands = [
        "set player 0 human", "set player 1 human", "set player 0 name zero",
        "set player 1 name one", "set jacoby off", f"set beavers {beavers}",
        "set automatic roll off", "set automatic game off", "set display off", "new session",
        f"set turn {doubler}", "double", *["beaver"] * redoubles, answer, "show cube", "double",
    ]
    return subprocess.run([gnubg, "-t", "-q", "-r", "-s", prefs], input="\n".join(commands) + "\n",
                          capture_output=True, text=True, timeout=60).stdout


@pytest.mark.gnubg
def test_gnubg_beaver_chains(gnubg_binary: str) -> None:
    names = {"zero": 0, "one": 1}
    with tempfile.TemporaryDirectory() as prefs:
        for doubler in (0, 1):
            for redoubles in range(5):  # the fourth is refused by gnubg and by us
                for answer in ("take", "drop"):
                    out = _gnubg_chain(gnubg_binary, prefs, 3, doubler, redoubles, answer)
                    game = Game.start_from(Position.initial(), doubler, rules=MONEY_BEAVERS)
                    game.double()
                    for k in range(redoubles):
                        if k == 3:
                            assert "Only 3 beavers are permitted" in out
                            assert not game.may_raccoon()
                        else:
                            redouble(game, 1) if k == 0 else game.raccoon()
                    getattr(game, answer)()
                    case = (doubler, redoubles, answer)
                    if answer == "take":
                        found = re.search(r"The cube is at (\d+), and is owned by (\w+)", out)
                        assert found, (case, out[-1500:])
                        assert (game.cube_value, game.cube_owner) == (
                            int(found.group(1)), names[found.group(2)]), case
                        assert "You do not own the cube" in out  # the doubler, still on roll
                    else:
                        found = re.search(r"(\w+) wins a single game and (\d+) points?", out)
                        assert found and game.outcome is not None, (case, out[-1500:])
                        assert (game.outcome.winner, game.outcome.points) == (
                            names[found.group(1)], int(found.group(2))), case
        for beavers in (0, 1, 2):
            out = _gnubg_chain(gnubg_binary, prefs, beavers, 0, 3, "take")
            found = re.search(r"The cube is at (\d+)", out)
            assert found, out[-1500:]
            rules = Rules(beavers=True, beaver_limit=beavers)
            assert 2 << rules.max_redoubles == int(found.group(1))


# ------------------------------------------------------------------- automatic doubles (R25)


def test_r25_automatic_double_limited_to_one_per_game() -> None:
    game = Game(Rules(automatic_doubles=1))
    assert game.opening_roll(3, 3) is False
    assert (game.cube_value, game.cube_owner) == (2, None)
    assert game.history[-1] == AutoDoubled(2)
    game.opening_roll(5, 5)
    assert game.cube_value == 2
    game.opening_roll(5, 2)
    assert game.cube_value == 2 and game.cube_owner is None
    game.move(game.legal_plays()[0])
    assert game.may_double()  # the cube stays in the middle


def test_r25_automatic_double_limit_and_cube_limit() -> None:
    game = Game(Rules(automatic_doubles=3))
    for _ in range(5):
        game.opening_roll(2, 2)
    assert game.cube_value == 8
    game = Game(Rules(automatic_doubles=3, cube_limit=4))
    for _ in range(5):
        game.opening_roll(2, 2)
    assert game.cube_value == 4


def test_r25_no_automatic_doubles_when_cubeless() -> None:
    game = Game(Rules(automatic_doubles=2, cube=False))
    game.opening_roll(1, 1)
    assert game.cube_value == 1


# --------------------------------------------------------------------------- Jacoby (R26)


def test_r26_jacoby_gammon_counts_single_with_a_centred_cube() -> None:
    jacoby = Rules(jacoby=True)
    assert bear_off_last({6: 15}, rules=jacoby).points == 1
    assert bear_off_last({6: 14}, loser_bar=1, rules=jacoby).points == 1
    outcome = bear_off_last({6: 15}, rules=jacoby)
    assert outcome.kind == 2  # the board still shows a gammon


def test_r26_jacoby_after_a_double() -> None:
    outcome = bear_off_last({6: 15}, rules=Rules(jacoby=True), cube_value=2, cube_owner=1)
    assert outcome.points == 4


def test_r26_jacoby_with_an_automatic_double_keeps_the_cube_centred() -> None:
    game = Game(Rules(jacoby=True, automatic_doubles=1), position=board({2: 1, 1: 1}, {6: 15}))
    game.opening_roll(4, 4)
    game.opening_roll(2, 1)
    game.move(Play([(2, 0), (1, 0)]))
    # A gammon, but the cube is still centred (at 2): it counts single, 1 x 2.
    assert game.outcome == GameOutcome(winner=0, points=2, kind=2, ending="normal", cube=2)


def test_r26_cubeless_play_never_applies_jacoby() -> None:
    rules = Rules(cube=False, jacoby=True)
    assert bear_off_last({6: 15}, rules=rules).points == 2
    assert bear_off_last({6: 14}, loser_bar=1, rules=rules).points == 3


def test_r26_r30_jacoby_never_in_a_match() -> None:
    outcome = bear_off_last({6: 15}, rules=Rules(jacoby=True), match_length=7)
    assert outcome.points == 2


# --------------------------------------------------------------------------- resignations (R27)


@pytest.mark.parametrize(("value", "backgammon_value", "points"),
                         [(1, 3, 2), (2, 3, 4), (3, 3, 6), (3, 2, 4)])
def test_r27_resignation_accepted(value: int, backgammon_value: int, points: int) -> None:
    game = Game.start_from(Position.initial(), 0, cube_value=2, cube_owner=0,
                           rules=Rules(backgammon_value=backgammon_value))
    game.resign(0, value)
    assert game.phase is Phase.RESIGNED and game.seat_to_act == 1
    assert game.resignation == (0, value)
    assert game.legal_actions() == ["accept_resignation", "reject_resignation"]
    game.accept_resignation()
    assert game.outcome == GameOutcome(winner=1, points=points, kind=value, ending="resign", cube=2)
    assert game.history[-2:] == (Resigned(0, value), ResignationAccepted(1, value))


def test_r27_resignation_rejected_resumes_play() -> None:
    game = Game.start_from(Position.initial(), 1, dice=(6, 5))
    game.resign(1, 1)
    with pytest.raises(IllegalAction, match="legal now: accept_resignation, reject_resignation"):
        game.move(Play([(24, 13)]))
    game.reject_resignation()
    assert game.phase is Phase.MOVE and game.dice == (6, 5) and game.resignation is None
    assert game.history[-1] == ResignationRejected(0, 1)
    # Like gnubg, the same (or a lower) offer cannot be made again this turn; a higher one can.
    with pytest.raises(IllegalAction, match="already declined a single game"):
        game.resign(1, 1)
    game.resign(1, 2)
    game.reject_resignation()
    assert "resign" in game.legal_actions()
    game.resign(1, 3)
    game.reject_resignation()
    assert "resign" not in game.legal_actions()
    game.move(Play([(24, 13)]))
    game.roll((2, 1))
    game.move(game.legal_plays()[0])
    game.resign(1, 1)  # a new turn: offers are possible again


def test_r27_resign_only_at_ones_turn_to_act() -> None:
    game = after_opening()  # seat 1 to roll
    with pytest.raises(IllegalAction, match="it is seat 1's turn to act"):
        game.resign(0, 1)
    game.double()  # now seat 0 must answer, and may resign instead
    with pytest.raises(IllegalAction, match="it is seat 0's turn to act"):
        game.resign(1, 1)
    game.resign(0, 2)
    game.reject_resignation()
    assert game.phase is Phase.TAKE and game.seat_to_act == 0
    game.resign(0, 3)
    game.accept_resignation()
    # The pending double does not count: the cube in force is 1.
    assert game.outcome == GameOutcome(winner=1, points=3, kind=3, ending="resign", cube=1)


def test_r27_no_resignation_in_the_opening_and_valid_values_only() -> None:
    game = Game()
    with pytest.raises(IllegalAction, match="opening roll has not been made"):
        game.resign(0, 1)
    game.opening_roll(5, 3)
    with pytest.raises(IllegalAction, match="1 \\(single\\), 2 \\(gammon\\) or 3"):
        game.resign(0, 4)


def test_r27_resignation_ignores_jacoby_like_gnubg() -> None:
    # gnubg 1.07, money with Jacoby and a centred cube: an accepted gammon resignation scores 2
    # (see test_gnubg_resignation_under_jacoby for the live check).
    game = Game.start_from(Position.initial(), 0, rules=Rules(jacoby=True))
    game.resign(0, 2)
    game.accept_resignation()
    assert game.outcome is not None and game.outcome.points == 2


@pytest.mark.gnubg
def test_gnubg_resignation_under_jacoby(gnubg_binary: str) -> None:
    script = "\n".join([
        "import gnubg",
        "for c in ['set player 0 human', 'set player 1 human', 'set jacoby on', 'new session',",
        "          'set jacoby on', 'new session', 'resign gammon', 'accept']:",
        "    gnubg.command(c)",
    ])
    with tempfile.TemporaryDirectory() as prefs:
        path = f"{prefs}/probe.py"
        with open(path, "w") as handle:
            handle.write(script + "\n")
        out = subprocess.run([gnubg_binary, "-t", "-q", "-r", "-s", prefs, "-p", path],
                             capture_output=True, text=True, timeout=120).stdout
    assert "with Jacoby rule" in out
    found = re.search(r"wins .* and (\d+) points", out)
    assert found, out[-2000:]
    game = Game.start_from(Position.initial(), 0, rules=Rules(jacoby=True))
    game.resign(0, 2)
    game.accept_resignation()
    assert game.outcome is not None and game.outcome.points == int(found.group(1))


# ------------------------------------------------------------------- match context (R29, R30)


def test_r29_no_doubling_in_the_crawford_game() -> None:
    game = after_opening(match_length=5, score=(4, 2), crawford=True)
    assert not game.may_double()
    with pytest.raises(IllegalAction, match="Crawford game: no doubling; legal now: roll, resign"):
        game.double()


def test_dead_cube_is_refused() -> None:
    # Post-Crawford, 5-point match at 4-2: the leader's cube is dead, the trailer may double.
    game = Game.start_from(Position.initial(), 0, match_length=5, score=(4, 2),
                           post_crawford=True)
    assert not game.may_double()
    with pytest.raises(IllegalAction, match="the cube is dead"):
        game.double()
    game = Game.start_from(Position.initial(), 1, match_length=5, score=(4, 2),
                           post_crawford=True)
    assert game.may_double()
    # 7-point match at 3-3 with seat 1 owning a 4-cube: 3 + 4 >= 7, dead for seat 1.
    game = Game.start_from(Position.initial(), 1, match_length=7, score=(3, 3), cube_value=4,
                           cube_owner=1)
    assert not game.may_double()


def test_r30_money_only_options_are_off_in_a_match() -> None:
    rules = Rules(jacoby=True, beavers=True, raccoons=True, automatic_doubles=2)
    game = Game(rules, match_length=7)
    assert not (game.rules.jacoby or game.rules.beavers or game.rules.automatic_doubles)
    game.opening_roll(6, 6)
    assert game.cube_value == 1  # no automatic double
    game.opening_roll(3, 1)
    game.move(Play([(8, 5), (6, 5)]))
    game.double()
    with pytest.raises(IllegalAction, match="beavers are not allowed in match play"):
        game.beaver()


def _note_state(note: str) -> dict[str, Any]:
    """The state gnubg was put in before its ``double``, read from an ids.jsonl note."""
    state: dict[str, Any] = {"length": 0, "score": (0, 0), "cube": 1, "owner": None,
                             "turn": 0, "after": []}
    commands = [c.strip() for c in note.split(";")]
    for i, command in enumerate(commands):
        words = command.split()
        if command.startswith("new match"):
            state["length"] = int(words[2])
        elif command.startswith("set score"):
            state["score"] = (int(words[2]), int(words[3]))
        elif command.startswith("set cube value"):
            state["cube"] = int(words[3])
        elif command.startswith("set cube owner"):
            state["owner"] = int(words[3])
        elif command.startswith("set turn"):
            state["turn"] = int(words[2])
        elif command == "double":
            state["after"] = commands[i + 1:]
            break
    return state


def test_doubling_agrees_with_gnubg_live_records(id_records: list[dict[str, Any]]) -> None:
    """Every live ids.jsonl record that tried `double`: gnubg accepted it exactly when we do
    (Crawford game, dead cube, cube owner), and a take or drop leaves the same cube and score."""
    checked = 0
    for record in id_records:
        if record["source"] != "live" or "; double" not in record["note"]:
            continue
        state = _note_state(record["note"])
        gnubg = record["match"]
        pos = Position.from_position_id(record["position_id"])
        game = Game.start_from(pos, state["turn"], match_length=state["length"],
                               score=state["score"], crawford=bool(gnubg["crawford"]),
                               cube_value=state["cube"], cube_owner=state["owner"])
        accepted = gnubg["doubled"] == 1 or gnubg["game_state"] == 4 or (
            gnubg["cube"] == 2 * state["cube"])
        assert game.may_double() == accepted, record["note"]
        checked += 1
        if not accepted:
            continue
        game.double()
        answer = state["after"][0] if state["after"] else ""
        if answer == "take":
            game.take()
            assert (game.cube_value, game.cube_owner) == (gnubg["cube"], gnubg["cube_owner"])
        elif answer == "drop":
            game.drop()
            assert game.outcome is not None
            score = list(state["score"])
            score[game.outcome.winner] += game.outcome.points
            assert score == gnubg["score"], record["note"]
    assert checked >= 50


# --------------------------------------------------------------------------- illegal actions


def test_illegal_actions_name_what_is_legal() -> None:
    game = Game()
    with pytest.raises(IllegalAction) as err:
        game.roll((3, 1))
    assert str(err.value).endswith("legal now: opening_roll")
    game.opening_roll(3, 1)
    with pytest.raises(IllegalAction) as err:
        game.double()
    assert str(err.value) == (
        "seat 0 cannot double: the dice are already rolled; legal now: move, resign"
    )
    with pytest.raises(IllegalAction, match="seat 0 must play 3-1 first; legal now: move"):
        game.roll((4, 4))
    with pytest.raises(IllegalAction, match="no double is pending; legal now: move, resign"):
        game.take()
    with pytest.raises(IllegalAction, match="already decided"):
        game.opening_roll(2, 1)
    with pytest.raises(IllegalAction, match="no resignation is pending"):
        game.accept_resignation()
    game.move(Play([(8, 5), (6, 5)]))
    with pytest.raises(IllegalAction, match="no dice are waiting"):
        game.legal_plays()
    with pytest.raises(IllegalAction, match="has not rolled yet; legal now: roll, double, resign"):
        game.move(Play([(24, 21)]))
    with pytest.raises(IllegalAction, match="no beaver is pending"):
        game.raccoon()


def test_constructor_rejects_impossible_states() -> None:
    with pytest.raises(IllegalAction, match="power of two"):
        Game(cube_value=3)
    with pytest.raises(IllegalAction, match="owned cube"):
        Game(cube_value=1, cube_owner=0)
    with pytest.raises(IllegalAction, match="money game cannot be the Crawford"):
        Game(crawford=True)
    with pytest.raises(IllegalAction, match="without the cube"):
        Game(match_length=5, score=(4, 0), crawford=True, cube_value=2, cube_owner=0)
    with pytest.raises(IllegalAction, match="already over"):
        Game(position=board({}, {6: 15}))
    with pytest.raises(IllegalAction, match="seat_on_roll"):
        Game.start_from(Position.initial(), 2)


# --------------------------------------------------------------------------- random play


def _random_action(game: Game, rng: random.Random) -> None:
    """One random legal action, weighted so games mostly get played out."""
    legal = game.legal_actions()
    if game.phase is Phase.OPENING:
        game.opening_roll(rng.randint(1, 6), rng.randint(1, 6))
    elif game.phase is Phase.RESIGNED:
        (game.accept_resignation if rng.random() < 0.5 else game.reject_resignation)()
    elif "resign" in legal and rng.random() < 0.003:
        seat = game.seat_to_act
        assert seat is not None
        game.resign(seat, rng.choice([v for v in (1, 2, 3) if game.may_resign(seat, v)]))
    elif game.phase is Phase.ROLL:
        if "double" in legal and rng.random() < 0.05:
            game.double()
        else:
            game.roll((rng.randint(1, 6), rng.randint(1, 6)))
    elif game.phase is Phase.MOVE:
        plays = game.legal_plays()
        game.move(rng.choice(plays) if plays else Play())
    else:
        choice = rng.choice([a for a in legal if a != "resign"] + ["take"] * 4)
        getattr(game, choice)()


RULE_SETS = [
    Rules(),
    Rules(jacoby=True, beavers=True, automatic_doubles=2, cube_limit=16),
    Rules(cube=False),
    Rules(backgammon_value=2, opening_reroll=True),
]


def test_200_random_games_end_with_positive_points() -> None:
    rng = random.Random(20240611)
    endings: set[str] = set()
    for n in range(200):
        rules = RULE_SETS[n % len(RULE_SETS)]
        game = Game(rules, match_length=0 if n % 3 else 7)
        steps = 0
        while not game.is_over:
            _random_action(game, rng)
            steps += 1
            assert steps < 5000
        outcome = game.outcome
        assert outcome is not None and outcome.points >= 1 and outcome.winner in (0, 1)
        assert outcome.points % outcome.cube == 0
        endings.add(outcome.ending)
        if outcome.ending == "normal":
            assert game.board_for(outcome.winner).borne_off()[0] == 15
            assert game.board_for(outcome.winner).win_kind() == outcome.kind
    assert endings == {"normal", "drop", "resign"}


# --------------------------------------------------------------------------- state machine


@st.composite
def endgame_positions(draw: st.DrawFn) -> Position:
    """Bear-off-ish boards (so games finish within a few steps), some with the loser's
    chequers on the bar or in the mover's home board."""
    mover = [0] * 25
    for _ in range(draw(st.integers(1, 8))):
        mover[draw(st.integers(0, 5))] += 1
    opponent = [0] * 25
    for _ in range(draw(st.integers(1, 15))):
        where = draw(st.sampled_from([0, 1, 2, 3, 4, 5, 18, 19, 20, 21, 22, 23, 24]))
        if 18 <= where <= 23 and mover[23 - where]:
            where = 5
        opponent[where] += 1
    return Position(opponent, mover)


STARTS = st.one_of(endgame_positions(), endgame_positions(), endgame_positions(), st.none())
"""Mostly endgames, which finish within the step budget; sometimes a full game's opening."""

ACTIONS: dict[str, Callable[[Game], object]] = {
    "opening_roll": lambda g: g.opening_roll(4, 2),
    "roll": lambda g: g.roll((4, 2)),
    "double": Game.double,
    "take": Game.take,
    "drop": Game.drop,
    "beaver": Game.beaver,
    "raccoon": Game.raccoon,
    "move": lambda g: g.move(Play([(6, 2)])),
    "resign": lambda g: g.resign(g.seat_to_act or 0, 1),
    "accept_resignation": Game.accept_resignation,
    "reject_resignation": Game.reject_resignation,
}


class GameMachine(RuleBasedStateMachine):
    """Random legal actions, with invariants checked after every step."""

    def __init__(self) -> None:
        super().__init__()
        self.game = Game()
        self.rules = Rules()
        self.length = 0
        self.off = [0, 0]
        self.finished = 0

    def _new_game(self, position: Position | None, seat: int) -> None:
        score = (0, 0) if not self.length else (self.length - 2, 1)
        if position is None:
            self.game = Game(self.rules, self.length, score)
        else:
            self.game = Game.start_from(position, seat, rules=self.rules,
                                        match_length=self.length, score=score)
        self.off = [self.game.board_for(s).borne_off()[0] for s in (0, 1)]

    @initialize(
        rules=st.builds(Rules, cube=st.booleans(), jacoby=st.booleans(), beavers=st.booleans(),
                        raccoons=st.booleans(), beaver_limit=st.integers(0, 4),
                        automatic_doubles=st.integers(0, 3),
                        cube_limit=st.sampled_from([0, 2, 8, 64]),
                        backgammon_value=st.sampled_from([2, 3]),
                        opening_reroll=st.booleans()),
        length=st.sampled_from([0, 0, 5]),
        position=STARTS,
        seat=st.integers(0, 1),
    )
    def start(self, rules: Rules, length: int, position: Position | None, seat: int) -> None:
        self.rules, self.length = rules, length
        self._new_game(position, seat)

    @precondition(lambda self: self.game.is_over)
    @rule(position=STARTS, seat=st.integers(0, 1))
    def next_game(self, position: Position | None, seat: int) -> None:
        self.finished += 1
        self._new_game(position, seat)

    @precondition(lambda self: self.game.phase is Phase.OPENING)
    @rule(die0=st.integers(1, 6), die1=st.integers(1, 6))
    def opening(self, die0: int, die1: int) -> None:
        assert self.game.opening_roll(die0, die1) == (die0 != die1)

    @precondition(lambda self: self.game.phase is Phase.ROLL)
    @rule(d1=st.integers(1, 6), d2=st.integers(1, 6))
    def roll(self, d1: int, d2: int) -> None:
        self.game.roll((d1, d2))

    @precondition(lambda self: self.game.phase is Phase.MOVE)
    @rule(data=st.data())
    def move(self, data: st.DataObject) -> None:
        plays = self.game.legal_plays()
        play = data.draw(st.sampled_from(plays)) if plays else Play()
        seat = self.game.seat_on_roll
        before = self.game.board_for(seat)
        self.game.move(play)
        assert self.game.board_for(seat) == before.apply(play)

    @precondition(lambda self: "double" in self.game.legal_actions())
    @rule()
    def double(self) -> None:
        cube = self.game.cube_value
        self.game.double()
        assert self.game.offered_cube == 2 * cube

    @precondition(lambda self: self.game.phase in (Phase.TAKE, Phase.BEAVER_TAKE))
    @rule(answer=st.sampled_from(["take", "drop", "beaver", "raccoon"]))
    def answer(self, answer: str) -> None:
        if answer in self.game.legal_actions():
            getattr(self.game, answer)()
        else:
            with pytest.raises(IllegalAction, match="legal now: take, drop"):
                getattr(self.game, answer)()

    @precondition(lambda self: "resign" in self.game.legal_actions())
    @rule(value=st.integers(1, 3), chance=st.integers(0, 7))
    def resign(self, value: int, chance: int) -> None:
        if chance:  # resign in one call out of eight, so more games are played out
            return
        seat = self.game.seat_to_act
        assert seat is not None
        if self.game.may_resign(seat, value):
            self.game.resign(seat, value)
        else:
            with pytest.raises(IllegalAction, match="already declined"):
                self.game.resign(seat, value)

    @precondition(lambda self: self.game.phase is Phase.RESIGNED)
    @rule(accept=st.booleans())
    def answer_resignation(self, accept: bool) -> None:
        (self.game.accept_resignation if accept else self.game.reject_resignation)()

    @rule(name=st.sampled_from(sorted(ACTIONS)))
    def illegal_action_changes_nothing(self, name: str) -> None:
        if name in self.game.legal_actions():
            return
        before = (self.game.phase, self.game.history, self.game.position, self.game.cube_value)
        with pytest.raises(IllegalAction, match="legal now: "):
            ACTIONS[name](self.game)
        assert before == (self.game.phase, self.game.history, self.game.position,
                          self.game.cube_value)

    @invariant()
    def chequers_and_cube_are_consistent(self) -> None:
        game = self.game
        for seat in (0, 1):
            pos = game.board_for(seat)
            assert sum(pos.mover) + pos.borne_off()[0] == 15
            assert 0 <= sum(pos.mover) <= 15
            off = pos.borne_off()[0]
            assert off >= self.off[seat]  # borne-off chequers stay off (R18)
            self.off[seat] = off
        cube = game.cube_value
        assert cube >= 1 and cube & (cube - 1) == 0
        if game.rules.cube_limit:
            assert cube <= game.rules.cube_limit
        assert game.cube_owner in (None, 0, 1)
        assert game.cube_owner is None or cube >= 2
        if not game.rules.cube:
            assert cube == 1
        if game.phase in (Phase.TAKE, Phase.BEAVER_TAKE):
            assert game.offered_cube == 2 * cube
        else:
            assert game.offered_cube is None
        if game.phase is Phase.MOVE:
            assert game.dice is not None
        elif game.phase is not Phase.RESIGNED:
            assert game.dice is None
        assert bool(game.legal_actions()) != game.is_over

    @invariant()
    def the_end_has_positive_points(self) -> None:
        outcome = self.game.outcome
        assert (outcome is not None) == self.game.is_over
        if outcome is None:
            return
        assert outcome.winner in (0, 1) and outcome.points >= 1
        assert outcome.kind in (1, 2, 3) and outcome.cube == self.game.cube_value
        assert outcome.points in {outcome.cube * m for m in (1, 2, 3)}
        if outcome.ending == "normal":
            assert self.game.board_for(outcome.winner).borne_off()[0] == 15


GameMachine.TestCase.settings = settings(
    max_examples=30, stateful_step_count=80, deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
test_game_state_machine = GameMachine.TestCase
