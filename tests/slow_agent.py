"""A test agent kind, ``slow``: an in-process player that blocks for a while on each play.

Importing this module registers the kind (`bgbot.agents.register_agent`); the daemon tests name
the module in ``$BGBOT_AGENT_MODULES``, so the daemon and its decision workers know it too.
``slow:seconds=S,log=PATH`` sleeps S seconds in `choose_play` (as a player deep in thought
holds the CPU: nothing else runs in its thread) and appends ``begin <time>`` / ``end <time>``
lines to PATH, so a test can tell when a decision was under way. It plays the first legal play,
never doubles, always takes.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Sequence

from bgbot.agents import PlayerAgent
from bgbot.agents.base import Agent
from bgbot.agents.spec import AgentSpec, Options, register_agent
from bgbot.core.context import Context
from bgbot.core.position import Play, Position
from bgbot.players.base import TakeDecision


class SlowPlayer:
    """First legal play after ``seconds`` of sleep; no doubles, takes, no resignations."""

    name = "slow"

    def __init__(self, seconds: float, log: Path | None) -> None:
        self.seconds = seconds
        self.log = log

    def _note(self, what: str) -> None:
        if self.log is not None:
            with self.log.open("a") as handle:
                handle.write(f"{what} {time.time():.6f} {os.getpid()}\n")

    def choose_play(self, position: Position, dice: Sequence[int], context: Context) -> Play:
        self._note("begin")
        time.sleep(self.seconds)
        self._note("end")
        plays = position.legal_plays(dice)
        return plays[0] if plays else Play()

    def should_double(self, position: Position, context: Context) -> bool:
        return False

    def take_decision(self, position: Position, context: Context) -> TakeDecision:
        return TakeDecision.TAKE

    def offer_resignation(self, position: Position, context: Context) -> int:
        return 0

    def accept_resignation(self, position: Position, context: Context, value: int) -> bool:
        return False


def _slow(spec: AgentSpec, seed: int) -> Agent:
    opts = Options(spec, {"seconds": "sleep per play", "log": "file for begin/end lines"})
    log = spec.options.get("log")
    return PlayerAgent(SlowPlayer(opts.number("seconds", 1.0, 0.0, 60.0),
                                  Path(log) if log else None))


register_agent("slow", _slow, "test agent: sleeps before each play (seconds=S, log=PATH)",
               host_options=("log",))
