"""Where every kind of decider meets: the Agent interface and agent specs (DESIGN §1, §4).

Importing the package registers the in-process player kinds (`bgbot.agents.players`) and the
person at the terminal (`bgbot.agents.human`); the engine kinds register in their own modules,
and `bgbot.deciders` imports them all.
"""

from . import human as _human  # noqa: F401  (registers human)
from . import players as _players  # noqa: F401  (registers heuristic, pubeval, random)
from .base import Agent, PlayerAgent
from .spec import AgentSpec, Options, parse_agent_spec, register_agent

__all__ = [
    "Agent",
    "AgentSpec",
    "Options",
    "PlayerAgent",
    "parse_agent_spec",
    "register_agent",
]
