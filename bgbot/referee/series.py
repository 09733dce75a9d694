"""A series of matches or money games between two agent specs, with optional mirrored dice.

Agent A always sits in seat 0 (the left column of the `.mat` logs). With ``mirror``, every dice
sequence is played twice: once as drawn, once with the opening dice swapped between the seats
(`MirroredDice`), so each agent meets exactly the rolls the other had. The two games (or
matches) on one sequence form one statistical unit.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Callable, Sequence

from ..agents.base import Agent
from ..core.dice import DiceSource, MirroredDice, SeededDice
from ..core.rules import Rules
from ..deciders import create_agent
from . import events as ev
from .referee import MatchResult, Referee
from .stats import Tally


@dataclass
class SeriesConfig:
    """What to play. ``length`` 0 = money: ``games`` games in one session per dice sequence."""

    agent_a: str
    agent_b: str
    length: int = 7
    games: int = 1
    matches: int = 1
    seed: int = 1
    mirror: bool = False
    rules: Rules = field(default_factory=Rules)


@dataclass
class PlayedMatch:
    """One finished match or session of the series, with what is needed to log it."""

    index: int
    mirrored: bool
    result: MatchResult


ListenerFactory = Callable[[int, bool, Sequence[str]], Sequence[ev.Listener]]
"""(match index, mirrored, names) -> listeners for that match (e.g. a .mat logger)."""


def dice_for(seed: int, index: int, mirrored: bool) -> DiceSource:
    """The dice of the ``index``-th sequence of a series; the mirror swaps the opening dice."""
    source: DiceSource = SeededDice(f"{seed}:{index}")
    return MirroredDice(source) if mirrored else source


def match_seed(seed: int, index: int, mirrored: bool) -> str:
    """The seed of the agents' random streams in that match (`Referee` ``seed``): every match
    of a series, a duel or the daemon has its own, and the same match always the same."""
    return f"{seed}:{index}{'m' if mirrored else ''}"


def make_agents(config: SeriesConfig) -> tuple[Agent, Agent]:
    """A and B, each with its own noise stream derived from the seed and its seat."""
    return (
        create_agent(config.agent_a, seed=config.seed * 2),
        create_agent(config.agent_b, seed=config.seed * 2 + 1),
    )


def schedule(config: SeriesConfig) -> list[tuple[int, bool, int]]:
    """(sequence index, mirrored, money games) for every match or session to play."""
    plan: list[tuple[int, bool, int]] = []
    if config.length == 0:
        if config.mirror:
            half = (config.games + 1) // 2
            plan += [(0, False, half), (0, True, half)]
        else:
            plan.append((0, False, config.games))
        return plan
    if config.mirror:
        pairs = (config.matches + 1) // 2
        for i in range(pairs):
            plan += [(i, False, 1), (i, True, 1)]
    else:
        plan += [(i, False, 1) for i in range(config.matches)]
    return plan


async def run_series(
    config: SeriesConfig,
    *,
    listeners: ListenerFactory | None = None,
    on_game: Callable[[Tally], None] | None = None,
    agents: tuple[Agent, Agent] | None = None,
) -> tuple[Tally, list[PlayedMatch]]:
    """Play the series; ``on_game`` is called after every game (for progress displays)."""
    a, b = agents if agents is not None else make_agents(config)
    names = (a.name, b.name) if a.name != b.name else (f"{a.name}-A", f"{b.name}-B")
    tally = Tally()
    played: list[PlayedMatch] = []
    pending_pair: dict[int, tuple[float, int]] = {}
    for agent in (a, b):
        await agent.start()
    try:
        for index, mirrored, games in schedule(config):

            def count(event: ev.Event) -> None:
                if isinstance(event, ev.GameEnded):
                    tally.add_game(event.outcome, 0)
                    if on_game is not None:
                        on_game(tally)

            extra = list(listeners(index, mirrored, names)) if listeners else []
            referee = Referee(
                (a, b),
                dice_for(config.seed, index, mirrored),
                length=config.length,
                games=games,
                rules=config.rules,
                listeners=[count, *extra],
                names=names,
                seed=match_seed(config.seed, index, mirrored),
            )
            result = await referee.play()
            played.append(PlayedMatch(index, mirrored, result))
            if config.length:
                tally.matches += 1
                tally.match_wins += result.winner == 0
            _add_units(tally, config, result, index, mirrored, pending_pair)
    finally:
        for agent in (a, b):
            await agent.close()
    return tally, played


def _add_units(tally: Tally, config: SeriesConfig, result: MatchResult, index: int,
               mirrored: bool, pending: dict[int, tuple[float, int]]) -> None:
    """Record the statistical units: games, or matches, or their mirrored pairs."""
    deltas = [o.points if o.winner == 0 else -o.points for o in result.outcomes]
    if config.length == 0:
        if not config.mirror:
            for delta in deltas:
                tally.add_unit(delta, 1)
            return
        if not mirrored:
            for k, delta in enumerate(deltas):
                pending[k] = (delta, 1)
            return
        for k, delta in enumerate(deltas):
            first, n = pending.pop(k, (0.0, 0))
            tally.add_unit(first + delta, n + 1)
        return
    points, games = float(sum(deltas)), len(deltas)
    if not config.mirror:
        tally.add_unit(points, games)
    elif not mirrored:
        pending[index] = (points, games)
    else:
        first, n = pending.pop(index, (0.0, 0))
        tally.add_unit(first + points, n + games)


def run_series_sync(config: SeriesConfig, **kwargs: object) -> tuple[Tally, list[PlayedMatch]]:
    """`run_series` for synchronous callers (the CLI, benchmarks)."""
    return asyncio.run(run_series(config, **kwargs))  # type: ignore[arg-type]
