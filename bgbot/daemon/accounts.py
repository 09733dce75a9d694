"""Server accounts from the configuration -> the online-server clients (FIBS, bgammon).

``[[fibs.accounts]]`` and ``[[bgammon.accounts]]`` tables share one schema
(`ServerAccountConfig`); this module is the one place that turns such a table into a
`FibsAccount` or a `BgammonAccount`, for the daemon and for ``bgbot fibs|bgammon --config``.

Passwords: ``password_file`` when given, else the systemd credential ``password_credential``
when given, else what the frontend itself looks up (FIBS: ``$BGBOT_FIBS_PASSWORD``, the
credential ``fibs-password``; bgammon: ``$BGBOT_BGAMMON_PASSWORD[_<USER>]``, the credentials
``bgammon-<user>`` / ``bgammon``). They are never logged.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping

from ..core.errors import BgbotError, FormatError
from .config import ServerAccountConfig

if TYPE_CHECKING:
    from ..agents.base import Agent
    from ..frontends.bgammon import BgammonAccount
    from ..frontends.fibs import FibsAccount
    from ..frontends.invitations import InvitationPolicy

EventListener = Callable[[dict[str, Any]], None]


class PasswordError(BgbotError):
    """A configured password file or credential cannot be read, or none is found."""


def configured_password(kind: str, entry: ServerAccountConfig,
                        environ: Mapping[str, str] | None = None) -> str | None:
    """The password the account's own keys point at (file, then named credential), or None
    to let the frontend look in its usual places."""
    env = os.environ if environ is None else environ
    if entry.password_file:
        try:
            return Path(entry.password_file).expanduser().read_text(encoding="utf-8").strip()
        except OSError as exc:
            raise PasswordError(f"{kind} account {entry.user}: cannot read password_file "
                                f"{entry.password_file}: {exc.strerror}") from None
    if entry.password_credential:
        for directory in filter(None, env.get("CREDENTIALS_DIRECTORY", "").split(":")):
            path = Path(directory) / entry.password_credential
            if path.is_file():
                return path.read_text(encoding="utf-8").strip()
        raise PasswordError(f"{kind} account {entry.user}: no systemd credential "
                            f"{entry.password_credential!r} (LoadCredential= in the unit)")
    return None


def invitation_policy(entry: ServerAccountConfig) -> InvitationPolicy:
    """The account's invitation rules (limits of 0 mean none)."""
    from ..frontends.invitations import InvitationPolicy

    return InvitationPolicy(
        min_length=entry.min_length, max_length=entry.max_length,
        allow_unlimited=entry.allow_unlimited,
        min_rating=entry.min_rating or None, max_rating=entry.max_rating or None,
        min_experience=entry.min_experience or None, max_experience=entry.max_experience or None,
        allow=entry.allow, block=entry.block, allow_bots=entry.allow_bots,
        cooldown_seconds=entry.cooldown)


def fibs_account(entry: ServerAccountConfig, *, logs_dir: Path | None, state_path: Path | None,
                 environ: Mapping[str, str] | None = None) -> FibsAccount:
    """A `FibsAccount` for a ``[[fibs.accounts]]`` table."""
    from ..frontends.fibs import FibsAccount, parse_invite, resolve_password

    password = resolve_password(configured_password("fibs", entry, environ),
                                environ=dict(os.environ if environ is None else environ))
    if not password:
        raise PasswordError(f"fibs account {entry.user}: no password; set password_file, pass "
                            "the systemd credential fibs-password, or set $BGBOT_FIBS_PASSWORD")
    invites = tuple(parse_invite(item if ":" in item else f"{item}:{entry.match_length}",
                                 "invite") for item in entry.invite)
    return FibsAccount(
        user=entry.user, password=password, host=entry.host or "fibs.com",
        port=entry.port or 4321, agent=entry.agent, name=entry.name,
        policy=invitation_policy(entry), invite=invites, greeting=entry.greeting,
        farewell=entry.farewell, logs_dir=logs_dir, state_path=state_path,
        keepalive=entry.keepalive or 120.0, seed=entry.seed)


def bgammon_account(entry: ServerAccountConfig, *, logs_dir: Path, state_path: Path | None,
                    environ: Mapping[str, str] | None = None) -> BgammonAccount:
    """A `BgammonAccount` for a ``[[bgammon.accounts]]`` table (FormatError names the key)."""
    from ..frontends.bgammon import BgammonAccount

    return BgammonAccount(
        user=entry.user, host=entry.host or "bgammon.org", port=entry.port or 1337,
        password=configured_password("bgammon", entry, environ), agent=entry.agent,
        match_length=entry.match_length, policy=invitation_policy(entry),
        greeting=entry.greeting, farewell=entry.farewell, logs_dir=logs_dir,
        state_path=state_path, keepalive_seconds=entry.keepalive or 25.0, seed=entry.seed)


def check_account(kind: str, entry: ServerAccountConfig) -> tuple[str, str] | None:
    """(key, reason) of the first value the frontend would refuse, or None (passwords are not
    looked up here: they may only exist where the daemon runs)."""
    try:
        if kind == "bgammon":
            bgammon_account(entry, logs_dir=Path("."), state_path=None, environ={})
        else:
            from ..frontends.fibs import parse_invite

            for item in entry.invite:
                parse_invite(item if ":" in item else f"{item}:{entry.match_length}", "invite")
    except FormatError as exc:
        key = {"keepalive_seconds": "keepalive"}.get(exc.field, exc.field)
        return key, exc.reason
    except PasswordError:
        return None
    return None


def fibs_client(entry: ServerAccountConfig, *, logs_dir: Path, state_path: Path,
                on_event: EventListener, agent: Agent | None = None) -> Any:
    """A `FibsClient` for a ``[[fibs.accounts]]`` table, reporting its events to ``on_event``
    (playing with ``agent`` when given, else with one it builds from the account's spec)."""
    from ..frontends.fibs import FibsClient

    return FibsClient(fibs_account(entry, logs_dir=logs_dir, state_path=state_path),
                      listener=on_event, agent=agent)


def bgammon_client(entry: ServerAccountConfig, *, logs_dir: Path, state_path: Path,
                   on_event: EventListener, agent: Agent | None = None) -> Any:
    """A `BgammonClient` for a ``[[bgammon.accounts]]`` table (``agent`` as `fibs_client`)."""
    from ..frontends.bgammon import BgammonClient

    return BgammonClient(bgammon_account(entry, logs_dir=logs_dir, state_path=state_path),
                         on_event=on_event, agent=agent)
