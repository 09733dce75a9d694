"""Starting real `bgbot serve` processes for the daemon tests: a private directory tree, a key,
a config file, and a client; the daemon's log goes to a file the tests can read."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bgbot.daemon.client import Client, DaemonError
from bgbot.daemon.protocol import write_key


def serve_command() -> list[str]:
    """`bgbot serve`, run by this Python."""
    return [sys.executable, "-m", "bgbot.cli", "serve"]


def short_tmpdir(prefix: str = "bgbd-") -> Path:
    """A directory with a short path: ipc:// socket paths are limited to ~100 bytes."""
    return Path(tempfile.mkdtemp(prefix=prefix, dir="/tmp"))


@dataclass
class DaemonDirs:
    root: Path
    key: bytes = b""

    @property
    def runtime(self) -> Path:
        return self.root / "run"

    @property
    def state(self) -> Path:
        return self.root / "state"

    @property
    def logs(self) -> Path:
        return self.root / "logs"

    @property
    def key_file(self) -> Path:
        return self.root / "control.key"

    @property
    def config_file(self) -> Path:
        return self.root / "bgbot.toml"

    @property
    def control(self) -> str:
        return f"ipc://{self.runtime / 'control'}"

    @property
    def events(self) -> str:
        return f"ipc://{self.runtime / 'events'}"

    def write_config(self, extra: str = "", *, workers: int = 1, control: str | None = None
                     ) -> Path:
        """The config file; ``control`` replaces the [control] keys (default: the key file),
        ``extra`` is appended (after [limits])."""
        if not self.key_file.exists():
            self.key = write_key(self.key_file)
        else:
            self.key = self.key_file.read_bytes().strip()
        keys = f'key_file = "{self.key_file}"\n' if control is None else control
        self.config_file.write_text(
            f'[daemon]\nstate_dir = "{self.state}"\nlogs_dir = "{self.logs}"\n'
            f'runtime_dir = "{self.runtime}"\nstop_timeout = 10.0\n'
            f"[control]\n{keys}"
            f"[limits]\nmatch_workers = {workers}\ndecision_workers = {workers}\n" + extra
        )
        return self.config_file


@dataclass
class Daemon:
    """A running `bgbot serve` process."""

    dirs: DaemonDirs
    proc: subprocess.Popen[bytes]
    log_path: Path
    clients: list[Client] = field(default_factory=list)

    def client(self, timeout: float = 10.0, **kwargs: Any) -> Client:
        kwargs.setdefault("key", self.dirs.key)
        client = Client(self.dirs.control, self.dirs.events, timeout=timeout, **kwargs)
        self.clients.append(client)
        return client

    @property
    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def wait_ready(self, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        probe = Client(self.dirs.control, key=self.dirs.key, timeout=1.0)
        try:
            while time.monotonic() < deadline:
                if self.proc.poll() is not None:
                    raise RuntimeError(f"daemon exited with {self.proc.returncode}:\n{self.log}")
                try:
                    probe.status()
                    return
                except DaemonError:
                    time.sleep(0.1)
        finally:
            probe.close()
        raise RuntimeError(f"daemon not ready in {timeout} s:\n{self.log}")

    def signal(self, sig: int) -> None:
        self.proc.send_signal(sig)

    def wait(self, timeout: float = 30.0) -> int:
        return self.proc.wait(timeout)

    def stop(self) -> int | None:
        for client in self.clients:
            client.close()
        self.clients.clear()
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        return self.proc.returncode


def start_daemon(dirs: DaemonDirs, *, env: dict[str, str] | None = None, wait: bool = True,
                 config: Path | None = None, log_name: str = "daemon.log") -> Daemon:
    log_path = dirs.root / log_name
    environment = dict(os.environ)
    environment.pop("NOTIFY_SOCKET", None)
    environment.pop("WATCHDOG_USEC", None)
    environment.update(env or {})
    handle = log_path.open("ab")
    proc = subprocess.Popen([*serve_command(), "--config", str(config or dirs.config_file)],
                            stdout=handle, stderr=subprocess.STDOUT, env=environment,
                            stdin=subprocess.DEVNULL)
    handle.close()
    daemon = Daemon(dirs, proc, log_path)
    if wait:
        try:
            daemon.wait_ready()
        except BaseException:
            daemon.stop()
            raise
    return daemon


def remove_tree(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)


def mat_body(text: str) -> str:
    """A .mat file without its ';' header lines (date and time of the run)."""
    return "".join(line for line in text.splitlines(keepends=True) if not line.startswith(";"))


def wait_for(predicate: Any, timeout: float = 60.0, interval: float = 0.05) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise TimeoutError(f"condition not met in {timeout} s")


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().split()[2] != "Z"
    except OSError:
        return True
