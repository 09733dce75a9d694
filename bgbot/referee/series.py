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
    """One finished (or stopped) match or session of the series."""

    index: int
    mirrored: bool
    result: MatchResult


ListenerFactory = Callable[[int, bool, Sequence[str]], Sequence[ev.Listener]]
"""(match index, mirrored, names) -> listeners for that match (e.g. a .mat logger)."""


class SeriesControl:
    """Stops a running series after the game in play (`stop_after_game`): the match or
    session in play ends there, no further one starts, and `run_series` returns the tally of
    what was played."""

    def __init__(self) -> None:
        self.stopping = False
        self.referee: Referee | None = None

    def stop_after_game(self) -> None:
        self.stopping = True
        if self.referee is not None:
            self.referee.stop_after_game()


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
    """(sequence index, mirrored, money games) for every match or session to play; with
    ``mirror``, an odd number of games or matches is not possible (`SeriesConfig.games` and
    ``matches`` count what is played: two per dice sequence)."""
    if config.mirror and (config.games if config.length == 0 else config.matches) % 2:
        raise ValueError("a mirrored series plays every dice sequence twice: the number of "
                         "games (money) or matches must be even")
    plan: list[tuple[int, bool, int]] = []
    if config.length == 0:
        if config.mirror:
            half = config.games // 2
            plan += [(0, False, half), (0, True, half)]
        else:
            plan.append((0, False, config.games))
        return plan
    if config.mirror:
        for i in range(config.matches // 2):
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
    tally: Tally | None = None,
    control: SeriesControl | None = None,
) -> tuple[Tally, list[PlayedMatch]]:
    """Play the series; ``on_game`` is called after every game (for progress displays).

    ``tally`` (default: a new one) is kept up to date game by game, so a caller still has
    what was played when the series is cancelled or fails; ``control`` stops it early.
    Memory stays flat however many games are played: no game is kept once it has ended.
    """
    a, b = agents if agents is not None else make_agents(config)
    names = (a.name, b.name) if a.name != b.name else (f"{a.name}-A", f"{b.name}-B")
    tally = tally if tally is not None else Tally()
    control = control if control is not None else SeriesControl()
    played: list[PlayedMatch] = []
    pending: dict[int, tuple[float, int]] = {}
    for agent in (a, b):
        await agent.start()
    try:
        for index, mirrored, games in schedule(config):
            if control.stopping:
                break
            deltas: list[int] = []

            def count(event: ev.Event, deltas: list[int] = deltas) -> None:
                if isinstance(event, ev.GameEnded):
                    deltas.append(tally.add_game(event.outcome, 0))
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
            control.referee = referee
            if control.stopping:
                referee.stop_after_game()
            try:
                result = await referee.play()
            finally:
                control.referee = None
                _add_units(tally, config, deltas, index, mirrored, pending)
            played.append(PlayedMatch(index, mirrored, result))
            if config.length and result.winner is not None:
                tally.matches += 1
                tally.match_wins += result.winner == 0
    finally:
        for first, n in pending.values():  # a stopped series: halves never mirrored
            tally.add_unit(first, n)
        pending.clear()
        for agent in (a, b):
            await agent.close()
    return tally, played


def _add_units(tally: Tally, config: SeriesConfig, deltas: list[int], index: int,
               mirrored: bool, pending: dict[int, tuple[float, int]]) -> None:
    """Record the statistical units of one match or session (A's points per game,
    ``deltas``): games, or matches, or their mirrored pairs. The first half of a pair waits
    in ``pending`` for its mirror."""
    if not deltas:
        return
    if config.length == 0:
        if not config.mirror:
            for delta in deltas:
                tally.add_unit(delta, 1)
        elif not mirrored:
            for k, delta in enumerate(deltas):
                pending[k] = (delta, 1)
        else:
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
