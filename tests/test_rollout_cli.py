"""`bgbot rollout` and `bgbot hint --rollout` on the command line (real subprocesses), and
gnubg's 0-ply play rolled out through bgbot's rollout (real gnubg)."""

from __future__ import annotations

import json
import subprocess
from typing import Any

import pytest

from bgbot.core.context import Context
from bgbot.core.position import Position
from bgbot.rollout import RolloutSettings, rollout_position
from bgbot.rollout.runner import _worker

from .plugins import bgbot_command

QUICK = ["--trials", "36", "--truncate", "2"]


def _bgbot(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(bgbot_command(*args), capture_output=True, text=True, timeout=timeout)


def _json(*args: str) -> dict[str, Any]:
    done = _bgbot(*args, "--json")
    assert done.returncode == 0, done.stderr
    parsed: dict[str, Any] = json.loads(done.stdout)  # stdout holds the JSON and nothing else
    return parsed


def test_rollout_of_a_position_prints_json_with_chances_equity_and_ses() -> None:
    out = _json("rollout", "4HPwATDgc/ABMA", *QUICK, "--cubeless", "--seed", "4")
    assert out["trials"] == 36 and out["cubeful"] is False and out["units"] == "equity"
    assert set(out["chances"]) == {"win", "win_gammon", "win_backgammon", "lose_gammon",
                                   "lose_backgammon"}
    assert 0.3 < out["chances"]["win"]["mean"] < 0.7 and out["se"] > 0
    assert out["equity"] == out["cubeless_equity"]["mean"] and out["mean_plies"] == 2.0
    assert out["se_gain_of_vr"] > 1.0


def test_two_workers_give_the_same_rollout_as_one() -> None:
    args = ("rollout", "4HPwATDgc/ABMA", *QUICK, "--cubeless", "--trials", "72")
    one, two = _json(*args), _json(*args, "--concurrency", "2")
    for out in (one, two):
        out.pop("seconds"), out.pop("trials_per_second")
    assert one == two


def test_dask_local_gives_the_same_rollout_as_this_process() -> None:
    pytest.importorskip("distributed")
    args = ("rollout", "4HPwATDgc/ABMA", "--trials", "72", "--truncate", "1", "--cubeless")
    here, dask = _json(*args), _json(*args, "--dask", "local", "--concurrency", "2")
    for out in (here, dask):
        out.pop("seconds"), out.pop("trials_per_second")
    assert here == dask


def test_rollout_with_dice_ranks_the_candidates_and_prints_a_table() -> None:
    # an opening 21: its plays lie close together (an opening 31 has one clear best play,
    # the only one within the candidate threshold for the network shipped 2026-12-07)
    out = _json("rollout", "4HPwATDgc/ABMA", "--dice", "21", *QUICK, "--candidates", "2")
    moves = [c["move"] for c in out["candidates"]]
    assert len(moves) == 2 and len(set(moves)) == 2
    equities = [c["equity"] for c in out["candidates"]]
    assert equities == sorted(equities, reverse=True)
    assert all(c["cubeful"] for c in out["candidates"])  # a Position ID: money, cube in use
    table = _bgbot("rollout", "4HPwATDgc/ABMA", "--dice", "21", *QUICK, "--candidates", "2")
    assert table.returncode == 0, table.stderr
    assert all(move in table.stdout for move in moves)
    assert "W(bg)" in table.stdout and "±" in table.stdout


def test_a_match_position_is_rolled_out_in_emg_at_its_score() -> None:
    out = _json("rollout", "XGID=-b----E-C---eE---c-e----AA:0:0:1:00:6:3:1:7:10", *QUICK)
    assert out["units"] == "emg" and "7-point match at" in out["context"]


def test_bad_options_are_refused_with_what_to_do() -> None:
    done = _bgbot("rollout", "4HPwATDgc/ABMA", "--trials", "100")
    assert done.returncode == 2 and "--trials 100" in done.stderr and "108" in done.stderr
    done = _bgbot("rollout", "4HPwATDgc/ABMA", "--player", "nosuch")
    assert done.returncode == 2 and "nosuch" in done.stderr and "heuristic" in done.stderr
    done = _bgbot("rollout", "not-a-position")
    assert done.returncode == 2 and done.stdout == ""
    done = _bgbot("rollout", "4HPwATDgc/ABMA", "--dask", "nowhere")
    assert done.returncode == 2 and "tcp://" in done.stderr
    # found in a worker process: the error crosses back to the command (it broke the pool)
    done = _bgbot("rollout", "4HPwATDgc/ABMA", *QUICK, "--player", "heuristic:plies=x",
                  "--concurrency", "2")
    assert done.returncode == 2 and "plies" in done.stderr and "Traceback" not in done.stderr


def test_hint_ranks_the_plays_by_rollout() -> None:
    out = _json("hint", "4HPwATDgc/ABMA", "42", "--rollout", *QUICK, "--cubeless",
                "--candidates", "2")
    assert out["ranked_by"] == "rollout" and len(out["plays"]) == 2
    first = out["plays"][0]
    assert first["move"] == "8/4 6/4" and first["se"] > 0 and first["rollout"]["trials"] == 36
    done = _bgbot("hint", "4HPwATDgc/ABMA", "--rollout", *QUICK)
    assert done.returncode == 2 and "give the dice" in done.stderr


def test_gnubg_plays_a_rollout_through_bgbots_rollout(gnubg_binary: str) -> None:
    """gnubg at 0-ply plays both sides (its moves, its cube, its evaluation where trials are
    cut), bgbot's rollout deals the dice and counts."""
    position = Position.initial()
    after = position.apply(position.legal_plays((3, 1))[0]).swapped()
    settings = RolloutSettings(player="gnubg:plies=0", trials=36, truncate=2, cubeful=True)
    result = rollout_position(after, Context(), settings)
    assert result.trials == 36 and result.plies == 2.0 and result.cubeful
    chances = result.chances
    assert 0.3 < chances.win < 0.6 and chances.win_backgammon <= chances.win_gammon
    ours = rollout_position(after, Context(), RolloutSettings(trials=36, truncate=2,
                                                              cubeful=True))
    assert abs(result.equity.mean - ours.equity.mean) < 0.15  # two evaluations of one position
    gnubg = _worker().players[("gnubg:plies=0", settings.seed)].agent
    stats = getattr(gnubg, "stats")
    assert stats.requests > 36 and stats.unusable == 0 and stats.restarts == 0
