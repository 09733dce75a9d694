"""Which decisions the daemon may answer on its event loop (`bgbot.daemon.decisions.is_quick`):
only in-process players at 0-ply; a named level with look-ahead goes to the workers."""

from __future__ import annotations

import pytest

from bgbot.daemon.decisions import is_quick
from bgbot.players.heuristic import LEVELS


@pytest.mark.parametrize("spec, quick", [
    ("heuristic", True), ("heuristic:plies=0", True), ("pubeval", True), ("random", True),
    ("heuristic:plies=1", False), ("heuristic:plies=2", False), ("gnubg:plies=0", False),
    ("heuristic:plies=", True), ("not a spec:::", False),
])
def test_only_zero_ply_in_process_players_are_quick(spec: str, quick: bool) -> None:
    assert is_quick(spec) is quick


@pytest.mark.parametrize("level", sorted(LEVELS))
def test_a_named_level_is_quick_only_without_look_ahead(level: str) -> None:
    assert is_quick(f"heuristic:level={level}") is (LEVELS[level][0] == 0)
