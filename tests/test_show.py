"""`bgbot show FILE.mat --game N --move M`: a position of a match file, with ids that gnubg and
`bgbot hint` take."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from bgbot import Rules
from bgbot.core.game import Moved
from bgbot.formats.gnubgid import decode_gnubgid
from bgbot.formats.mat import MatchRecord, format_match, parse_match
from bgbot.referee.matlog import MatLogger
from bgbot.referee.series import SeriesConfig, run_series_sync

from .test_mat import run_script


def bgbot(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([sys.executable, "-m", "bgbot.cli", *args], capture_output=True,
                          text=True, timeout=300)
    if check:
        assert done.returncode == 0, done.stderr
    return done


def gnubg_id_of(text: str) -> str:
    found = re.search(r"gnubg id: (\S+)", text)
    assert found, text
    return found.group(1)


def longest(path: Path) -> int:
    """The number of the game with the most moves."""
    games = parse_match(path.read_text()).games
    counts = [sum(isinstance(a, Moved) for a in g.actions) for g in games]
    return counts.index(max(counts)) + 1


@pytest.fixture(scope="module")
def match_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("show")
    config = SeriesConfig("random:seed=1,cube=on", "random:seed=2,cube=on", length=5, seed=6)
    logger = MatLogger(tmp, config)
    run_series_sync(config, listeners=logger.listeners)
    (path,) = logger.paths
    return path


def test_the_position_before_each_move_with_its_roll_and_score(match_file: Path) -> None:
    record = parse_match(match_file.read_text())
    for number, game in enumerate(record.games, 1):
        moves = [a for a in game.actions if isinstance(a, Moved)]
        for index in sorted({1, 2, len(moves) // 2, len(moves)}):
            out = bgbot("show", str(match_file), "--game", str(number), "--move",
                        str(index)).stdout
            position, state = decode_gnubgid(gnubg_id_of(out))
            move = moves[index - 1]
            assert position == move.before
            assert sorted(state.dice) == sorted(move.dice)
            assert state.on_roll == move.seat and state.score == game.score
            assert state.match_length == 5 and state.crawford == game.crawford
            assert f"Position ID {move.before.position_id()}" in out
            assert f"played: {move.play or 'no move'}" in out


def test_the_cube_is_the_one_in_play_at_that_move(tmp_path: Path) -> None:
    game = run_script("open 3 1;move 8/5 6/5;double;take;roll 6 4;move 24/14;roll 2 1;"
                      "move 13/11 6/5", Rules())
    record = MatchRecord.create(0, ("Alice", "Bob"))
    record.add_game(game)
    path = tmp_path / "cube.mat"
    path.write_text(format_match(record))
    before, after = (decode_gnubgid(gnubg_id_of(bgbot("show", str(path), "--move", m).stdout))[1]
                     for m in ("1", "3"))
    assert (before.cube, before.cube_owner) == (1, -1)
    assert (after.cube, after.cube_owner) == (2, 0)  # Bob doubled, Alice took


@pytest.mark.gnubg
def test_gnubg_takes_the_id_as_it_is(gnubg_binary: str, match_file: Path,
                                     tmp_path: Path) -> None:
    gnubg_id = gnubg_id_of(bgbot("show", str(match_file), "--game", str(longest(match_file)),
                                 "--move", "4").stdout)
    prefs = tmp_path / "prefs"
    prefs.mkdir()
    shown = subprocess.run([gnubg_binary, "-t", "-q", "-r", "-s", str(prefs)],
                           input=f"set gnubgid {gnubg_id}\n", capture_output=True, text=True,
                           timeout=60).stdout
    position_id, match_id = gnubg_id.split(":")
    assert f"Position ID: {position_id}" in shown and f"Match ID   : {match_id}" in shown


def test_bgbot_hint_ranks_the_plays_of_that_roll(match_file: Path) -> None:
    record = parse_match(match_file.read_text())
    number = longest(match_file)
    move = [a for a in record.games[number - 1].actions if isinstance(a, Moved)][2]
    gnubg_id = gnubg_id_of(bgbot("show", str(match_file), "--game", str(number), "--move",
                                 "3").stdout)
    data = json.loads(bgbot("hint", gnubg_id, "--json").stdout)
    assert sorted(p["move"] for p in data["plays"]) == sorted(
        str(p) for p in move.before.legal_plays(move.dice))


@pytest.mark.parametrize("args, message", [
    (("--game", "99"), "--game 99: "),
    (("--move", "9999"), "--move 9999: game 1 has "),
])
def test_a_game_or_move_beyond_the_file_is_named(match_file: Path, args: tuple[str, ...],
                                                 message: str) -> None:
    done = bgbot("show", str(match_file), *args, check=False)
    assert done.returncode == 2 and message in done.stderr


def test_game_and_move_need_a_match_file() -> None:
    done = bgbot("show", "4HPwATDgc/ABMA", "--move", "3", check=False)
    assert done.returncode == 2 and "for a match file" in done.stderr


@pytest.mark.parametrize("name", ["nofile.mat", "matches/missing.mat", "/no/such/place"])
def test_a_missing_file_is_called_a_missing_file(tmp_path: Path, name: str) -> None:
    """It was called "not a Position ID"."""
    done = subprocess.run([sys.executable, "-m", "bgbot.cli", "show", name], capture_output=True,
                          text=True, timeout=60, cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.startswith(f"bgbot show: {name}: no such file"), done.stderr


def test_a_bad_position_text_is_still_called_one() -> None:
    done = bgbot("show", "4HPwATDgc", check=False)
    assert done.returncode == 2 and "not a Position ID" in done.stderr
