"""The sd_notify client: datagrams on a real socket (a path and the abstract namespace), the
watchdog interval, and silence without $NOTIFY_SOCKET."""

from __future__ import annotations

import os
import socket
import uuid
from pathlib import Path
from typing import Iterator

import pytest

from bgbot.daemon.notify import Notifier, watchdog_interval


@pytest.fixture(params=["path", "abstract"])
def listener(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[socket.socket, str]]:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    if request.param == "path":
        address = str(tmp_path / "notify")
        sock.bind(address)
    else:
        name = f"bgbot-test-{uuid.uuid4().hex}"
        sock.bind("\0" + name)
        address = "@" + name
    sock.settimeout(2)
    yield sock, address
    sock.close()


def test_every_notification_arrives(listener: tuple[socket.socket, str]) -> None:
    sock, address = listener
    notifier = Notifier(address)
    assert notifier.enabled
    assert notifier.ready("serving\non ipc")
    assert sock.recv(4096) == b"READY=1\nSTATUS=serving on ipc"
    notifier.status("2 matches")
    assert sock.recv(4096) == b"STATUS=2 matches"
    notifier.watchdog()
    assert sock.recv(4096) == b"WATCHDOG=1"
    notifier.reloading()
    first, second = sock.recv(4096).decode().split("\n")
    assert first == "RELOADING=1"
    stamp = int(second.removeprefix("MONOTONIC_USEC="))
    assert abs(stamp - __import__("time").clock_gettime_ns(1) // 1000) < 5_000_000
    notifier.stopping()
    assert sock.recv(4096) == b"STOPPING=1"
    notifier.close()


def test_without_notify_socket_nothing_is_sent(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NOTIFY_SOCKET", raising=False)
    notifier = Notifier()
    assert not notifier.enabled
    assert notifier.ready() is False


def test_an_unreachable_socket_disables_notifications(tmp_path: Path) -> None:
    assert not Notifier(str(tmp_path / "nobody")).enabled
    assert not Notifier("vsock:2:1234").enabled


def test_the_watchdog_pings_at_half_the_interval(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WATCHDOG_USEC", "30000000")
    monkeypatch.delenv("WATCHDOG_PID", raising=False)
    assert watchdog_interval() == 15.0
    monkeypatch.setenv("WATCHDOG_PID", str(os.getpid()))
    assert watchdog_interval() == 15.0
    monkeypatch.setenv("WATCHDOG_PID", str(os.getpid() + 1))
    assert watchdog_interval() is None  # meant for another process
    monkeypatch.setenv("WATCHDOG_USEC", "nonsense")
    monkeypatch.delenv("WATCHDOG_PID")
    assert watchdog_interval() is None
