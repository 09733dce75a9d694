"""Every kind of decider bgbot ships, registered: build agents from spec text here.

`bgbot.agents` holds the spec syntax and the registry; each kind registers itself where it is
defined (the in-process players in `bgbot.agents.players`, the engines in `bgbot.engines.gnubg`
and `bgbot.engines.ubgi`). This module imports them all once, so the registry is complete
wherever `create_agent` and `known_agents` come from here: the CLI, the daemon and its
workers, the referee and the frontends.

``$BGBOT_AGENT_MODULES`` (comma-separated module names) adds kinds from outside bgbot: each
module is imported here and registers its kinds with `bgbot.agents.register_agent`; the
daemon's worker processes inherit the variable, so they know the same kinds.
"""

from __future__ import annotations

import importlib
import os

from .agents.spec import create_agent, known_agents
from .engines import gnubg as _gnubg  # noqa: F401  (registers gnubg)
from .engines import ubgi as _ubgi  # noqa: F401  (registers ubgi)

__all__ = ["AGENT_MODULES", "create_agent", "known_agents"]

AGENT_MODULES = "BGBOT_AGENT_MODULES"
"""The environment variable naming more modules that register agent kinds."""


def _import_extra_kinds() -> None:
    for name in filter(None, (part.strip() for part in os.environ.get(AGENT_MODULES, "").split(","))):
        try:
            importlib.import_module(name)
        except ImportError as exc:
            raise ImportError(f"${AGENT_MODULES} names {name!r}, which cannot be imported: "
                              f"{exc}") from exc


_import_extra_kinds()
