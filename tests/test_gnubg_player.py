"""bgbot as gnubg's external player: the listener, its session logic, and real gnubg matches.

The gnubg tests let a headless gnubg host matches against the listener and then check the
result three ways: gnubg's own ``export match mat`` replays legally through our .mat reader
with the score gnubg reports, our JSON-lines log agrees with that export on every action we
took and on every game's points, and nothing was answered with an error.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import pytest

from bgbot.agents.base import Agent
from bgbot.deciders import create_agent
from bgbot.core.game import (
    Beavered,
    Doubled,
    Dropped,
    Moved,
    Raccooned,
    Resigned,
    Taken,
)
from bgbot.core.notation import parse_play
from bgbot.core.position import Play, Position
from bgbot.core.rules import Rules
from bgbot.formats.fibsboard import Dialect, parse_board
from bgbot.formats.mat import MatchRecord, read_match
from bgbot.frontends.gnubg_log import LoggedGame, games_from_log, read_log
from bgbot.frontends.gnubg_player import GnubgPlayerServer, ListenAddress, PlayerServerConfig
from bgbot.frontends.gnubg_session import PlayerSession
from bgbot.players.base import Context, TakeDecision

from .conftest import GNUBG
from .gnubg_host import GAME_OVER, MATCH_OVER, SCORE, GnubgHost, match_script

DATA = Path(__file__).parent / "data"

# Requests exactly as gnubg 1.07 sent them (reference/gnubg-interfaces.md §1.5).
OPENING_63 = ("board:gnubg:root:3:0:0:0:-2:0:0:0:0:5:0:3:0:0:0:-5:5:0:0:0:-3:0:-5:0:0:0:0:2:0:"
              "1:6:3:6:3:1:1:1:0:1:-1:0:25:0:0:0:0:0:0:0:1")
ROLL_REQUEST = ("board:gnubg:root:3:0:0:0:-2:0:0:0:0:5:0:3:0:0:0:-3:5:0:0:0:-4:-1:-5:0:1:0:0:0:"
                "1:1:0:0:0:0:1:1:1:0:1:-1:0:25:0:0:0:0:0:0:0:1")
TAKE_REQUEST = ("board:root:gnubg:3:0:0:0:-1:0:-1:0:0:5:0:3:0:1:1:-2:3:0:0:0:-3:-2:-4:-2:1:0:1:"
                "0:0:-1:0:0:0:0:1:1:1:1:1:-1:0:25:0:0:0:0:0:0:0:1")
BAR_11 = ("board:gnubg:root:3:0:0:0:-2:0:0:0:0:5:0:3:0:0:0:-3:5:0:0:0:-4:-1:-5:0:1:0:0:0:1:1:"
          "1:1:1:1:1:1:1:0:1:-1:0:25:0:0:0:0:0:0:0:1")
# Money, external player = player 0: it doubled, gnubg beavered, it must answer the beaver.
BEAVER_TAKE = ("board:gnubg:root:0:0:0:0:0:-1:-1:0:0:5:0:3:0:0:0:-5:6:0:0:0:-3:0:-5:0:0:0:0:1:"
               "0:-1:0:0:0:0:2:1:0:1:1:-1:0:25:0:0:0:0:0:0:0:1")
MONEY_MOVE_SEAT0 = ("board:gnubg:root:0:0:0:0:-2:0:0:0:0:5:0:3:0:0:0:-5:5:0:0:0:-3:0:-5:0:0:0:"
                    "0:2:0:-1:2:1:2:1:1:1:1:0:1:-1:0:25:0:0:0:0:0:0:0:1")
MONEY_ROLL_SEAT0 = ("board:gnubg:root:0:0:0:0:-2:0:0:0:0:5:0:3:0:0:0:-5:5:0:0:0:-3:0:-5:0:0:0:"
                    "0:2:0:-1:0:0:0:0:1:1:1:0:1:-1:0:25:0:0:0:0:0:0:0:1")


def _board_with(line: str, index: int, value: str) -> str:
    """``line`` with token ``index`` (1-based, as in the reference tables) replaced."""
    tokens = line.split(":")
    tokens[index - 1] = value
    return ":".join(tokens)


# ============================================================================ scripted agents


class ScriptedAgent(Agent):
    """An agent whose answers the test chooses; plays the first legal play."""

    name = "scripted"

    def __init__(self, *, double: bool = False, take: TakeDecision = TakeDecision.TAKE,
                 resign: int = 0, play: Play | None = None, fail: bool = False) -> None:
        self.double, self.take, self.resign, self.play, self.fail = double, take, resign, play, fail
        self.asked: list[str] = []

    async def choose_play(self, position: Position, dice: Sequence[int], context: Context) -> Play:
        self.asked.append("play")
        if self.fail:
            raise RuntimeError("scripted failure")
        if self.play is not None:
            return self.play
        plays = position.legal_plays(dice)
        return plays[0] if plays else Play()

    async def should_double(self, position: Position, context: Context) -> bool:
        self.asked.append("double")
        return self.double

    async def take_decision(self, position: Position, context: Context) -> TakeDecision:
        self.asked.append("take")
        return self.take

    async def offer_resignation(self, position: Position, context: Context) -> int:
        return self.resign


def _respond(session: PlayerSession, line: str) -> str:
    return asyncio.run(session.respond(line + "\n\x00")).text


# ============================================================================ session logic


def test_opening_move_is_a_legal_play_in_gnubg_notation() -> None:
    session = PlayerSession(create_agent("heuristic"))
    reply = _respond(session, OPENING_63)
    board = parse_board(OPENING_63, Dialect.GNUBG)
    parse_play(reply, board.position, (6, 3))  # raises unless legal
    assert session.seat == 1


def test_entering_from_the_bar_with_doubles_uses_bar_notation() -> None:
    reply = _respond(PlayerSession(create_agent("heuristic")), BAR_11)
    assert reply.startswith("bar/")
    board = parse_board(BAR_11, Dialect.GNUBG)
    parse_play(reply, board.position, (1, 1))


def test_dance_is_answered_with_an_empty_line() -> None:
    # Our one chequer on the bar against a closed board: no legal play with 6-6 (R6).
    closed = Position([2] * 6 + [0] * 19, [0] * 24 + [1])
    assert closed.legal_plays((6, 6)) == []
    seat1 = parse_board(OPENING_63, Dialect.GNUBG)
    from dataclasses import replace
    line = replace(seat1, position=closed, dice=(6, 6)).to_line()
    reply = asyncio.run(PlayerSession(create_agent("heuristic")).respond(line))
    assert (reply.text, reply.action) == ("", "move")


def test_roll_request_gets_roll_or_double() -> None:
    assert _respond(PlayerSession(ScriptedAgent(double=False)), ROLL_REQUEST) == "roll"
    assert _respond(PlayerSession(ScriptedAgent(double=True)), ROLL_REQUEST) == "double"


def test_no_double_when_our_context_forbids_it() -> None:
    # Crawford game (token 53 = 0) at 2-0 in a 3-point match: never "double".
    crawford = _board_with(_board_with(ROLL_REQUEST, 5, "2"), 53, "0")
    assert _respond(PlayerSession(ScriptedAgent(double=True)), crawford) == "roll"


def test_take_request_after_a_normal_double_swaps_names_and_asks_the_taker() -> None:
    agent = ScriptedAgent(take=TakeDecision.DROP)
    session = PlayerSession(agent)
    assert _respond(session, TAKE_REQUEST) == "drop"
    assert session.seat == 1  # learnt from the take request: the doubler is on roll


def test_beaver_is_sent_only_in_money_play() -> None:
    match_take = TAKE_REQUEST
    money_take = _board_with(TAKE_REQUEST, 4, "0")
    assert _respond(PlayerSession(ScriptedAgent(take=TakeDecision.BEAVER)), match_take) == "take"
    assert _respond(PlayerSession(ScriptedAgent(take=TakeDecision.BEAVER)), money_take) == "beaver"
    no_beavers = PlayerSession(ScriptedAgent(take=TakeDecision.BEAVER), rules=Rules(jacoby=True))
    assert _respond(no_beavers, money_take) == "take"


def test_beaver_take_needs_the_seat_learnt_earlier() -> None:
    alone = PlayerSession(ScriptedAgent())
    reply = asyncio.run(alone.respond(BEAVER_TAKE))
    assert reply.is_error and "my_seat" in reply.text  # one line cannot say whose it is
    session = PlayerSession(ScriptedAgent(take=TakeDecision.TAKE))
    assert _respond(session, MONEY_ROLL_SEAT0) in ("roll", "double")
    assert session.seat == 0
    assert _respond(session, BEAVER_TAKE) == "take"


def test_beavers_stop_at_gnubgs_limit() -> None:
    # We doubled 1 -> 2 and gnubg beavered (cube field 2): a raccoon is the second beaver.
    session = PlayerSession(ScriptedAgent(double=True, take=TakeDecision.BEAVER))
    assert _respond(session, MONEY_ROLL_SEAT0) == "double"
    assert _respond(session, BEAVER_TAKE) == "beaver"
    # gnubg beavered once more (cube field 8, pending 16): three made, gnubg allows three.
    third = _board_with(BEAVER_TAKE, 38, "8")
    assert _respond(session, third) == "take"
    limited = PlayerSession(ScriptedAgent(double=True, take=TakeDecision.BEAVER), max_beavers=1)
    assert _respond(limited, MONEY_ROLL_SEAT0) == "double"
    assert _respond(limited, BEAVER_TAKE) == "take"


def test_beaver_past_gnubgs_highest_cube_is_not_sent() -> None:
    huge = _board_with(_board_with(_board_with(TAKE_REQUEST, 4, "0"), 38, "2048"), 39, "0")
    assert _respond(PlayerSession(ScriptedAgent(take=TakeDecision.BEAVER)), huge) == "take"


def test_a_refused_reply_is_not_repeated() -> None:
    # gnubg answers a double or beaver it does not allow by asking the same question again.
    session = PlayerSession(ScriptedAgent(double=True))
    assert _respond(session, ROLL_REQUEST) == "double"
    assert _respond(session, ROLL_REQUEST) == "roll"
    money_take = _board_with(TAKE_REQUEST, 4, "0")
    session = PlayerSession(ScriptedAgent(take=TakeDecision.BEAVER))
    assert _respond(session, money_take) == "beaver"
    assert _respond(session, money_take) == "take"


def test_declined_resignation_is_not_offered_again_on_the_same_board() -> None:
    session = PlayerSession(ScriptedAgent(resign=1))
    assert _respond(session, OPENING_63) == "resign single"
    again = _respond(session, OPENING_63)  # gnubg declined: the same request comes back
    assert not again.startswith("resign")
    board = parse_board(OPENING_63, Dialect.GNUBG)
    parse_play(again, board.position, (6, 3))


def test_resignation_on_roll_request_and_only_once_per_turn() -> None:
    session = PlayerSession(ScriptedAgent(resign=2))
    assert _respond(session, ROLL_REQUEST) == "resign gammon"
    assert _respond(session, ROLL_REQUEST) == "roll"  # declined: play on
    rolled = _board_with(_board_with(_board_with(_board_with(ROLL_REQUEST, 34, "5"), 35, "2"),
                                     36, "5"), 37, "2")
    assert not _respond(session, rolled).startswith("resign")  # same turn: not asked again


@pytest.mark.parametrize("line, words", [
    ("hello", "board:"),
    ("", "empty"),
    ("board:gnubg:root:3:0:0", "53"),
    (_board_with(OPENING_63, 8, "-3"), "chequers"),          # 16 chequers for gnubg
    (_board_with(OPENING_63, 34, "7"), "token 34"),          # a die of 7
    (_board_with(OPENING_63, 42, "-1"), "colour"),           # a FIBS line, not gnubg's
    ("board:" + "x:" * 60, "token"),
])
def test_bad_requests_get_an_error_line(line: str, words: str) -> None:
    session = PlayerSession(create_agent("heuristic"))
    reply = asyncio.run(session.respond(line))
    assert reply.is_error and reply.text.startswith("Error: ") and words in reply.text
    assert "\n" not in reply.text
    assert session.errors == 1
    assert _respond(session, OPENING_63)  # the session still works


def test_agent_failure_and_illegal_play_are_errors_not_moves() -> None:
    assert _respond(PlayerSession(ScriptedAgent(fail=True)), OPENING_63).startswith("Error: ")
    bogus = Play([(13, 4), (13, 10)])  # 9 and 3 with 6-3: not a legal play
    assert _respond(PlayerSession(ScriptedAgent(play=bogus)), OPENING_63).startswith("Error: ")


def test_seat_is_fixed_for_the_connection() -> None:
    session = PlayerSession(create_agent("heuristic"))
    _respond(session, OPENING_63)
    assert _respond(session, MONEY_MOVE_SEAT0).startswith("Error: ")  # the other seat's request


def test_log_records_requests_and_game_boundaries(tmp_path: Path) -> None:
    from bgbot.frontends.gnubg_log import JsonLinesLog

    log_path = tmp_path / "c.jsonl"
    session = PlayerSession(ScriptedAgent(take=TakeDecision.DROP), log_file=JsonLinesLog(log_path))
    _respond(session, OPENING_63)
    _respond(session, TAKE_REQUEST)  # we drop: gnubg (player 0) wins 1 point
    next_game = _board_with(_board_with(OPENING_63, 5, "1"), 6, "0")
    _respond(session, next_game)
    session.close("test over")
    games = games_from_log(read_log(log_path))
    assert [(g.game, g.score) for g in games] == [(1, (0, 0)), (2, (1, 0))]
    assert (games[0].winner, games[0].points, games[0].ending, games[0].inferred) == (
        0, 1, "drop", False)
    assert [a["action"] for a in games[0].actions] == ["move", "drop"]
    assert games[1].inferred  # the connection ended mid-game: settled from what we saw


def test_every_captured_gnubg_request_gets_a_valid_reply() -> None:
    """Replay the requests a real gnubg sent (tests/data) and check each reply by its kind."""
    import json

    sessions: dict[int, list[dict[str, Any]]] = {}
    with (DATA / "gnubg_player_requests.jsonl").open() as handle:
        for raw in handle:
            record = json.loads(raw)
            sessions.setdefault(record["session"], []).append(record)
    assert len(sessions) >= 4
    kinds: set[str] = set()
    for records in sessions.values():
        session = PlayerSession(create_agent("heuristic"))
        for record in records:
            reply = asyncio.run(session.respond(record["line"] + "\n"))
            board = parse_board(record["line"], Dialect.GNUBG, my_seat=record["seat"])
            assert board.kind.value == record["kind"]
            kinds.add(record["kind"])
            if record["kind"] == "move":
                assert board.dice is not None
                plays = board.position.legal_plays(board.dice)
                if reply.text.startswith("resign "):
                    assert reply.text.split()[1] in ("single", "gammon", "backgammon")
                elif plays:
                    parse_play(reply.text, board.position, board.dice)  # legal, or raises
                else:
                    assert reply.text == ""
            elif record["kind"] == "roll_or_double":
                assert reply.text in ("roll", "double") or reply.text.startswith("resign ")
            else:
                allowed = {"take", "drop"} | ({"beaver"} if board.is_money else set())
                assert reply.text in allowed
        assert session.errors == 0 and session.seat == records[0]["seat"]
    assert kinds == {"move", "roll_or_double", "take"}


# ============================================================================ addresses


@pytest.mark.parametrize("text, host, port, path", [
    ("127.0.0.1:40001", "127.0.0.1", 40001, None),
    ("localhost:0", "localhost", 0, None),
    ("[::1]:5000", "::1", 5000, None),
    (":7000", "0.0.0.0", 7000, None),
    ("/tmp/bgbot.sock", None, None, "/tmp/bgbot.sock"),
    ("ext.sock", None, None, "ext.sock"),
    ("unix:/run/x.sock", None, None, "/run/x.sock"),
])
def test_listen_address_parse(text: str, host: str | None, port: int | None,
                              path: str | None) -> None:
    address = ListenAddress.parse(text)
    assert (address.host, address.port, address.path) == (host, port, path)


@pytest.mark.parametrize("text", ["", "127.0.0.1:99999", "unix:", "127.0.0.1:abc", "host:",
                                  "localhost:-1", "a:b:c", "[::1]:port"])
def test_listen_address_rejects(text: str) -> None:
    from bgbot.core.errors import FormatError

    with pytest.raises(FormatError):
        ListenAddress.parse(text)


def test_a_bad_port_is_refused_and_binds_no_socket(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "bgbot.cli", "gnubg-player", "--listen",
                           "127.0.0.1:abc"], capture_output=True, text=True, timeout=60,
                          cwd=tmp_path)
    assert done.returncode == 2 and "HOST:PORT with a port of 1..65535" in done.stderr
    assert list(tmp_path.iterdir()) == []  # no Unix socket named 127.0.0.1:abc


# ============================================================================ hostile peers


async def _exchange(address: ListenAddress, payload: bytes, *, timeout: float = 5.0) -> bytes:
    """Connect, send ``payload``, read one reply line."""
    reader, writer = await _connect(address)
    writer.write(payload)
    await writer.drain()
    line = await asyncio.wait_for(reader.readline(), timeout)
    writer.close()
    return line


async def _connect(address: ListenAddress) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    if address.path is not None:
        return await asyncio.open_unix_connection(address.path)
    assert address.host is not None and address.port is not None
    return await asyncio.open_connection(address.host, address.port)


async def _closed_by_server(reader: asyncio.StreamReader, timeout: float) -> bool:
    """True when the server closes the connection within ``timeout`` (after any replies)."""
    try:
        async with asyncio.timeout(timeout):
            while await reader.read(65536):
                pass
        return True
    except (TimeoutError, asyncio.TimeoutError):
        return False
    except ConnectionError:
        return True


def _frame(line: str) -> bytes:
    return line.encode() + b"\n\x00"


def test_listener_survives_hostile_peers(tmp_path: Path) -> None:
    async def scenario() -> None:
        config = PlayerServerConfig(player="heuristic", line_timeout=0.3, max_line=4096,
                                    log_dir=tmp_path)
        async with GnubgPlayerServer(config) as server:
            address = await server.start("127.0.0.1:0")

            # Garbage, then a proper request on the same connection: error, then an answer.
            reader, writer = await _connect(address)
            writer.write(b"\xff\xfegarbage \x01\x02\n")
            await writer.drain()
            assert (await reader.readline()).startswith(b"Error: ")
            writer.write(_frame(OPENING_63))
            await writer.drain()
            answer = (await reader.readline()).decode().strip()
            parse_play(answer, parse_board(OPENING_63, Dialect.GNUBG).position, (6, 3))
            writer.close()

            # A 10 MB line: an error line (unless the reset beats it), then the server closes.
            reader, writer = await _connect(address)
            with contextlib.suppress(ConnectionError):
                writer.write(b"board:" + b"9" * 10_000_000 + b"\n")
                await writer.drain()
            with contextlib.suppress(ConnectionError):
                first = await asyncio.wait_for(reader.readline(), 5)
                assert first == b"" or first.startswith(b"Error: request line longer")
            assert await _closed_by_server(reader, 5)
            writer.close()

            # Half a line, then silence: closed after line_timeout.
            reader, writer = await _connect(address)
            writer.write(OPENING_63[:40].encode())
            await writer.drain()
            started = time.monotonic()
            assert await _closed_by_server(reader, 5)
            assert 0.25 <= time.monotonic() - started < 4
            writer.close()

            # An idle connection (nothing pending) is not closed: gnubg is silent between games.
            reader, writer = await _connect(address)
            assert not await _closed_by_server(reader, 0.6)
            writer.write(_frame(ROLL_REQUEST))
            await writer.drain()
            assert (await reader.readline()).strip() in (b"roll", b"double")
            writer.close()

            # Disconnect mid-line, and disconnect right after a request without reading.
            for payload in (OPENING_63[:70].encode(), _frame(OPENING_63)):
                reader, writer = await _connect(address)
                writer.write(payload)
                await writer.drain()
                writer.close()
                await writer.wait_closed()

            # An impossible board: an error line, and the connection stays usable.
            reader, writer = await _connect(address)
            writer.write(_frame(_board_with(OPENING_63, 8, "-7")))
            await writer.drain()
            assert b"chequers" in await reader.readline()
            writer.write(_frame(TAKE_REQUEST))
            await writer.drain()
            assert (await reader.readline()).strip() in (b"take", b"drop")
            writer.close()

            await asyncio.sleep(0.1)
            # A normal client afterwards.
            assert (await _exchange(address, _frame(ROLL_REQUEST))).strip() in (b"roll",
                                                                                  b"double")
            stats = server.stats
            assert stats.active <= 1
            assert stats.protocol_errors >= 5
            assert stats.connections == 8

    asyncio.run(scenario())
    logs = list(tmp_path.glob("*.jsonl"))
    assert len(logs) == 8
    errors = [r for p in logs for r in read_log(p) if r["event"] == "error"]
    reasons = " | ".join(r["reason"] for r in errors)
    for expected in ("expected a gnubg 'board:", "longer than 4096", "silence", "in the middle",
                     "chequers"):
        assert expected in reasons


def test_a_flood_of_garbage_is_cut_off() -> None:
    async def scenario() -> None:
        config = PlayerServerConfig(max_consecutive_errors=5)
        async with GnubgPlayerServer(config) as server:
            address = await server.start("127.0.0.1:0")
            reader, writer = await _connect(address)
            writer.write(b"nonsense\n" * 50)
            await writer.drain()
            replies = []
            while line := await asyncio.wait_for(reader.readline(), 5):
                replies.append(line)
            assert len(replies) == 5 and all(r.startswith(b"Error: ") for r in replies)
            writer.close()
            assert (await _exchange(address, _frame(ROLL_REQUEST))).strip() in (b"roll",
                                                                                  b"double")

    asyncio.run(scenario())


def test_many_connections_at_once() -> None:
    async def client(address: ListenAddress, lines: list[str]) -> list[str]:
        reader, writer = await _connect(address)
        replies = []
        for line in lines:
            writer.write(_frame(line))
            await writer.drain()
            replies.append((await reader.readline()).decode().strip())
        writer.close()
        return replies

    async def scenario() -> None:
        async with GnubgPlayerServer(PlayerServerConfig(player="pubeval")) as server:
            address = await server.start("127.0.0.1:0")
            lines = [ROLL_REQUEST, OPENING_63, BAR_11, TAKE_REQUEST] * 5
            results = await asyncio.gather(*(client(address, lines) for _ in range(24)))
            assert all(len(r) == len(lines) and not any(x.startswith("Error") for x in r)
                       for r in results)
            assert server.stats.connections == 24 and server.stats.protocol_errors == 0

    asyncio.run(scenario())


def test_unix_socket(tmp_path: Path) -> None:
    path = tmp_path / "bgbot.sock"

    async def scenario() -> None:
        async with GnubgPlayerServer(PlayerServerConfig()) as server:
            address = await server.start(str(path))
            assert address.path == str(path)
            assert (await _exchange(address, _frame(ROLL_REQUEST))).strip() in (b"roll",
                                                                                  b"double")
        assert not path.exists()

    asyncio.run(scenario())


def test_unix_socket_path_that_is_a_file_is_not_replaced(tmp_path: Path) -> None:
    from bgbot.core.errors import FormatError

    path = tmp_path / "precious.txt"
    path.write_text("keep me")

    async def scenario() -> None:
        async with GnubgPlayerServer(PlayerServerConfig()) as server:
            with pytest.raises(FormatError):
                await server.start(str(path))

    asyncio.run(scenario())
    assert path.read_text() == "keep me"


def test_cli_help_teaches_the_gnubg_commands(capsys: pytest.CaptureFixture[str]) -> None:
    import argparse

    from bgbot.cli.gnubg_player import register

    parser = argparse.ArgumentParser(prog="bgbot")
    register(parser.add_subparsers(dest="command"))
    with pytest.raises(SystemExit):
        parser.parse_args(["gnubg-player", "--help"])
    text = capsys.readouterr().out
    for needed in ("set player 1 external 127.0.0.1:", "new match", "--listen", "--agent",
                   "--logs", "--config", "heuristic", "play"):
        assert needed in text
    args = parser.parse_args(["gnubg-player", "--listen", "127.0.0.1:0", "--beavers", "1"])
    assert args.func is not None and args.beavers == 1


# ============================================================================ real gnubg


needs_gnubg = pytest.mark.skipif(GNUBG is None, reason="GNU Backgammon is not installed")


@dataclass
class HostedRun:
    """What one gnubg-hosted run left behind."""

    output: str
    stalls: int
    mat: MatchRecord
    mat_path: Path
    logs: list[list[dict[str, Any]]]
    errors: int
    exit_code: int
    seconds: float
    results: list[tuple[str, str, int]] = field(default_factory=list)
    """gnubg's printed game results: (winner name, kind, points)."""
    final_score: tuple[int, int] | None = None
    """gnubg's last printed score, (player 0, player 1)."""


_RESULT = re.compile(r"(\S+) wins (a single game|a gammon|a backgammon) and (\d+) points?\.")


async def host_run(tmp: Path, *, seed: int, length: int, player: str = "heuristic",
                   external_seat: int = 1, money_games: int = 0,
                   server: GnubgPlayerServer | None = None,
                   address: str | None = None,
                   names: tuple[str, str] = ("gnubg", "bgbot"),
                   log_dir: Path | None = None) -> HostedRun:
    """gnubg (0-ply) hosts a ``length``-point match (or ``money_games`` money games with
    Jacoby and beavers) against our listener (started here unless ``address`` is given).

    With a shared listener, pass its ``log_dir``: the run's log is the one whose match has
    ``names`` (so give every run its own names)."""
    assert GNUBG is not None
    tmp.mkdir(parents=True, exist_ok=True)
    own = server is None and address is None
    if own:
        server = GnubgPlayerServer(PlayerServerConfig(player=player, log_dir=tmp / "logs"))
        address = str(await server.start("127.0.0.1:0"))
    assert address is not None
    started = time.monotonic()
    host = GnubgHost(GNUBG, tmp)
    await host.start()
    try:
        money = ["set jacoby on", "set beavers 3", "set automatic game off"] if not length else []
        await host.commands(match_script(seed=seed, length=length, external=address,
                                         external_seat=external_seat, extra=money,
                                         names=names))
        stalls = 0
        if length:
            await host.commands([f"new match {length}"])
            output, stalls = await host.play_until(lambda text: bool(MATCH_OVER.search(text)))
        else:
            output = ""
            for number in range(money_games):
                await host.commands(["new session" if number == 0 else "new game"])
                text, stalled = await host.play_until(lambda t: bool(GAME_OVER.search(t)))
                output += text
                stalls += stalled
        mat_path = tmp / "gnubg.mat"
        await host.commands([f"export match mat {mat_path}", "show score"])
        output += await host.sync()
    finally:
        code = await host.quit()
        if own and server is not None:
            await server.close()
    seconds = time.monotonic() - started
    rules = Rules(jacoby=True, beavers=True) if not length else None
    with mat_path.open() as handle:
        mat = read_match(handle, rules=rules)
    logs = [read_log(p) for p in sorted((tmp / "logs").glob("*.jsonl"))] if own else []
    if log_dir is not None:
        every = [read_log(p) for p in sorted(log_dir.glob("*.jsonl"))]
        logs = [records for records in every if any(
            r["event"] == "match_start" and r["names"] == list(names) for r in records)]
    scores = SCORE.findall(output)
    final = (int(scores[-1][2]), int(scores[-1][4])) if scores else None
    results = [(w, k, int(p)) for w, k, p in _RESULT.findall(output)]
    errors = server.stats.protocol_errors if own and server is not None else 0
    return HostedRun(output, stalls, mat, mat_path, logs, errors, code, seconds, results, final)


def _our_mat_actions(mat: MatchRecord, game_index: int, seat: int) -> list[tuple[Any, ...]]:
    """Our seat's decisions in one game of gnubg's export, comparable with our log."""
    out: list[tuple[Any, ...]] = []
    for action in mat.games[game_index].actions:
        if getattr(action, "seat", None) != seat:
            continue
        if isinstance(action, Moved):
            after = action.before.apply(action.play)
            out.append(("move", tuple(sorted(action.dice)), after.position_id()))
        elif isinstance(action, Doubled):
            out.append(("double", action.cube))
        elif isinstance(action, Taken):
            out.append(("take", action.cube))
        elif isinstance(action, Dropped):
            out.append(("drop",))
        elif isinstance(action, (Beavered, Raccooned)):
            out.append(("beaver", action.cube))
        elif isinstance(action, Resigned):
            out.append(("resign", action.value))
    return out


def _our_log_actions(game: LoggedGame, declined: set[int]) -> list[tuple[Any, ...]]:
    out: list[tuple[Any, ...]] = []
    for record in game.actions:
        action = record["action"]
        if action == "move":
            out.append(("move", tuple(sorted(record["dice"])), record["after"]))
        elif action in ("double", "take", "beaver"):
            out.append((action, record["to"]))
        elif action == "drop":
            out.append(("drop",))
        elif action == "resign" and record["n"] not in declined:
            out.append(("resign", record["value"]))
    return out


def check_log_against_mat(run: HostedRun, seat: int) -> None:
    """Our log and gnubg's export agree on every action we took and every game's points."""
    assert len(run.logs) == 1, "one connection expected"
    records = run.logs[0]
    declined = set()
    for previous, record in zip(records, records[1:]):
        if record["event"] == "resignation_declined" and previous.get("action") == "resign":
            declined.add(previous["n"])
    games = games_from_log(records)
    assert len(games) == len(run.mat.games)
    for index, (logged, exported) in enumerate(zip(games, run.mat.games)):
        assert logged.score == exported.score, f"game {index + 1}: score before the game"
        mine = _our_log_actions(logged, declined)
        theirs = _our_mat_actions(run.mat, index, seat)
        assert mine == theirs, f"game {index + 1}: our actions differ from gnubg's export"
        assert exported.outcome is not None
        assert logged.winner == exported.outcome.winner, f"game {index + 1}"
        if logged.inferred and logged.ending == "normal":
            # we never see gnubg's last rolls: an inferred kind is the least it could be
            assert 0 < logged.points <= exported.outcome.points, f"game {index + 1}"
        else:
            assert logged.points == exported.outcome.points, f"game {index + 1}"
    starts = [r for r in records if r["event"] == "game_start"]
    assert [s["crawford"] for s in starts] == [g.crawford for g in run.mat.games]


def check_export(run: HostedRun) -> None:
    """gnubg's export replays through our reader with the score gnubg printed."""
    assert run.exit_code == 0, run.output[-2000:]
    assert run.errors == 0
    assert "rror" not in run.output  # no "Error:" echoed by gnubg, no parse warnings
    assert run.final_score is not None
    assert run.mat.final_score == run.final_score
    assert [r[2] for r in run.results] == [g.points for g in run.mat.games]


CUBE_PLAYER = "random:cube=on"
"""The agent of the two seeded runs below: its cube actions come from its own seed, not from
the heuristic's weights, so retraining the heuristic cannot make the seeds miss their cases."""

MATCH_SEED = 1
"""A 5-point match (0-ply gnubg vs CUBE_PLAYER, external = player 1) in which bgbot doubles,
takes and drops, and a Crawford game is played (found by a seed search)."""

MONEY_SEED = 3
"""A money session (external = player 0) in which gnubg beavers bgbot's double and stalls."""


@pytest.mark.gnubg
@needs_gnubg
def test_gnubg_hosts_a_five_point_match(tmp_path: Path) -> None:
    run = asyncio.run(host_run(tmp_path, seed=MATCH_SEED, length=5, player=CUBE_PLAYER))
    check_export(run)
    assert max(run.mat.final_score) >= 5
    ours = [a for g in run.mat.games for a in g.actions if getattr(a, "seat", None) == 1]
    kinds = {type(a).__name__ for a in ours}
    assert {"Doubled", "Taken", "Dropped"} <= kinds, kinds
    assert any(g.crawford for g in run.mat.games)
    assert run.stalls == 0
    check_log_against_mat(run, seat=1)


@pytest.mark.gnubg
@needs_gnubg
def test_gnubg_hosts_a_money_session_with_beavers(tmp_path: Path) -> None:
    run = asyncio.run(host_run(tmp_path, seed=MONEY_SEED, length=0, money_games=3,
                               external_seat=0, player=CUBE_PLAYER))
    check_export(run)
    assert run.mat.length == 0 and len(run.mat.games) == 3
    beavered_us = [a for g in run.mat.games for a in g.actions
                   if isinstance(a, Beavered) and a.seat == 1]
    assert beavered_us, "the seed should make gnubg beaver our double"
    assert run.stalls >= 1  # gnubg stops after we take its beaver; `play` resumed it
    check_log_against_mat(run, seat=0)


@pytest.mark.gnubg
@needs_gnubg
def test_cli_listener_as_a_subprocess(tmp_path: Path) -> None:
    """`python -m bgbot.cli gnubg-player` serves gnubg for a 3-point match, then exits on TERM."""
    process = subprocess.Popen(
        [sys.executable, "-m", "bgbot.cli", "gnubg-player", "--listen", "127.0.0.1:0",
         "--log-dir", str(tmp_path / "logs"), "--player", "pubeval"],
        stderr=subprocess.PIPE, text=True, cwd=Path(__file__).resolve().parents[1],
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])},
    )
    try:
        assert process.stderr is not None
        banner = process.stderr.readline()
        found = re.search(r"external (\S+)", banner)
        assert found, banner
        run = asyncio.run(host_run(tmp_path, seed=3, length=3, address=found[1]))
        check_export(run)
    finally:
        process.terminate()
        assert process.wait(10) == 0
    logs = list((tmp_path / "logs").glob("*.jsonl"))
    assert len(logs) == 1
    records = read_log(logs[0])
    assert records[-1]["event"] == "disconnect"
    assert sum(r["event"] == "request" for r in records) > 10


@pytest.mark.gnubg
@needs_gnubg
def test_gnubg_connects_over_a_unix_socket(tmp_path: Path) -> None:
    """gnubg 1.07 reads an external address without ':' as a Unix socket path."""

    async def scenario() -> HostedRun:
        config = PlayerServerConfig(player="pubeval", log_dir=tmp_path / "logs")
        async with GnubgPlayerServer(config) as server:
            path = str(await server.start(str(tmp_path / "bgbot.sock")))
            return await host_run(tmp_path / "run", seed=4, length=3, server=server,
                                  address=path, log_dir=tmp_path / "logs")

    run = asyncio.run(scenario())
    check_export(run)
    check_log_against_mat(run, seat=1)


@pytest.mark.gnubg
@pytest.mark.slow
@needs_gnubg
def test_twenty_matches_without_protocol_errors(tmp_path: Path) -> None:
    """20 gnubg-hosted matches (3 and 5 points, bgbot in either seat), four gnubg processes at
    a time against one listener."""
    SEEDS = range(101, 121)

    async def scenario() -> tuple[int, list[HostedRun]]:
        runs: list[HostedRun] = []
        config = PlayerServerConfig(player="heuristic", log_dir=tmp_path / "logs")
        async with GnubgPlayerServer(config) as server:
            address = str(await server.start("127.0.0.1:0"))
            gate = asyncio.Semaphore(4)

            async def one(seed: int) -> HostedRun:
                async with gate:
                    return await host_run(tmp_path / f"m{seed}", seed=seed,
                                          length=3 if seed % 2 else 5, server=server,
                                          address=address, external_seat=seed % 2,
                                          names=(f"gnubg{seed}", f"bgbot{seed}"),
                                          log_dir=tmp_path / "logs")

            runs = list(await asyncio.gather(*(one(seed) for seed in SEEDS)))
            return server.stats.protocol_errors, runs

    errors, runs = asyncio.run(scenario())
    assert errors == 0
    for seed, run in zip(SEEDS, runs):
        check_export(run)
        check_log_against_mat(run, seat=seed % 2)
    print(f"20 matches, {sum(len(r.mat.games) for r in runs)} games, protocol errors {errors}, "
          f"longest {max(r.seconds for r in runs):.1f} s")
