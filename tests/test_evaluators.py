"""The evaluator by position class (issue 29.6): each class gets its own evaluator, in Python
and in C alike; a crashed network, when given, decides the crashed positions and nothing else;
and every agent spec that existed before the split plays as it did (tests/spec_plays.py
recorded their answers on 440 positions)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bgbot.core.position import Position
from bgbot.deciders import create_agent
from bgbot.players.heuristic import shared_evaluator

from .spec_plays import CHANCES_SAMPLE, CONTEXTS, digest, play_index, spec_text

RECORDED = Path(__file__).with_name("data") / "spec_plays.json"
COMPILED = shared_evaluator().compiled
needs_extension = pytest.mark.skipif(not COMPILED,
                                     reason="the C extension bgbot.players._contact is not built")


def _recorded() -> tuple[list[tuple[Position, tuple[int, int]]], dict[str, Any]]:
    data = json.loads(RECORDED.read_text())
    cases = [(Position.from_position_id(p["id"]), (p["dice"][0], p["dice"][1]))
             for p in data["positions"]]
    return cases, data["specs"]


CASES, SPECS = _recorded()


@needs_extension
@pytest.mark.parametrize("spec", sorted(SPECS))
def test_every_old_spec_plays_as_before(spec: str) -> None:
    """The same plays in money and match play, the same cube chances and evaluations to the
    last bit, as recorded on main before the split (the C build: the pure-Python one rounds
    differently)."""
    found = SPECS[spec]
    player: Any = create_agent(spec_text(spec), seed=7).player
    cases = CASES[:len(found["money"])]
    for name, context in CONTEXTS.items():
        plays = [play_index(position, dice, player.choose_play(position, dice, context))
                 for position, dice in cases]
        changed = [(cases[k][0].position_id(), cases[k][1]) for k in range(len(plays))
                   if plays[k] != found[name][k]]
        assert not changed, f"{spec} {name}: other plays at {changed[:5]}"
    sample = cases[:CHANCES_SAMPLE]
    cube = [digest(player.cube_probabilities(position)) for position, _ in sample]
    assert cube == found["cube"], spec
    evaluations = [digest(player.evaluator.evaluate(position)) for position, _ in sample]
    assert evaluations == found["evaluate"], spec
