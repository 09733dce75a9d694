"""Where every kind of decider meets: the Agent interface and agent specs (DESIGN §1, §4)."""

from .base import Agent, PlayerAgent
from .spec import AgentSpec, create_agent, known_agents, parse_agent_spec, register_agent

__all__ = [
    "Agent",
    "AgentSpec",
    "PlayerAgent",
    "create_agent",
    "known_agents",
    "parse_agent_spec",
    "register_agent",
]
