"""Bad input at the boundaries (issue 17 items 1, 2 and 4): every one answered with the proper
error, and nothing of it left behind (no stale position, no option that breaks later commands).
The daemon's side is in test_daemon_bad_input.py; the fuzz suite in test_fuzz.py."""

from __future__ import annotations

import asyncio
import subprocess
import sys

import pytest

from bgbot.core.errors import FormatError
from bgbot.core.position import Play, Position
from bgbot.deciders import create_agent
from bgbot.formats.fibsboard import Dialect, format_board, parse_board
from bgbot.formats.gnubgid import MatchState, encode_gnubgid
from bgbot.formats.mat import MatFormatError, parse_match
from bgbot.frontends.gnubg_session import PlayerSession
from bgbot.frontends.ubgi import UbgiSession

HUGE = "9" * 5000
OPENING = Position.initial()


def ubgi(session: UbgiSession, line: str) -> list[str]:
    return asyncio.run(session.handle(line))


def gnubgid(length: int, score: tuple[int, int] = (0, 0), dice: tuple[int, int] = (3, 1)) -> str:
    state = MatchState(match_length=length, score=score, on_roll=1, turn=1, dice=dice)
    return encode_gnubgid(OPENING, state)


# ------------------------------------------------------------------ huge numbers (item 1)


def test_a_bad_position_leaves_no_stale_position_behind() -> None:
    session = UbgiSession("heuristic")
    assert ubgi(session, f"position gnubgid {gnubgid(5)}") == []
    assert ubgi(session, "go")[-1].startswith("bestmove ")
    answer = ubgi(session, f"position xgid XGID=-b----E-C---eE---c-e----B-:0:0:1:31:0:0:0:{HUGE}:10")
    assert answer[0].startswith("error bad_value xgid match_length")
    assert ubgi(session, "go") == ["error bad_state missing position"]


@pytest.mark.parametrize("text", [
    f"XGID=-b----E-C---eE---c-e----B-:0:0:1:31:0:0:0:{HUGE}:10",
    f"XGID=-b----E-C---eE---c-e----B-:{HUGE}:0:1:31:0:0:0:5:10",
], ids=["length", "cube"])
def test_a_huge_number_in_an_xgid_is_a_format_error_naming_the_field(text: str) -> None:
    from bgbot.formats.xgid import decode_xgid

    with pytest.raises(FormatError) as caught:
        decode_xgid(text)
    assert caught.value.field in ("match_length", "cube") and "digits" in caught.value.reason


def test_a_huge_number_in_a_board_line_names_its_token() -> None:
    line = format_board(parse_board("board:You:gnubg:3:0:0:0:-2:0:0:0:0:5:0:3:0:0:0:-5:5:0:0:0:-3:0:"
                                    "-5:0:0:0:0:2:0:1:6:3:0:0:1:1:1:0:1:-1:0:25:0:0:0:0:0:0:0:0",
                                    Dialect.FIBS))
    tokens = line.split(":")
    tokens[3] = HUGE
    with pytest.raises(FormatError, match="match_length|token 4"):
        parse_board(":".join(tokens), Dialect.FIBS)


@pytest.mark.parametrize("text, where", [
    (f"{HUGE} point match\n", "match length"),
    (f"5 point match\n\n Game {HUGE}\n", "game number"),
    (f"5 point match\n\n Game 1\n a : {HUGE}   b : 0\n", "score"),
    (f"5 point match\n\n Game 1\n a : 0   b : 0\n  {HUGE}) 31: 8/5 6/5\n", "move number"),
    ("5 point match\n\n Game 1\n a : 0   b : 0\n  1) 31: 8/5 6/5       Doubles => "
     f"{HUGE}\n", "cube value"),
    ("5 point match\n\n Game 1\n a : 0   b : 0\n  1) 31: 8/5 6/5       Wins "
     f"{HUGE} points\n", "points won"),
], ids=lambda v: v if len(v) < 20 else "text")
def test_a_huge_number_in_a_match_file_is_a_mat_error(text: str, where: str) -> None:
    with pytest.raises(MatFormatError, match=where):
        parse_match(text)


def test_huge_move_text_numbers_are_format_errors() -> None:
    with pytest.raises(FormatError, match="point"):
        Play.parse(f"{HUGE}/5 6/5", OPENING, (3, 1))
    with pytest.raises(FormatError, match="repeat count"):
        Play.parse(f"8/5({HUGE})", OPENING, (3, 1))


# ------------------------------------------------------------------ match lengths (item 2)


def test_ubgi_refuses_a_match_longer_than_64_points_and_plays_64() -> None:
    session = UbgiSession("heuristic")
    answer = ubgi(session, f"position gnubgid {gnubgid(65, (3, 60))}")
    assert answer[0].startswith("error bad_value gnubgid match_length") and "64" in answer[0]
    assert ubgi(session, "go") == ["error bad_state missing position"]
    assert ubgi(session, f"position gnubgid {gnubgid(64, (3, 60))}") == []
    assert ubgi(session, "go")[-1].startswith("bestmove ")


def _board_line(length: int) -> str:
    return (f"board:gnubg:bgbot:{length}:0:0:0:-1:-1:0:0:0:5:0:3:0:0:0:-4:5:0:0:-1:-3:0:-5:0:0:0:0:"
            "2:0:1:4:2:4:2:2:0:1:0:1:-1:0:25:0:0:0:0:0:0:0:1")


def test_the_gnubg_external_player_refuses_a_match_longer_than_64_points() -> None:
    agent = create_agent("heuristic")
    reply = asyncio.run(PlayerSession(agent).respond(_board_line(65)))
    assert reply.is_error and "match_length" in reply.text and "64" in reply.text
    assert not asyncio.run(PlayerSession(agent).respond(_board_line(64))).is_error


def test_a_match_file_longer_than_64_points_is_refused() -> None:
    with pytest.raises(MatFormatError, match="at most 64 points"):
        parse_match("65 point match\n")
    assert parse_match("64 point match\n").length == 64


@pytest.mark.parametrize("args", [
    ["play", "random", "random", "--length", "65"],
    ["duel", "random", "random", "--length", "65"],
    ["ctl", "match", "start", "random", "random", "--length", "65"],
])
def test_the_cli_refuses_a_match_longer_than_64_points(args: list[str]) -> None:
    result = subprocess.run([sys.executable, "-m", "bgbot.cli", *args], capture_output=True,
                            text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert result.returncode == 2
    assert "at most 64 points" in result.stderr


# ------------------------------------------------------------------ UBGI options (item 4)


@pytest.mark.parametrize("value", ["18446744073709551617", "-5", HUGE], ids=["2**64+1", "-5", "huge"])
def test_an_out_of_range_seed_is_refused_on_set_and_the_engine_stays_usable(value: str) -> None:
    session = UbgiSession("heuristic")
    answer = ubgi(session, f"set engine.seed {value}")
    assert len(answer) == 1 and answer[0].startswith("error bad_value engine.seed")
    assert ubgi(session, "isready") == ["readyok"]
    assert ubgi(session, f"position gnubgid {gnubgid(5)}") == []
    assert ubgi(session, "go")[-1].startswith("bestmove ")


def test_a_seed_in_range_is_taken() -> None:
    session = UbgiSession("heuristic")
    assert ubgi(session, "set engine.seed 123456") == []
    assert ubgi(session, "get engine.seed") == ["value engine.seed 123456"]
    assert ubgi(session, "isready") == ["readyok"]
