"""The 0-ply player's own contact network (`network.SHIPPED_ZERO_PLY_FILE`): the agent
``heuristic`` at ``plies=0`` plays, doubles and rolls out with it; the 1-ply and 2-ply
look-ahead keeps the shipped contact network; a ``weights=`` file or the linear heads replace
both; without one shipped, the 0-ply player is what it was."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any, Iterator

import pytest

from bgbot.deciders import create_agent
from bgbot.players import heuristic, network
from bgbot.players.network import WeightsFile

from .networks import random_network

ZERO_PLY_NET = random_network((12, 8), seed=31)


@pytest.fixture
def zero_ply_shipped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[WeightsFile]:
    """A (random) 0-ply network installed as the shipped one, for this test only."""
    path = tmp_path / "contact-0ply.bgw"
    digest = ZERO_PLY_NET.write(path)
    monkeypatch.setattr(network, "SHIPPED_ZERO_PLY_FILE", path)
    monkeypatch.setattr(network, "SHIPPED_ZERO_PLY_SHA256", digest)
    monkeypatch.setattr(heuristic, "_SHARED", {})
    network.shipped_zero_ply_weights.cache_clear()
    try:
        yield ZERO_PLY_NET
    finally:
        monkeypatch.undo()
        network.shipped_zero_ply_weights.cache_clear()


def _network_of(spec: str) -> WeightsFile | None:
    agent: Any = create_agent(spec)
    found: WeightsFile | None = agent.player.evaluator.network
    return found


@pytest.mark.skipif(network.shipped_weights() is None, reason="no contact network is shipped")
def test_the_0ply_player_uses_the_0ply_network_and_the_look_ahead_the_shipped_one(
        zero_ply_shipped: WeightsFile) -> None:
    shipped = network.shipped_weights()
    for spec in ("heuristic", "heuristic:plies=0", "heuristic:eval=net",
                 "heuristic:level=intermediate", "heuristic:race=model"):
        assert _network_of(spec) == zero_ply_shipped, spec
    for spec in ("heuristic:plies=1", "heuristic:plies=2", "heuristic:level=expert"):
        assert _network_of(spec) == shipped, spec
    agent: Any = create_agent("heuristic")
    assert zero_ply_shipped.sha256[:16] in agent.knowledge  # its decisions are told apart


@pytest.mark.skipif(network.shipped_weights() is None, reason="no contact network is shipped")
def test_weights_or_the_linear_heads_replace_the_networks_of_every_depth(
        zero_ply_shipped: WeightsFile, tmp_path: Path) -> None:
    path = tmp_path / "mine.bgw"
    mine = random_network((10,), seed=5)
    mine.write(path)
    assert _network_of(f"heuristic:weights={path}") == mine
    assert _network_of(f"heuristic:plies=1,weights={path}") == mine
    assert _network_of("heuristic:eval=linear") is None


def test_without_a_0ply_network_the_0ply_player_uses_the_shipped_contact_network(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(network, "SHIPPED_ZERO_PLY_SHA256", "")
    network.shipped_zero_ply_weights.cache_clear()
    try:
        assert network.shipped_zero_ply_weights() is None
        agent: Any = create_agent("heuristic")
        assert agent.player.evaluator is heuristic.shared_evaluator()
    finally:
        monkeypatch.undo()
        network.shipped_zero_ply_weights.cache_clear()


def test_the_shipped_0ply_network_matches_its_checksum_and_was_ranked() -> None:
    if not network.SHIPPED_ZERO_PLY_SHA256:
        pytest.skip("no 0-ply network is shipped (tools/rank_distill.py ship)")
    weights = network.shipped_zero_ply_weights()
    assert weights is not None
    data = network.SHIPPED_ZERO_PLY_FILE.read_bytes()
    assert hashlib.sha256(data).hexdigest() == network.SHIPPED_ZERO_PLY_SHA256
    assert weights.provenance.get("tool") == "tools/rank_distill.py"
    assert weights.hidden == network.shipped_weights().hidden  # type: ignore[union-attr]


def test_only_a_contact_network_ships_as_the_0ply_network(tmp_path: Path) -> None:
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))
    from train_network import install_shipped

    path = tmp_path / "race.bgw"
    random_network((8,), seed=3, phase="race").write(path)
    with pytest.raises(ValueError, match="a race network: the 0-ply network is a contact"):
        install_shipped(path, zero_ply=True)
