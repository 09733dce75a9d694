"""bgbot's rollouts against GNU Backgammon's own (issue 29 §3; `bench/rollout_vs_gnubg.py`).

The machinery check plays our rollout with the real gnubg (``gnubg:plies=0``) and compares it
with gnubg's own rollout stored in ``bench/data/rollout_positions.jsonl``: both estimate the
same value, so they must agree within their standard errors. In CI it runs on a race and two
bear-offs, where the SEs are small (a few thousandths) so a machinery fault of a hundredth of
a point would show; the whole set runs under ``-m slow``. The speed bench's gnubg hook
(`bench/rollout.py`) is checked to time gnubg's rollout at our settings.
"""

from __future__ import annotations

import importlib.util
import json
import math
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from bgbot.core.position import Position
from bgbot.engines.gnubg import find_gnubg
from bgbot.rollout import RolloutSettings

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "bench" / "rollout_vs_gnubg.py"
needs_gnubg = pytest.mark.skipif(find_gnubg(None) is None,
                                 reason="GNU Backgammon is not installed")

RACE = "vy8KAgDr7jIAAA"
"""A money race (cube 16 on the other side) whose 0-ply rollouts have SEs of about 0.001-0.005."""
BEAROFF_MATCH = "214HAIBt3QAAAA"
"""A bear-off at 6-1 to 7, Crawford: compared by the winning chance."""
BEAROFF_CONTACT = "t50BAOD2AwAAAQ"
"""A bear-off against a back chequer at 4-4 to 5."""


def bench_module(name: str) -> ModuleType:
    sys.path.insert(0, str(ROOT / "bench"))
    spec = importlib.util.spec_from_file_location(f"bench_{name}", ROOT / "bench" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def run_script(*args: str, timeout: float = 600) -> dict[str, Any]:
    done = subprocess.run([sys.executable, str(SCRIPT), *args, "--json"], capture_output=True,
                          text=True, timeout=timeout)
    assert done.returncode == 0, done.stderr
    found: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return found


@pytest.mark.gnubg
@needs_gnubg
def test_gnubg_through_our_rollout_equals_gnubgs_own_rollout() -> None:
    # 72 trials: with 36 the SE of the shot position is itself too noisy to test against
    # (a hit or a miss more moves it a lot); at 72 it settles
    report = run_script("--positions", f"{RACE},{BEAROFF_MATCH},{BEAROFF_CONTACT}",
                        "--trials", "72")
    rows = {row["id"]: row for row in report["rows"]}
    assert set(rows) == {RACE, BEAROFF_MATCH, BEAROFF_CONTACT}
    assert report["player"] == "gnubg:plies=0"
    assert rows[RACE]["figure"] == "equity" and rows[BEAROFF_MATCH]["figure"] == "win"
    for row in rows.values():
        spread = math.hypot(row["ours"]["se"], row["gnubg"]["se"])
        assert spread < 0.01, f"{row['id']}: the check is too weak to mean anything ({spread})"
        assert row["difference"] == pytest.approx(row["ours"]["value"] - row["gnubg"]["value"])
        assert abs(row["z"]) <= 2.0, row
        assert row["trials"] == 72 and row["se_gain_of_vr"] > 3
    assert report["summary"]["passed"] == 3


@pytest.mark.gnubg
@pytest.mark.slow
@needs_gnubg
def test_gnubg_through_our_rollout_equals_gnubgs_own_on_the_whole_set() -> None:
    """About half an hour on one core: gnubg plays every move over its socket."""
    report = run_script(timeout=4 * 3600)
    summary = report["summary"]
    assert summary["positions"] >= 20
    # by chance alone ~95 % pass; a fault of the machinery shifts many positions at once
    assert summary["passed"] >= summary["positions"] - 4, report["rows"]
    assert summary["chi_square_p"] > 0.001 and summary["mean_z_p"] > 0.001, summary


def test_our_player_is_compared_with_both_of_gnubgs_rollouts() -> None:
    """The player mode (our 0-ply player, in C) reports every position against gnubg's 0-ply
    rollout and, where the set has one, its 2-ply-chequer rollout, in the right units."""
    opening = "4HPhASjgc/AJIA"  # money, with a 2-ply rollout
    report = run_script("--mode", "player", "--positions", f"{opening},{BEAROFF_MATCH}",
                        "--trials", "36")
    rows = {row["id"]: row for row in report["rows"]}
    assert report["player"] == "heuristic"
    money, match = rows[opening], rows[BEAROFF_MATCH]
    assert money["gnubg_2ply"] is not None and match["gnubg_2ply"] is None
    for row in (money, match):
        item = row["gnubg_0ply"]
        assert item["difference"] == pytest.approx(row["ours"] - item["equity"])
        assert item["pass"] == (abs(item["difference"]) <= 0.03)
    # a bear-off is the database's answer whoever plays it: ours is gnubg's to a few 1e-4
    assert abs(match["gnubg_0ply"]["win_difference"]) < 0.002
    assert (money["units"], match["units"]) == ("equity", "emg")
    assert money["ours_se"] > 0 and match["ours_se"] >= 0
    assert report["summary"]["gnubg_0ply"]["positions"] == 2


def test_unknown_positions_are_refused_naming_them() -> None:
    done = subprocess.run([sys.executable, str(SCRIPT), "--positions", "race,nonsense"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode != 0
    assert "nonsense" in done.stderr and "neither a Position ID" in done.stderr


def test_the_summary_statistics_are_the_textbook_ones() -> None:
    bench = bench_module("rollout_vs_gnubg")
    assert bench.chi_square_tail(43.773, 30) == pytest.approx(0.05, abs=2e-4)
    assert bench.chi_square_tail(3.841, 1) == pytest.approx(0.05, abs=2e-4)
    assert bench.chi_square_tail(1.0, 4) == pytest.approx(0.9098, abs=1e-4)
    assert bench.normal_two_sided(1.96) == pytest.approx(0.05, abs=1e-3)
    ours, theirs = bench.Figure(0.10, 0.03), bench.Figure(0.06, 0.04)
    assert bench.z_score(ours, theirs) == pytest.approx(0.8)
    gnubg = bench.gnubg_figure({"equity": [0.5, 0.0], "chances": [0.7, 0, 0, 0, 0],
                                "chances_se": [0.0, 0, 0, 0, 0]}, money=True)
    assert gnubg.se == pytest.approx(bench.PRINTED)  # printed 0.0000: the rounding remains


@pytest.mark.gnubg
@needs_gnubg
def test_the_speed_bench_times_gnubgs_rollout_at_our_settings() -> None:
    bench = bench_module("rollout")
    race = Position.from_position_id("zD2cAwC4O5sBAA")
    result, seconds, cpu = bench.gnubg_rollout(race, RolloutSettings(trials=36, truncate=3,
                                                                     cubeful=False, seed=5),
                                               plies=0)
    assert result.trials == 36 and seconds > 0 and cpu > 0
    settings = result.settings
    assert (settings.plies, settings.truncate, settings.cubeful, settings.seed) == (0, 3, False, 5)
    assert settings.variance_reduction and settings.quasi_random
    assert not settings.bearoff_truncation and not settings.chequer_cubeful
    assert result.trials_per_second == pytest.approx(36 / seconds)
