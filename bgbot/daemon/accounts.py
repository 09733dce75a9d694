"""Server accounts from the configuration -> the online-server clients (FIBS, bgammon).

The password is read here, at start time, from the account's ``password_file``, else the
systemd credential (``$CREDENTIALS_DIRECTORY/<password_credential>``), else the environment
(``BGBOT_FIBS_PASSWORD`` / ``BGBOT_BGAMMON_PASSWORD``); it is never logged.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Callable

from ..core.errors import BgbotError
from .config import ServerAccountConfig

DEFAULT_CREDENTIALS = {"fibs": "fibs-password", "bgammon": "bgammon-password"}
PASSWORD_VARIABLES = {"fibs": "BGBOT_FIBS_PASSWORD", "bgammon": "BGBOT_BGAMMON_PASSWORD"}


class PasswordError(BgbotError):
    """No password could be found for a server account."""


def account_password(kind: str, entry: ServerAccountConfig,
                     environ: dict[str, str] | None = None) -> str:
    """The account's password from its file, the systemd credential or the environment."""
    env = dict(os.environ) if environ is None else environ
    if entry.password_file:
        try:
            return Path(entry.password_file).read_text(encoding="utf-8").strip()
        except OSError as exc:
            raise PasswordError(f"{kind} account {entry.user}: cannot read password_file "
                                f"{entry.password_file}: {exc.strerror}") from None
    credential = entry.password_credential or DEFAULT_CREDENTIALS[kind]
    for directory in filter(None, env.get("CREDENTIALS_DIRECTORY", "").split(":")):
        path = Path(directory) / credential
        if path.is_file():
            return path.read_text(encoding="utf-8").strip()
    variable = PASSWORD_VARIABLES[kind]
    if env.get(variable):
        return env[variable]
    raise PasswordError(f"{kind} account {entry.user}: no password; set password_file, pass "
                        f"the systemd credential {credential!r}, or set ${variable}")


def fibs_client(entry: ServerAccountConfig, *, logs_dir: Path, state_path: Path,
                on_event: Callable[[dict[str, Any]], None]) -> Any:
    """A `FibsClient` for a ``[[fibs.accounts]]`` table."""
    raise BgbotError("the FIBS frontend is not part of this build yet")


def bgammon_client(entry: ServerAccountConfig, *, logs_dir: Path, state_path: Path,
                   on_event: Callable[[dict[str, Any]], None]) -> Any:
    """A `BgammonClient` for a ``[[bgammon.accounts]]`` table."""
    raise BgbotError("the bgammon frontend is not part of this build yet")
