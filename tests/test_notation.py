"""Move notation: gnubg's text for every play (checked against gnubg's own `hint` strings), the
reader for every gnubg and FIBS spelling, and the FIBS ``move`` conversions."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bgbot.core.errors import FormatError, IllegalAction
from bgbot.core.position import Play, Position
from bgbot.formats.notation import format_fibs_move, format_play, parse_fibs_move, parse_play

from .conftest import board

OPENING = Position.initial()


def play_to(pos: Position, dice: tuple[int, int], after: Position) -> Play:
    """The legal play of ``pos`` with ``dice`` that leaves ``after`` (built by hand in a test)."""
    matches = [p for p, result in pos.play_results(dice) if result == after]
    assert len(matches) == 1, f"expected one legal play to {after!r}, found {len(matches)}"
    return matches[0]


def moved(pos: Position, *steps: tuple[int, int]) -> Position:
    """``pos`` after moving chequers straight from/to the given points (mover's numbering)."""
    return pos.apply(steps)


# --------------------------------------------------------------------------- gnubg as oracle


def test_every_play_is_written_as_gnubg_writes_it_and_read_back(
    legal_move_records: list[dict[str, Any]],
) -> None:
    """All 8645 records: format == gnubg's `hint` string, and gnubg's string parses to the play."""
    wrong_text: list[str] = []
    wrong_parse: list[str] = []
    plays = 0
    for record in legal_move_records:
        pos = Position.from_board(record["board"])
        dice = tuple(record["dice"])
        gnubg = dict(zip(record["moves"], record["move_strings"]))
        results = pos.play_results(dice)
        assert len(results) == len(gnubg), record["position_id"]
        if not results:
            assert parse_play("", pos, dice) == Play()
        for play, after in results:
            plays += 1
            want = gnubg[after.position_id()]
            text = format_play(play)
            if text != want and len(wrong_text) < 20:
                wrong_text.append(f"{record['position_id']} {dice}: ours {text!r}, gnubg {want!r}")
            for spelling in {want, text}:
                if parse_play(spelling, pos, dice) != play and len(wrong_parse) < 20:
                    wrong_parse.append(f"{record['position_id']} {dice}: {spelling!r}")
    assert plays > 100_000
    assert not wrong_text, "\n".join(wrong_text)
    assert not wrong_parse, "\n".join(wrong_parse)


# --------------------------------------------------------------------------- examples


def test_opening_31_makes_the_five_point() -> None:
    play = play_to(OPENING, (3, 1), moved(OPENING, (8, 5), (6, 5)))
    assert format_play(play) == "8/5 6/5"
    assert str(play) == "8/5 6/5"
    for spelling in ("8/5 6/5", "6/5 8/5", "8/5, 6/5", "  8/5   6/5  ", "8-5 6-5", "8 5 6 5"):
        assert parse_play(spelling, OPENING, (3, 1)) is play or parse_play(
            spelling, OPENING, (3, 1)
        ) == play, spelling
    assert Play.parse("8/5 6/5", OPENING, (1, 3)) == OPENING.legal_plays((1, 3))[
        OPENING.legal_plays((1, 3)).index(play)
    ]


def test_parse_returns_the_object_legal_plays_returns() -> None:
    plays = OPENING.legal_plays((3, 1))
    parsed = parse_play("8/5 6/5", OPENING, (3, 1))
    assert parsed in plays
    assert plays[plays.index(parsed)] == parsed


def test_running_65_is_one_chain() -> None:
    play = play_to(OPENING, (6, 5), moved(OPENING, (24, 13)))
    assert format_play(play) == "24/13"
    for spelling in ("24/13", "24/18/13", "24/18 18/13", "24-13", "24-18-13"):
        assert parse_play(spelling, OPENING, (6, 5)) == play, spelling
    with pytest.raises(IllegalAction, match="held by the opponent"):  # their 6 point is our 19
        parse_play("24/19/13", OPENING, (6, 5))


def test_doubles_group_identical_moves() -> None:
    play = play_to(OPENING, (3, 3), moved(OPENING, (8, 5), (8, 5), (6, 3), (6, 3)))
    assert format_play(play) == "8/5(2) 6/3(2)"
    for spelling in ("8/5(2) 6/3(2)", "8/5 8/5 6/3 6/3", "6/3(2), 8/5 (2)", "8/5(2) 6/3 6/3"):
        assert parse_play(spelling, OPENING, (3, 3)) == play, spelling


def test_entering_from_the_bar() -> None:
    pos = board({24: 1, 13: 5, 8: 3, 6: 5}, {24: 2, 13: 5, 8: 3, 6: 5}, mover_bar=1)
    play = play_to(pos, (3, 1), moved(pos, (25, 22), (6, 5)))
    assert format_play(play) == "bar/22 6/5"
    for spelling in ("bar/22 6/5", "b/22 6/5", "25/22 6/5", "BAR/22 6/5", "Bar-22 6-5", "ba/22 6/5"):
        assert parse_play(spelling, pos, (3, 1)) == play, spelling
    through = play_to(pos, (3, 1), moved(pos, (25, 21)))
    assert format_play(through) == "bar/21"
    assert parse_play("bar/24/21", pos, (3, 1)) == through


def test_bearing_off_from_the_six_with_42() -> None:
    pos = board({6: 1, 5: 3, 4: 3, 3: 3, 2: 3, 1: 2}, {1: 5, 2: 5, 3: 5})
    play = play_to(pos, (4, 2), moved(pos, (6, 0)))
    assert format_play(play) == "6/off"
    for spelling in ("6/off", "6/o", "6/0", "6/OFF", "6/of", "6/2/off", "6/4 4/off", "6-off"):
        assert parse_play(spelling, pos, (4, 2)) == play, spelling


def test_hit_on_the_way_keeps_the_intermediate_point() -> None:
    # Opponent blot on our 10 point (their 15), everything else as at the start.
    pos = board({24: 2, 13: 5, 8: 3, 6: 5}, {24: 2, 13: 5, 8: 3, 6: 4, 15: 1})
    hitting = play_to(pos, (5, 3), moved(pos, (13, 10), (10, 5)))
    quiet = play_to(pos, (5, 3), moved(pos, (13, 5)))
    assert format_play(hitting) == "13/10*/5"
    assert format_play(quiet) == "13/5"
    assert parse_play("13/10*/5", pos, (5, 3)) == hitting
    assert parse_play("13/10/5", pos, (5, 3)) == hitting  # '*' is optional
    assert parse_play("13/5", pos, (5, 3)) == quiet  # no hit written, the quiet route exists
    assert parse_play("13/8/5", pos, (5, 3)) == quiet
    single = play_to(pos, (5, 3), moved(pos, (13, 10), (13, 8)))
    assert format_play(single) == "13/10* 13/8"
    assert parse_play("13/10 13/8", pos, (5, 3)) == single


def test_compressed_move_whose_only_route_hits() -> None:
    # Our 8 point is made by the opponent (their 17), a blot sits on our 10 (their 15).
    pos = board({13: 2, 6: 13}, {17: 2, 15: 1, 1: 12})
    hitting = play_to(pos, (5, 3), moved(pos, (13, 10), (10, 5)))
    assert format_play(hitting) == "13/10*/5"
    assert parse_play("13/5", pos, (5, 3)) == hitting


def test_empty_move_only_when_nothing_can_be_played() -> None:
    closed = board({13: 5, 6: 8}, {1: 2, 2: 2, 3: 2, 4: 2, 5: 2, 6: 3}, mover_bar=2)
    assert closed.legal_plays((6, 6)) == []
    assert format_play(Play()) == ""
    assert parse_play("", closed, (6, 6)) == Play()
    assert parse_play("  ", closed, (6, 6)) == Play()
    with pytest.raises(IllegalAction, match="no play is possible"):
        parse_play("bar/19", closed, (6, 6))
    with pytest.raises(IllegalAction, match="empty move"):
        parse_play("", OPENING, (3, 1))


# --------------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    ("text", "field"),
    [
        ("8/", "move"),
        ("/8", "move"),
        ("8//5", "move"),
        ("8/5 6", "move"),
        ("8/5 6/", "move"),
        ("xyz", "move"),
        ("8/5 bars/22", "move"),
        ("*8/5", "move"),
        ("8/5)", "move"),
        ("8/5(2", "move"),
        ("(2) 8/5", "move"),
        ("8(2)", "move"),
        ("26/20", "point"),
        ("8/99", "point"),
        ("off/5", "point"),
        ("8/bar", "point"),
        ("8/5(0)", "repeat count"),
        ("8/5(5)", "repeat count"),
    ],
)
def test_malformed_text_raises_format_error_naming_the_field(text: str, field: str) -> None:
    with pytest.raises(FormatError) as caught:
        parse_play(text, OPENING, (3, 1))
    assert caught.value.field == field
    assert isinstance(caught.value, ValueError)


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("24/18", "pips"),
        ("24/23", "unplayed"),
        ("13/12 6/3", "held by the opponent"),
        ("5/8 6/5", "forward"),
        ("8/8", "forward"),
        ("bar/22 6/5", "no chequer"),
        ("7/4 6/5", "no chequer"),
        ("8/5 6/5 6/5", "more than"),
        ("8/5(2)", "pips"),
    ],
)
def test_well_formed_but_illegal_raises_illegal_action(text: str, why: str) -> None:
    with pytest.raises(IllegalAction) as caught:
        parse_play(text, OPENING, (3, 1))
    message = str(caught.value)
    assert why in message
    assert "8/5 6/5" in message and "24/20" in message  # the legal plays are listed


# --------------------------------------------------------------------------- FIBS


def test_fibs_move_both_directions() -> None:
    play = play_to(OPENING, (3, 1), moved(OPENING, (8, 5), (6, 5)))
    assert format_fibs_move(play, -1) == "8-5 6-5"
    assert format_fibs_move(play, 1) == "17-20 19-20"
    assert parse_fibs_move("move 8-5 6-5", OPENING, (3, 1), -1) == play
    assert parse_fibs_move("17-20 19-20", OPENING, (3, 1), 1) == play
    assert parse_fibs_move("MOVE 19-20 17-20", OPENING, (3, 1), 1) == play
    with pytest.raises(IllegalAction, match="17-20 19-20"):  # listed in FIBS notation
        parse_fibs_move("move 8-5 6-5", OPENING, (3, 1), 1)


def test_fibs_bar_and_off() -> None:
    pos = board({24: 1, 13: 5, 8: 3, 6: 5}, {24: 2, 13: 5, 8: 3, 6: 5}, mover_bar=1)
    enter = play_to(pos, (3, 1), moved(pos, (25, 22), (6, 5)))
    assert format_fibs_move(enter, -1) == "bar-22 6-5"
    assert format_fibs_move(enter, 1) == "bar-3 19-20"
    assert parse_fibs_move("move bar-3 19-20", pos, (3, 1), 1) == enter
    assert parse_fibs_move("0-3 19-20", pos, (3, 1), 1) == enter  # 0 is the bar moving 1->24
    assert parse_fibs_move("25-22 6-5", pos, (3, 1), -1) == enter

    home = board({6: 1, 5: 3, 4: 3, 3: 3, 2: 3, 1: 2}, {1: 5, 2: 5, 3: 5})
    off = play_to(home, (4, 2), moved(home, (6, 0)))
    up = format_fibs_move(off, 1)
    assert up.startswith("19-") and up.endswith("-off") and len(up.split()) == 2
    assert parse_fibs_move(up, home, (4, 2), 1) == off
    assert parse_fibs_move("19-off", home, (4, 2), 1) == off
    assert parse_fibs_move("19-25", home, (4, 2), 1) == off  # 25 is off moving 1->24
    assert parse_fibs_move("6-off", home, (4, 2), -1) == off


@pytest.mark.parametrize("direction", [0, 2, -25])
def test_fibs_direction_must_be_plus_or_minus_one(direction: int) -> None:
    play = OPENING.legal_plays((3, 1))[0]
    with pytest.raises(FormatError) as caught:
        format_fibs_move(play, direction)
    assert caught.value.field == "direction"
    with pytest.raises(FormatError):
        parse_fibs_move("8-5 6-5", OPENING, (3, 1), direction)


# --------------------------------------------------------------------------- properties

DICE = st.tuples(st.integers(1, 6), st.integers(1, 6))


@st.composite
def position_roll_play(draw: st.DrawFn) -> tuple[Position, tuple[int, int], Play]:
    """A position reached by random legal plays from the start, a roll, and one legal play."""
    rng = draw(st.randoms(use_true_random=False))
    pos = OPENING
    for _ in range(draw(st.integers(0, 60))):
        plays = pos.legal_plays((rng.randint(1, 6), rng.randint(1, 6)))
        if plays:
            pos = pos.apply(rng.choice(plays))
        if pos.is_game_over():
            break
        pos = pos.swapped()
    dice = draw(DICE)
    plays = pos.legal_plays(dice)
    if not plays:
        return pos, dice, Play()
    return pos, dice, plays[draw(st.integers(0, len(plays) - 1))]


@settings(max_examples=250, deadline=None)
@given(position_roll_play())
def test_every_spelling_of_a_random_play_reads_back(case: tuple[Position, tuple[int, int], Play]) -> None:
    pos, dice, play = case
    text = format_play(play)
    assert parse_play(text, pos, dice) == play
    assert Play.parse(str(play), pos, dice) == play
    # One pair per die (gnubg's plain form), in playing order and reversed.
    plain = [f"{a}/{b}" for a, b, _ in play]
    assert parse_play(" ".join(plain), pos, dice) == play
    assert parse_play(", ".join(reversed(plain)), pos, dice) == play
    # Upper case with FIBS dashes.
    assert parse_play(text.upper().replace("/", "-"), pos, dice) == play
    for direction in (1, -1):
        assert parse_fibs_move(format_fibs_move(play, direction), pos, dice, direction) == play


@settings(max_examples=150, deadline=None)
@given(position_roll_play(), DICE)
def test_a_play_read_for_another_roll_is_refused_or_moves_the_same_chequers(
    case: tuple[Position, tuple[int, int], Play], other: tuple[int, int]
) -> None:
    """Text read for another roll gives an IllegalAction or a play from that roll's legal plays
    that moves the same chequers: the same play when its result is reachable with that roll (a
    compressed move may pick up hits on its only route otherwise)."""
    pos, dice, play = case
    legal = pos.legal_plays(other)
    try:
        parsed = parse_play(format_play(play), pos, other)
    except IllegalAction:
        assert (not play and legal) or pos.apply(play) not in {pos.apply(p) for p in legal}
        return
    if not play:
        assert parsed == Play() and legal == []
        return
    assert parsed in legal
    assert pos.apply(parsed).mover == pos.apply(play).mover
    same = [p for p in legal if pos.apply(p) == pos.apply(play)]
    if same:
        assert parsed == same[0]
