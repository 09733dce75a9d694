"""tools/train_network.py: a run resumed from its checkpoint ends bit-identical to the same run
uninterrupted, and its network is a weights file the player loads."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from bgbot.players.evaluator import HeuristicEvaluator, extension_status
from bgbot.players.network import WeightsFile

ROOT = Path(__file__).resolve().parents[1]
TOOL = ROOT / "tools" / "train_network.py"
SMALL = ["--games", "60", "--hidden", "12", "--screen", "8", "--seed", "5", "--epochs", "2"]

pytestmark = pytest.mark.skipif(extension_status() != "ok",
                                reason="training needs the C extension (self-play in C)")


def _train(run: Path, iterations: int, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(TOOL), "--run", str(run), "--iterations",
                           str(iterations), *SMALL, *extra], capture_output=True, text=True,
                          timeout=600)


def test_a_resumed_run_is_bit_identical_to_an_uninterrupted_one(tmp_path: Path) -> None:
    straight, resumed = tmp_path / "straight", tmp_path / "resumed"
    assert _train(straight, 3).returncode == 0
    first = _train(resumed, 1)
    assert first.returncode == 0, first.stderr
    assert "iteration 1:" in first.stdout
    second = _train(resumed, 3)
    assert second.returncode == 0, second.stderr
    assert "resuming" in second.stdout and "iteration 1:" not in second.stdout
    assert (straight / "network.bgw").read_bytes() == (resumed / "network.bgw").read_bytes()
    a, b = np.load(straight / "checkpoint.npz"), np.load(resumed / "checkpoint.npz")
    assert sorted(a.files) == sorted(b.files)
    for key in a.files:
        assert np.array_equal(a[key], b[key]), key
    state = json.loads((resumed / "state.json").read_text())
    assert state["iteration"] == 3 and state["games"] == 180 and state["positions"] > 1000
    assert [h["iteration"] for h in state["history"]] == [1, 2, 3]


def test_the_run_writes_a_network_the_player_loads(tmp_path: Path) -> None:
    run = tmp_path / "run"
    assert _train(run, 1).returncode == 0
    weights = WeightsFile.read(run / "network.bgw")
    assert weights.hidden == (12,)
    assert weights.provenance["tool"] == "tools/train_network.py"
    assert weights.provenance["games"] == 60
    evaluator = HeuristicEvaluator(network=weights)
    assert evaluator.eval == "net"
    assert (run / "best.bgw").exists()


def test_a_run_refuses_to_resume_with_other_settings(tmp_path: Path) -> None:
    run = tmp_path / "run"
    assert _train(run, 1).returncode == 0
    changed = _train(run, 2, "--lam", "0.9")
    assert changed.returncode != 0 and "other settings (lam)" in changed.stderr
