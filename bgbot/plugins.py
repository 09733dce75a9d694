"""Plugins: modules outside bgbot that add kinds of things to it (a server, a request type).

A plugin is a module that registers what it defines when it is imported -- a server kind with
`bgbot.frontends.kinds.register_server_kind`, a daemon request with
`bgbot.daemon.requests.handles` -- and one registration that names it: an entry point in the
group ``bgbot.plugins`` of its distribution, e.g. in its ``pyproject.toml``::

    [project.entry-points."bgbot.plugins"]
    myserver = "myserver"

`load_plugins` imports every such module once per process; the registries call it before they
answer, so the CLI, the configuration check and the daemon all see the same kinds.
"""

from __future__ import annotations

import importlib
import logging
from importlib.metadata import entry_points

from .core.errors import BgbotError

__all__ = ["GROUP", "PluginError", "load_plugins"]

GROUP = "bgbot.plugins"
log = logging.getLogger(__name__)

_loaded: dict[str, str] | None = None


class PluginError(BgbotError):
    """A plugin named by an entry point cannot be imported."""


def load_plugins() -> dict[str, str]:
    """Import the modules of the ``bgbot.plugins`` entry points (the first time only); the
    entry point names and their modules."""
    global _loaded
    if _loaded is not None:
        return _loaded
    _loaded = {}
    for point in sorted(entry_points(group=GROUP), key=lambda p: p.name):
        module = point.value.partition(":")[0]
        try:
            importlib.import_module(module)
        except Exception as exc:
            raise PluginError(f"plugin {point.name} ({module}): cannot import it: "
                              f"{type(exc).__name__}: {exc}") from exc
        _loaded[point.name] = module
        log.debug("plugin %s loaded from %s", point.name, module)
    return _loaded
