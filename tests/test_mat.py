"""Jellyfish .mat files: gnubg's layout byte for byte, the reader's variants and its errors."""

from __future__ import annotations

import datetime as dt
import functools
import io
import json
import random
import re
import subprocess
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bgbot import FormatError, Rules
from bgbot.core.game import (
    Action,
    AutoDoubled,
    Beavered,
    Doubled,
    Dropped,
    Game,
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
from bgbot.core.match import Match
from bgbot.core.notation import parse_play
from bgbot.core.position import Position
from bgbot.formats.mat import (
    MatchRecord,
    MatFormatError,
    MatVisitor,
    format_match,
    parse_match,
    read_match,
    sanitize_name,
    walk_match,
    write_match,
)
from bgbot.players.base import Context, CubeOwner, TakeDecision
from bgbot.players.random_player import RandomPlayer

from .conftest import SHARED, TESTDATA

MATCHES = TESTDATA / "matches"
INDEX = json.loads((MATCHES / "INDEX.json").read_text()) if (MATCHES / "INDEX.json").exists() else []
KINDS = {"single": 1, "gammon": 2, "backgammon": 3}


def index_params() -> list[Any]:
    if not INDEX:
        return [pytest.param(None, marks=pytest.mark.skip(reason=f"no reference data in {MATCHES}"))]
    return [pytest.param(entry, id=entry["mat"]) for entry in INDEX]


def body_lines(text: str) -> list[str]:
    """The lines of a match file without its ``;`` header lines (gnubg stamps today's date)."""
    return [line for line in text.split("\n") if not line.startswith(";")]


SUBMOVES = re.compile(r"(\d\d: )((?:\d+/\d+\*? ?)+)")


def moves_unordered(text: str) -> list[str]:
    """`body_lines` with each turn's sub-moves sorted and its hits listed by point (gnubg sorts
    the sub-moves of an imported move; the ``*`` follows the first landing on a blot)."""

    def canonical(found: re.Match[str]) -> str:
        tokens = found.group(2).split()
        plain = sorted(token.rstrip("*") for token in tokens)
        hits = sorted(token.rstrip("*").split("/")[1] for token in tokens if token.endswith("*"))
        trailing = len(found.group(2)) - len(found.group(2).rstrip())
        return f"{found.group(1)}[{','.join(plain)}|{','.join(hits)}]" + " " * trailing

    return [SUBMOVES.sub(canonical, line) for line in body_lines(text)]


def reference_section(start: str, end: str) -> list[str]:
    """The ``` blocks of the reference between two headings (verbatim gnubg output)."""
    path = SHARED / "reference" / "gnubg-interfaces.md"
    if not path.exists():
        pytest.skip(f"{path} not found (set BGBOT_SHARED)")
    doc = path.read_text()
    section = doc[doc.index(start):doc.index(end)]
    return re.findall(r"```\n(.*?)```", section, re.S)


# ============================================================== gnubg's reference matches


@pytest.mark.parametrize("entry", index_params())
def test_reference_match_replays_legally_with_gnubgs_results(entry: dict[str, Any]) -> None:
    record = read_match(io.StringIO((MATCHES / entry["mat"]).read_text()))
    players = entry["players"]
    assert record.length == entry["length"]
    assert list(record.names) == players
    assert record.final_score == tuple(entry["final_score"])
    assert len(record.games) == entry["games"]
    running = [0, 0]
    for game, want in zip(record.games, entry["per_game"], strict=True):
        outcome = game.outcome
        assert outcome is not None
        assert game.number == want["game"]
        assert list(game.score) == want["score_before"] == running
        assert game.crawford == want["crawford_game"]
        assert players[outcome.winner] == want["winner"]
        assert outcome.points == want["points"]
        assert outcome.ending == want["ending"]
        assert outcome.kind == KINDS[want["result"]]
        assert outcome.cube == want["final_cube"]
        offers = [a for a in game.actions if isinstance(a, (Doubled, Beavered, Raccooned))]
        assert len(offers) == want["doubles"]
        assert sum(isinstance(a, Taken) for a in game.actions) == want["takes"]
        assert sum(isinstance(a, Dropped) for a in game.actions) == want["drops"]
        running[outcome.winner] += outcome.points
    crawford = [g.number for g in record.games if g.crawford]
    assert crawford == ([entry["crawford_game"]] if entry["crawford_game"] else [])


@pytest.mark.parametrize("entry", index_params())
def test_reference_match_round_trips_byte_for_byte(entry: dict[str, Any]) -> None:
    text = (MATCHES / entry["mat"]).read_text()
    written = format_match(read_match(io.StringIO(text)))
    assert body_lines(written) == body_lines(text)
    assert written == text  # gnubg wrote only EventDate, which the record keeps


def test_reference_examples_round_trip_byte_for_byte() -> None:
    blocks = reference_section("### 5.2", "### 5.4")
    assert len(blocks) == 3  # the 3-point match, the 5-point match, the beaver excerpt
    for block in blocks:
        assert format_match(parse_match(block)) == block


def test_reference_five_point_example_results() -> None:
    record = parse_match(reference_section("### 5.3", "### 5.4")[0])
    assert record.tags == {"Site": "Loopback Club", "Event": "Spec Test", "Round": "1",
                           "EventDate": "2026.11.29", "Transcriber": "gnubg"}
    assert record.comments == ["A short test match"]
    assert record.names == ("Alice", "Bob")
    summary = [(g.winner, g.points, g.ending, g.crawford) for g in record.games]
    # gnubg's log: drops in games 1, 3, 4; resignations in games 2, 5, 6; game 6 is Crawford.
    assert summary == [(1, 1, "drop", False), (0, 2, "resign", False), (0, 1, "drop", False),
                       (1, 1, "drop", False), (1, 2, "resign", False), (1, 1, "resign", True)]
    assert record.final_score == (3, 5)


def test_reference_beaver_excerpt_reads_beaver_raccoon_and_the_implied_take() -> None:
    record = parse_match(reference_section("### 5.3", "### 5.4")[1])
    game = record.games[0]
    cube = [a for a in game.actions if isinstance(a, (Doubled, Beavered, Raccooned, Taken))]
    assert cube == [Doubled(0, 2), Beavered(1, 4), Raccooned(0, 8), Taken(1, 8)]
    assert game.outcome is None and record.final_score == (0, 0)


def test_reference_money_session_replays_gnubgs_default_beaver_chain_r24() -> None:
    # m12 game 1: gnubgA doubles, gnubgB beavers, gnubgA raccoons, gnubgB beavers again (gnubg's
    # `set beavers 3`); gnubgA's take is not written; gnubg leaves the cube with gnubgB.
    if not (MATCHES / "m12-money-nojacoby.mat").exists():
        pytest.skip(f"no reference data in {MATCHES}")
    game = read_match(io.StringIO((MATCHES / "m12-money-nojacoby.mat").read_text())).games[0]
    cube = [a for a in game.actions if isinstance(a, (Doubled, Beavered, Raccooned, Taken))]
    assert cube[:5] == [Doubled(0, 2), Beavered(1, 4), Raccooned(0, 8), Raccooned(1, 16),
                        Taken(0, 16)]
    assert game.outcome is not None and game.outcome.cube == 16


# ============================================================== gnubg's layout, from our games

HEAD = ' Game 1\n gnubg : 0                      root : 0\n  1)                             63: 24/18 13/10 \n'
OPEN = "open 3 6;move 24/18 13/10"
SECOND = ";roll 5 3;move 13/8 13/10"
# Each case: our actions, and what gnubg 1.07.001 wrote for the same actions in a money session
# (`set beavers 3`, both players human, `set dice`, `move`, `double`, `beaver`, `take`, `drop`,
# `resign`, `accept`, then `export match mat`; a beaver is `beaver` again for the raccoon).
GNUBG_LAYOUTS = {
    "seat 0 doubles, beaver, take": (
        OPEN + ";double;beaver;take" + SECOND,
        HEAD + "  2)  Doubles => 2                Beavers => 4\n  3) 53: 13/8 13/10              "),
    "seat 1 doubles, beaver, take": (
        OPEN + SECOND + ";double;beaver;take" + SECOND,
        HEAD + "  2) 53: 13/8 13/10               Doubles => 2\n"
        "  3)  Beavers => 4               53: 13/8 13/10 \n"),
    "seat 1 doubles, beaver, raccoon, take": (
        OPEN + SECOND + ";double;beaver;raccoon;take" + SECOND,
        HEAD + "  2) 53: 13/8 13/10               Doubles => 2\n"
        "  3)  Beavers => 4                Beavers => 8\n"
        "  4)                             53: 13/8 13/10 \n"),
    "seat 0 doubles, beaver, raccoon, take": (
        OPEN + ";double;beaver;raccoon;take" + SECOND,
        HEAD + "  2)  Doubles => 2                Beavers => 4\n"
        "  3)  Beavers => 8                 \n  4) 53: 13/8 13/10              "),
    "beaver dropped by seat 0": (
        OPEN + ";double;beaver;drop",
        HEAD + "  2)  Doubles => 2                Beavers => 4\n"
        "  3)  Drops                       Wins 2 points \n\n"),
    "raccoon dropped by seat 1": (
        OPEN + ";double;beaver;raccoon;drop",
        HEAD + "  2)  Doubles => 2                Beavers => 4\n"
        "  3)  Beavers => 8                Drops\n      Wins 4 points\n\n"),
    "beaver dropped by seat 1": (
        OPEN + SECOND + ";double;beaver;drop",
        HEAD + "  2) 53: 13/8 13/10               Doubles => 2\n"
        "  3)  Beavers => 4                Drops\n      Wins 2 points\n\n"),
    "raccoon dropped by seat 0": (
        OPEN + SECOND + ";double;beaver;raccoon;drop",
        HEAD + "  2) 53: 13/8 13/10               Doubles => 2\n"
        "  3)  Beavers => 4                Beavers => 8\n"
        "  4)  Drops                       Wins 4 points \n\n"),
    # gnubg's default `set beavers 3`: double, beaver, raccoon, beaver (the doubler's take is not
    # written after an odd number of redoubles; the drop pays 8 to the last redoubler).
    "seat 0 doubles, beaver, raccoon, beaver, take": (
        OPEN + ";double;beaver;raccoon;raccoon;take" + SECOND,
        HEAD + "  2)  Doubles => 2                Beavers => 4\n"
        "  3)  Beavers => 8                Beavers => 16\n  4) 53: 13/8 13/10              "),
    "seat 0 drops the fourth cube of a chain": (
        OPEN + ";double;beaver;raccoon;raccoon;drop",
        HEAD + "  2)  Doubles => 2                Beavers => 4\n"
        "  3)  Beavers => 8                Beavers => 16\n"
        "  4)  Drops                       Wins 8 points \n\n"),
    "seat 0 resigns before rolling": (
        OPEN + ";resign 1;accept",
        HEAD + "                                  Wins 1 point\n\n"),
    "seat 1 resigns before rolling": (
        OPEN + SECOND + ";resign 1;accept",
        HEAD + "  2) 53: 13/8 13/10              \n      Wins 1 point\n\n"),
    "seat 0 rolls, then resigns a gammon": (
        OPEN + ";roll 5 3;resign 2;accept",
        HEAD + "  2) 53:                         Wins 2 points\n\n"),
    "seat 1 rolls, then resigns": (
        OPEN + SECOND + ";roll 4 2;resign 1;accept",
        HEAD + "  2) 53: 13/8 13/10              42: \n      Wins 1 point\n\n"),
    # gnubg counts the pending double when the doubled player resigns ("Wins 2 points") although
    # the score moves by 1; we write the points scored, which gnubg's import reads back as 1.
    "seat 1 resigns instead of answering a double": (
        OPEN + ";double;resign 1;accept",
        HEAD + "  2)  Doubles => 2               \n      Wins 1 point\n\n"),
    "seat 0 resigns instead of answering a double": (
        OPEN + SECOND + ";double;resign 1;accept",
        HEAD + "  2) 53: 13/8 13/10               Doubles => 2\n"
        "                                  Wins 1 point\n\n"),
}


def run_script(script: str, rules: Rules, length: int = 0) -> Game:
    """Drive a core Game with ``open d0 d1``, ``roll d1 d2``, ``move TEXT``, ``resign V`` and
    the names of its answer methods (``accept`` = accept the resignation)."""
    game = Game(rules, length)
    for command in script.split(";"):
        word, _, args = command.partition(" ")
        if word == "open":
            game.opening_roll(*map(int, args.split()))
        elif word == "roll":
            game.roll(tuple(map(int, args.split())))
        elif word == "move":
            assert game.dice is not None
            game.move(parse_play(args, game.position, game.dice))
        elif word == "resign":
            seat = game.seat_to_act
            assert seat is not None
            game.resign(seat, int(args))
        else:
            getattr(game, {"accept": "accept_resignation", "reject": "reject_resignation"}
                    .get(word, word))()
    return game


def one_game_text(game: Game, names: tuple[str, str] = ("gnubg", "root")) -> str:
    record = MatchRecord(game.match_length, names, game.rules)
    record.add_game(game)
    text = format_match(record)
    return text[text.index(" Game 1"):]


@pytest.mark.parametrize("case", sorted(GNUBG_LAYOUTS))
def test_writer_matches_gnubgs_layout_for_cube_and_resignations(case: str) -> None:
    script, gnubg = GNUBG_LAYOUTS[case]
    game = run_script(script, Rules(beavers=True, raccoons=True))
    assert moves_unordered(one_game_text(game)) == moves_unordered(gnubg)


@pytest.mark.parametrize("case", sorted(GNUBG_LAYOUTS))
def test_reader_replays_gnubgs_layout_into_the_same_actions(case: str) -> None:
    script, gnubg = GNUBG_LAYOUTS[case]
    game = run_script(script, Rules(beavers=True, raccoons=True))
    record = parse_match(' 0 point match\n\n' + gnubg)
    read = record.games[0]
    assert [(type(a), getattr(a, "seat", None)) for a in read.actions] == [
        (type(a), getattr(a, "seat", None)) for a in game.history
    ]
    assert read.outcome == game.outcome


def test_writer_leaves_the_left_column_empty_when_seat_1_opens() -> None:
    game = run_script("open 2 5;move 13/8 13/11", Rules())
    line = one_game_text(game).split("\n")[2]
    assert line in ("  1)" + " " * 29 + "52: 13/11 13/8 ", "  1)" + " " * 29 + "52: 13/8 13/11 ")


def test_writer_dice_larger_first_and_trailing_spaces() -> None:
    game = run_script("open 3 1;move 8/5 6/5;roll 1 6;move 24/18 24/23;roll 4 4;"
                      "move 13/9 13/9 8/4 8/4;roll 4 4;move 13/9 13/9 6/2 6/2", Rules())
    lines = moves_unordered(one_game_text(game))
    assert lines[2] == moves_unordered(f"  1) {'31: 8/5 6/5':<27} 61: 24/18 24/23 ")[0]
    # four sub-moves: no trailing space; the left column is padded to 27 plus one space
    assert lines[3] == moves_unordered(f"  2) {'44: 13/9 13/9 8/4 8/4':<27} 44: 13/9 13/9 6/2 6/2")[0]


def test_writer_dance_is_the_dice_alone() -> None:
    # Seat 0 has a chequer on the bar against a closed board.
    closed = Position([2] * 6 + [0] * 17 + [3, 0], [0] * 5 + [14] + [0] * 18 + [1])
    game = Game.start_from(closed, 0, dice=(5, 6))
    assert game.legal_plays() == []
    game.move(parse_play("", game.position, (5, 6)))
    assert one_game_text(game, ("A", "B")).endswith("\n  1) 65: " + " " * 24)


def test_writer_played_out_wins_for_either_winner() -> None:
    last = Position([0] * 5 + [15] + [0] * 19, [1] + [0] * 24)  # one chequer left on the ace
    for seat, ending in ((0, "  1) 21: 1/0" + " " * 21 + "\n      Wins 2 points\n\n"),
                         (1, "  1)" + " " * 29 + "21: 1/0 \n" + " " * 34 + "Wins 2 points\n\n")):
        game = Game.start_from(last, seat, dice=(2, 1))
        game.move(parse_play("1/off", game.position, (2, 1)))
        assert game.outcome is not None and game.outcome.points == 2  # a gammon
        assert one_game_text(game).endswith(ending)


def test_writer_drops_by_either_seat_and_the_empty_line_after() -> None:
    dropped_by_1 = one_game_text(run_script(OPEN + SECOND + ";double;drop", Rules()))
    assert dropped_by_1.endswith(" Doubles => 2\n  3)  Drops                       Wins 1 point \n\n")
    dropped_by_0 = one_game_text(run_script(OPEN + ";double;drop", Rules()))
    assert dropped_by_0.endswith("  2)  Doubles => 2                Drops\n      Wins 1 point\n\n")


def test_writer_seat_1_resigning_right_after_winning_the_opening_is_readable() -> None:
    # gnubg writes "  1) 63:       Wins 1 point", which its own import cannot read.
    game = run_script("open 3 6;resign 1;accept", Rules())
    text = one_game_text(game)
    assert text.endswith("  1)" + " " * 29 + "63: \n      Wins 1 point\n\n")
    back = parse_match(" 0 point match\n\n" + text).games[0]
    assert back.outcome == game.outcome


def test_reader_understands_gnubgs_opening_resignation_layout() -> None:
    text = " 0 point match\n\n Game 1\n gnubg : 0                      root : 0\n" \
           "  1) 63:       Wins 1 point\n\n"
    game = parse_match(text).games[0]
    assert game.outcome is not None and (game.winner, game.ending) == (0, "resign")
    assert game.actions[0] == OpeningRolled(3, 6, 1)


def test_writer_header_tags_comments_and_xg_tags() -> None:
    record = MatchRecord.create(7, ("Alice", "Bob"), Rules(crawford=False),
                                when=dt.datetime(2026, 3, 4, 5, 6),
                                tags={"Transcriber": "bgbot", "Site": "Home"})
    record.comments = ["first line", "second line"]
    assert format_match(record) == (
        '; [Site "Home"]\n; [EventDate "2026.03.04"]\n; [EventTime "05.06"]\n'
        '; [Crawford "Off"]\n; [Transcriber "bgbot"]\n\n; first line\n; second line\n'
        ' 7 point match\n\n')
    xg = format_match(record, xg_tags=True)
    assert xg.startswith(
        '; [Site "Home"]\n; [Player 1 "Alice"]\n; [Player 2 "Bob"]\n; [EventDate "2026.03.04"]\n'
        '; [EventTime "05.06"]\n; [Variation "Backgammon"]\n; [Crawford "Off"]\n'
        '; [CubeLimit "1024"]\n; [Transcriber "bgbot"]\n')
    back = parse_match(xg)
    assert back.rules.crawford is False and back.tags["Player 1"] == "Alice"
    money = MatchRecord.create(0, ("A", "B"), Rules(jacoby=True, beavers=True, cube_limit=64),
                               when=dt.date(2026, 1, 2))
    text = format_match(money, xg_tags=True)
    assert '; [Jacoby "On"]\n; [Beaver "On"]\n; [CubeLimit "64"]\n' in text
    assert "Crawford" not in text and "EventTime" not in text
    assert parse_match(text).rules == Rules(jacoby=True, beavers=True, cube_limit=64)


def test_names_are_sanitised_on_the_score_line() -> None:
    assert sanitize_name("  Al:ice \n the\tgreat ") == "Al_ice the great"
    assert sanitize_name('Bob, "the" best') == "Bob_ _the_ best"
    assert sanitize_name(" \n ", 1) == "Player 2"
    game = run_script(OPEN + ";double;drop", Rules())
    record = MatchRecord(3, ("Al:ice\n", "Bob,1600"))
    record.add_game(game)
    text = format_match(record)
    assert f" {'Al_ice : 0':<31}Bob_1600 : 0\n" in text
    assert parse_match(text).names == ("Al_ice", "Bob_1600")


def test_write_match_writes_format_match() -> None:
    record = MatchRecord.create(3, ("A", "B"), when=dt.date(2026, 1, 2))
    record.add_game(run_script(OPEN + ";double;drop", Rules(), 3))
    handle = io.StringIO()
    write_match(record, handle, xg_tags=True)
    assert handle.getvalue() == format_match(record, xg_tags=True)
    assert read_match(io.StringIO(handle.getvalue())).final_score == (1, 0)


# ============================================================== our own matches, round trip


def context_for(game: Game, seat: int) -> Context:
    owner = game.cube_owner
    cube_owner = (CubeOwner.CENTRE if owner is None
                  else CubeOwner.ME if owner == seat else CubeOwner.OPPONENT)
    return Context(game.cube_value, cube_owner, game.match_length, game.score[seat],
                   game.score[1 - seat], game.crawford, game.post_crawford, game.rules)


def play_random_match(seed: int, length: int = 5, *, rules: Rules | None = None,
                      resign_rate: float = 0.005, beaver_rate: float = 0.0,
                      gnubg_safe: bool = True, max_games: int = 30) -> MatchRecord:
    """A match between two seeded `RandomPlayer`s (cube on), with random resignations.

    ``gnubg_safe`` keeps to what gnubg's import reads back exactly: resignations only before
    rolling or after a roll with two or more plays, never while a double is pending.
    """
    rng = random.Random(seed)
    players = [RandomPlayer(seed * 2 + 1, cube=True, double_rate=0.25),
               RandomPlayer(seed * 2 + 2, cube=True, double_rate=0.25)]
    match = Match(length, rules)
    record = MatchRecord.create(length, ("Alice", "Bob"), match.rules,
                                when=dt.datetime(2026, 11, 29, 12, 0))
    while not match.is_over and len(record.games) < max_games:
        game = match.new_game()
        while not game.opening_roll(rng.randint(1, 6), rng.randint(1, 6)):
            pass
        while not game.is_over:
            seat = game.seat_to_act
            assert seat is not None
            context = context_for(game, seat)
            phase = game.phase
            may_resign = phase is Phase.ROLL or (
                phase is Phase.MOVE and len(game.legal_plays()) > 1) or not gnubg_safe
            value = rng.randint(1, 3)
            if may_resign and rng.random() < resign_rate and game.may_resign(seat, value):
                game.resign(seat, value)
                if rng.random() < 0.7:
                    game.accept_resignation()
                else:
                    game.reject_resignation()
            elif phase is Phase.ROLL:
                if game.may_double() and players[seat].should_double(game.position, context):
                    game.double()
                else:
                    game.roll((rng.randint(1, 6), rng.randint(1, 6)))
            elif phase is Phase.MOVE:
                assert game.dice is not None
                game.move(players[seat].choose_play(game.position, game.dice, context))
            elif phase is Phase.TAKE and game.may_beaver() and rng.random() < beaver_rate:
                game.beaver()
            elif phase is Phase.BEAVER_TAKE and game.may_raccoon() and rng.random() < 0.5:
                game.raccoon()
            elif players[seat].take_decision(game.board_for(seat), context) is TakeDecision.TAKE:
                game.take()
            else:
                game.drop()
        record.add_game(game)
        match.record()
    return record


def comparable(actions: list[Action]) -> list[object]:
    """What a .mat keeps of a history: no opening ties, automatic doubles or refused
    resignations, dice in either order."""
    out: list[object] = []
    skip_next_resigned = {i for i, a in enumerate(actions)
                          if isinstance(a, ResignationRejected)}
    for index, action in enumerate(actions):
        if isinstance(action, OpeningRolled) and action.winner is None:
            continue
        if isinstance(action, (AutoDoubled, ResignationRejected)):
            continue
        if isinstance(action, Resigned) and index + 1 in skip_next_resigned:
            continue
        if isinstance(action, Rolled):
            action = replace(action, dice=(max(action.dice), min(action.dice)))
        if isinstance(action, Moved):
            action = replace(action, dice=(max(action.dice), min(action.dice)))
        out.append(action)
    return out


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10**6), length=st.sampled_from([0, 1, 3, 5, 7]))
def test_our_matches_round_trip_exactly(seed: int, length: int) -> None:
    # Money: beavers, raccoons, the Jacoby rule and automatic doubles (a .mat shows the last
    # only through its cube values) in turn.
    rules = Rules(beavers=True, raccoons=True, jacoby=bool(seed % 2),
                  automatic_doubles=seed % 3) if length == 0 else Rules()
    record = play_random_match(seed, length, rules=rules, resign_rate=0.01, beaver_rate=0.4,
                               gnubg_safe=False, max_games=4)
    for xg_tags in (False, True):
        text = format_match(record, xg_tags=xg_tags)
        back = parse_match(text)
        assert format_match(back, xg_tags=xg_tags) == text
        assert back.final_score == record.final_score
        assert back.names == record.names and back.length == record.length
        for ours, read in zip(record.games, back.games, strict=True):
            assert (read.number, read.score, read.crawford) == (ours.number, ours.score,
                                                                ours.crawford)
            assert read.outcome is not None and ours.outcome is not None
            # A resignation after the unwritten take of a beaver can read as one before it
            # when the points fit both: the points, winner and ending always agree.
            assert (read.outcome.winner, read.outcome.points, read.outcome.ending) == (
                ours.outcome.winner, ours.outcome.points, ours.outcome.ending)
            if read.outcome == ours.outcome:
                assert comparable(read.actions) == comparable(ours.actions)


def test_add_game_numbers_games_and_keeps_the_score() -> None:
    record = play_random_match(3, 3)
    assert [g.number for g in record.games] == list(range(1, len(record.games) + 1))
    running = [0, 0]
    for game in record.games:
        assert list(game.score) == running
        assert game.outcome is not None
        running[game.outcome.winner] += game.outcome.points
    assert record.final_score == tuple(running) and max(running) >= 3


# ============================================================== the reader's variants


def base_text() -> str:
    """A gnubg file with a take, drops, resignations and a Crawford game (reference §5.3)."""
    return reference_section("### 5.3", "### 5.4")[0]


@functools.lru_cache(maxsize=8)
def summary(text: str) -> list[tuple[object, ...]]:
    record = parse_match(text)
    return [(g.number, g.score, g.crawford, g.winner, g.points, g.ending,
             [(type(a).__name__, getattr(a, "seat", None)) for a in g.actions])
            for g in record.games]


VARIANTS: dict[str, Callable[[str], str]] = {
    # (dice without a colon: see the three-point test below; a 27-column move leaves one space)
    "crlf": lambda t: t.replace("\n", "\r\n"),
    "bom": lambda t: "\ufeff" + t,
    "hash headers": lambda t: t.replace("; ", "# "),
    "Point Match": lambda t: t.replace(" 5 point match", " 5 Point Match"),
    "Match of N points": lambda t: t.replace(" 5 point match", "Match of 5 points"),
    "trailing whitespace": lambda t: t.replace("\n", "   \t\n"),
    "accepts": lambda t: t.replace("Takes", "Accepts"),
    "passes": lambda t: t.replace("Drops", "Passes"),
    "rejects": lambda t: t.replace("Drops", "Rejects"),
    "and the match": lambda t: t.rstrip("\n").removesuffix("Wins 1 point")
    + "Wins 1 point and the match\n\n",
    "dice with an extra space": lambda t: re.sub(r"(\d\d): ", r"\1 : ", t),
    "bar and off": lambda t: re.sub(r"/0\b", "/off", re.sub(r"\b25/", "bar/", t)),
    "cannot move": lambda t: re.sub(r"(\d\d): (?=\s*$|\s{2,}\S)", r"\1: Cannot Move", t,
                                    flags=re.M),
    "ratings": lambda t: t.replace("Alice : ", "Alice,1600 : ").replace("Bob : ", "Bob,1755 : "),
    "game without leading space": lambda t: t.replace(" Game ", "Game "),
    "resign lines": lambda t: t.replace("\n      Wins 2 points", "\n      Resigns\n      Wins 2 points"),
    "dice smaller first": lambda t: re.sub(r"\b([1-6])([1-6]):", r"\2\1:", t),
}


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_reader_accepts_the_variants_seen_in_the_wild(variant: str) -> None:
    text = base_text()
    changed = VARIANTS[variant](text)
    assert changed != text
    assert summary(changed) == summary(text)


def test_reader_accepts_dice_without_a_colon() -> None:
    text = three_point()
    changed = re.sub(r"(\d\d): ", r"\1 ", text)
    assert not re.search(r"\d\d:", changed)
    assert summary(changed) == summary(text)


def test_reader_keeps_gridgammon_ratings_and_header_tags() -> None:
    text = VARIANTS["ratings"](base_text())
    record = parse_match(text)
    assert record.names == ("Alice", "Bob") and record.ratings == ("1600", "1755")
    assert parse_match(VARIANTS["hash headers"](base_text())).tags["Site"] == "Loopback Club"


def test_reader_expands_compressed_moves_and_repeats() -> None:
    text = three_point()
    compressed = (text.replace("62: 24/18 18/16 ", "62: 24/16 ")
                  .replace("55: 13/8 13/8 6/1* 6/1", "55: 13/8(2) 6/1*(2)")
                  .replace("44: 25/21 13/9 13/9 13/9", "44: bar/21 13/9(3)"))
    assert compressed.count("(") == 3 and "24/16 " in compressed
    assert summary(compressed) == summary(text)
    moves = [a for a in parse_match(compressed).games[0].actions if isinstance(a, Moved)]
    assert sorted(step[:2] for step in moves[1].play) == [(18, 16), (24, 18)]
    assert len(moves[3].play) == 4


XG_STYLE = """\ufeff; [Site "XG Mobile"]
; [Match ID "12345"]
; [Player 1 "Alice"]
; [Player 2 "Bob"]
; [EventDate "2026.11.29"]
; [EventTime "21.23"]
; [Variation "Backgammon"]
; [Unrated "Off"]
; [Crawford "On"]
; [CubeLimit "1024"]

3 point match

Game 1
Alice : 0                              Bob : 0
 1)                                  35: 8/3 6/3
 2) 26: 24/18 18/16                  55: 13/8 13/8 6/1* 6/1
 3) 44: bar/21 13/9(3)               13: 13/10 10/9*
 4) 11: Cannot Move                  Doubles => 2
 5) Takes                            31: 8/7 7/4*
 6) 63: Cannot Move                  41: ???
 7) Wins 2 points and the match
"""


def test_reader_reads_an_xg_style_file() -> None:
    record = parse_match(XG_STYLE)
    assert record.length == 3 and record.names == ("Alice", "Bob")
    assert record.tags["Match ID"] == "12345" and record.rules == Rules()
    game = record.games[0]
    assert game.outcome is not None
    assert (game.winner, game.points, game.ending, game.outcome.kind) == (0, 2, "resign", 1)
    assert game.actions[-3] == Rolled(1, (4, 1))  # "41: ???": rolled, then resigned
    assert game.actions[-2:] == [Resigned(1, 1), ResignationAccepted(0, 1)]


# ============================================================== errors

EXAMPLE_3PT = 0  # index of the 3-point example among the reference blocks


def three_point() -> str:
    return reference_section("### 5.2", "### 5.3")[EXAMPLE_3PT]


def error_for(text: str) -> MatFormatError:
    with pytest.raises(MatFormatError) as caught:
        parse_match(text)
    return caught.value


def test_error_is_a_format_error_naming_game_move_column_and_text() -> None:
    text = three_point().replace("31: 13/10 10/9* ", "31: 13/10 10/8 ")
    error = error_for(text)
    assert isinstance(error, FormatError) and isinstance(error, ValueError)
    assert (error.game, error.move, error.seat) == (1, 3, 1)
    assert error.text == "31: 13/10 10/8"
    assert "game 1, move 3, right column (seat 1)" in str(error)
    assert "13/10 10/8" in str(error)


def test_error_for_dice_out_of_range() -> None:
    error = error_for(three_point().replace("62: 24/18 18/16", "72: 24/18 18/16"))
    assert (error.game, error.move, error.seat) == (1, 2, 0) and "dice" in str(error)


def test_error_for_a_garbage_line() -> None:
    text = three_point().replace("  5)  Takes", "  this is not a move\n  5)  Takes")
    error = error_for(text)
    assert error.game == 1 and error.move == 4 and "this is not a move" in str(error)
    assert error.line == text.split("\n").index("  this is not a move") + 1


def test_error_for_a_move_in_the_wrong_column() -> None:
    text = three_point().replace("  1)                             53: 8/3 6/3 ",
                                 "  1) 53: 8/3 6/3")
    error = error_for(text)
    assert (error.game, error.move, error.seat) == (1, 2, 0)
    assert "wrong column" in str(error)


def test_error_for_an_empty_move_when_plays_exist() -> None:
    error = error_for(three_point().replace("62: 24/18 18/16  ", "62:              "))
    assert (error.game, error.move, error.seat) == (1, 2, 0)
    assert "legal plays exist" in str(error)


def test_error_for_wins_in_the_wrong_column_or_for_wrong_points() -> None:
    text = three_point()
    wrong_column = text.replace("                                  Wins 4 points",
                                "      Wins 4 points")
    assert "wrong column" in str(error_for(wrong_column))
    wrong_points = text.replace("Wins 4 points", "Wins 5 points")
    assert "not 5" in str(error_for(wrong_points))


def test_error_for_a_take_without_a_double_and_for_missing_lines() -> None:
    error = error_for(three_point().replace(" Doubles => 2", " Takes"))
    assert (error.game, error.move, error.seat, error.text) == (1, 4, 1, "Takes")
    assert "point match" in str(error_for("; just a header\n\n Game 1\n"))
    assert "score line" in str(error_for(" 3 point match\n\n Game 1\n  1) 31: 8/5 6/5\n"))


def test_handle_error_can_log_and_go_on() -> None:
    seen: list[MatFormatError] = []

    class Lenient(MatVisitor[int]):
        moves = 0

        def move(self, seat: int, dice: tuple[int, int], text: str) -> None:
            self.moves += 1

        def handle_error(self, error: MatFormatError) -> None:
            seen.append(error)

        def result(self) -> int:
            return self.moves

    text = three_point().replace("62: 24/18 18/16", "72: 24/18 18/16")
    assert walk_match(text, Lenient()) == len(re.findall(r"\b\d\d:", text)) - 1
    assert len(seen) == 1 and seen[0].move == 2


# ============================================================== against the real gnubg


def gnubg_round_trip(gnubg: str, text: str, tmp: Path) -> str:
    """``import mat`` our text into gnubg, ``export match mat`` it again, return gnubg's file."""
    ours, back, prefs = tmp / "ours.mat", tmp / "back.mat", tmp / "prefs"
    prefs.mkdir(exist_ok=True)
    ours.write_text(text)
    subprocess.run([gnubg, "-t", "-q", "-r", "-s", str(prefs)],
                   input=f"import mat {ours}\nexport match mat {back}\n",
                   capture_output=True, text=True, timeout=60, check=False)
    assert back.exists(), "gnubg did not export the imported match"
    return back.read_text()


def seeded_match_with_cube_actions() -> MatchRecord:
    """The first seed whose 5-point match has doubles, takes, drops, resignations, a played-out
    ending and a Crawford game."""
    for seed in range(1, 200):
        record = play_random_match(seed)
        actions = [a for g in record.games for a in g.actions]
        endings = {g.ending for g in record.games}
        if (any(isinstance(a, Taken) for a in actions) and {"drop", "resign", "normal"} <= endings
                and any(g.crawford for g in record.games)):
            return record
    raise AssertionError("no seed gave every kind of game")


@pytest.mark.gnubg
def test_gnubg_imports_and_exports_our_match_identically(gnubg_binary: str,
                                                          tmp_path: Path) -> None:
    record = seeded_match_with_cube_actions()
    assert any(isinstance(a, ResignationAccepted) for g in record.games for a in g.actions)
    for xg_tags in (False, True):
        text = format_match(record, xg_tags=xg_tags)
        back = gnubg_round_trip(gnubg_binary, text, tmp_path)
        assert moves_unordered(back) == moves_unordered(text)
        assert parse_match(back).final_score == record.final_score


def test_reader_takes_bytes_in_utf8_or_latin1() -> None:
    text = three_point().replace("Alice", "Zoë")
    assert parse_match(text.encode("utf-8")).names == ("Zoë", "Bob")
    assert read_match(io.BytesIO(text.encode("latin-1"))).names == ("Zoë", "Bob")
    assert read_match(io.BytesIO(b"\xef\xbb\xbf" + text.encode("utf-8"))).names == ("Zoë", "Bob")


def test_automatic_doubles_show_through_the_cube_values() -> None:
    # gnubg ignores automatic doubles when writing; we write the real cube ("Doubles => 4"),
    # and the reader starts the game from the cube those values imply.
    game = run_script("open 3 3;open 3 6;move 24/18 13/10;double;drop",
                      Rules(automatic_doubles=1))
    assert AutoDoubled(2) in game.history
    text = one_game_text(game)
    assert "  2)  Doubles => 4                Drops\n      Wins 2 points\n\n" in text
    read = parse_match(" 0 point match\n\n" + text).games[0]
    assert read.outcome == game.outcome
    assert comparable(read.actions) == comparable(list(game.history))


@pytest.mark.parametrize("control", ["\x01", "\x08", "\x1b", "\x1f", "\x7f", "\x00"])
def test_a_tag_line_ending_in_a_control_character_reads_the_same_once_written(
        control: str) -> None:
    """Issue 30 item 11: it read as a comment, was written as ``; [Crawford "Off"]``, and
    then read as the tag: another match."""
    text = (f'; [Crawford "Off"]{control}\n; [CubeLimit "1"] {control}\n; a note{control}here\n'
            "\n 5 point match\n\n Game 1\n a : 0     b : 0\n  1) 31: 8/5 6/5\n")
    first = parse_match(text)
    assert first.rules.crawford is False and first.tags["CubeLimit"] == "1"
    again = parse_match(format_match(first))
    assert again.rules == first.rules
    assert again.comments == first.comments == ["a note here"]
