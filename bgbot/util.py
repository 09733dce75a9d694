"""Small helpers every layer with files shares: atomic writes, safe file names, secrets, and
child processes that die with the process that started them.

They live once, here, below everything that writes files or reads credentials (the referee's
``.mat`` logs, the frontends' logs and state, the daemon's key and the server accounts'
passwords); this module imports nothing else of bgbot but its errors.

Secrets follow one documented order for every server account (`resolve_secret`): the
account's own environment variable, the general one, the configuration, then the systemd
credentials (``$CREDENTIALS_DIRECTORY``, which `credential_path` alone reads).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import re
import signal
import sys
import tempfile
from pathlib import Path
from typing import Any, Mapping

from .core.errors import BgbotError

__all__ = ["SecretError", "credential_path", "current_umask", "die_with_parent",
           "resolve_secret", "safe_name", "writable_directory", "write_atomically"]

_UNSAFE = re.compile(r"[^A-Za-z0-9._=-]+")


def _load_prctl() -> Any:
    """libc's prctl, loaded once in the parent (nothing is loaded between fork and exec)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True).prctl
    except (OSError, AttributeError):
        return None


_PRCTL = _load_prctl()
_PR_SET_PDEATHSIG = 1


def die_with_parent() -> None:
    """Have Linux SIGKILL this process when the thread that started it dies (PR_SET_PDEATHSIG;
    kept across exec). As a ``preexec_fn`` it makes a child that leads its own session (an
    engine) die with a daemon killed by ``kill -9``, which nothing else would tell it; in a
    worker it is called first thing. A no-op where prctl does not exist."""
    if _PRCTL is not None:
        _PRCTL(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def safe_name(text: str, fallback: str = "player") -> str:
    """``text`` as a piece of a file name: runs of other characters than letters, digits and
    ``._=-`` become one ``_`` (no ``/``, no spaces, no leading dot games); ``fallback`` when
    nothing is left."""
    return _UNSAFE.sub("_", text).strip("_") or fallback


def write_atomically(path: Path, data: str | bytes, *, mode: int | None = None,
                     replace: bool = True) -> bool:
    """Write ``data`` to ``path`` so that a reader (or a crash) never sees half a file.

    The text goes to a temporary file beside ``path``, is synced, then takes its place, and
    the directory is synced. ``mode`` sets the file's permissions (the temporary file has them
    before any byte is written); by default they are those of a file the process creates
    (0666 less the umask), not the temporary file's 0600. With ``replace=False`` an existing
    ``path`` is kept (another process may have just written it) and the result is False;
    otherwise True.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, 0o666 & ~current_umask() if mode is None else mode)
        raw = data.encode("utf-8") if isinstance(data, str) else data
        with os.fdopen(fd, "wb") as handle:
            handle.write(raw)
            handle.flush()
            os.fsync(handle.fileno())
        if replace:
            os.replace(tmp, path)
        else:
            try:
                os.link(tmp, path)
            except FileExistsError:
                return False
            finally:
                Path(tmp).unlink(missing_ok=True)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    _sync_directory(path.parent)
    return True


def current_umask() -> int:
    """The process's umask, read without changing it (``/proc/self/status``; where that is
    missing, set and restored at once)."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def writable_directory(path: Path, what: str) -> Path:
    """``path`` as a directory this process can write files into, created when missing; a
    `BgbotError` naming ``what`` and the path otherwise (a file in the way, no permission, a
    read-only file system), so that a command fails before it starts rather than after its
    first game."""
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise BgbotError(f"{what} {path}: is not a directory")
    try:
        path.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(prefix=".bgbot-probe.", dir=path)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise BgbotError(f"{what} {path}: cannot write there ({exc.strerror or exc})") from None
    return path


def _sync_directory(directory: Path) -> None:
    try:
        dir_fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(dir_fd)
    except OSError:
        pass
    finally:
        os.close(dir_fd)


# ============================================================================ secrets


class SecretError(BgbotError):
    """A configured secret file or credential cannot be read."""


def credential_path(name: str, environ: Mapping[str, str] | None = None) -> Path | None:
    """The systemd credential ``name`` (``LoadCredential=``): the file of that name in
    ``$CREDENTIALS_DIRECTORY`` (each entry of a colon-separated list, in order), or None."""
    env = os.environ if environ is None else environ
    for directory in filter(None, env.get("CREDENTIALS_DIRECTORY", "").split(":")):
        path = Path(directory) / name
        if path.is_file():
            return path
    return None


def _read_secret(path: Path, what: str) -> str:
    try:
        return path.expanduser().read_text(encoding="utf-8").strip()
    except OSError as exc:
        raise SecretError(f"cannot read {what} {path}: {exc.strerror or exc}") from None


def resolve_secret(kind: str, user: str, *, value: str | None = None, file: str | None = None,
                   credential: str | None = None, environ: Mapping[str, str] | None = None,
                   ) -> tuple[str | None, str]:
    """The password of ``user``'s account on a ``kind`` server, and where it came from (a
    description that never holds the password). The first that is set wins:

    1. ``$BGBOT_<KIND>_PASSWORD_<USER>`` (kind and user upper-cased): this account's own;
    2. ``$BGBOT_<KIND>_PASSWORD``: any account of the kind;
    3. the configuration: ``value`` as given, else the file ``file`` (``password_file``), else
       the systemd credential named ``credential`` (``password_credential``) -- a configured
       file or credential that cannot be read raises `SecretError`;
    4. the systemd credentials ``<kind>-<user>``, ``<kind>-password`` and ``<kind>``.

    (None, "none") when nothing is set.
    """
    env = os.environ if environ is None else environ
    prefix = f"BGBOT_{kind.upper()}_PASSWORD"
    for name in (f"{prefix}_{user.upper()}", prefix):
        if env.get(name):
            return env[name], f"environment {name}"
    if value:
        return value, "config"
    if file:
        return _read_secret(Path(file), "password_file") or None, f"password_file {file}"
    if credential:
        path = credential_path(credential, env)
        if path is None:
            raise SecretError(f"no systemd credential {credential!r} (LoadCredential= in the "
                              "unit)")
        return _read_secret(path, "credential") or None, f"credential {credential}"
    for name in (f"{kind}-{user}", f"{kind}-password", kind):
        path = credential_path(name, env)
        if path is not None:
            text = _read_secret(path, "credential")
            if text:
                return text, f"credential {name}"
    return None, "none"
