"""The heuristic agent specs' plays, cube chances and evaluations on a fixed set of positions,
as recorded on main before the evaluator was split by position class (issue 29.6): the test
(`test_evaluators.py`) holds every spec that existed then to the same answers.

The positions come from seeded self-play of the default player with noise (for variety), a
sample of each position class; each gets seeded dice. Re-record only on purpose (a change of
play that is meant), on a build with the C extension:

    python -m tests.spec_plays > tests/data/spec_plays.json
"""

from __future__ import annotations

import hashlib
import json
import random
import struct
import sys
from pathlib import Path
from typing import Any, Sequence

from bgbot.core.position import Play, Position
from bgbot.deciders import create_agent
from bgbot.players.base import Context
from bgbot.players.heuristic import HeuristicPlayer, shared_evaluator
from bgbot.players.position_class import position_class

SHIPPED = Path(__file__).resolve().parents[1] / "bgbot" / "players" / "data" / "contact.bgw"
SPECS: dict[str, int] = {
    "heuristic": 400,
    "heuristic:eval=net": 400,
    "heuristic:eval=linear": 400,
    "heuristic:race=model": 400,
    "heuristic:weights={shipped}": 400,
    "heuristic:plies=1": 160,
    "heuristic:level=expert,eval=linear": 80,
    "heuristic:plies=2": 12,
    "heuristic:level=intermediate,seed=3": 400,
}
"""Spec -> how many of the positions it plays (the first N; the deeper searches fewer)."""
CONTEXTS = {"money": Context(), "match": Context(match_length=7, my_score=2, opponent_score=4)}
CHANCES_SAMPLE = 120
"""Positions whose cube chances and evaluations are fingerprinted (the first N)."""
PER_CLASS = 110
"""Positions sampled per position class at most (the classes come in this order)."""


def positions() -> list[tuple[Position, tuple[int, int]]]:
    """The positions with their dice: up to `PER_CLASS` of each class from seeded noisy
    self-play, interleaved so that every prefix holds every class."""
    from tools.gameloop import play_game

    by_class: dict[str, list[Position]] = {}
    seen: set[Position] = set()
    for seed in range(60):
        # the positions as recorded: the contact network's noisy play (not the 0-ply one's)
        player = HeuristicPlayer(noise=0.25, seed=seed, evaluator=shared_evaluator())
        record: list[tuple[Position, int]] = []
        play_game([player, player], 6007 * seed + 11, seed % 2, record=record)
        for position, _ in record:
            if position not in seen:
                seen.add(position)
                by_class.setdefault(position_class(position).value, []).append(position)
    rng = random.Random(29)
    pools = [rng.sample(found, min(PER_CLASS, len(found))) for _, found in sorted(by_class.items())]
    out: list[tuple[Position, tuple[int, int]]] = []
    for k in range(max(len(pool) for pool in pools)):
        for pool in pools:
            if k < len(pool):
                out.append((pool[k], (rng.randint(1, 6), rng.randint(1, 6))))
    return out


def spec_text(spec: str) -> str:
    return spec.format(shipped=SHIPPED)


def digest(chances: Sequence[float]) -> str:
    """A short fingerprint of five chances, bit for bit."""
    return hashlib.sha256(struct.pack("<5d", *chances)).hexdigest()[:8]


def play_index(position: Position, dice: tuple[int, int], play: Play) -> int:
    """The chosen play as its index in `Position.play_results` (one play per board)."""
    after = position.apply(play)
    boards = [board for _, board in position.play_results(dice)]
    return boards.index(after) if boards else -1


def answers(spec: str, cases: list[tuple[Position, tuple[int, int]]]) -> dict[str, Any]:
    """What the spec's player says on ``cases``: per context the index of its play, and
    fingerprints of the chances it bases cube decisions on and of its 0-ply evaluation."""
    player: Any = create_agent(spec_text(spec), seed=7).player
    out: dict[str, Any] = {}
    for name, context in CONTEXTS.items():
        out[name] = [play_index(position, dice, player.choose_play(position, dice, context))
                     for position, dice in cases]
    sample = cases[:CHANCES_SAMPLE]
    out["cube"] = [digest(player.cube_probabilities(position)) for position, _ in sample]
    out["evaluate"] = [digest(player.evaluator.evaluate(position)) for position, _ in sample]
    return out


def record() -> dict[str, Any]:
    cases = positions()
    return {
        "positions": [{"id": p.position_id(), "dice": list(d), "class": position_class(p).value}
                      for p, d in cases],
        "specs": {spec: answers(spec, cases[:n]) for spec, n in SPECS.items()},
    }


def dumps(data: dict[str, Any]) -> str:
    """JSON with one line per position and per answer list (diffs stay readable)."""
    compact = {"separators": (",", ":")}
    lines = ['{"positions": [']
    lines += [json.dumps(p, **compact) + "," for p in data["positions"]]
    lines[-1] = lines[-1].rstrip(",")
    lines.append('], "specs": {')
    for s, (spec, found) in enumerate(data["specs"].items()):
        lines.append(f"{json.dumps(spec)}: {{")
        for k, (key, values) in enumerate(found.items()):
            comma = "," if k < len(found) - 1 else ""
            lines.append(f"  {json.dumps(key)}: {json.dumps(values, **compact)}{comma}")
        lines.append("}," if s < len(data["specs"]) - 1 else "}")
    lines.append("}}")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.stdout.write(dumps(record()))
