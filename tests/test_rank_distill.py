"""tools/rank_distill.py: each decision's candidates are labelled with the network's own 1-ply
and 0-ply values, reproducibly, and a fit teaches the network the labels' order."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from bgbot.players.base import Probabilities
from bgbot.players.evaluator import extension_status
from bgbot.players.network import WeightsFile, shipped_weights

ROOT = Path(__file__).resolve().parents[1]
TOOL = ROOT / "tools" / "rank_distill.py"

def tool(*args: str, timeout: int = 600) -> subprocess.CompletedProcess[str]:
    """tools/rank_distill.py run with ``args``, its output captured."""
    return subprocess.run([sys.executable, str(TOOL), *args], capture_output=True, text=True,
                          timeout=timeout)


pytestmark = pytest.mark.skipif(extension_status() != "ok" or shipped_weights() is None,
                                reason="labels need the C extension and the shipped network")


def test_each_candidate_is_labelled_by_the_networks_one_ply_and_zero_ply_values() -> None:
    sys.path.insert(0, str(TOOL.parent))
    import rank_distill
    import train_network

    network = shipped_weights()
    assert network is not None
    found = rank_distill.label_chunk(network, chunk=3, games=2, candidates=4, seed=9)
    again = rank_distill.label_chunk(network, chunk=3, games=2, candidates=4, seed=9)
    for key in found:
        assert np.array_equal(found[key], again[key]), key  # the same seed, the same labels
    decisions = found["decision"]
    sizes = np.bincount(decisions)
    assert len(sizes) > 20 and sizes.min() >= 2 and sizes.max() <= 4
    assert np.all(np.diff(decisions) >= 0)  # each decision's rows together
    policy = train_network._policy(network.parameters, network.hidden, None)
    race = train_network._race_evaluator()._race_sides
    for row in (0, len(decisions) // 2, len(decisions) - 1):
        board = found["boards"][row]
        other, mover = board[:25].tolist(), board[25:].tolist()  # the side on roll first
        looked = train_network.flip_chances(np.array([policy.one_ply(mover, other, race)]))[0]
        assert np.allclose(found["look"][row], looked)
        own = policy.evaluate(other, mover, race)  # the side on roll's own 0-ply chances
        assert np.allclose(found["own"][row], own, atol=1e-6)
    # within a decision the rows come best first by 0-ply, for the side that moved
    first = found["own"][decisions == 0]
    mover_equity = [-Probabilities(*c).equity() for c in first]
    assert mover_equity == sorted(mover_equity, reverse=True)


def test_a_fit_teaches_the_labels_order_and_writes_a_network_the_player_loads(
        tmp_path: Path) -> None:
    labels = tmp_path / "labels"
    made = tool("label", "--out", str(labels), "--chunks", "0-1", "--games", "3", "--candidates",
                "4", "--workers", "1")
    assert made.returncode == 0, made.stderr
    assert sorted(p.name for p in labels.glob("chunk_*.npz")) == ["chunk_00000.npz",
                                                                 "chunk_00001.npz"]
    again = tool("label", "--out", str(labels), "--chunks", "0-1", "--workers", "1")
    assert again.stdout.count("already there") == 2  # an interrupted labelling resumes

    out = tmp_path / "ranked.bgw"
    fitted = tool("fit", str(labels), "--out", str(out), "--hold-out", "0", "--epochs", "3", "--lr",
                  "3e-4", "--self", "1", "--average-from", "0")
    assert fitted.returncode == 0, fitted.stderr
    lines = fitted.stdout.splitlines()
    start = next(line for line in lines if line.startswith("start:"))
    last = next(line for line in reversed(lines) if line.startswith("epoch 3:"))

    def rms(line: str) -> float:
        return float(line.split("centred RMS ")[1].split(",")[0])

    assert rms(last) < rms(start)  # on the decisions it fitted, the order moved to the labels'
    weights = WeightsFile.read(out)
    assert weights.provenance["tool"] == "tools/rank_distill.py"
    assert weights.hidden == shipped_weights().hidden  # type: ignore[union-attr]


def test_label_chunks_must_be_a_range() -> None:
    bad = tool("label", "--out", "x", "--chunks", "9-2", timeout=60)
    assert bad.returncode == 2 and "FIRST-LAST" in bad.stderr


def test_a_fit_can_widen_the_student_and_starts_from_the_same_play(tmp_path: Path) -> None:
    labels = tmp_path / "labels"
    made = tool("label", "--out", str(labels), "--chunks", "0-1", "--games", "2", "--candidates",
                "3", "--workers", "1")
    assert made.returncode == 0, made.stderr

    def fit(*extra: str) -> tuple[list[str], Path]:
        out = tmp_path / f"ranked{len(extra)}.bgw"
        done = tool("fit", str(labels), "--out", str(out), "--epochs", "1", "--average-from", "0",
                    *extra)
        assert done.returncode == 0, done.stderr
        return done.stdout.splitlines(), out

    def start(lines: list[str]) -> float:
        line = next(line for line in lines if line.startswith("start:"))
        return float(line.split("centred RMS ")[1].split(",")[0])

    plain, _ = fit()
    widened, out = fit("--hidden", "144,144,144,144")
    # Net2Net: the widened student values the held-out candidates as the network it widens
    # (up to the small noise that lets the copied units part; the regret, a few near-ties
    # on so few decisions, is too coarse to compare)
    assert start(widened) == pytest.approx(start(plain), rel=0.02)
    weights = WeightsFile.read(out)
    assert weights.hidden == (144, 144, 144, 144)
    assert weights.provenance["rank_distill"]["hidden"] == [144, 144, 144, 144]
    narrower = tool("fit", str(labels), "--out", str(tmp_path / "x.bgw"), "--hidden", "64,64,64,64")
    assert narrower.returncode != 0 and "hidden layers" in narrower.stderr


def test_depth_2_labels_each_candidate_by_the_2ply_players_look_ahead() -> None:
    sys.path.insert(0, str(TOOL.parent))
    import rank_distill
    import train_network

    from bgbot.players.heuristic import TWO_PLY_REPLIES

    network = shipped_weights()
    assert network is not None
    found = rank_distill.label_chunk(network, chunk=5, games=1, candidates=2, seed=9, depth=2)
    shallow = rank_distill.label_chunk(network, chunk=5, games=1, candidates=2, seed=9)
    assert np.array_equal(found["boards"], shallow["boards"])  # the same decisions
    assert np.array_equal(found["own"], shallow["own"])
    policy = train_network._policy(network.parameters, network.hidden, None)
    race = train_network._race_evaluator()._race_sides
    for row in (0, len(found["decision"]) - 1):
        board = found["boards"][row]
        other, mover = board[:25].tolist(), board[25:].tolist()
        deep = policy.two_ply(mover, other, race, *TWO_PLY_REPLIES)
        assert np.allclose(found["look"][row],
                           train_network.flip_chances(np.array([deep]))[0])
    assert not np.allclose(found["look"], shallow["look"])  # a deeper look, other values


def test_a_label_folder_keeps_one_depth(tmp_path: Path) -> None:
    labels = tmp_path / "labels"
    made = tool("label", "--out", str(labels), "--chunks", "0-0", "--games", "1", "--candidates",
                "2", "--workers", "1")
    assert made.returncode == 0, made.stderr
    mixed = tool("label", "--out", str(labels), "--chunks", "1-1", "--games", "1", "--depth", "2",
                 "--workers", "1")
    assert mixed.returncode != 0 and "depth 1, not --depth 2" in mixed.stderr
    assert not (labels / "chunk_00001.npz").exists()


def test_a_fit_of_several_folders_counts_each_folders_chunks_n_times(tmp_path: Path) -> None:
    ones, twos = tmp_path / "ones", tmp_path / "twos"
    for folder, chunks in ((ones, "0-1"), (twos, "2-3")):
        made = tool("label", "--out", str(folder), "--chunks", chunks, "--games", "1",
                    "--candidates", "3", "--workers", "1")
        assert made.returncode == 0, made.stderr
    # the same fit from one folder of copies, as the shipped network's recipe made it: each
    # chunk of `twos` but the last twice, the last held out
    copies = tmp_path / "copies"
    copies.mkdir()
    for name in ("chunk_00000.npz", "chunk_00001.npz"):
        (copies / name).symlink_to(ones / name)
    for n in (1, 2):
        (copies / f"chunk_00002_copy{n}.npz").symlink_to(twos / "chunk_00002.npz")
    (copies / "chunk_99999.npz").symlink_to(twos / "chunk_00003.npz")

    def fit(out: str, *labels: Path | str) -> WeightsFile:
        done = tool("fit", *map(str, labels), "--out", str(tmp_path / out), "--epochs", "2",
                    "--average-from", "0")
        assert done.returncode == 0, done.stderr
        return WeightsFile.read(tmp_path / out)

    several = fit("several.bgw", ones, f"{twos}:2")
    linked = fit("linked.bgw", copies)
    once = fit("once.bgw", ones, twos)
    assert several.parameters == linked.parameters
    assert several.parameters != once.parameters  # the copies count
    assert several.provenance["rank_distill"]["labels"] == [f"{ones}:1", f"{twos}:2"]
    assert several.provenance["rank_distill"]["chunks"] == [2, 2]
    assert linked.provenance["rank_distill"]["labels"] == str(copies)  # one folder as before

    zero = tool("fit", str(ones), f"{twos}:0", "--out", str(tmp_path / "x.bgw"), timeout=60)
    assert zero.returncode == 2 and "N >= 1" in zero.stderr
    missing = tool("fit", str(ones / "none"), str(twos), "--out", str(tmp_path / "x.bgw"),
                   timeout=60)
    assert missing.returncode != 0 and "none holds no label chunks" in missing.stderr
    short = tool("fit", str(ones), str(twos), "--hold-out", "2", "--out", str(tmp_path / "x.bgw"),
                 timeout=60)
    assert short.returncode != 0 and "held out from the last folder" in short.stderr
