"""The systemd notification protocol (sd_notify) in a few lines of stdlib.

systemd passes ``$NOTIFY_SOCKET``: a Unix datagram socket path, or ``@name`` for the abstract
namespace. The service sends newline-separated ``KEY=VALUE`` datagrams: ``READY=1`` once it
serves, ``STATUS=...`` for ``systemctl status``, ``WATCHDOG=1`` at least every
``$WATCHDOG_USEC`` (we send at half the interval), ``RELOADING=1`` with ``MONOTONIC_USEC``
while reloading, ``STOPPING=1`` when shutting down. Without ``$NOTIFY_SOCKET`` every call is a
no-op, so the daemon runs the same under a terminal, in tests and in containers.
"""

from __future__ import annotations

import logging
import os
import socket
import time

log = logging.getLogger(__name__)


class Notifier:
    """Sends sd_notify datagrams to ``$NOTIFY_SOCKET`` (or to ``address``)."""

    def __init__(self, address: str | None = None) -> None:
        raw = os.environ.get("NOTIFY_SOCKET", "") if address is None else address
        self.address = raw
        self._socket: socket.socket | None = None
        if not raw:
            return
        if raw[0] not in "/@":
            log.warning("NOTIFY_SOCKET=%r is not a Unix socket; notifications disabled", raw)
            self.address = ""
            return
        target = "\0" + raw[1:] if raw[0] == "@" else raw
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC)
        try:
            sock.connect(target)
        except OSError as exc:
            sock.close()
            log.warning("cannot reach NOTIFY_SOCKET %s: %s; notifications disabled", raw, exc)
            self.address = ""
            return
        self._socket = sock

    @property
    def enabled(self) -> bool:
        return self._socket is not None

    def notify(self, *assignments: str) -> bool:
        """Send ``KEY=VALUE`` lines in one datagram; False when disabled or the send failed."""
        if self._socket is None:
            return False
        try:
            self._socket.send("\n".join(assignments).encode("utf-8"))
        except OSError as exc:
            log.warning("sd_notify %s failed: %s", assignments[0] if assignments else "", exc)
            return False
        return True

    def ready(self, status: str | None = None) -> bool:
        extra = () if status is None else (f"STATUS={_one_line(status)}",)
        return self.notify("READY=1", *extra)

    def status(self, text: str) -> bool:
        return self.notify(f"STATUS={_one_line(text)}")

    def watchdog(self) -> bool:
        return self.notify("WATCHDOG=1")

    def reloading(self) -> bool:
        """``RELOADING=1`` with the CLOCK_MONOTONIC time systemd uses to order reloads."""
        usec = time.clock_gettime_ns(time.CLOCK_MONOTONIC) // 1000
        return self.notify("RELOADING=1", f"MONOTONIC_USEC={usec}")

    def stopping(self) -> bool:
        return self.notify("STOPPING=1")

    def close(self) -> None:
        if self._socket is not None:
            self._socket.close()
            self._socket = None


def watchdog_interval() -> float | None:
    """Seconds between ``WATCHDOG=1`` pings: half of ``$WATCHDOG_USEC``, or None when the
    watchdog is off or meant for another process (``$WATCHDOG_PID``)."""
    raw = os.environ.get("WATCHDOG_USEC", "")
    pid = os.environ.get("WATCHDOG_PID", "")
    if pid and pid != str(os.getpid()):
        return None
    try:
        usec = int(raw)
    except ValueError:
        return None
    if usec <= 0:
        return None
    return usec / 2_000_000


def _one_line(text: str) -> str:
    return " ".join(text.split())
