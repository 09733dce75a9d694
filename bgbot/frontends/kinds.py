"""The registry of online-server kinds: what the daemon, the configuration and the CLI read.

A server kind (``fibs``, ``bgammon``, a plugin's) is one package with a `ServerClient`
subclass, plus one registration: `register_server_kind` with a `ServerKind`, called when its
package is imported. The kind gives

- its configuration section: ``[[KIND.accounts]]`` tables of the shared
  `bgbot.frontends.accounts.ServerAccountConfig` schema, checked by `check_account` (the
  client's account refuses what it cannot use);
- its defaults (public host and port) and its frontend names (``KIND-USER``);
- its account builder (`account_for`: config table -> the client's account, the password
  found by `bgbot.util.resolve_secret`) and its client (`client_for`);
- its CLI command: ``bgbot KIND`` (`bgbot.cli` adds a generic one running the configured
  accounts for a kind that has no command module of its own).

The built-in kinds are the sub-packages of `bgbot.frontends`; others come from plugins
(`bgbot.plugins`). Their packages register a `ServerKind` that names the client class by
``"module:Class"``, so listing the kinds imports no client (the CLI starts fast).
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping

from ..core.errors import BgbotError, FormatError
from ..util import SecretError, resolve_secret

from .accounts import ServerAccountConfig, invitation_policy

if TYPE_CHECKING:
    from ..agents.base import Agent
    from .server import ServerAccount, ServerClient

__all__ = ["ServerKind", "account_for", "check_account", "client_for", "frontend_name",
           "register_server_kind", "server_kind", "server_kinds", "with_overrides"]

EventListener = Callable[[dict[str, Any]], None]


@dataclass(frozen=True)
class ServerKind:
    """One kind of online server, as registered by its package."""

    name: str
    """The kind: the configuration section ``[[NAME.accounts]]``, the CLI command ``bgbot
    NAME``, frontend names ``NAME-USER``, environment variables ``BGBOT_NAME_PASSWORD``."""
    client: str
    """The `ServerClient` subclass, as ``"module:Class"`` (imported when first needed)."""
    default_host: str
    default_port: int
    description: str = ""
    """One line for the CLI's help, e.g. "play on FIBS (CLIP)"."""
    password_required: bool = False
    """Without a password the account cannot log in (else it logs in as a guest)."""
    config_keys: Mapping[str, str] = field(default_factory=dict)
    """The account's field names that differ from the configuration's keys (for errors)."""

    def client_class(self) -> type[ServerClient]:
        """The client class (imports its module)."""
        module, _, attribute = self.client.partition(":")
        found: type[ServerClient] = getattr(importlib.import_module(module), attribute)
        return found

    def address(self, entry: ServerAccountConfig) -> str:
        """``HOST:PORT`` an account connects to."""
        return f"{entry.host or self.default_host}:{entry.port or self.default_port}"


_KINDS: dict[str, ServerKind] = {}
_discovered = False


def register_server_kind(kind: ServerKind) -> ServerKind:
    """Add ``kind`` to the registry (once; its package calls this when imported)."""
    other = _KINDS.get(kind.name)
    if other is not None and other != kind:
        raise BgbotError(f"two server kinds are named {kind.name!r} ({other.client}, "
                         f"{kind.client})")
    if not kind.name.isidentifier() or not kind.name.islower() or kind.name == "gnubg_external":
        raise BgbotError(f"server kind {kind.name!r}: a lower-case identifier other than "
                         "gnubg_external")
    _KINDS[kind.name] = kind
    return kind


def server_kinds() -> Mapping[str, ServerKind]:
    """Every server kind: the built-in packages of `bgbot.frontends` and the plugins'."""
    global _discovered
    if not _discovered:
        _discovered = True
        from .. import frontends
        from ..plugins import load_plugins

        for info in pkgutil.iter_modules(frontends.__path__):
            if info.ispkg:
                importlib.import_module(f"{frontends.__name__}.{info.name}")
        load_plugins()
    return _KINDS


def server_kind(name: str) -> ServerKind:
    """The kind called ``name``; BgbotError naming the known ones otherwise."""
    kind = server_kinds().get(name)
    if kind is None:
        raise BgbotError(f"no server kind {name!r}; known: {', '.join(server_kinds())}")
    return kind


def frontend_name(kind: str, entry: ServerAccountConfig) -> str:
    """The configured name, else ``KIND-USER`` (``fibs-bgbot``)."""
    return entry.name or f"{kind}-{entry.user}"


def account_for(kind_name: str, entry: ServerAccountConfig, *, logs_dir: Path | None,
                state_path: Path | None, environ: Mapping[str, str] | None = None,
                password: bool = True) -> ServerAccount:
    """The client's account for a ``[[KIND.accounts]]`` table. The password is looked up
    (`bgbot.util.resolve_secret`, in ``environ``) unless ``password`` is False; SecretError
    when the kind needs one and there is none. FormatError names a value the client refuses."""
    kind = server_kind(kind_name)
    secret, source = None, "not looked up"
    if password:
        secret, source = resolve_secret(kind.name, entry.user, file=entry.password_file or None,
                                        credential=entry.password_credential or None,
                                        environ=environ)
        if secret is None and kind.password_required:
            upper = f"BGBOT_{kind.name.upper()}_PASSWORD"
            raise SecretError(f"{kind.name} account {entry.user}: no password; set "
                              f"{upper}_{entry.user.upper()} or {upper}, password_file, or "
                              f"pass the systemd credential {kind.name}-{entry.user}, "
                              f"{kind.name}-password or {kind.name}")
    common: dict[str, Any] = dict(
        user=entry.user, password=secret, password_source=source,
        host=entry.host or kind.default_host, port=entry.port or kind.default_port,
        agent=entry.agent, name=entry.name, policy=invitation_policy(entry),
        greeting=entry.greeting, farewell=entry.farewell, logs_dir=logs_dir,
        state_path=state_path, seed=entry.seed)
    return kind.client_class().account_from_config(entry, common)


def check_account(kind_name: str, entry: ServerAccountConfig) -> tuple[str, str] | None:
    """(key, reason) of the first value the kind's client would refuse, or None. Passwords
    are not looked up: they may only exist where the daemon runs."""
    kind = server_kind(kind_name)
    try:
        account_for(kind.name, entry, logs_dir=Path("."), state_path=None, password=False)
    except FormatError as exc:
        return kind.config_keys.get(exc.field, exc.field), exc.reason
    return None


def client_for(kind_name: str, entry: ServerAccountConfig, *, logs_dir: Path,
               state_path: Path, on_event: EventListener, agent: Agent | None = None,
               environ: Mapping[str, str] | None = None) -> ServerClient:
    """A client for a ``[[KIND.accounts]]`` table, reporting its events to ``on_event`` and
    playing with ``agent`` when given (it stays the caller's), else with one it builds from
    the account's spec."""
    account = account_for(kind_name, entry, logs_dir=logs_dir, state_path=state_path,
                          environ=environ)
    return server_kind(kind_name).client_class()(account, on_event=on_event, agent=agent)


def with_overrides(account: ServerAccount, **values: Any) -> ServerAccount:
    """``account`` with the values that are not None replaced (command-line overrides)."""
    return replace(account, **{k: v for k, v in values.items() if v is not None})
