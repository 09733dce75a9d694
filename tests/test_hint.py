"""`bgbot hint` and `bgbot plays`: the heuristic player's ranking and cube advice.

The player is being retrained, so nothing here names the plays it prefers or its equities:
the tests hold properties -- every legal play listed once, the first one the play the player
chooses, the cube advice the decisions the player makes, the units of each kind of game.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest

from bgbot import Position
from bgbot.core.context import Context, CubeOwner
from bgbot.core.rules import Rules
from bgbot.formats.gnubgid import MatchState, encode_gnubgid
from bgbot.players.base import TakeDecision
from bgbot.players.heuristic import HeuristicPlayer

# a middle-game position with many plays for most rolls (from the reference data's ids)
MIDDLE = "4HPwATDgc/ABMA"
OPENING = Position.initial()


def bgbot(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([sys.executable, "-m", "bgbot.cli", *args], capture_output=True,
                          text=True, timeout=300)
    if check:
        assert done.returncode == 0, done.stderr
    return done


def hint_json(*args: str) -> dict[str, Any]:
    result: dict[str, Any] = json.loads(bgbot("hint", *args, "--json").stdout)
    return result


def some_positions() -> list[Position]:
    """The opening and a few positions reached from it (legal by construction)."""
    found = [OPENING]
    position = OPENING
    for dice in ((6, 4), (5, 5), (3, 1), (6, 2)):
        plays = position.legal_plays(dice)
        position = position.apply(plays[len(plays) // 2]).swapped()
        found.append(position)
    return found


@pytest.mark.parametrize("plies", [0, 1])
def test_hint_lists_every_legal_play_once_the_players_choice_first(plies: int) -> None:
    player = HeuristicPlayer(plies=plies)
    for position in some_positions()[::2]:
        for dice in ((2, 1), (6, 6)):
            data = hint_json(position.position_id(), f"{dice[0]}{dice[1]}", "--plies", str(plies))
            moves = [p["move"] for p in data["plays"]]
            assert sorted(moves) == sorted(str(p) for p in position.legal_plays(dice))
            assert len(set(moves)) == len(moves)
            assert moves[0] == str(player.choose_play(position, dice, Context()))
            assert data["ranked_by"] == "equity"
            for play in data["plays"]:
                assert set(play["chances"]) == {"win", "win_gammon", "win_backgammon",
                                                "lose_gammon", "lose_backgammon"}
                assert 0 <= play["depth"] <= plies
                after = Position.from_position_id(play["position_id"])
                assert after == position.apply(next(p for p in position.legal_plays(dice)
                                                    if str(p) == play["move"]))
            deepest = [p["equity"] for p in data["plays"] if p["depth"] == data["plays"][0]["depth"]]
            assert deepest == sorted(deepest, reverse=True)  # best first at the deepest look


def test_plays_lists_the_same_plays_in_the_same_order_as_hint() -> None:
    listed = bgbot("plays", MIDDLE, "43").stdout.split("\n")[:-1]
    assert listed == [p["move"] for p in hint_json(MIDDLE, "43")["plays"]]


def test_a_match_position_is_ranked_by_match_winning_chances() -> None:
    state = MatchState(cube=2, cube_owner=1, on_roll=0, turn=0, dice=(5, 3), match_length=7,
                       score=(2, 4))
    gnubg_id = encode_gnubgid(OPENING, state)
    data = hint_json(gnubg_id)  # the dice come from the id
    assert data["dice"] == [5, 3] and data["ranked_by"] == "mwc"
    assert all(0.0 <= p["mwc"] <= 1.0 for p in data["plays"])
    context = Context(cube_value=2, cube_owner=CubeOwner.OPPONENT, match_length=7, my_score=2,
                      opponent_score=4)
    assert data["plays"][0]["move"] == str(HeuristicPlayer().choose_play(OPENING, (5, 3), context))
    refused = bgbot("hint", gnubg_id, "21", check=False)
    assert refused.returncode == 2 and "the position says 53 were rolled" in refused.stderr


def test_the_cube_advice_is_the_players_own_decisions() -> None:
    player = HeuristicPlayer()
    for position in some_positions():
        data = hint_json(position.position_id())
        cube = data["cube"]
        assert cube["may_double"] is True and data["units"] == "equity"
        assert cube["double_pass"] == 1.0  # money: per cube, a pass gives the doubler 1
        assert cube["double"] is player.should_double(position, Context())
        taker = player.take_decision(position, Context())
        assert cube["take"] is (taker is not TakeDecision.DROP)
        assert cube["proper"].startswith("double" if cube["double"] else ("no double",
                                                                           "too good"))


def test_cube_advice_at_a_match_score_is_in_match_winning_chances() -> None:
    state = MatchState(match_length=5, score=(1, 3), on_roll=1, turn=1)
    data = hint_json(encode_gnubgid(OPENING, state))
    assert data["units"] == "mwc"
    cube = data["cube"]
    assert all(0.0 <= cube[k] <= 1.0 for k in ("no_double", "double_take", "double_pass"))
    context = Context(match_length=5, my_score=3, opponent_score=1)
    assert cube["double"] is HeuristicPlayer().should_double(OPENING, context)


def test_no_cube_advice_where_no_double_is_possible() -> None:
    crawford = MatchState(match_length=7, score=(6, 3), crawford=True)
    data = hint_json(encode_gnubgid(OPENING, crawford))
    assert data["cube"] == {"may_double": False, "why": Context(
        match_length=7, my_score=6, opponent_score=3, crawford=True).double_refusal()}
    text = bgbot("hint", encode_gnubgid(OPENING, crawford)).stdout
    assert "no double possible: this is the Crawford game" in text


def test_the_text_says_the_rank_equity_and_chances() -> None:
    text = bgbot("hint", MIDDLE, "31").stdout.splitlines()
    assert text[0].startswith("heuristic-0ply, 31 to play (money, cube 1 centred)")
    assert text[2].lstrip().startswith("1. ") and text[3].lstrip().startswith("2. ")
    assert len(text) == 3 + len(Position.from_position_id(MIDDLE).legal_plays((3, 1)))


def test_the_chance_columns_are_labelled() -> None:
    """Each of the six chances has its name above it, and a line says what they are."""
    text = bgbot("hint", MIDDLE, "31").stdout.splitlines()
    header, first = text[1], text[2]
    chances = first.split("  ")[-2].strip().replace(" - ", " ").split()
    assert len(chances) == 6
    for name, value in zip(["win", "gam", "bg", "lose", "gam", "bg"], chances):
        at = first.index(value, first.index("equity") + 15) if name == "win" else \
            first.index(value, at + 1)
        assert header[at:at + 5].strip() == name, (header, first)
    assert text[-1].startswith("chances after the play, for the side that plays it: win,")
    cube = bgbot("hint", MIDDLE).stdout.splitlines()
    assert cube[1].split() == ["win", "gam", "bg", "-", "lose", "gam", "bg"]


def _carried_survivor() -> tuple[Position, tuple[int, int]]:
    """A position and roll where 2-ply's second filter leaves one play (seeded search)."""
    import random

    player = HeuristicPlayer(plies=2)
    rng = random.Random(3)
    position = OPENING
    for _ in range(400):
        dice = (rng.randint(1, 6), rng.randint(1, 6))
        plays = position.legal_plays(dice)
        if len(plays) > 1:
            scored = player.evaluator.plays(position, dice)
            values = [player._utility(probs, Context()) for *_, probs in scored]
            levels = player._search(values, lambda i: Position._trusted(scored[i][2],
                                                                        scored[i][1]), Context())
            if len(levels) == 3 and len(levels[2]) == 1 and len(levels[1]) > 1:
                return position, dice
        position = position.apply(rng.choice(plays)).swapped() if plays else position.swapped()
        if position.is_race():
            position = OPENING
    raise AssertionError("no position found where one play survives the 2-ply filter")


def test_each_play_says_the_depth_its_chances_come_from() -> None:
    """A play alone after 2-ply's second filter is not looked at deeper: its chances are
    1-ply ones and it says so (it said 2)."""
    position, dice = _carried_survivor()
    player = HeuristicPlayer(plies=2)
    data = hint_json(position.position_id(), f"{dice[0]}{dice[1]}", "--plies", "2")
    depths = [play["depth"] for play in data["plays"]]
    assert depths[0] == 1 and 2 not in depths
    for play in data["plays"]:
        after = Position.from_position_id(play["position_id"])
        if play["depth"] == 1:  # the chances are the 1-ply ones of the position after
            one_ply = player._one_ply_probs(after)._asdict()
            assert play["chances"] == pytest.approx(one_ply, abs=2e-6)


def test_only_the_heuristic_player_ranks_plays() -> None:
    done = bgbot("hint", MIDDLE, "31", "--player", "pubeval", check=False)
    assert done.returncode == 2 and "only the heuristic player ranks plays" in done.stderr


@pytest.mark.parametrize("text", [
    "4HPwATDgc/ABMA:cAkgCDAACAAA", "XGID=-b----E-C---eE---c-e----B-:0:0:1:31:3:1:0:99:10",
    "board:You:carol:99:0:0:0:-2:0:0:0:0:5:0:3:0:0:0:-5:5:0:0:0:-3:0:-5:0:0:0:0:2:0:1:3:1:"
    "0:0:1:1:1:0:1:-1:0:25:0:0:0:0:2:0:0:0",
    "4HPwATDgc/ABMA:cAmgAFAAEAAA",
], ids=["gnubg id 65", "xgid 99", "fibs board 99", "score at the length"])
def test_hint_refuses_a_match_it_cannot_play_with_a_message(text: str) -> None:
    """Issue 30 item 5: a match longer than 64 points used to end in a traceback."""
    for command in ("hint", "plays"):
        done = bgbot(command, text, "31", check=False)
        assert done.returncode == 2, done.stderr
        assert "Traceback" not in done.stderr
        assert "64 points" in done.stderr or "over" in done.stderr
