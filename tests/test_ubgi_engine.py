"""`bgbot ubgi`: the engine side of UBGI v0.2 (bgbot.frontends.ubgi), in-process and as a process.

The spec is bungogood/bgci docs/ubgi-v0.2-spec.md; its example exchanges live in
tests/ubgi_conformance/exchanges.txt and are replayed here against both.
"""

from __future__ import annotations

import asyncio
import io
import random
import re
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bgbot.core.context import CubeOwner
from bgbot.core.position import Position
from bgbot.engines.ubgi_protocol import KeySpec, format_ubgi_play, match_state_for, parse_ubgi_play
from bgbot.formats.gnubgid import MatchState, encode_gnubgid
from bgbot.formats.xgid import encode_xgid, gnubg_to_xgid
from bgbot.frontends.ubgi import UbgiSession, context_from_state, serve_streams
from bgbot.players.base import Context
from tests.conftest import board
from tests.ubgi_conformance import replay

START = Position.initial().position_id()
ENGINE = [sys.executable, "-m", "bgbot.cli", "ubgi"]


def talk(session: UbgiSession, *lines: str) -> list[str]:
    """Every reply line to ``lines``, in order."""

    async def run() -> list[str]:
        out: list[str] = []
        for line in lines:
            out += await session.handle(line)
        return out

    return asyncio.run(run())


def answers(replies: list[str]) -> list[str]:
    return [line for line in replies if not line.startswith("info ")]


@pytest.fixture
def session() -> UbgiSession:
    return UbgiSession("heuristic")


# --------------------------------------------------------------------------- conformance


def test_conformance_exchanges_in_process(session: UbgiSession) -> None:
    async def send(lines: list[str]) -> list[str]:
        out: list[str] = []
        for line in lines:
            out += await session.handle(line)
        # the runner's trailing isready: its readyok ends the exchange
        assert await session.handle("isready") == ["readyok"]
        return out

    results = asyncio.run(replay.run_exchanges(send))
    assert len(results) >= 25
    assert {name: failure for name, failure in results.items() if failure} == {}


def test_conformance_exchanges_against_the_process() -> None:
    results, status = asyncio.run(replay.replay_command(ENGINE, timeout=30))
    assert {name: failure for name, failure in results.items() if failure} == {}
    assert status == 0  # exits cleanly on quit


def test_the_runner_detects_a_wrong_reply() -> None:
    exchange = replay.Exchange("x", ["go"], [("<", "bestmove pass")])
    assert replay.check(exchange, ["bestmove 24/18"]) is not None
    assert replay.check(exchange, ["bestmove pass", "extra"]) is not None
    assert replay.check(exchange, ["bestmove pass"]) is None


# --------------------------------------------------------------------------- handshake, keys


def test_handshake_declares_keys_in_the_spec_grammar(session: UbgiSession) -> None:
    lines = talk(session, "ubgi")
    assert lines[0].startswith("id name ") and lines[-1] == "ubgiok"
    assert "proto 0.2" in lines
    keys = [KeySpec.from_line(line) for line in lines if line.startswith("key ")]
    names = {key.name for key in keys}
    assert {"game.variant", "engine.ply", "engine.noise", "engine.seed"} <= names
    ply = next(key for key in keys if key.name == "engine.ply")
    assert (ply.low, ply.default) == (1, "1")  # UBGI 1-ply is our plies=0


@pytest.mark.parametrize("line", [
    # the spec's own key examples (§4)
    "key engine.ply int 1..4 1 root-inclusive decision depth",
    "key engine.threads int 1..64 8 ! worker threads",
    "key engine.seed int * 42 ! rng seed",
    "key game.variant enum backgammon|nackgammon|hypergammon backgammon",
    "key engine.book string * default-value",
    "key engine.fast bool true",
])
def test_spec_key_examples_parse_and_print_back(line: str) -> None:
    spec = KeySpec.from_line(line)
    assert KeySpec.from_line(spec.line()) == spec


def test_key_values_are_validated() -> None:
    ply = KeySpec.from_line("key engine.ply int 1..4 1")
    assert ply.parse("3") == "3"
    with pytest.raises(ValueError, match="must_be 1..4"):
        ply.parse("5")
    assert KeySpec.from_line("key x.y bool false").parse("on") == "true"
    with pytest.raises(ValueError):
        KeySpec.from_line("key x.y enum a|b a").parse("c")
    with pytest.raises(ValueError):
        KeySpec.from_line("key x.y int 1..4 9")  # a default outside its own range


def test_ply_maps_to_player_plies(session: UbgiSession) -> None:
    assert talk(session, "set engine.ply 2", "get engine.ply") == ["value engine.ply 2"]
    assert session._player_spec().options["plies"] == "1"
    assert talk(session, "set engine.noise 0.05", "get engine.noise") == ["value engine.noise 0.05"]
    assert talk(session, "set engine.noise -1")[0].startswith("error bad_value engine.noise")
    assert talk(session, "set game.variant nackgammon")[0].startswith("error bad_value game.variant")


def test_pubeval_has_no_ply_key() -> None:
    lines = talk(UbgiSession("pubeval"), "keys")
    assert not any(line.startswith("key engine.ply ") for line in lines)
    assert talk(UbgiSession("pubeval"), "set engine.ply 1") == ["error unsupported engine.ply"]


# --------------------------------------------------------------------------- decisions


def test_bestmove_is_a_legal_play_written_out(session: UbgiSession) -> None:
    out = answers(talk(session, f"position gnubgid {START}", "dice 6 6", "go"))
    assert len(out) == 1 and out[0].startswith("bestmove ")
    payload = out[0].removeprefix("bestmove ")
    assert "(" not in payload and "*" not in payload
    assert len(payload.split()) == 4  # doubles: four from/to tokens
    parse_ubgi_play(payload, Position.initial(), (6, 6))


def test_go_turn_matches_go_cube_and_go(session: UbgiSession) -> None:
    out = answers(talk(session, f"position gnubgid {START}", "dice 3 1", "go", "go cube", "go turn"))
    move = out[0].removeprefix("bestmove ")
    assert out[1] == "bestcube nodouble"
    assert out[2] == f"bestturn cube=nodouble move={move}"


def _racing_position() -> Position:
    # the player on roll bears off both chequers with any roll: a certain win, a clear drop
    return board({1: 1, 2: 1}, {5: 2, 6: 2})


def test_go_cube_answers_and_the_taker_drops_a_certain_loss(session: UbgiSession) -> None:
    position = _racing_position()
    out = answers(talk(session, f"position gnubgid {position.position_id()}", "go cube", "go take"))
    assert out[0] in ("bestcube double", "bestcube nodouble")  # no gammons: both are right
    assert out[1] == "besttake drop"


def test_cube_owned_by_the_opponent_means_nodouble(session: UbgiSession) -> None:
    position = _racing_position()
    state = MatchState(cube=2, cube_owner=1, on_roll=0, turn=0)
    out = answers(talk(session, f"position gnubgid {encode_gnubgid(position, state)}", "go cube"))
    assert out == ["bestcube nodouble"]


def test_crawford_game_means_nodouble(session: UbgiSession) -> None:
    state = MatchState(match_length=5, score=(4, 2), crawford=True, on_roll=1, turn=1)
    out = answers(talk(session, f"position gnubgid {encode_gnubgid(_racing_position(), state)}",
                       "go cube"))
    assert out == ["bestcube nodouble"]


def test_pending_double_is_bad_state_for_go_but_answers_go_take(session: UbgiSession) -> None:
    state = MatchState(on_roll=0, turn=1, doubled=True)
    ident = encode_gnubgid(_racing_position(), state)
    out = answers(talk(session, f"position gnubgid {ident}", "dice 3 1", "go", "go cube", "go take"))
    assert out == ["error bad_state double pending", "error bad_state double pending",
                   "besttake drop"]


def test_beaver_only_when_the_rules_allow() -> None:
    # the opponent doubled from a losing race: a beaver with beavers on, a take without
    losing = _racing_position().swapped()
    on = UbgiSession("heuristic")
    talk(on, "set game.beavers true")
    assert answers(talk(on, f"position gnubgid {losing.position_id()}", "go take")) == ["besttake beaver"]
    off = UbgiSession("heuristic")
    assert answers(talk(off, f"position gnubgid {losing.position_id()}", "go take")) == ["besttake take"]


def test_xgid_position_carries_dice_and_score(session: UbgiSession) -> None:
    position = Position.initial()
    state = MatchState(match_length=7, score=(2, 3), dice=(5, 2), on_roll=1, turn=1)
    xgid = encode_xgid(gnubg_to_xgid(position, state))
    out = answers(talk(session, f"position xgid {xgid}", "go"))
    assert out[0].startswith("bestmove ")
    parse_ubgi_play(out[0].removeprefix("bestmove "), position, (5, 2))
    assert session._context(True).my_score == 3 and session._context(True).match_length == 7


def test_resignation_extensions(session: UbgiSession) -> None:
    # the resigner, on roll, is stuck on its 13-point; the other side bears off its last
    # chequer next turn: a gammon is certain, so a gammon resignation is worth accepting
    position = board({13: 15}, {2: 1})
    assert answers(talk(session, f"position gnubgid {position.position_id()}", "go accept gammon")) == [
        "bestaccept accept"]
    assert talk(session, "go accept double")[0].startswith("error bad_value")
    assert talk(session, "go accept")[0].startswith("error bad_command")
    assert answers(talk(session, f"position gnubgid {START}", "go resign")) == ["bestresign none"]


def test_game_over_is_bad_state(session: UbgiSession) -> None:
    over = board({}, {24: 15})
    assert talk(session, f"position gnubgid {over.position_id()}", "dice 3 1", "go") == [
        "error bad_state game over"]


def test_context_from_state_sees_the_asked_seat() -> None:
    state = MatchState(cube=4, cube_owner=1, match_length=9, score=(3, 8), on_roll=0, turn=0)
    me = context_from_state(state, 1)
    assert (me.my_score, me.opponent_score, me.cube_owner) == (8, 3, CubeOwner.ME)
    assert me.post_crawford and not me.crawford
    assert context_from_state(state, 0).cube_owner is CubeOwner.OPPONENT


@given(st.integers(0, 10**6))
@settings(max_examples=30, deadline=None)
def test_match_state_round_trip(seed: int) -> None:
    rng = random.Random(seed)
    length = rng.choice([0, 3, 7])
    owner = rng.choice(list(CubeOwner))
    context = Context(cube_value=1 << rng.randint(0, 4) if owner is not CubeOwner.CENTRE else 1,
                      cube_owner=owner, match_length=length,
                      my_score=rng.randint(0, max(0, length - 1)),
                      opponent_score=rng.randint(0, max(0, length - 1)))
    back = context_from_state(match_state_for(context), 0)
    assert (back.cube_value, back.cube_owner, back.match_length, back.my_score,
            back.opponent_score) == (context.cube_value, context.cube_owner, context.match_length,
                                     context.my_score, context.opponent_score)


# --------------------------------------------------------------------------- robustness


@pytest.mark.parametrize("line, code", [
    ("ubgi extra", "bad_command"),
    ("isready now", "bad_command"),
    ("newgame 3", "bad_command"),
    ("go fishing", "bad_command"),
    ("go chequer now", "bad_command"),
    ("get", "bad_command"),
    ("set", "bad_command"),
    ("keys all", "bad_command"),
    ("position", "bad_command"),
    ("position gnubgid", "bad_command"),
    ("position gnubgid a b", "bad_command"),
    ("position xgid XGID=nonsense", "bad_value"),
    ("position gnubgid 4HPwATDgc/ABMA:zzzzzzzzzzzz", "bad_value"),
    ("dice one two", "bad_value"),
    ("dice 0 3", "bad_value"),
    ("setoption name x", "bad_command"),
    ("go", "bad_state"),
    ("go cube", "bad_state"),
    ("go take", "bad_state"),
    ("\x00\x01garbage\xff", "bad_command"),
])
def test_bad_input_gets_one_spec_error_and_the_session_goes_on(line: str, code: str) -> None:
    session = UbgiSession("heuristic")
    out = talk(session, line)
    assert len(out) == 1 and re.match(rf"error {code}( |$)", out[0]), out
    assert talk(session, "isready") == ["readyok"]
    assert not session.finished


def test_blank_lines_are_ignored(session: UbgiSession) -> None:
    assert talk(session, "", "   ", "\r\n") == []


def test_quit_and_end_of_input_end_a_stream_session() -> None:
    out = io.StringIO()
    assert serve_streams(io.StringIO("isready\nquit\nisready\n"), out) == 0
    assert out.getvalue() == "readyok\n"  # nothing after quit
    out = io.StringIO()
    assert serve_streams(io.StringIO("isready\n"), out) == 0
    assert out.getvalue() == "readyok\n"


def test_the_process_survives_garbage_and_exits_at_end_of_input() -> None:
    garbage = b"\xff\xfe\x00bad\n" + b"x" * 10000 + b"\nposition gnubgid ####\ngo\nisready\n"
    done = subprocess.run(ENGINE, input=garbage, capture_output=True, timeout=60)
    lines = done.stdout.decode().splitlines()
    assert done.returncode == 0
    assert lines[-1] == "readyok" and all(line.startswith("error ") for line in lines[:-1])


def test_bad_player_spec_is_refused_at_start() -> None:
    done = subprocess.run([*ENGINE, "--player", "nosuchplayer"], input=b"", capture_output=True,
                          timeout=60)
    assert done.returncode == 2 and b"nosuchplayer" in done.stderr


# --------------------------------------------------------------------------- move text


def _random_positions(seed: int, count: int) -> list[tuple[Position, tuple[int, int]]]:
    rng = random.Random(seed)
    found = []
    position = Position.initial()
    while len(found) < count:
        dice = (rng.randint(1, 6), rng.randint(1, 6))
        results = position.play_results(dice)
        found.append((position, dice))
        position = rng.choice(results)[1].swapped() if results else position.swapped()
        if position.is_game_over():
            position = Position.initial()
    return found


@given(st.integers(0, 10**6))
@settings(max_examples=25, deadline=None)
def test_every_legal_play_round_trips_through_ubgi_text(seed: int) -> None:
    for position, dice in _random_positions(seed, 8):
        for play, after in position.play_results(dice):
            text = format_ubgi_play(play)
            assert "*" not in text and "(" not in text and " 25/" not in f" {text}"
            assert position.apply(parse_ubgi_play(text, position, dice)) == after


def test_pass_is_refused_when_a_chequer_can_move() -> None:
    with pytest.raises(ValueError):
        parse_ubgi_play("pass", Position.initial(), (3, 1))
