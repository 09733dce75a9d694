"""tools/rollout_fit.py: positions of the chosen game plans are labelled by a player's
rollouts, reproducibly and resumably, and a fit moves the network towards those labels while
holding it elsewhere."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from bgbot.core.context import Context
from bgbot.core.position import Position
from bgbot.players.evaluator import extension_status
from bgbot.players.network import WeightsFile, shipped_weights
from bgbot.players.position_class import GAME_PLANS, game_plan
from bgbot.rollout import RolloutSettings, rollout_position

ROOT = Path(__file__).resolve().parents[1]
TOOL = ROOT / "tools" / "rollout_fit.py"
QUICK = ("--player", "heuristic", "--truncate", "2", "--trials", "36", "--games", "1",
         "--workers", "1")
"""The 0-ply player's short rollouts: labels in a second, for tests."""

pytestmark = pytest.mark.skipif(extension_status() != "ok" or shipped_weights() is None,
                                reason="labels need the C extension and the shipped network")


def tool(*args: str, timeout: int = 600) -> subprocess.CompletedProcess[str]:
    """tools/rollout_fit.py run with ``args``, its output captured."""
    return subprocess.run([sys.executable, str(TOOL), *args], capture_output=True, text=True,
                          timeout=timeout)


def load(path: Path) -> dict[str, np.ndarray]:
    with np.load(path) as found:
        return {key: found[key] for key in found.files}


def test_only_positions_of_the_chosen_plans_are_labelled_by_the_players_rollout(
        tmp_path: Path) -> None:
    done = tool("label", "--out", str(tmp_path), "--chunks", "5-5", "--every", "1", *QUICK)
    assert done.returncode == 0, done.stderr
    found = load(tmp_path / "chunk_00005.npz")
    assert len(found["boards"]) > 0 and len(found["controls"]) > 0
    for board, plan in zip(found["boards"], found["plan"]):
        position = Position._trusted(tuple(map(int, board[25:])), tuple(map(int, board[:25])))
        assert game_plan(position) == GAME_PLANS[plan]
        assert GAME_PLANS[plan] in ("middle_game_blots", "back_game")
    for board in found["controls"]:
        position = Position._trusted(tuple(map(int, board[25:])), tuple(map(int, board[:25])))
        assert position.is_contact()
        assert game_plan(position) not in ("middle_game_blots", "back_game")
    # the first label is what the rollout module gives for that position with the tool's seed
    sys.path.insert(0, str(TOOL.parent))
    import hashlib

    import rollout_fit
    from bgbot.rollout.dice import mix64

    board = found["boards"][0].tobytes()
    digest = int.from_bytes(hashlib.sha256(board).digest()[:8], "little")
    seed = mix64(29 ^ digest ^ rollout_fit.LABEL_SALT) >> 1
    position = Position._trusted(tuple(board[25:]), tuple(board[:25]))
    result = rollout_position(position, Context(), RolloutSettings(
        player="heuristic", trials=36, truncate=2, seed=seed, vr=True, cubeful=False))
    assert found["look"][0][0] == result.estimates["win"].mean
    assert found["se"][0] == result.estimates["cubeless"].se


def test_labels_are_reproducible_resumable_and_refuse_other_settings(tmp_path: Path) -> None:
    first, second = tmp_path / "a", tmp_path / "b"
    assert tool("label", "--out", str(first), "--chunks", "2-3", *QUICK).returncode == 0
    again = tool("label", "--out", str(first), "--chunks", "2-3", *QUICK)
    assert again.returncode == 0 and again.stdout.count("already there") == 2
    assert tool("label", "--out", str(second), "--chunks", "3-3", *QUICK).returncode == 0
    a, b = load(first / "chunk_00003.npz"), load(second / "chunk_00003.npz")
    for key in a:
        assert np.array_equal(a[key], b[key]), key
    other = tool("label", "--out", str(first), "--chunks", "4-4", *QUICK[:-4], "--games", "2",
                 "--workers", "1")
    assert other.returncode != 0 and "other settings" in other.stderr
    bad = tool("label", "--out", str(tmp_path / "c"), "--plans", "middle_game,endgame", *QUICK)
    assert bad.returncode != 0 and "no game plan 'endgame'" in bad.stderr
    assert "middle_game_blots" in bad.stderr  # the plans there are


def test_a_fit_moves_the_network_towards_the_labels_and_writes_a_loadable_network(
        tmp_path: Path) -> None:
    labels = tmp_path / "labels"
    done = tool("label", "--out", str(labels), "--chunks", "0-3", "--every", "1", *QUICK)
    assert done.returncode == 0, done.stderr
    out = tmp_path / "fitted.bgw"
    fitted = tool("fit", str(labels), "--out", str(out), "--hold-out", "1", "--epochs", "3",
                  "--lr", "3e-4", "--anchor-decay", "0")
    assert fitted.returncode == 0, fitted.stderr
    assert "labelled RMS" in fitted.stdout and out.exists()
    network = WeightsFile.read(out)
    assert network.provenance["tool"] == "tools/rollout_fit.py"
    assert network.provenance["rollout_fit"]["label_settings"]["player"] == "heuristic"
    # on the labels it was fitted to, its equities are nearer the rollouts than the start's
    sys.path.insert(0, str(TOOL.parent))
    import rollout_fit
    import train_network

    files = sorted(labels.glob("chunk_*.npz"))[:-1]
    shipped = shipped_weights()
    assert shipped is not None
    start = train_network.model_of_weights(shipped, 1, 0.5)
    after = train_network.model_of_weights(network, 1, 0.5)
    data = rollout_fit.Labelled(files, start, 0.0)
    before_rms, _ = rollout_fit.figures(start, data)
    after_rms, drift = rollout_fit.figures(after, data)
    assert after_rms < before_rms
    assert drift < 0.05  # the control positions stay near the network's own values


def test_fit_refuses_a_folder_without_enough_chunks(tmp_path: Path) -> None:
    done = tool("fit", str(tmp_path), "--out", str(tmp_path / "x.bgw"))
    assert done.returncode != 0 and "make them with: rollout_fit.py label" in done.stderr


def test_race_labels_are_races_and_fit_a_race_network_nearer_them_than_the_formula(
        tmp_path: Path) -> None:
    labels = tmp_path / "race"
    done = tool("label", "--phase", "race", "--out", str(labels), "--chunks", "0-3", "--every",
                "1", "--control-every", "0", "--player", "heuristic", "--truncate", "0",
                "--trials", "36", "--games", "2", "--workers", "1")
    assert done.returncode == 0, done.stderr
    found = load(labels / "chunk_00000.npz")
    assert len(found["boards"]) > 0 and len(found["controls"]) == 0
    for board in found["boards"]:
        position = Position._trusted(tuple(map(int, board[25:])), tuple(map(int, board[:25])))
        assert not position.is_contact() and game_plan(position) == "race"
    out = tmp_path / "race.bgw"
    # from the shipped contact network: it starts far from the races' values, and a few epochs
    # of the labels bring it nearer them
    fitted = tool("fit", str(labels), "--out", str(out), "--hold-out", "1", "--epochs", "4",
                  "--lr", "3e-4", "--self", "0", "--anchor-decay", "0")
    assert fitted.returncode == 0, fitted.stderr
    assert "the race formula: labelled RMS" in fitted.stdout
    network = WeightsFile.read(out, phase="race")
    assert network.provenance["rollout_fit"]["label_settings"]["phase"] == "race"
    sys.path.insert(0, str(TOOL.parent))
    import rollout_fit
    import train_network

    shipped = shipped_weights()
    assert shipped is not None
    contact = (shipped.parameters, shipped.hidden, "race")
    files = sorted(labels.glob("chunk_*.npz"))[:-1]
    start = train_network.model_of_weights(shipped, 1, 0.5, contact)
    after = train_network.model_of_weights(network, 1, 0.5, contact)
    data = rollout_fit.Labelled(files, start, 0.0)
    assert rollout_fit.figures(after, data)[0] < rollout_fit.figures(start, data)[0]
    # a race network goes on from itself on race labels, and is refused for contact labels
    again = tool("fit", str(labels), "--init", str(out), "--out", str(tmp_path / "again.bgw"),
                 "--hold-out", "1", "--epochs", "1", "--self", "0")
    assert again.returncode == 0, again.stderr
    contact_labels = tmp_path / "contact"
    assert tool("label", "--out", str(contact_labels), "--chunks", "0-0", *QUICK).returncode == 0
    wrong = tool("fit", str(contact_labels), "--init", str(out), "--out",
                 str(tmp_path / "x.bgw"), "--hold-out", "0", "--epochs", "1")
    assert wrong.returncode != 0
    assert "is a race network: contact labels fit a contact network" in wrong.stderr
