"""XGID codec: known ids, round trips, seat mapping, malformed input, and gnubg as the oracle."""

from __future__ import annotations

import json
import random
import subprocess
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bgbot.core.errors import FormatError
from bgbot.core.position import Position
from bgbot.formats.gnubgid import GameState, MatchState, decode_gnubgid, encode_gnubgid
from bgbot.formats.xgid import (
    XgidState,
    decode_any_id,
    decode_xgid,
    encode_xgid,
    gnubg_to_xgid,
    xgid_to_gnubg,
)

GNUBG = Path("/usr/games/gnubg")
REFERENCE_XGID = "XGID=-b----E-C---eE---c-e----AA:0:0:1:00:6:3:1:7:10"
START = "XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0:0:10"


# ----------------------------------------------------------------------------- known ids


def test_reference_example_gives_gnubgs_ids() -> None:
    """reference §4.1 #3 / §4.2 #3: gnubg turned this XGID into 4HPwATDgc/ABUA:8AngADAAMAAE."""
    state = decode_xgid(REFERENCE_XGID)
    position, match = xgid_to_gnubg(state)
    assert position.position_id() == "4HPwATDgc/ABUA"
    assert encode_gnubgid(position, match) == "4HPwATDgc/ABUA:8AngADAAMAAE"
    assert (state.turn, state.score_upper, state.score_lower, state.match_length) == (1, 6, 3, 7)
    assert state.crawford and state.max_cube == 1024
    assert encode_xgid(state) == REFERENCE_XGID


def test_starting_position() -> None:
    state = decode_xgid(START)
    assert state.position == Position.initial()
    assert state.is_money and state.cube == 1 and state.cube_owner == 0 and state.dice == (0, 0)
    assert encode_xgid(replace(state, position=Position.initial())) == START


def test_position_characters_map_to_points() -> None:
    # uppercase: 2 on its 1-point (char 1), 1 on its bar (char 25);
    # lowercase: 3 on its 1-point (char 24 = uppercase's 24), 1 on its bar (char 0).
    text = "a" + "B" + "-" * 22 + "c" + "A"
    state = decode_xgid(f"XGID={text}:0:0:1:00:0:0:0:0:10")
    upper, lower = state.position.mover, state.position.opponent
    assert upper[0] == 2 and upper[24] == 1 and sum(upper) == 3
    assert lower[0] == 3 and lower[24] == 1 and sum(lower) == 4
    flipped = decode_xgid(f"XGID={text}:0:0:-1:00:0:0:0:0:10")
    assert flipped.position == state.position.swapped()


def test_seat_mapping_uppercase_is_player_1() -> None:
    state = decode_xgid("XGID=-b----E-C---eE---c-e----B-:3:1:1:00:4:2:0:9:10")
    _, match = xgid_to_gnubg(state)
    assert match.on_roll == 1 and match.turn == 1
    assert match.cube == 8 and match.cube_owner == 1
    assert match.score == (2, 4)  # (player 0 = lowercase, player 1 = uppercase)
    lower = decode_xgid("XGID=-b----E-C---eE---c-e----B-:3:-1:-1:31:4:2:0:9:10")
    _, match = xgid_to_gnubg(lower)
    assert (match.on_roll, match.cube_owner, match.dice) == (0, 0, (3, 1))
    assert lower.dice == (3, 1)
    centred = decode_xgid("XGID=-b----E-C---eE---c-e----B-:0:0:-1:13:0:0:0:5:10")
    assert xgid_to_gnubg(centred)[1].cube_owner == -1
    assert centred.dice == (1, 3) and xgid_to_gnubg(centred)[1].dice == (3, 1)


def test_swap_to_bottom_puts_the_player_on_roll_in_seat_1() -> None:
    state = decode_xgid("XGID=-b----E-C---eE---c-e----B-:1:-1:-1:00:4:2:0:9:10")
    position, fixed = xgid_to_gnubg(state)
    same, swapped = xgid_to_gnubg(state, swap_to_bottom=True)
    assert same == position
    assert swapped == fixed.swapped() and swapped.on_roll == 1 and swapped.cube_owner == 1
    upper = decode_xgid(START)
    assert xgid_to_gnubg(upper, swap_to_bottom=True) == xgid_to_gnubg(upper)


def test_double_offered() -> None:
    state = decode_xgid("XGID=-b----E-C---eE---c-e----B-:1:1:-1:D:4:2:0:9:10")
    assert state.doubled and state.dice == (0, 0) and state.turn == -1
    _, match = xgid_to_gnubg(state)
    assert match.doubled and match.on_roll == 0 and match.turn == 1 and match.cube == 2
    assert encode_xgid(state).split(":")[4] == "D"
    assert gnubg_to_xgid(*xgid_to_gnubg(state)) == state


def test_crawford_flag_as_gnubg_reads_it() -> None:
    crawford = "XGID=-b----E-C---eE---c-e----B-:0:0:1:00:{}:{}:1:{}:10"
    assert xgid_to_gnubg(decode_xgid(crawford.format(4, 2, 5)))[1].crawford
    assert xgid_to_gnubg(decode_xgid(crawford.format(1, 4, 5)))[1].crawford
    # nobody 1-away: gnubg clears the flag; a 1-point match has no Crawford game either
    assert decode_xgid(crawford.format(2, 1, 5)).crawford
    assert not xgid_to_gnubg(decode_xgid(crawford.format(2, 1, 5)))[1].crawford
    assert not xgid_to_gnubg(decode_xgid(crawford.format(0, 0, 1)))[1].crawford


def test_rules_field() -> None:
    base = "XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:{}:{}:10"
    assert [(s.jacoby, s.beavers) for s in (decode_xgid(base.format(r, 0)) for r in range(4))] == [
        (False, False), (True, False), (False, True), (True, True)
    ]
    assert xgid_to_gnubg(decode_xgid(base.format(1, 0)))[1].jacoby
    assert not decode_xgid(base.format(0, 7)).crawford and decode_xgid(base.format(1, 7)).crawford
    assert not xgid_to_gnubg(decode_xgid(base.format(0, 7)))[1].jacoby


def test_accepted_spellings() -> None:
    want = decode_xgid(REFERENCE_XGID)
    assert decode_xgid(REFERENCE_XGID[5:]) == want
    assert decode_xgid("  xgid=" + REFERENCE_XGID[5:] + "\n") == want
    assert decode_any_id(REFERENCE_XGID) == xgid_to_gnubg(want)
    assert decode_any_id(REFERENCE_XGID[5:]) == xgid_to_gnubg(want)
    assert decode_any_id("4HPwATDgc/ABUA:8AngADAAMAAE") == decode_gnubgid("4HPwATDgc/ABUA:8AngADAAMAAE")


# ----------------------------------------------------------------------------- round trips


@st.composite
def positions(draw: st.DrawFn) -> Position:
    """Any legal-looking board: up to 15 chequers a side, never both sides on one point."""
    mover = [0] * 25
    for _ in range(draw(st.integers(0, 15))):
        mover[draw(st.integers(0, 24))] += 1
    opponent = [0] * 25
    free = [i for i in range(25) if i == 24 or not mover[23 - i]]
    for _ in range(draw(st.integers(0, 15))):
        opponent[draw(st.sampled_from(free))] += 1
    return Position(opponent, mover)


@st.composite
def xgid_states(draw: st.DrawFn) -> XgidState:
    length = draw(st.sampled_from([0, 1, 3, 5, 7, 11, 25]) | st.integers(0, 32767))
    top = length if length else 32767
    doubled = draw(st.booleans())
    return XgidState(
        position=draw(positions()),
        turn=draw(st.sampled_from([1, -1])),
        cube=1 << draw(st.integers(0, 15)),
        cube_owner=draw(st.integers(-1, 1)),
        dice=(0, 0) if doubled else draw(st.just((0, 0)) | st.tuples(st.integers(1, 6), st.integers(1, 6))),
        doubled=doubled,
        score_upper=draw(st.integers(0, top)),
        score_lower=draw(st.integers(0, top)),
        match_length=length,
        crawford=draw(st.booleans()) if length else False,
        jacoby=False if length else draw(st.booleans()),
        beavers=False if length else draw(st.booleans()),
        max_cube=1 << draw(st.integers(0, 15)),
    )


@given(xgid_states())
@settings(max_examples=300)
def test_xgid_text_round_trip(state: XgidState) -> None:
    text = encode_xgid(state)
    assert text.startswith("XGID=") and len(text.split(":")) == 10
    assert decode_xgid(text) == state
    assert encode_xgid(decode_xgid(text[5:])) == text


@given(xgid_states())
@settings(max_examples=300)
def test_xgid_to_gnubg_and_back(state: XgidState) -> None:
    position, match = xgid_to_gnubg(state)
    assert position == state.position
    assert match.game_state is GameState.PLAYING and match.resigned == 0
    back = gnubg_to_xgid(position, match, beavers=state.beavers, max_cube=state.max_cube)
    # only the dice order and a Crawford flag gnubg would clear are lost
    expected = replace(
        state,
        dice=(max(state.dice), min(state.dice)),
        crawford=match.crawford,
    )
    assert back == expected
    swapped_position, swapped = xgid_to_gnubg(state, swap_to_bottom=True)
    assert swapped_position == position and swapped.on_roll == 1


@given(positions(), st.data())
@settings(max_examples=200)
def test_gnubg_to_xgid_and_back(position: Position, data: st.DataObject) -> None:
    length = data.draw(st.sampled_from([0, 1, 2, 5, 9, 32767]))
    score = (data.draw(st.integers(0, length or 99)), data.draw(st.integers(0, length or 99)))
    on_roll = data.draw(st.integers(0, 1))
    doubled = data.draw(st.booleans())
    crawford = bool(length > 1 and length - 1 in score and data.draw(st.booleans()))
    match = MatchState(
        cube=1 << data.draw(st.integers(0, 15)),
        cube_owner=data.draw(st.integers(-1, 1)),
        on_roll=on_roll,
        crawford=crawford,
        turn=1 - on_roll if doubled else on_roll,
        doubled=doubled,
        dice=(0, 0) if doubled else data.draw(st.sampled_from([(0, 0), (6, 5), (3, 3), (2, 1)])),
        match_length=length,
        score=score,
        jacoby=False if length else data.draw(st.booleans()),
    )
    state = gnubg_to_xgid(position, match)
    assert xgid_to_gnubg(decode_xgid(encode_xgid(state))) == (position, match)


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"game_state": GameState.OVER}, "game_state"),
        ({"game_state": GameState.DROPPED}, "game_state"),
        ({"resigned": 1, "turn": 0}, "resigned"),
        ({"turn": 0}, "turn"),  # someone other than the player on roll acts, no double
        ({"doubled": True}, "turn"),  # a double offered but the doubler to act
    ],
)
def test_gnubg_states_an_xgid_cannot_hold(changes: dict[str, Any], field: str) -> None:
    match = replace(MatchState(on_roll=1, turn=1), **changes)
    with pytest.raises(FormatError) as caught:
        gnubg_to_xgid(Position.initial(), match)
    assert caught.value.field == field


# ----------------------------------------------------------------------------- malformed


@pytest.mark.parametrize(
    ("text", "field"),
    [
        ("XGID=-b----E-C---eE---c-e----AA:0:0:1:00:6:3:1:7", "xgid"),  # nine fields
        ("XGID=-b----E-C---eE---c-e----AA:0:0:1:00:6:3:1:7:10:0", "xgid"),
        ("", "xgid"),
        ("XGID=-b----E-C---eE---c-e----A:0:0:1:00:6:3:1:7:10", "position"),  # 25 chars
        ("XGID=-b----E-C---eE---c-e---*AA:0:0:1:00:6:3:1:7:10", "position"),
        ("XGID=Ab----E-C---eE---c-e----A-:0:0:1:00:6:3:1:7:10", "position"),  # upper on lower bar
        ("XGID=-b----E-C---eE---c-e----Aa:0:0:1:00:6:3:1:7:10", "position"),  # lower on upper bar
        ("XGID=-b----E-C---eE---c-e----BP:0:0:1:00:0:0:0:0:10", "position"),  # too many chequers
        ("XGID=-b----E-C---eE---c-e----AA:x:0:1:00:6:3:1:7:10", "cube"),
        ("XGID=-b----E-C---eE---c-e----AA:16:0:1:00:6:3:1:7:10", "cube"),
        ("XGID=-b----E-C---eE---c-e----AA:-1:0:1:00:6:3:1:7:10", "cube"),
        ("XGID=-b----E-C---eE---c-e----AA:0:2:1:00:6:3:1:7:10", "cube_owner"),
        ("XGID=-b----E-C---eE---c-e----AA:0:0:0:00:6:3:1:7:10", "turn"),
        ("XGID=-b----E-C---eE---c-e----AA:0:0:1:07:6:3:1:7:10", "dice"),
        ("XGID=-b----E-C---eE---c-e----AA:0:0:1:0:6:3:1:7:10", "dice"),
        ("XGID=-b----E-C---eE---c-e----AA:0:0:1:B:6:3:1:7:10", "dice"),
        ("XGID=-b----E-C---eE---c-e----AA:0:0:1:R:6:3:1:7:10", "dice"),
        ("XGID=-b----E-C---eE---c-e----AA:0:0:1:00:8:3:1:7:10", "score_upper"),
        ("XGID=-b----E-C---eE---c-e----AA:0:0:1:00:6:-3:1:7:10", "score_lower"),
        ("XGID=-b----E-C---eE---c-e----AA:0:0:1:00:6:3:2:7:10", "rules"),
        ("XGID=-b----E-C---eE---c-e----AA:0:0:1:00:0:0:4:0:10", "rules"),
        ("XGID=-b----E-C---eE---c-e----AA:0:0:1:00:6:3:1:-7:10", "match_length"),
        ("XGID=-b----E-C---eE---c-e----AA:0:0:1:00:6:3:1:7:16", "max_cube"),
    ],
)
def test_malformed_xgid_names_the_field(text: str, field: str) -> None:
    with pytest.raises(FormatError) as caught:
        decode_xgid(text)
    assert caught.value.field == field


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"turn": 0}, "turn"),
        ({"cube": 6}, "cube"),
        ({"cube_owner": 2}, "cube_owner"),
        ({"dice": (7, 1)}, "dice"),
        ({"doubled": True, "dice": (3, 1)}, "dice"),
        ({"match_length": 5, "jacoby": True}, "rules"),
        ({"crawford": True}, "crawford"),
        ({"match_length": 5, "score_upper": 6}, "score_upper"),
        ({"max_cube": 0}, "max_cube"),
        ({"position": "4HPwATDgc/ABMA"}, "position"),
    ],
)
def test_xgid_state_validates(changes: dict[str, Any], field: str) -> None:
    with pytest.raises(FormatError) as caught:
        replace(XgidState(Position.initial()), **changes)
    assert caught.value.field == field


# ----------------------------------------------------------------------------- gnubg oracle

_ORACLE_SCRIPT = """
import gnubg, json, sys
for xgid in json.loads({cases!r}):
    gnubg.command("set xgid " + xgid)
    print("ORACLE " + json.dumps([xgid, gnubg.positionid(), gnubg.matchid()]))
sys.stdout.flush()
"""


def _oracle_cases() -> list[XgidState]:
    """About two dozen varied XGIDs: the reference example plus seeded random ones."""
    rng = random.Random(107001)
    boards = [Position.initial(), decode_xgid(REFERENCE_XGID).position]
    boards += [
        Position.from_position_id(pid)
        for pid in ("5xcAACgAAAAAAA", "sPcOBgAW54YDIA", "3Nk2AEDadgLAIQ", "4LvBASLgc/AFIA", "jGfwATDgc/ABMA")
    ]
    cases = [decode_xgid(REFERENCE_XGID)]
    lengths = [0, 0, 0, 1, 3, 5, 7, 11, 25]
    for i in range(23):
        length = lengths[i % len(lengths)]
        if length:
            scores = [rng.randrange(length), rng.randrange(length)]
            if i % 3 == 0:
                scores[rng.randrange(2)] = length - 1  # a 1-away score: Crawford or post-Crawford
        else:
            scores = [rng.randrange(20), rng.randrange(20)]
        doubled = i % 7 == 3
        roll = (rng.randint(1, 6), rng.randint(1, 6)) if i % 2 and not doubled else (0, 0)
        cases.append(
            XgidState(
                position=boards[i % len(boards)],
                turn=1 if i % 4 < 2 else -1,
                cube=1 << rng.randrange(7),
                cube_owner=(i % 3) - 1,
                dice=roll,
                doubled=doubled,
                score_upper=scores[0],
                score_lower=scores[1],
                match_length=length,
                crawford=bool(length and i % 3 != 2),  # includes the flag at no 1-away score
                jacoby=bool(not length and i % 2),
                beavers=bool(not length and i % 3 == 0),
                max_cube=1 << rng.choice([0, 8, 10]),
            )
        )
    return cases


def _gnubg_expected(state: XgidState) -> str:
    """What scripted gnubg ends up with after ``set xgid``, given our conversion.

    Three things happen inside gnubg's ``set matchid`` step, not in the XGID reading: the swap
    prompt is answered yes; a pending double is stepped back; and in a Crawford game the cube
    value is refused ("The cube is disabled during the Crawford game") while the owner is kept.
    """
    position, match = xgid_to_gnubg(state, swap_to_bottom=True)
    if match.doubled:
        match = replace(match, doubled=False, turn=match.on_roll)
    if match.crawford:
        match = replace(match, cube=1)
    return encode_gnubgid(position, match)


@pytest.mark.gnubg
@pytest.mark.skipif(not GNUBG.exists(), reason="needs /usr/games/gnubg")
def test_conversion_agrees_with_gnubg(tmp_path: Path) -> None:
    cases = _oracle_cases()
    texts = [encode_xgid(state) for state in cases]
    assert len(set(texts)) == len(texts)
    assert {s.turn for s in cases} == {1, -1} and any(s.doubled for s in cases)
    assert any(s.dice != (0, 0) for s in cases) and any(s.is_money for s in cases)
    script = tmp_path / "oracle.py"
    script.write_text(_ORACLE_SCRIPT.format(cases=json.dumps(texts)))
    prefs = tmp_path / "prefs"
    prefs.mkdir()
    run = subprocess.run(
        [str(GNUBG), "-t", "-q", "-r", "-s", str(prefs), "-p", str(script)],
        capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
    )
    answers = {}
    for line in run.stdout.splitlines():
        if line.startswith("ORACLE "):
            xgid, position_id, match_id = json.loads(line[len("ORACLE "):])
            answers[xgid] = f"{position_id}:{match_id}"
    assert len(answers) == len(texts), run.stdout[-2000:] + run.stderr[-2000:]
    wrong = {t: (answers[t], _gnubg_expected(s)) for t, s in zip(texts, cases) if answers[t] != _gnubg_expected(s)}
    assert not wrong, wrong
