"""gnubg Match ID and GNU BG ID codec: gnubg's recorded ids, round trips, malformed input."""

from __future__ import annotations

import base64
import json
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bgbot.core.errors import FormatError
from bgbot.core.position import Position
from bgbot.formats.gnubgid import (
    GameState,
    MatchState,
    decode_gnubgid,
    decode_match_id,
    encode_gnubgid,
    encode_match_id,
)

from .conftest import TESTDATA

IDS = TESTDATA / "ids.jsonl"


def _records() -> list[dict[str, Any]]:
    if not IDS.exists():
        return []
    with IDS.open() as handle:
        return [json.loads(line) for line in handle if line.strip()]


RECORDS = _records()
needs_ids = pytest.mark.skipif(not RECORDS, reason="shared testdata ids.jsonl not found")


def _fields(state: MatchState) -> dict[str, Any]:
    """The decoded state in ids.jsonl's spelling (ints for flags, lists for pairs)."""
    return {
        "match_length": state.match_length,
        "score": list(state.score),
        "cube": state.cube,
        "cube_owner": state.cube_owner,
        "on_roll": state.on_roll,
        "turn": state.turn,
        "crawford": int(state.crawford),
        "game_state": int(state.game_state),
        "doubled": int(state.doubled),
        "resigned": state.resigned,
        "dice": list(state.dice),
        "jacoby": int(state.jacoby),
    }


def _id_from_bits(**fields: int) -> str:
    """A Match ID built straight from the documented bit table (reference §4.2), unchecked."""
    layout = {
        "cube_log": (0, 4), "owner": (4, 2), "move": (6, 1), "crawford": (7, 1),
        "gs": (8, 3), "turn": (11, 1), "doubled": (12, 1), "resigned": (13, 2),
        "die1": (15, 3), "die2": (18, 3), "length": (21, 15), "score0": (36, 15),
        "score1": (51, 15), "no_jacoby": (66, 1), "extra": (67, 5),
    }
    defaults = {"owner": 3, "gs": 1}
    bits = 0
    for name, (offset, width) in layout.items():
        value = fields.get(name, defaults.get(name, 0))
        assert 0 <= value < 1 << width
        bits |= value << offset
    return base64.b64encode(bits.to_bytes(9, "little")).decode()


# ----------------------------------------------------------------------------- gnubg's ids


@needs_ids
def test_every_recorded_gnubgid_decodes_to_the_recorded_fields_and_board() -> None:
    wrong = []
    for record in RECORDS:
        position, state = decode_gnubgid(record["gnubgid"])
        if _fields(state) != record["match"] or position.to_board() != record["board"]:
            wrong.append(record["gnubgid"])
    assert not wrong, f"{len(wrong)} of {len(RECORDS)} differ, e.g. {wrong[:3]}"


@needs_ids
def test_every_recorded_match_id_decodes_alone() -> None:
    for record in RECORDS:
        assert _fields(decode_match_id(record["match_id"])) == record["match"], record["match_id"]


@needs_ids
def test_every_recorded_state_encodes_back_to_the_exact_ids() -> None:
    wrong = []
    for record in RECORDS:
        m = record["match"]
        state = MatchState(
            cube=m["cube"], cube_owner=m["cube_owner"], on_roll=m["on_roll"],
            crawford=bool(m["crawford"]), game_state=GameState(m["game_state"]), turn=m["turn"],
            doubled=bool(m["doubled"]), resigned=m["resigned"], dice=tuple(m["dice"]),
            match_length=m["match_length"], score=tuple(m["score"]), jacoby=bool(m["jacoby"]),
        )
        position = Position.from_board(record["board"])
        if encode_match_id(state) != record["match_id"] or encode_gnubgid(position, state) != record["gnubgid"]:
            wrong.append(record["gnubgid"])
    assert not wrong, f"{len(wrong)} of {len(RECORDS)} differ, e.g. {wrong[:3]}"


@needs_ids
def test_recorded_ids_cover_the_interesting_cases() -> None:
    """The 100% above means something only if the data spans the fields."""
    states = [decode_match_id(r["match_id"]) for r in RECORDS]
    assert {s.game_state for s in states} == set(GameState)
    assert {s.cube_owner for s in states} == {-1, 0, 1}
    assert any(s.jacoby for s in states) and any(s.doubled for s in states)
    assert {s.resigned for s in states} == {0, 1, 2, 3}
    assert any(s.turn != s.on_roll for s in states)
    assert max(s.cube for s in states) == 1 << 15 and max(s.match_length for s in states) == 32767


@pytest.mark.parametrize(
    ("match_id", "expected"),
    [
        # reference/gnubg-interfaces.md §4.2 worked examples, as gnubg described them.
        ("cAkAAAAAAAAA", dict(cube=1, cube_owner=-1, on_roll=1, turn=1, match_length=0, jacoby=True)),
        ("cAkPAAAAAAAA", dict(cube=1, cube_owner=-1, on_roll=1, dice=(6, 3), jacoby=True)),
        ("QYkqASAAIAAA", dict(cube=2, cube_owner=0, on_roll=1, turn=1, dice=(5, 2), match_length=9, score=(2, 4))),
        ("8AngADAAMAAE", dict(cube=1, cube_owner=-1, on_roll=1, crawford=True, match_length=7, score=(3, 6), jacoby=False)),
        ("sIFtACAAAAAE", dict(cube_owner=-1, on_roll=0, turn=0, crawford=True, dice=(3, 3), match_length=3, score=(2, 0))),
        ("USFgAAAAAAAE", dict(cube=2, cube_owner=1, on_roll=1, turn=0, resigned=1)),
    ],
)
def test_reference_worked_examples(match_id: str, expected: dict[str, Any]) -> None:
    state = decode_match_id(match_id)
    for name, value in expected.items():
        assert getattr(state, name) == value, name
    assert state.game_state is GameState.PLAYING
    assert encode_match_id(state) == match_id


def test_jacoby_bit_66_means_jacoby_off() -> None:
    money_jacoby = MatchState(jacoby=True)
    match_play = MatchState(match_length=3)
    assert encode_match_id(money_jacoby) == _id_from_bits(no_jacoby=0)
    assert encode_match_id(match_play) == _id_from_bits(length=3, no_jacoby=1)
    assert encode_match_id(match_play).endswith("E")


def test_dice_are_stored_higher_first() -> None:
    state = MatchState(dice=(2, 5))
    assert state.dice == (5, 2)
    assert encode_match_id(state) == _id_from_bits(die1=5, die2=2, no_jacoby=1)
    # a hand-made id with the lower die first still reads, as the same roll
    assert decode_match_id(_id_from_bits(die1=2, die2=5)).dice == (5, 2)


# ----------------------------------------------------------------------------- round trips


@st.composite
def match_states(draw: st.DrawFn) -> MatchState:
    length = draw(st.sampled_from([0, 1, 3, 7, 25, 32767]) | st.integers(0, 32767))
    top = length if length else 32767
    return MatchState(
        cube=1 << draw(st.integers(0, 15)),
        cube_owner=draw(st.integers(-1, 1)),
        on_roll=draw(st.integers(0, 1)),
        crawford=draw(st.booleans()) if length else False,
        game_state=draw(st.sampled_from(list(GameState))),
        turn=draw(st.integers(0, 1)),
        doubled=draw(st.booleans()),
        resigned=draw(st.integers(0, 3)),
        dice=draw(st.just((0, 0)) | st.tuples(st.integers(1, 6), st.integers(1, 6))),
        match_length=length,
        score=(draw(st.integers(0, top)), draw(st.integers(0, top))),
        jacoby=draw(st.booleans()),
    )


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


@given(match_states())
@settings(max_examples=400)
def test_match_id_round_trip(state: MatchState) -> None:
    text = encode_match_id(state)
    assert len(text) == 12
    assert decode_match_id(text) == state


@given(positions(), match_states())
@settings(max_examples=200)
def test_gnubgid_round_trip(position: Position, state: MatchState) -> None:
    text = encode_gnubgid(position, state)
    assert text == f"{position.position_id()}:{encode_match_id(state)}"
    assert decode_gnubgid(text) == (position, state)
    assert decode_gnubgid(f"  GNUBGID {text}\n") == (position, state)


@given(st.integers(0, (1 << 67) - 1))
@settings(max_examples=400)
def test_any_readable_id_reencodes_to_itself(bits: int) -> None:
    text = base64.b64encode(bits.to_bytes(9, "little")).decode()
    try:
        state = decode_match_id(text)
    except FormatError:
        return
    high, low = (bits >> 15) & 7, (bits >> 18) & 7
    if high >= low:
        assert encode_match_id(state) == text


def test_swapped_exchanges_the_seats() -> None:
    state = MatchState(cube=4, cube_owner=0, on_roll=1, turn=0, doubled=True, match_length=9, score=(2, 5))
    other = state.swapped()
    assert (other.cube_owner, other.on_roll, other.turn, other.score) == (1, 0, 1, (5, 2))
    assert other.swapped() == state
    assert MatchState().swapped().cube_owner == -1


# ----------------------------------------------------------------------------- malformed


@pytest.mark.parametrize(
    ("text", "field"),
    [
        ("cAkAAAAAAAA", "match id"),  # 11 characters
        ("cAkAAAAAAAAAA", "match id"),  # 13
        ("", "match id"),
        ("cAkAAAAAAA-A", "match id"),  # not in the base64 alphabet
        ("cAk_AAAAAAAA", "match id"),
        ("cAkAAAAAAA==", "match id"),  # padding inside
        (_id_from_bits(extra=1), "match id"),  # bits beyond 66
        (_id_from_bits(owner=2), "cube_owner"),
        (_id_from_bits(die1=7, die2=1), "dice"),
        (_id_from_bits(die1=3, die2=0), "dice"),
        (_id_from_bits(gs=5), "game_state"),
        (_id_from_bits(length=5, score0=6), "score"),
        (_id_from_bits(crawford=1), "crawford"),  # no Crawford game in money play
    ],
)
def test_malformed_match_id_names_the_field(text: str, field: str) -> None:
    with pytest.raises(FormatError) as caught:
        decode_match_id(text)
    assert caught.value.field == field
    assert isinstance(caught.value, ValueError)


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"cube": 3}, "cube"),
        ({"cube": 0}, "cube"),
        ({"cube": 1 << 16}, "cube"),
        ({"cube_owner": 2}, "cube_owner"),
        ({"on_roll": 2}, "on_roll"),
        ({"turn": -1}, "turn"),
        ({"game_state": 5}, "game_state"),
        ({"resigned": 4}, "resigned"),
        ({"dice": (7, 1)}, "dice"),
        ({"dice": (0, 3)}, "dice"),
        ({"dice": (1, 2, 3)}, "dice"),
        ({"match_length": 32768}, "match_length"),
        ({"match_length": -1}, "match_length"),
        ({"score": (0, 32768)}, "score"),
        ({"match_length": 7, "score": (8, 0)}, "score"),
        ({"crawford": True}, "crawford"),
        ({"doubled": 2}, "doubled"),
    ],
)
def test_match_state_validates_ranges(changes: dict[str, Any], field: str) -> None:
    with pytest.raises(FormatError) as caught:
        replace(MatchState(), **changes)
    assert caught.value.field == field


def test_match_state_accepts_the_extremes() -> None:
    state = MatchState(cube=1 << 15, match_length=32767, score=(32767, 32767), dice=(6, 6), resigned=3)
    assert decode_match_id(encode_match_id(state)) == state


# ----------------------------------------------------------------------------- GNU BG ID forms


def test_gnubgid_forms_gnubg_accepts() -> None:
    want = (Position.from_position_id("4HPwATDgc/ABUA"), decode_match_id("8AngADAAMAAE"))
    assert decode_gnubgid("4HPwATDgc/ABUA:8AngADAAMAAE") == want
    assert decode_gnubgid("  4HPwATDgc/ABUA:8AngADAAMAAE \n") == want
    assert decode_gnubgid("GNUBGID 4HPwATDgc/ABUA:8AngADAAMAAE") == want
    assert decode_gnubgid("gnubgid: 4HPwATDgc/ABUA:8AngADAAMAAE") == want
    # gnubg's own board caption, pasted
    caption = " GNU Backgammon  Position ID: 4HPwATDgc/ABUA\n                 Match ID   : 8AngADAAMAAE\n"
    assert decode_gnubgid(caption) == want


def test_gnubgid_position_is_seen_from_the_player_on_roll() -> None:
    # gnubg's reference example: player 1 on roll with one chequer on the bar (second half).
    position, state = decode_gnubgid("4HPwATDgc/ABUA:8AngADAAMAAE")
    assert state.on_roll == 1
    assert position.mover[24] == 1 and position.mover[23] == 1
    assert position.opponent[24] == 0 and position.opponent[23] == 2


@pytest.mark.parametrize(
    ("text", "field"),
    [
        ("4HPwATDgc/ABUA", "gnubgid"),
        ("8AngADAAMAAE", "gnubgid"),
        ("4HPwATDgc/AB:8AngADAAMAAE", "position id"),
        ("4HPwATDgc/ABUA:8AngADAAMAA", "match id"),
        ("4HPwATDgc/ABUA:8AngADAAMAAEE", "match id"),
        ("4HPwATDgc/ABUA:" + _id_from_bits(owner=2), "cube_owner"),
        ("", "gnubgid"),
    ],
)
def test_malformed_gnubgid_names_the_field(text: str, field: str) -> None:
    with pytest.raises(FormatError) as caught:
        decode_gnubgid(text)
    assert caught.value.field == field
