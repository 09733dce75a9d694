"""Where the daemon keeps things, decided in one place for the daemon and its clients.

Three situations, first match wins for each directory:

1. Under systemd, the unit's ``RuntimeDirectory=`` etc. arrive as ``$RUNTIME_DIRECTORY``,
   ``$STATE_DIRECTORY``, ``$LOGS_DIRECTORY``, ``$CONFIGURATION_DIRECTORY`` and
   ``$CREDENTIALS_DIRECTORY`` (the first entry of a colon-separated list is used; credentials
   are looked up by `bgbot.util.credential_path`).
2. As root without systemd: ``/run/bgbot``, ``/var/lib/bgbot``, ``/var/log/bgbot``, ``/etc/bgbot``.
3. As a user: ``$XDG_RUNTIME_DIR/bgbot`` (else ``/tmp/bgbot-<uid>``), ``$XDG_STATE_HOME/bgbot``
   (else ``~/.local/state/bgbot``) with ``logs/`` inside, ``$XDG_CONFIG_HOME/bgbot`` (else
   ``~/.config/bgbot``).

The control socket is ``<runtime>/control`` and the events socket ``<runtime>/events``; the
signing key is ``control.key`` in the credentials directory when systemd passes one, else in
the configuration directory. A client run by a user finds a system daemon through
`client_paths`: its own runtime directory first, then ``/run/bgbot``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

from ..util import credential_path

__all__ = [
    "APP",
    "CONFIG_FILE",
    "CONTROL_SOCKET",
    "EVENTS_SOCKET",
    "KEY_FILE",
    "SYSTEM_RUNTIME_DIR",
    "Paths",
    "client_paths",
    "default_paths",
    "events_next_to",
    "ipc_endpoint",
    "under_systemd",
]

APP = "bgbot"
CONTROL_SOCKET = "control"
EVENTS_SOCKET = "events"
KEY_FILE = "control.key"
CONFIG_FILE = "bgbot.toml"
STATE_DB = "state.db"
SYSTEM_RUNTIME_DIR = Path("/run") / APP
SYSTEM_STATE_DIR = Path("/var/lib") / APP
SYSTEM_LOGS_DIR = Path("/var/log") / APP
SYSTEM_CONFIG_DIR = Path("/etc") / APP


@dataclass(frozen=True)
class Paths:
    """The directories and files of one daemon instance."""

    runtime_dir: Path
    state_dir: Path
    logs_dir: Path
    config_dir: Path
    key_file: Path

    @property
    def config_file(self) -> Path:
        return self.config_dir / CONFIG_FILE

    @property
    def state_db(self) -> Path:
        return self.state_dir / STATE_DB

    @property
    def control_socket(self) -> Path:
        return self.runtime_dir / CONTROL_SOCKET

    @property
    def events_socket(self) -> Path:
        return self.runtime_dir / EVENTS_SOCKET

    @property
    def control_endpoint(self) -> str:
        """``ipc://<runtime>/control``: the ROUTER the daemon binds, clients' DEALERs connect."""
        return ipc_endpoint(self.control_socket)

    @property
    def events_endpoint(self) -> str:
        """``ipc://<runtime>/events``: the PUB the daemon binds, clients' SUBs connect."""
        return ipc_endpoint(self.events_socket)


def ipc_endpoint(path: Path) -> str:
    return f"ipc://{path}"


def events_next_to(control_endpoint: str) -> str | None:
    """The events endpoint of a daemon whose control endpoint is ``control_endpoint``, as the
    daemon makes it by default: the ``events`` socket next to an ``ipc://`` control socket;
    None for a ``tcp://`` endpoint (the port of its events cannot be guessed)."""
    if not control_endpoint.startswith("ipc://"):
        return None
    return ipc_endpoint(Path(control_endpoint[len("ipc://"):]).parent / EVENTS_SOCKET)


def _first(env: Mapping[str, str], name: str) -> Path | None:
    value = env.get(name, "")
    first = value.split(":")[0].strip()
    return Path(first) if first else None


def under_systemd(env: Mapping[str, str] | None = None) -> bool:
    """True when a systemd unit set up our directories (``$RUNTIME_DIRECTORY`` is set)."""
    env = os.environ if env is None else env
    return bool(env.get("RUNTIME_DIRECTORY") or env.get("STATE_DIRECTORY"))


def default_paths(
    env: Mapping[str, str] | None = None, *, uid: int | None = None, home: Path | None = None
) -> Paths:
    """The daemon's directories in this environment (see the module docstring)."""
    env = os.environ if env is None else env
    uid = os.geteuid() if uid is None else uid
    root = uid == 0
    home = home if home is not None else Path(env.get("HOME") or Path.home())

    runtime = _first(env, "RUNTIME_DIRECTORY")
    if runtime is None:
        if root:
            runtime = SYSTEM_RUNTIME_DIR
        elif env.get("XDG_RUNTIME_DIR"):
            runtime = Path(env["XDG_RUNTIME_DIR"]) / APP
        else:
            runtime = Path("/tmp") / f"{APP}-{uid}"

    state = _first(env, "STATE_DIRECTORY")
    if state is None:
        if root:
            state = SYSTEM_STATE_DIR
        else:
            state = Path(env.get("XDG_STATE_HOME") or home / ".local" / "state") / APP

    logs = _first(env, "LOGS_DIRECTORY")
    if logs is None:
        logs = SYSTEM_LOGS_DIR if root and _first(env, "STATE_DIRECTORY") is None else state / "logs"

    config = _first(env, "CONFIGURATION_DIRECTORY")
    if config is None:
        if root:
            config = SYSTEM_CONFIG_DIR
        else:
            config = Path(env.get("XDG_CONFIG_HOME") or home / ".config") / APP

    key = credential_path(KEY_FILE, env) or config / KEY_FILE
    return Paths(runtime, state, logs, config, key)


def client_paths(env: Mapping[str, str] | None = None, *, uid: int | None = None) -> Paths:
    """Where a client (``bgbot ctl``) looks for a daemon.

    The caller's own daemon if its control socket exists, else a system daemon's in
    ``/run/bgbot`` (with the key ``/etc/bgbot/control.key``) if that socket exists, else the
    caller's defaults (so that error messages name the expected place).
    """
    own = default_paths(env, uid=uid)
    if own.control_socket.exists():
        return own
    system_socket = SYSTEM_RUNTIME_DIR / CONTROL_SOCKET
    if system_socket.exists():
        return Paths(SYSTEM_RUNTIME_DIR, SYSTEM_STATE_DIR, SYSTEM_LOGS_DIR, SYSTEM_CONFIG_DIR,
                     SYSTEM_CONFIG_DIR / KEY_FILE)
    return own
