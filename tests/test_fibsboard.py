"""The FIBS ``board:`` line codec, in both dialects (reference/gnubg-interfaces.md §1,
reference/online-servers.md §1.7).

The captures below are gnubg 1.07's exact bytes from the reference; each expected position was
decoded by hand from the reference's explanation (player 1 positive on its own point = slot,
player 0 negative on its point 25 - slot, bars in slots 25 / 0), not from the codec.
"""

from __future__ import annotations

import random
import socket
import subprocess
import tempfile
import time
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from bgbot.core.errors import FormatError
from bgbot.core.position import Position
from bgbot.formats.fibsboard import (
    Dialect,
    FibsBoard,
    Request,
    Side,
    field_name,
    format_board,
    parse_board,
)
from bgbot.players.base import CubeOwner

from .conftest import board

ME, OPP = Side.ME, Side.OPPONENT
INITIAL = {6: 5, 8: 3, 13: 5, 24: 2}

# --------------------------------------------------------------------------- gnubg's captures

# External player = player 1 ("root"), gnubg = player 0, 3-point match (§1.5).
G1_MOVE_OPENING = b"board:gnubg:root:3:0:0:0:-2:0:0:0:0:5:0:3:0:0:0:-5:5:0:0:0:-3:0:-5:0:0:0:0:2:0:1:6:3:6:3:1:1:1:0:1:-1:0:25:0:0:0:0:0:0:0:1\n\x00"  # noqa: E501
G1_ROLL = b"board:gnubg:root:3:0:0:0:-2:0:0:0:0:5:0:3:0:0:0:-3:5:0:0:0:-4:-1:-5:0:1:0:0:0:1:1:0:0:0:0:1:1:1:0:1:-1:0:25:0:0:0:0:0:0:0:1\n\x00"  # noqa: E501
G1_BAR_11 = b"board:gnubg:root:3:0:0:0:-2:0:0:0:0:5:0:3:0:0:0:-3:5:0:0:0:-4:-1:-5:0:1:0:0:0:1:1:1:1:1:1:1:1:1:0:1:-1:0:25:0:0:0:0:0:0:0:1\n\x00"  # noqa: E501
G1_TAKE = b"board:root:gnubg:3:0:0:0:-1:0:-1:0:0:5:0:3:0:1:1:-2:3:0:0:0:-3:-2:-4:-2:1:0:1:0:0:-1:0:0:0:0:1:1:1:1:1:-1:0:25:0:0:0:0:0:0:0:1\n\x00"  # noqa: E501
G1_AFTER_TAKE = b"board:gnubg:root:3:0:0:0:-1:0:-1:0:0:5:0:3:0:1:1:-2:3:0:0:0:-2:-2:-3:-2:1:-2:1:0:0:1:0:0:0:0:2:1:0:0:1:-1:0:25:0:0:0:0:0:0:0:1\n\x00"  # noqa: E501
G1_CRAWFORD = b"board:gnubg:root:3:2:0:0:-1:-1:0:0:0:5:0:3:0:0:0:-4:5:-1:0:0:-3:0:-5:0:0:0:0:2:0:1:1:4:1:4:1:1:1:0:1:-1:0:25:0:0:0:0:0:0:0:0\n\x00"  # noqa: E501
G1_POST_CRAWFORD = b"board:gnubg:root:5:4:2:0:-1:-1:0:0:0:5:0:3:0:0:0:-4:5:0:0:-1:-3:0:-5:0:0:0:0:2:0:1:0:0:0:0:1:1:1:0:1:-1:0:25:0:0:0:0:0:0:1:1\n\x00"  # noqa: E501
# External player = player 0 (negative side), money session.
G0_MOVE_OPENING = b"board:gnubg:root:0:0:0:0:-2:0:0:0:0:5:0:3:0:0:0:-5:5:0:0:0:-3:0:-5:0:0:0:0:2:0:-1:2:1:2:1:1:1:1:0:1:-1:0:25:0:0:0:0:0:0:0:1\n\x00"  # noqa: E501
G0_BAR_31 = b"board:gnubg:root:0:0:0:-1:0:0:-1:0:0:5:3:3:0:0:0:-5:3:0:0:0:-3:1:-5:0:0:0:0:0:0:-1:3:1:3:1:4:1:0:0:1:-1:0:25:0:0:0:0:0:0:0:1\n\x00"  # noqa: E501
G0_BEAVER = b"board:gnubg:root:0:0:0:0:0:-1:-1:0:0:5:0:3:0:0:0:-5:6:0:0:0:-3:0:-5:0:0:0:0:1:0:-1:0:0:0:0:2:1:0:1:1:-1:0:25:0:0:0:0:0:0:0:1\n\x00"  # noqa: E501

ALL_CAPTURES = [
    G1_MOVE_OPENING, G1_ROLL, G1_BAR_11, G1_TAKE, G1_AFTER_TAKE, G1_CRAWFORD, G1_POST_CRAWFORD,
    G0_MOVE_OPENING, G0_BAR_31, G0_BEAVER,
]

# FIBS: the CLIP spec's example (You are O, moving 24->1, 6-2 to play, can move 2).
CLIP_EXAMPLE = "board:You:someplayer:3:0:0:0:-2:0:0:0:0:5:0:3:0:0:0:-5:5:0:0:0:-3:0:-5:0:0:0:0:2:0:1:6:2:0:0:1:1:1:0:1:-1:0:25:0:0:0:0:2:0:0:0"  # noqa: E501
# FIBS: a local FIBS clone, "You" = X moving 1->24, 2-6 to play (online-servers.md §1.10 b).
FIBS_X_OPENING = "board:You:botalpha:5:0:0:0:-2:0:0:0:0:5:0:3:0:0:0:-5:5:0:0:0:-3:0:-5:0:0:0:0:2:0:-1:2:6:0:0:1:1:1:0:-1:1:25:0:0:0:0:0:2:0:0:0"  # noqa: E501
# Real FIBS (2020, watching GammonBot_VII = X, moving 1->24): GammonBot has a chequer on the bar
# (slot 0, token 48 = 1) and is to roll.
FIBS_REAL_BAR = "board:GammonBot_VII:pipcat:5:0:0:-1:-1:0:0:0:1:4:0:3:0:0:0:-4:5:0:0:0:-3:-1:-5:0:1:0:0:1:0:-1:0:0:0:0:1:1:1:0:-1:1:25:0:0:0:1:0:2:1:0:0"  # noqa: E501
# Real FIBS, the Crawford game of a 5-point match at 4-0: FIBS still writes may-double 1:1.
FIBS_REAL_AT_4_0 = "board:GammonBot_VII:pipcat:5:4:0:0:-2:0:0:0:0:5:0:3:0:0:0:-5:5:0:0:0:-3:0:-5:0:0:0:0:2:0:1:5:3:0:0:1:1:1:0:1:-1:0:25:0:0:0:0:2:5:0:0"  # noqa: E501


def gnubg(line: bytes | str, seat: int | None = None) -> FibsBoard:
    return parse_board(line, Dialect.GNUBG, my_seat=seat)


def text(line: bytes) -> str:
    return line.decode().rstrip("\x00").rstrip("\n")


# --------------------------------------------------------------------------- external = player 1


def test_gnubg_opening_move_request_player1() -> None:
    b = gnubg(G1_MOVE_OPENING)
    assert b.my_seat == 1
    assert b.kind is Request.MOVE and b.on_roll is ME and b.to_act is ME
    assert b.position == Position.initial()
    assert b.dice == (6, 3)
    assert (b.my_name, b.opponent_name) == ("root", "gnubg")
    assert (b.match_length, b.my_score, b.opponent_score) == (3, 0, 0)
    assert (b.cube_value, b.cube_owner, b.doubled) == (1, None, False)
    assert (b.crawford, b.post_crawford) == (False, False)
    assert (b.my_borne_off, b.opponent_borne_off) == (0, 0)
    # The reply the external player gave is one of our legal plays.
    assert Position.initial().apply([(24, 18), (24, 21)]) in {
        after for _, after in b.position.play_results(b.dice)
    }


def test_gnubg_roll_or_double_request_player1() -> None:
    b = gnubg(G1_ROLL)
    assert b.kind is Request.ROLL_OR_DOUBLE and b.on_roll is ME and b.dice is None
    assert b.position == board({6: 5, 8: 3, 13: 5, 21: 1}, {24: 2, 13: 3, 8: 4, 7: 1, 6: 5},
                               mover_bar=1)
    assert b.my_bar == 1 and b.opponent_bar == 0


def test_gnubg_bar_entry_with_doubles_player1() -> None:
    b = gnubg(G1_BAR_11)
    assert b.kind is Request.MOVE and b.dice == (1, 1)
    assert b.position == gnubg(G1_ROLL).position
    reply = b.position.apply([(25, 24), (24, 23), (23, 22), (22, 21)])
    assert reply in {after for _, after in b.position.play_results((1, 1))}


def test_gnubg_take_request_swaps_names_and_puts_the_doubler_on_roll() -> None:
    b = gnubg(G1_TAKE)
    assert b.my_seat == 1  # inferred: a double from a centred cube comes from the side on roll
    assert b.kind is Request.TAKE and b.doubled
    assert b.on_roll is OPP and b.to_act is ME
    assert (b.my_name, b.opponent_name) == ("root", "gnubg")
    assert (b.cube_value, b.cube_owner) == (1, None)
    doubler = {24: 1, 22: 1, 13: 2, 8: 3, 7: 2, 6: 4, 5: 2}
    me = {6: 5, 8: 3, 10: 1, 11: 1, 13: 3, 21: 1, 23: 1}
    assert b.position == board(doubler, me)
    assert b.my_view() == board(me, doubler)
    ctx = b.context()
    assert (ctx.cube_value, ctx.cube_owner, ctx.match_length) == (1, CubeOwner.CENTRE, 3)


def test_gnubg_take_request_with_scores_keeps_my_score() -> None:
    # `set score 1 3` (player 0 = 1, player 1 = 3): normal requests `gnubg:root:7:1:3`,
    # the take request `root:gnubg:7:3:1` (reference §1.4).
    normal = text(G1_AFTER_TAKE).replace("board:gnubg:root:3:0:0:", "board:gnubg:root:7:1:3:")
    take = text(G1_TAKE).replace("board:root:gnubg:3:0:0:", "board:root:gnubg:7:3:1:")
    for line in (normal, take):
        b = parse_board(line, Dialect.GNUBG)
        assert (b.my_name, b.my_score, b.opponent_name, b.opponent_score) == ("root", 3, "gnubg", 1)
        ctx = b.context()
        assert (ctx.my_score, ctx.opponent_score, ctx.match_length) == (3, 1, 7)


def test_gnubg_after_take_i_own_the_cube_and_gnubg_played_5_3() -> None:
    take, after = gnubg(G1_TAKE), gnubg(G1_AFTER_TAKE)
    assert after.kind is Request.ROLL_OR_DOUBLE and after.on_roll is ME
    assert (after.cube_value, after.cube_owner) == (2, ME)
    assert after.context().cube_owner is CubeOwner.ME and after.context().may_double()
    assert after.position == board({6: 5, 8: 3, 10: 1, 11: 1, 13: 3, 21: 1, 23: 1},
                                   {24: 1, 22: 1, 13: 2, 8: 2, 7: 2, 6: 3, 5: 2, 3: 2})
    # gnubg, on roll in the take request, played 8/3 6/3 with 5-3: a legal play.
    assert after.position.swapped() in {a for _, a in take.position.play_results((5, 3))}


def test_gnubg_crawford_game() -> None:
    b = gnubg(G1_CRAWFORD)
    assert (b.crawford, b.post_crawford) == (True, False)
    assert (b.my_score, b.opponent_score) == (0, 2)
    assert b.dice == (1, 4)  # as rolled, not sorted
    assert b.position == board(INITIAL, {24: 1, 23: 1, 13: 4, 11: 1, 8: 3, 6: 5})
    ctx = b.context()
    assert ctx.crawford and not ctx.may_double()


def test_gnubg_post_crawford_game() -> None:
    b = gnubg(G1_POST_CRAWFORD)
    assert (b.crawford, b.post_crawford) == (False, True)
    assert (b.match_length, b.my_score, b.opponent_score) == (5, 2, 4)
    assert b.kind is Request.ROLL_OR_DOUBLE
    assert b.position == board(INITIAL, {24: 1, 23: 1, 13: 4, 9: 1, 8: 3, 6: 5})
    ctx = b.context()
    assert ctx.post_crawford and not ctx.crawford and ctx.may_double()


# --------------------------------------------------------------------------- external = player 0


def test_gnubg_opening_move_request_player0() -> None:
    b = gnubg(G0_MOVE_OPENING)
    assert b.my_seat == 0 and b.kind is Request.MOVE and b.on_roll is ME
    assert b.position == Position.initial()
    assert b.dice == (2, 1)
    assert b.match_length == 0 and b.is_money and (b.crawford, b.post_crawford) == (False, False)
    assert (b.my_name, b.opponent_name) == ("gnubg", "root")  # player 0's name is first
    # Its reply was in its own numbering: 24/22 24/23.
    assert b.position.apply([(24, 22), (24, 23)]) in {a for _, a in b.position.play_results((2, 1))}


def test_gnubg_bar_entry_player0() -> None:
    b = gnubg(G0_BAR_31)
    assert b.kind is Request.MOVE and b.dice == (3, 1)
    assert b.position == board({22: 1, 13: 5, 8: 3, 6: 5}, {6: 5, 7: 3, 8: 3, 13: 3, 18: 1},
                               mover_bar=1)
    assert (b.cube_value, b.cube_owner) == (4, OPP)  # tokens 39/40 = 1/0: player 1 owns it
    assert b.context().cube_owner is CubeOwner.OPPONENT
    assert b.position.apply([(25, 22), (22, 21)]) in {a for _, a in b.position.play_results((3, 1))}


def test_gnubg_beaver_pending_needs_the_seat() -> None:
    with pytest.raises(FormatError, match="pass my_seat") as info:
        gnubg(G0_BEAVER)
    assert info.value.field == field_name(41)
    b = gnubg(G0_BEAVER, seat=0)
    # I doubled (I am on roll), gnubg beavered: I must answer the redouble to 4.
    assert b.kind is Request.TAKE and b.on_roll is ME and b.to_act is ME
    assert (b.cube_value, b.cube_owner) == (2, OPP)
    assert (b.my_name, b.my_score) == ("gnubg", 0)  # names not swapped: I am on roll
    assert b.position == board({23: 1, 22: 1, 13: 5, 8: 3, 6: 5}, {6: 5, 8: 3, 13: 6, 24: 1})
    ctx = b.context()
    assert (ctx.cube_value, ctx.cube_owner) == (2, CubeOwner.OPPONENT)


def test_gnubg_seat_given_must_fit_a_roll_or_move_request() -> None:
    with pytest.raises(FormatError, match="token 33"):
        gnubg(G1_MOVE_OPENING, seat=0)
    with pytest.raises(FormatError, match="token 33"):
        gnubg(G0_MOVE_OPENING, seat=1)
    # A normal take request with the seat known: still the side not on roll.
    assert gnubg(G1_TAKE, seat=1) == gnubg(G1_TAKE)


@pytest.mark.parametrize("capture", ALL_CAPTURES)
def test_gnubg_captures_are_rewritten_byte_for_byte(capture: bytes) -> None:
    seat = 0 if capture.startswith(b"board:gnubg:root:0:") else 1
    b = gnubg(capture, seat)
    assert format_board(b) + "\n\x00" == capture.decode()
    assert b.to_line() == text(capture)


def test_gnubg_framing_nul_at_the_start_of_the_next_line() -> None:
    # A line reader sees gnubg's NUL at the start of the following line.
    assert gnubg(b"\x00" + G1_ROLL.rstrip(b"\x00").rstrip(b"\n") + b"\r\n") == gnubg(G1_ROLL)
    assert gnubg(G1_ROLL.decode()) == gnubg(G1_ROLL)  # str or bytes


# --------------------------------------------------------------------------- FIBS dialect


def test_fibs_clip_example_you_are_o_moving_24_to_1() -> None:
    b = parse_board(CLIP_EXAMPLE, Dialect.FIBS)
    assert (b.colour, b.direction) == (1, -1)
    assert b.kind is Request.MOVE and b.on_roll is ME and b.to_act is ME
    assert b.position == Position.initial()
    assert b.dice == (6, 2) and b.can_move == 2
    assert (b.my_name, b.opponent_name, b.match_length) == ("You", "someplayer", 3)
    assert (b.cube_owner, b.cube_value) == (None, 1)
    assert b.my_seat is None
    assert format_board(b) == CLIP_EXAMPLE
    # Writing the same board from scratch gives the spec's line, "can move" included.
    built = FibsBoard(Position.initial(), Request.MOVE, dice=(6, 2), my_name="You",
                      opponent_name="someplayer", match_length=3)
    assert built.to_line() == CLIP_EXAMPLE


def test_fibs_you_are_x_moving_1_to_24() -> None:
    b = parse_board(FIBS_X_OPENING, Dialect.FIBS)
    assert (b.colour, b.direction) == (-1, 1)
    assert b.kind is Request.MOVE and b.on_roll is ME and b.dice == (2, 6)
    assert b.position == Position.initial()
    # The player sent "move 1-3 1-7" in board numbering = 24/22 24/18 in its own numbering.
    assert b.position.apply([(24, 22), (24, 18)]) in {a for _, a in b.position.play_results((2, 6))}
    assert format_board(b) == FIBS_X_OPENING


def test_fibs_real_line_with_my_chequer_on_the_bar() -> None:
    b = parse_board(FIBS_REAL_BAR, Dialect.FIBS)
    assert (b.my_name, b.colour, b.direction) == ("GammonBot_VII", -1, 1)
    assert b.kind is Request.ROLL_OR_DOUBLE and b.on_roll is ME
    me, pipcat = {24: 1, 13: 4, 8: 3, 7: 1, 6: 5}, {5: 1, 6: 4, 8: 3, 13: 5, 21: 1, 24: 1}
    assert b.position == board(me, pipcat, mover_bar=1)
    assert (b.my_bar, b.opponent_bar) == (1, 0)
    assert (b.crawford, b.post_crawford) == (False, False)
    assert format_board(b) == FIBS_REAL_BAR


def test_fibs_opponent_to_move_uses_the_opponent_dice() -> None:
    line = FIBS_REAL_AT_4_0.replace(":1:5:3:0:0:1:1:", ":-1:0:0:5:3:1:1:")
    b = parse_board(line, Dialect.FIBS)
    assert b.on_roll is OPP and b.to_act is OPP and b.kind is Request.MOVE and b.dice == (5, 3)
    assert format_board(b) == line


def test_fibs_cannot_tell_the_crawford_game() -> None:
    b = parse_board(FIBS_REAL_AT_4_0, Dialect.FIBS)
    assert (b.my_score, b.opponent_score, b.match_length) == (4, 0, 5)
    assert b.crawford is None and b.post_crawford is None
    with pytest.raises(FormatError, match="crawford="):
        b.context()
    ctx = b.context(crawford=True, post_crawford=False)
    assert ctx.crawford and not ctx.may_double()


def test_fibs_opponent_doubled_me() -> None:
    line = FIBS_REAL_BAR.replace(":-1:0:0:0:0:1:1:1:0:-1:", ":1:0:0:0:0:2:0:1:1:-1:")
    b = parse_board(line, Dialect.FIBS)
    assert b.kind is Request.TAKE and b.on_roll is OPP and b.to_act is ME
    assert (b.cube_value, b.cube_owner) == (2, OPP)  # the doubler owned the 2-cube
    ctx = b.context()
    assert (ctx.cube_value, ctx.cube_owner) == (2, CubeOwner.OPPONENT)


def test_fibs_unlimited_match_is_money_and_game_over_is_turn_0() -> None:
    line = CLIP_EXAMPLE.replace("someplayer:3:", "someplayer:9999:").replace(
        ":1:6:2:0:0:", ":0:0:0:0:0:")
    b = parse_board(line, Dialect.FIBS)
    assert b.match_length == 0 and b.is_money
    assert b.kind is Request.GAME_OVER and b.to_act is None and b.dice is None
    assert b.position == Position.initial() and b.on_roll is ME
    assert format_board(b) == line


def test_fibs_context_for_the_opponent() -> None:
    b = parse_board(with_token(FIBS_REAL_AT_4_0, 40, "0"), Dialect.FIBS)  # I own the cube
    mine, theirs = b.context(crawford=False, post_crawford=True), b.context(
        crawford=False, post_crawford=True, side=OPP)
    assert (mine.my_score, mine.cube_owner) == (4, CubeOwner.ME)
    assert theirs == mine.swapped()


# --------------------------------------------------------------------------- malformed lines


def tokens_of(line: str) -> list[str]:
    return line.split(":")


def with_token(line: str, k: int, value: str) -> str:
    t = tokens_of(line)
    t[k - 1] = value
    return ":".join(t)


@pytest.mark.parametrize(
    ("dialect", "line", "token", "value"),
    [
        (Dialect.FIBS, with_token(CLIP_EXAMPLE, 38, "x"), 38, "x"),
        (Dialect.FIBS, with_token(CLIP_EXAMPLE, 38, "3"), 38, 3),
        (Dialect.FIBS, with_token(CLIP_EXAMPLE, 38, " 2"), 38, " 2"),
        (Dialect.FIBS, with_token(CLIP_EXAMPLE, 34, "7"), 34, 7),
        (Dialect.FIBS, with_token(CLIP_EXAMPLE, 35, "0"), 35, (6, 0)),
        (Dialect.FIBS, with_token(CLIP_EXAMPLE, 33, "2"), 33, 2),
        (Dialect.FIBS, with_token(CLIP_EXAMPLE, 42, "0"), 42, 0),
        (Dialect.FIBS, with_token(CLIP_EXAMPLE, 39, "2"), 39, 2),
        (Dialect.FIBS, with_token(CLIP_EXAMPLE, 5, "-1"), 5, -1),
        (Dialect.FIBS, with_token(CLIP_EXAMPLE, 5, "3"), 5, 3),
        (Dialect.FIBS, with_token(CLIP_EXAMPLE, 1, "bored"), 1, "bored"),
        (Dialect.FIBS, with_token(CLIP_EXAMPLE, 7 + 6, "16"), 13, 16),
        # 6 on my 6-point instead of 5: 16 chequers with the borne-off count.
        (Dialect.FIBS, with_token(CLIP_EXAMPLE, 7 + 6, "6"), 46, 0),
        # One of the opponent's chequers (X, negative) vanished from its 24-point (slot 1).
        (Dialect.FIBS, with_token(CLIP_EXAMPLE, 7 + 1, "-1"), 47, 0),
        # One of my chequers moved to my bar (slot 25) but token 48 still says 0.
        (Dialect.FIBS, with_token(with_token(CLIP_EXAMPLE, 7 + 6, "4"), 32, "1"), 48, 0),
        # An X chequer in O's bar slot.
        (Dialect.FIBS, with_token(with_token(CLIP_EXAMPLE, 7 + 1, "-1"), 32, "-1"), 32, -1),
        # Dice in the opponent's pair while I am on roll.
        (Dialect.FIBS, with_token(with_token(CLIP_EXAMPLE, 36, "3"), 37, "3"), 36, 3),
        # A line glued to the next message (the CLIP "spanner"): the last token is not a number.
        (Dialect.FIBS, CLIP_EXAMPLE + "5 anotherplayer - - 0", 53, "05 anotherplayer - - 0"),
        (Dialect.GNUBG, with_token(text(G1_ROLL), 42, "-1"), 42, -1),
        (Dialect.GNUBG, with_token(text(G1_ROLL), 33, "0"), 33, 0),
        (Dialect.GNUBG, with_token(with_token(text(G1_ROLL), 39, "0"), 40, "0"), 39, (0, 0)),
        (Dialect.GNUBG, with_token(text(G1_MOVE_OPENING), 36, "3"), 36, (3, 3)),
        (Dialect.GNUBG, with_token(text(G1_ROLL), 53, "2"), 53, 2),
        (Dialect.GNUBG, with_token(text(G0_MOVE_OPENING), 53, "0"), 53, (0, 0)),
        # A take request with dice.
        (Dialect.GNUBG, text(G1_TAKE).replace(":-1:0:0:0:0:1:", ":-1:3:1:3:1:1:"), 34, (3, 1)),
        # The Crawford flag at a score where nobody is at N-1.
        (Dialect.GNUBG, with_token(text(G1_ROLL), 53, "0"), 53, (0, 0)),
    ],
)
def test_malformed_lines_name_the_token(dialect: Dialect, line: str, token: int,
                                        value: Any) -> None:
    with pytest.raises(FormatError) as info:
        parse_board(line, dialect)
    assert info.value.field == field_name(token)
    assert info.value.value == value
    assert f"token {token} (" in str(info.value)


@pytest.mark.parametrize("count", [52, 54])
def test_wrong_token_count(count: int) -> None:
    t = tokens_of(CLIP_EXAMPLE)
    line = ":".join(t[:count] if count < 53 else t + ["0"])
    with pytest.raises(FormatError, match=f"53 ':'-separated tokens, got {count}"):
        parse_board(line, Dialect.FIBS)


def test_a_fibs_line_has_no_seat() -> None:
    with pytest.raises(FormatError, match="my_seat"):
        parse_board(CLIP_EXAMPLE, Dialect.FIBS, my_seat=1)
    with pytest.raises(FormatError, match="my_seat"):
        parse_board(G1_ROLL, Dialect.GNUBG, my_seat=2)


def test_field_names() -> None:
    assert field_name(7) == "token 7 (board slot 0)"
    assert field_name(32) == "token 32 (board slot 25)"
    assert field_name(41) == "token 41 (was doubled)"


def test_writer_cleans_names_and_rejects_impossible_boards() -> None:
    b = FibsBoard(Position.initial(), Request.ROLL_OR_DOUBLE, my_name="a:b")
    assert tokens_of(b.to_line())[1] == "a_b"
    with pytest.raises(FormatError, match="token 34"):
        FibsBoard(Position.initial(), Request.MOVE)  # a move needs dice
    with pytest.raises(FormatError, match="token 41"):
        FibsBoard(Position.initial(), Request.TAKE, on_roll=ME)  # FIBS: only "opponent doubled"
    with pytest.raises(FormatError, match="my_seat"):
        FibsBoard(Position.initial(), Request.MOVE, dice=(3, 1), dialect=Dialect.GNUBG)
    with pytest.raises(FormatError, match="token 33"):
        FibsBoard(Position.initial(), Request.MOVE, dice=(3, 1), dialect=Dialect.GNUBG,
                  my_seat=1, on_roll=OPP)
    with pytest.raises(FormatError, match="token 53"):
        FibsBoard(Position.initial(), Request.ROLL_OR_DOUBLE, match_length=5, crawford=True)
    with pytest.raises(FormatError, match="token 2"):
        FibsBoard(Position.initial(), Request.ROLL_OR_DOUBLE, my_name="a\nb")


# --------------------------------------------------------------------------- properties


@st.composite
def positions(draw: st.DrawFn) -> Position:
    """Any board: up to 15 chequers a side on points or the bar, never two colours on a point."""
    mover = [0] * 25
    for index in draw(st.lists(st.integers(0, 24), max_size=15)):
        mover[index] += 1
    opponent = [0] * 25
    free = [i for i in range(25) if i == 24 or not mover[23 - i]]
    for index in draw(st.lists(st.sampled_from(free), max_size=15)):
        opponent[index] += 1
    return Position(opponent, mover)


NAMES = st.text(st.characters(codec="utf-8", exclude_characters=":\x00\r\n"), max_size=10)


@st.composite
def boards(draw: st.DrawFn, dialect: Dialect, seat: int | None = None) -> FibsBoard:
    is_gnubg = dialect is Dialect.GNUBG
    kind = draw(st.sampled_from([Request.ROLL_OR_DOUBLE, Request.MOVE, Request.TAKE]
                                + ([] if is_gnubg else [Request.GAME_OVER])))
    if kind is Request.TAKE:
        on_roll = draw(st.sampled_from(Side)) if is_gnubg else OPP
    elif kind is Request.GAME_OVER or is_gnubg:
        on_roll = ME
    else:
        on_roll = draw(st.sampled_from(Side))
    dice = draw(st.tuples(st.integers(1, 6), st.integers(1, 6))) if kind is Request.MOVE else None
    length = draw(st.sampled_from([0, 1, 3, 5, 7, 25]))
    top = length - 1 if length else 50
    scores = draw(st.tuples(st.integers(0, top), st.integers(0, top)))
    owner = draw(st.sampled_from([None, ME, OPP]))
    if is_gnubg and kind is Request.TAKE and on_roll is ME:
        owner = OPP
    crawford: bool | None = False
    post: bool | None = False
    at_n1 = bool(length) and length - 1 in scores
    if is_gnubg:
        if at_n1:
            options = [(False, False), (False, True)]
            if scores[0] != scores[1]:
                options.append((True, False))
            crawford, post = draw(st.sampled_from(options))
    elif kind is not Request.GAME_OVER:
        crawford, post = fibs_crawford(length, scores)
    extra = st.integers(0, 5)
    return FibsBoard(
        position=draw(positions()),
        kind=kind,
        on_roll=on_roll,
        dice=dice,
        dialect=dialect,
        my_name=draw(NAMES),
        opponent_name=draw(NAMES),
        match_length=length,
        my_score=scores[0],
        opponent_score=scores[1],
        cube_value=2 ** draw(st.integers(0, 6)),
        cube_owner=owner,
        crawford=crawford,
        post_crawford=post,
        my_seat=(draw(st.sampled_from([0, 1])) if seat is None else seat) if is_gnubg else None,
        colour=1 if is_gnubg else draw(st.sampled_from([-1, 1])),
        direction=-1 if is_gnubg else draw(st.sampled_from([-1, 1])),
        can_move=draw(st.none() | st.integers(0, 4)),
        forced_move=draw(extra),
        did_crawford=0 if is_gnubg else draw(extra),
        redoubles=0 if is_gnubg else draw(extra),
    )


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(Dialect).flatmap(boards))
def test_round_trip(b: FibsBoard) -> None:
    line = format_board(b)
    assert len(line.split(":")) == 53
    again = parse_board(line, b.dialect, my_seat=b.my_seat)
    assert again == b
    assert format_board(again) == line


@settings(max_examples=200, deadline=None)
@given(boards(Dialect.GNUBG))
def test_gnubg_seat_is_inferred_unless_a_beaver_is_pending(b: FibsBoard) -> None:
    line = format_board(b)
    after_beaver = b.kind is Request.TAKE and b.cube_owner is (ME if b.on_roll is OPP else OPP)
    if after_beaver:
        with pytest.raises(FormatError, match="pass my_seat"):
            parse_board(line, Dialect.GNUBG)
    else:
        assert parse_board(line, Dialect.GNUBG) == b


def fibs_crawford(length: int, scores: tuple[int, int]) -> tuple[bool | None, bool | None]:
    """The Crawford state a FIBS line reports: unknown at N-1 unless both are there."""
    if not length or length - 1 not in scores:
        return False, False
    return (False, True) if scores[0] == scores[1] else (None, None)


@settings(max_examples=150, deadline=None)
@given(boards(Dialect.GNUBG, seat=1))
def test_gnubg_player1_writes_the_slots_fibs_writes_for_o_moving_24_to_1(b: FibsBoard) -> None:
    assume(not (b.kind is Request.TAKE and b.on_roll is ME))
    crawford, post = fibs_crawford(b.match_length, (b.my_score, b.opponent_score))
    fibs = replace(b, dialect=Dialect.FIBS, my_seat=None, crawford=crawford, post_crawford=post)
    assert (fibs.colour, fibs.direction) == (1, -1)
    assert tokens_of(format_board(b))[6:32] == tokens_of(format_board(fibs))[6:32]


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(Dialect).flatmap(boards))
def test_context_is_seen_from_the_side_to_act(b: FibsBoard) -> None:
    if b.crawford is None:
        return
    who = b.to_act or ME
    ctx = b.context()
    assert ctx.my_score == (b.my_score if who is ME else b.opponent_score)
    assert ctx.cube_value == b.cube_value and ctx.match_length == b.match_length
    expected_owner = (CubeOwner.CENTRE if b.cube_owner is None
                      else CubeOwner.ME if b.cube_owner is who else CubeOwner.OPPONENT)
    assert ctx.cube_owner is expected_owner
    assert b.context(side=who.other()) == ctx.swapped()


# --------------------------------------------------------------------------- gnubg as oracle


ALL_ROLLS = [(a, b) for a in range(1, 7) for b in range(a, 7)]


def reachable(before: Position) -> set[Position]:
    """Every board (seen from the side that moved) after the side on roll in ``before`` plays."""
    out: set[Position] = set()
    for roll in ALL_ROLLS:
        results = before.play_results(roll)
        out.update(after for _, after in results)
        if not results:
            out.add(before)
    return out


class Oracle:
    """Plays as gnubg's external player and checks every decoded request against the last.

    Within a game (the score unchanged) the board seen from me at each roll/move request must be
    one that gnubg could reach from the board after my play by a legal play of some roll; a
    take request must show the board after my play, with the doubler on roll; my name must never
    change (take requests swap the names). Plays are picked at random but independently of the
    order of `legal_plays`, so a seed gives the same game as long as gnubg's dice do not change.
    ``pause`` answers the first request with ``Error: pause``, which stops gnubg's automatic
    play so that commands (``set score``...) can change the game before ``play`` resumes it.
    """

    def __init__(self, seat: int, seed: int, *, take: bool, pause: bool = False) -> None:
        self.seat, self.rng, self.take, self.pause = seat, random.Random(seed), take, pause
        self.after_me: Position | None = None  # board from me after my last action
        self.score: tuple[int, int] | None = None
        self.names: set[str] = set()
        self.seen: set[str] = set()
        self.crawford_states: set[tuple[bool | None, bool | None, int, int, int]] = set()

    def answer(self, raw: bytes) -> str:
        b = parse_board(raw, Dialect.GNUBG, my_seat=self.seat)
        try:
            inferred = parse_board(raw, Dialect.GNUBG)
        except FormatError:
            assert b.kind is Request.TAKE and b.cube_owner is not None
            assert b.cube_owner is not b.on_roll  # only after a beaver
        else:
            assert inferred == b
        assert b.my_seat == self.seat and b.to_act is ME
        assert b.to_line() == raw.decode().strip("\x00").strip()
        self.names.add(b.my_name)
        beaver = b.kind is Request.TAKE and b.on_roll is ME
        self.seen.add(b.kind.value + ("-beaver" if beaver else ""))
        self.crawford_states.add(
            (b.crawford, b.post_crawford, b.my_score, b.opponent_score, b.match_length))
        score = (b.my_score, b.opponent_score)
        if self.score is None and self.after_me is not None:  # resumed after the pause
            assert b.my_view() == self.after_me
        elif score != self.score:  # a new game: the board is the start, or gnubg's opening play
            assert b.kind is not Request.TAKE
            openings = {p.swapped() for p in reachable(Position.initial())}
            assert b.my_view() == Position.initial() or b.my_view() in openings
        else:
            assert self.after_me is not None
            if b.kind is Request.TAKE:
                assert b.my_view() == self.after_me
            elif self.after_me != b.my_view():
                assert b.my_view() in {p.swapped() for p in reachable(self.after_me.swapped())}
        self.score = score
        self.after_me = b.my_view()
        if self.pause:
            self.pause, self.score = False, None
            return "Error: pause"
        if b.kind is Request.TAKE:
            return "take" if self.take and not beaver else "drop"  # taking a beaver stalls 1.07
        if b.kind is Request.ROLL_OR_DOUBLE:
            mine, theirs = b.position.pip_counts()
            return "double" if mine > theirs + 25 else "roll"
        assert b.dice is not None
        results = sorted(b.position.play_results(b.dice), key=lambda r: r[1].position_id())
        if not results:
            return ""
        play, after = self.rng.choice(results)
        self.after_me = after
        return " ".join(f"{s.from_point}/{s.to_point}" for s in play.steps)


def play_against_gnubg(binary: str, oracle: Oracle, session: list[str], seed: int) -> str:
    """Run gnubg headless with ``oracle`` as the external player in ``oracle.seat``."""
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    other = 1 - oracle.seat
    names = "gnubg bgbot" if oracle.seat == 1 else "bgbot gnubg"
    commands = [
        "set rng mersenne", f"set seed {seed}", f"set defaultnames {names}",
        f"set player {other} gnubg",
        f"set player {other} chequerplay evaluation plies 0",
        f"set player {other} cubedecision evaluation plies 0",
        "set display off",
        f"set player {oracle.seat} external 127.0.0.1:{port}",
        *session, "quit", "y",
    ]
    with tempfile.TemporaryDirectory() as prefs:
        proc = subprocess.Popen([binary, "-t", "-q", "-r", "-s", prefs], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        try:
            assert proc.stdin is not None and proc.stdout is not None
            proc.stdin.write(("\n".join(commands) + "\n").encode())
            proc.stdin.close()
            listener.settimeout(10)
            conn, _ = listener.accept()
            conn.settimeout(10)
            pending = b""
            with conn:
                while True:
                    while b"\n" not in pending:
                        chunk = conn.recv(4096)
                        if not chunk:
                            break
                        pending += chunk
                    if b"\n" not in pending:
                        break
                    line, pending = pending.split(b"\n", 1)
                    conn.sendall((oracle.answer(line.strip(b"\x00")) + "\n").encode())
            proc.wait(timeout=10)
            return proc.stdout.read().decode(errors="replace")
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            listener.close()


@pytest.mark.gnubg
def test_gnubg_requests_decode_consistently_with_the_plays(gnubg_binary: str) -> None:
    start = time.monotonic()
    runs: list[Oracle] = []

    def run(oracle: Oracle, session: list[str], seed: int) -> str:
        runs.append(oracle)
        return play_against_gnubg(gnubg_binary, oracle, session, seed)

    # Seat 1, a 3-point match from 0-0 in which I drop: gnubg doubles me from a centred cube.
    drop1 = Oracle(seat=1, seed=1, take=False)
    run(drop1, ["new match 3"], seed=1)
    assert "take" in drop1.seen
    # Seat 1, the Crawford game: paused at once, the score set to 2-0 for me (set score takes
    # player 0's score first), then the Crawford flag for this game.
    crawford1 = Oracle(seat=1, seed=3, take=False, pause=True)
    out = run(crawford1, ["new match 3", "set score 0 2", "set crawford on", "play"], seed=3)
    assert "Crawford game" in out
    assert (True, False, 2, 0, 3) in crawford1.crawford_states
    # Seat 0, a 5-point match in which I take: cubes I own, and a post-Crawford game at 2-4.
    take0 = Oracle(seat=0, seed=5, take=True)
    out = run(take0, ["set automatic game off", "new match 5", "set score 2 4", "new game"],
              seed=5)
    assert "post-Crawford" in out
    assert (False, True, 2, 4, 5) in take0.crawford_states
    # One-game money sessions where I double when far behind, until gnubg has beavered me in
    # both seats (seeds 8 and 9 do with gnubg 1.07.001).
    beavered: set[int] = set()
    for seed in range(1, 17):
        money = Oracle(seat=seed % 2, seed=seed, take=False)
        run(money, ["set automatic game off", "set beavers 3", "new session"], seed=seed)
        if "take-beaver" in money.seen:
            beavered.add(money.seat)
        if beavered == {0, 1}:
            break
    assert beavered == {0, 1}

    for oracle in runs:
        for crawford, post, mine, theirs, length in oracle.crawford_states:
            # gnubg: the first game with a player at N-1 is the Crawford game, later ones are
            # post-Crawford; neither happens before.
            assert (crawford or post) == (length > 0 and length - 1 in (mine, theirs))
    for oracle in runs[:3]:
        assert oracle.names == {"bgbot"}
    seen = set().union(*(oracle.seen for oracle in runs))
    assert {"move", "roll_or_double", "take", "take-beaver"} <= seen, seen
    assert time.monotonic() - start < 20
