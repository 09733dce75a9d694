"""Every kind of decider bgbot ships, registered: build agents from spec text here.

`bgbot.agents` holds the spec syntax and the registry; each kind registers itself where it is
defined (the in-process players in `bgbot.agents.players`, the engines in `bgbot.engines.gnubg`
and `bgbot.engines.ubgi`). This module imports them all once, so the registry is complete
wherever `create_agent` and `known_agents` come from here: the CLI, the daemon and its
workers, the referee and the frontends.

``$BGBOT_AGENT_MODULES`` (comma-separated module names) adds kinds from outside bgbot: each
module is imported before the first agent is built or listed, and registers its kinds with
`bgbot.agents.register_agent`; the daemon's worker processes inherit the variable, so they
know the same kinds.
"""

from __future__ import annotations

import functools
import importlib
import os

from .agents import spec as _registry
from .agents.base import Agent
from .agents.spec import AgentKind, AgentSpec
from .core.errors import FormatError
from .engines import gnubg as _gnubg  # noqa: F401  (registers gnubg)
from .engines import ubgi as _ubgi  # noqa: F401  (registers ubgi)

__all__ = ["AGENT_MODULES", "agent_kind", "create_agent", "known_agents"]

AGENT_MODULES = "BGBOT_AGENT_MODULES"
"""The environment variable naming more modules that register agent kinds."""


@functools.cache
def _import_extra_kinds() -> None:
    for name in filter(None, (part.strip() for part in os.environ.get(AGENT_MODULES, "").split(","))):
        try:
            importlib.import_module(name)
        except ImportError as exc:
            raise FormatError(f"${AGENT_MODULES}", name, f"cannot be imported: {exc}") from None


def create_agent(spec: str | AgentSpec, *, seed: int = 0) -> Agent:
    """Build the agent a spec names (`bgbot.agents.spec.create_agent`, every kind known)."""
    _import_extra_kinds()
    return _registry.create_agent(spec, seed=seed)


def known_agents() -> dict[str, str]:
    """Every agent name with its one-line summary, for --help texts."""
    _import_extra_kinds()
    return _registry.known_agents()


def agent_kind(name: str) -> AgentKind | None:
    """The registered kind called ``name`` (every kind known), or None."""
    _import_extra_kinds()
    return _registry.agent_kind(name)
