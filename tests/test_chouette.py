"""Chouette (rules/README.md R31-R34): seats, the team's and the box's cubes, settlement, rotation.

Small scripted agents force each situation; `ScriptedDice` fixes who opens and the rolls.
"""

from __future__ import annotations

import asyncio
import json
import random
from pathlib import Path
from typing import Callable, Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bgbot.agents.base import Agent
from bgbot.deciders import create_agent
from bgbot.core.context import Context, CubeOwner
from bgbot.core.dice import ScriptedDice, SeededDice
from bgbot.core.game import Doubled, Phase
from bgbot.core.position import Play, Position
from bgbot.formats.mat import parse_match
from bgbot.players.base import TakeDecision
from bgbot.referee.chouette import (
    Chouette,
    ChouetteGame,
    ChouetteLog,
    Seating,
    _GameRun,
    roll_for_seats,
    rotate,
    unique_names,
)

_RNG = random.Random(5)
ROLLS = [(_RNG.randint(1, 6), _RNG.randint(1, 6)) for _ in range(400)]
BOX_OPENS = ScriptedDice(openings=[(6, 1)], rolls=ROLLS)
"""The box (seat 0 of every member's game) wins the opening with 6-1."""
TEAM_OPENS = ScriptedDice(openings=[(1, 6)], rolls=ROLLS)


class Scripted(Agent):
    """Answers from scripts consumed in order (then: no double, take, no resignation) and
    records every question with its context."""

    def __init__(self, name: str, *, doubles: Sequence[bool] = (),
                 takes: Sequence[TakeDecision] = (), resigns: Sequence[int] = (),
                 accepts: Sequence[bool] = (), pick_last: bool = False) -> None:
        self.name = name
        self.doubles = list(doubles)
        self.takes = list(takes)
        self.resigns = list(resigns)
        self.accepts = list(accepts)
        self.pick_last = pick_last
        self.asked: list[tuple[str, Context]] = []

    async def choose_play(self, position: Position, dice: Sequence[int], context: Context) -> Play:
        self.asked.append(("play", context))
        plays = position.legal_plays(dice)
        if not plays:
            return Play()
        return plays[-1] if self.pick_last else plays[0]

    async def should_double(self, position: Position, context: Context) -> bool:
        self.asked.append(("double", context))
        return self.doubles.pop(0) if self.doubles else False

    async def take_decision(self, position: Position, context: Context) -> TakeDecision:
        self.asked.append(("take", context))
        return self.takes.pop(0) if self.takes else TakeDecision.TAKE

    async def offer_resignation(self, position: Position, context: Context) -> int:
        return self.resigns.pop(0) if self.resigns else 0

    async def accept_resignation(self, position: Position, context: Context, value: int) -> bool:
        self.asked.append(("accept", context))
        return self.accepts.pop(0) if self.accepts else False

    def count(self, what: str) -> int:
        return sum(1 for kind, _ in self.asked if kind == what)


def play_one(agents: Sequence[Agent], seating: Seating, dice: ScriptedDice,
             consult: bool = True) -> ChouetteGame:
    chouette = Chouette(agents, dice, seating=seating, consult=consult,
                        names=[a.name for a in agents])
    return asyncio.run(chouette.play()).games[0]


def draw_from(dice: Sequence[int]) -> Callable[[], int]:
    it = iter(dice)
    return lambda: next(it)


# ------------------------------------------------------------------- R31 seats


def test_r31_chouette_seating_reroll_on_ties() -> None:
    # 0:4, 1:6, 2:4, 3:2 -> 1 in the box; 0 and 2 tie for captain and roll again: 0:3, 2:5.
    seating, rounds = roll_for_seats([0, 1, 2, 3], draw_from([4, 6, 4, 2, 3, 5]))
    assert seating == Seating(1, (2, 0, 3))
    assert rounds == [[(0, 4), (1, 6), (2, 4), (3, 2)], [(0, 3), (2, 5)]]


def test_r31_chouette_seating_tie_for_the_box_rerolls_only_the_tied() -> None:
    # 0 and 1 tie on 6 for the box; their re-roll ties again (3-3), then 0:2, 1:5.
    seating, rounds = roll_for_seats([0, 1, 2], draw_from([6, 6, 1, 3, 3, 2, 5]))
    assert seating == Seating(1, (0, 2))
    assert [len(r) for r in rounds] == [3, 2, 2]


def test_r31_chouette_seats_from_the_session_seat_dice() -> None:
    agents = [Scripted(n) for n in "abc"]
    chouette = Chouette(agents, TEAM_OPENS, seat_dice=[2, 5, 5, 4, 1])
    assert chouette.seat()[0] == Seating(1, (2, 0))


@given(st.integers(0, 2**32), st.integers(3, 6))
def test_r31_chouette_seating_is_a_ranking_by_the_first_roll(seed: int, n: int) -> None:
    rng = random.Random(seed)
    seating, rounds = roll_for_seats(range(n), lambda: rng.randint(1, 6))
    order = [seating.box, *seating.team]
    assert sorted(order) == list(range(n))
    first = dict(rounds[0])
    assert [first[p] for p in order] == sorted(first.values(), reverse=True)


def test_chouette_names_are_made_distinct() -> None:
    assert unique_names(["heuristic", "pubeval", "heuristic"]) == [
        "heuristic#1", "pubeval", "heuristic#2"]


# ------------------------------------------------------------------- R32 the captain moves


def test_r32_captain_moves_after_consulting_the_team() -> None:
    box = Scripted("box")
    captain = Scripted("cap", doubles=[True])
    member = Scripted("mem", doubles=[True], pick_last=True)
    box.takes = [TakeDecision.DROP, TakeDecision.DROP]
    game = play_one([box, captain, member], Seating(0, (1, 2)), TEAM_OPENS)
    first = game.consultations[0]
    assert first["mover"] == "cap" and first["play_number"] == 1
    assert first["play"] != first["opinions"]["mem"]  # the member advised another play ...
    moved = game.recorded.history[1]
    assert str(moved.play) == first["play"]  # type: ignore[union-attr]  # ... the captain's stood
    assert game.movers == [(0, 1)]


def test_r32_no_consultation_when_switched_off() -> None:
    box = Scripted("box", takes=[TakeDecision.DROP, TakeDecision.DROP])
    team = [Scripted("cap", doubles=[False, True]), Scripted("mem", doubles=[True])]
    game = play_one([box, *team], Seating(0, (1, 2)), TEAM_OPENS, consult=False)
    assert game.consultations == [] and team[1].count("play") == 0


# ------------------------------------------------------------------- R33 cubes


def test_r33_team_double_needs_unanimity() -> None:
    box = Scripted("box", doubles=[False, False, True],
                   takes=[TakeDecision.DROP, TakeDecision.TAKE])
    captain = Scripted("cap", doubles=[True, True])
    member = Scripted("mem", doubles=[False, True], takes=[TakeDecision.DROP])
    game = play_one([box, captain, member], Seating(0, (1, 2)), TEAM_OPENS)
    # Team turn 1 (after plays 1-2): the member said no, so nothing was offered to the box.
    doubles = [e for m in game.members for e in m.history if e.action == "double"]
    assert [(e.move, e.by) for e in doubles] == [(4, "team"), (4, "team"), (5, "box")]
    # The box answered each member's cube on its own: dropped the captain's, took the member's.
    takes = [c for kind, c in box.asked if kind == "take"]
    assert len(takes) == 2 and all(c.cube_value == 1 for c in takes)
    cap, mem = game.member(1), game.member(2)
    assert (cap.points, cap.outcome.ending) == (1, "drop")
    # The box then redoubled the member's cube it owned (2 -> 4); the member passed and paid 2.
    assert (mem.points, mem.outcome.ending, mem.cube) == (-2, "drop", 2)
    assert game.deltas == {1: 1, 2: -2, 0: 1}
    assert game.movers == [(0, 1), (4, 2)]  # the member played on after the captain's cube ended


def test_r33_team_cannot_double_while_the_box_owns_a_members_cube() -> None:
    box = Scripted("box", doubles=[True, False, False], takes=[TakeDecision.TAKE] * 2)
    captain = Scripted("cap", takes=[TakeDecision.TAKE], doubles=[False, True, True])
    member = Scripted("mem", takes=[TakeDecision.TAKE], doubles=[True, True])
    chouette = Chouette([box, captain, member], BOX_OPENS, seating=Seating(0, (1, 2)))
    runner = asyncio.run(_first_plays(chouette, 8))
    cubes = {p: (g.cube_value, g.cube_owner) for p, g in runner.games.items()}
    # Box doubled both (they took: 2, theirs); team redoubled both (box took: 4, the box's).
    assert cubes == {1: (4, 0), 2: (4, 0)}
    assert captain.count("double") == 2  # never asked again while the box owns the cubes


async def _first_plays(chouette: Chouette, plays: int) -> _GameRun:
    """Play the first ``plays`` chequer plays of game 1 and return the running game."""
    assert chouette.initial_seating is not None
    run = _GameRun(chouette, chouette.initial_seating, 1)
    box_die, captain_die = run.dice.opening()
    for game in run.games.values():
        game.opening_roll(box_die, captain_die)
    while run.plays < plays:
        run._update()
        ref = run.games[run.mover]
        if ref.phase is Phase.ROLL:
            await (run._box_turn() if ref.seat_on_roll == 0 else run._team_turn())
        else:
            await run._move()
    return run


def test_r33_box_double_one_member_passes_another_takes_settled() -> None:
    box = Scripted("box", doubles=[True], takes=[TakeDecision.DROP])
    captain = Scripted("cap", takes=[TakeDecision.DROP])
    member = Scripted("mem", takes=[TakeDecision.TAKE], doubles=[True])
    game = play_one([box, captain, member], Seating(0, (1, 2)), BOX_OPENS)
    cap, mem = game.member(1), game.member(2)
    # The captain passed the box's double at 2: he pays the stake before it (1) and leaves.
    assert (cap.points, cap.outcome.ending, cap.cube, cap.left_after) == (-1, "drop", 1, 2)
    # The member took (cube 2, his), later doubled alone to 4; the box passed and paid him 2.
    assert (mem.points, mem.outcome.ending, mem.cube, mem.owner) == (2, "drop", 2, "member")
    assert [(e.action, e.by, e.value) for e in mem.history] == [
        ("double", "box", 2), ("take", "team", 2), ("double", "team", 4), ("drop", "box", 4)]
    assert game.deltas == {1: -1, 2: 2, 0: -1}
    # The member moved the chequers after the captain left; the box asked once for both
    # centred cubes (one cube state), then the team's double was the member's alone.
    assert game.movers == [(0, 1), (2, 2)]
    assert box.count("double") == 1 and captain.count("double") == 1
    assert game.recorded_player == 2
    # Rotation follows the captain's own cube (lost): the box stays, the captain goes last.
    assert not game.captain_won
    assert game.next_seating == Seating(0, (2, 1))


def test_r33_member_resignation_is_his_own() -> None:
    box = Scripted("box", accepts=[True], takes=[TakeDecision.DROP])
    captain = Scripted("cap", resigns=[2])
    member = Scripted("mem", doubles=[True])
    game = play_one([box, captain, member], Seating(0, (1, 2)), TEAM_OPENS)
    cap, mem = game.member(1), game.member(2)
    assert (cap.points, cap.outcome.ending, cap.outcome.kind) == (-2, "resign", 2)
    assert (mem.points, mem.outcome.ending) == (1, "drop")
    assert game.movers == [(0, 1), (2, 2)]
    assert game.next_seating == Seating(0, (2, 1))


def test_r33_chouette_has_no_beavers_a_beaver_answer_is_a_take() -> None:
    from bgbot.core.rules import Rules

    box = Scripted("box", doubles=[True], takes=[TakeDecision.DROP])
    captain = Scripted("cap", takes=[TakeDecision.BEAVER], doubles=[True])
    member = Scripted("mem", takes=[TakeDecision.DROP])
    chouette = Chouette([box, captain, member], BOX_OPENS, seating=Seating(0, (1, 2)),
                        rules=Rules(beavers=True))
    assert chouette.rules.beavers is False
    game = asyncio.run(chouette.play()).games[0]
    cap = game.member(1)
    assert [(e.action, e.value) for e in cap.history][:2] == [("double", 2), ("take", 2)]
    assert game.deltas == {1: 2, 2: -1, 0: -1}


# ------------------------------------------------------------------- R34 rotation


def test_r34_rotation_after_team_loss() -> None:
    assert rotate(Seating(0, (1, 2, 3)), captain_won=False) == Seating(0, (2, 3, 1))


def test_r34_rotation_after_team_win() -> None:
    assert rotate(Seating(0, (1, 2, 3)), captain_won=True) == Seating(1, (2, 3, 0))


def test_r34_session_rotates_after_a_team_win() -> None:
    # Game 1: the team doubles at once, the box passes both cubes -> the captain (1) takes the
    # box, the old box (0) goes to the end. Game 2 starts from those seats.
    box = Scripted("p0", takes=[TakeDecision.DROP] * 2)
    p1 = Scripted("p1", doubles=[True])
    p2 = Scripted("p2", doubles=[True])
    chouette = Chouette([box, p1, p2], TEAM_OPENS, games=2, seating=Seating(0, (1, 2)))
    result = asyncio.run(chouette.play())
    first, second = result.games
    assert first.deltas == {1: 1, 2: 1, 0: -2}
    assert second.seating == Seating(1, (2, 0))


# ------------------------------------------------------------------- settlement over a session


def _check_session(seed: int, players: int, games: int) -> None:
    agents = [create_agent("random:cube=on", seed=seed * 10 + i) for i in range(players)]
    result = asyncio.run(Chouette(agents, SeededDice(seed), games=games).play())
    assert sum(result.totals) == 0
    for k, game in enumerate(result.games):
        assert sum(game.deltas.values()) == 0
        if k + 1 < len(result.games):
            assert result.games[k + 1].seating == rotate(game.seating, game.captain_won)
        for member in game.members:
            outcome = member.outcome
            assert abs(member.points) == outcome.points
            assert (member.points > 0) == (outcome.winner == 1)
            if outcome.ending == "normal":
                assert outcome.points == member.cube * (1, 2, 3)[outcome.kind - 1]
            elif outcome.ending == "drop":
                assert outcome.points == member.cube
    totals = [0] * players
    for game in result.games:
        for player, delta in game.deltas.items():
            totals[player] += delta
    assert totals == result.totals


@settings(max_examples=8, deadline=None)
@given(st.integers(0, 10_000), st.integers(3, 5))
def test_chouette_points_sum_to_zero_over_the_session(seed: int, players: int) -> None:
    _check_session(seed, players, 3)


# ------------------------------------------------------------------- logs and CLI


def test_chouette_log_writes_mat_and_sidecar(tmp_path: Path) -> None:
    box = Scripted("box", doubles=[True], takes=[TakeDecision.DROP])
    captain = Scripted("cap", takes=[TakeDecision.DROP])
    member = Scripted("mem", takes=[TakeDecision.TAKE], doubles=[True])
    logger = ChouetteLog(tmp_path, ["box", "cap", "mem"], seed=3)
    chouette = Chouette([box, captain, member], BOX_OPENS, seat_dice=[6, 4, 2],
                        on_seated=logger.start, on_game=logger)
    asyncio.run(chouette.play())
    mat = (logger.directory / "game-001.mat").read_text()
    record = parse_match(mat)
    assert record.names == ("box", "cap+mem")
    assert record.games[0].outcome is not None and record.games[0].outcome.points == 2
    assert any(isinstance(a, Doubled) and a.seat == 0 for a in record.games[0].actions)
    side = json.loads((logger.directory / "game-001.json").read_text())
    assert side["seats"] == {"box": "box", "captain": "cap", "team": ["cap", "mem"]}
    assert side["settlement"] == {"cap": -1, "mem": 2, "box": -1}
    assert [c["stake"] for c in side["cubes"]] == [1, 2]
    assert side["movers"] == [{"from_play": 0, "member": "cap"}, {"from_play": 2, "member": "mem"}]
    session = json.loads((logger.directory / "session.json").read_text())
    assert session["seat_rolls"][0][0] == {"player": "box", "die": 6}
    assert session["totals"] == {"box": -1, "cap": -1, "mem": 2}


def test_chouette_cli_json_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from bgbot import cli

    code = cli.main(["chouette", "random:cube=on", "random:cube=on", "pubeval", "--games", "2",
                     "--seed", "4", "--out", str(tmp_path), "--json", "--quiet"])
    assert code == 0
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert summary["games"] == 2 and sum(summary["totals"].values()) == 0
    folder = Path(summary["log_dir"])
    assert sorted(p.name for p in folder.iterdir()) == [
        "game-001.json", "game-001.mat", "game-002.json", "game-002.mat", "session.json"]


def test_chouette_cli_refuses_two_agents(capsys: pytest.CaptureFixture[str]) -> None:
    from bgbot.cli import build_parser
    from bgbot.core.errors import BgbotError

    args = build_parser().parse_args(["chouette", "random", "random", "--no-log"])
    with pytest.raises(BgbotError, match="three or more"):
        args.func(args)


def test_chouette_context_is_each_members_own_cube() -> None:
    box = Scripted("box", doubles=[True], takes=[TakeDecision.DROP])
    captain = Scripted("cap", takes=[TakeDecision.DROP])
    member = Scripted("mem", takes=[TakeDecision.TAKE], doubles=[True])
    play_one([box, captain, member], Seating(0, (1, 2)), BOX_OPENS)
    # After taking, the member's question to double carries his own cube (2, his).
    contexts = [c for kind, c in member.asked if kind == "double"]
    assert (contexts[-1].cube_value, contexts[-1].cube_owner) == (2, CubeOwner.ME)
