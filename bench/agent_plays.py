"""What the set-based benches share: each agent's play in a fixed list of decisions, and the
mean with its 95 % interval they print.

`chequer_judge.py` (decisions judged by gnubg 2-ply) and `rollout_benchmark.py` (decisions
rolled out by bgbot) both score an agent spec the same way: ask the agent, through the async
agent interface every player and engine implements (gnubg's included), for its play in each
decision, and compare the position it reaches with the judged plays. Paired differences
between agents on the same decisions come from `mean_ci` of the per-decision differences.
"""

from __future__ import annotations

import asyncio
import math
import sys
from pathlib import Path
from typing import Callable, Sequence

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bgbot.core.context import Context  # noqa: E402
from bgbot.core.position import Position  # noqa: E402
from bgbot.core.rules import Rules  # noqa: E402

__all__ = ["CUBELESS_MONEY", "agent_plays", "mean_ci"]

CUBELESS_MONEY = Context(rules=Rules(cube=False))
"""Both benches judge cubeless money play."""

Decision = tuple[Position, tuple[int, int]]


def agent_plays(spec: str, decisions: Sequence[Decision], context: Context = CUBELESS_MONEY,
                progress: Callable[[int], None] | None = None) -> list[Position]:
    """The position (mover's view) ``spec``'s agent reaches with its play in each decision
    (the position before the play, from the side on roll, and the dice); ``progress`` is
    called with the count done after each."""
    from bgbot.deciders import create_agent

    async def run() -> list[Position]:
        agent = create_agent(spec)
        await agent.start()
        try:
            out = []
            for position, dice in decisions:
                play = await agent.choose_play(position, dice, context)
                out.append(position.apply(play))
                if progress is not None:
                    progress(len(out))
            return out
        finally:
            await agent.close()

    return asyncio.run(run())


def mean_ci(values: Sequence[float]) -> tuple[float, float]:
    """The mean and the half-width of its 95 % interval (normal approximation)."""
    n = len(values)
    if n == 0:
        return math.nan, math.nan
    mean = sum(values) / n
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1)) if n > 1 else 0.0
    return mean, 1.96 * sd / math.sqrt(n)
