"""A minimal client written only from protocol/SPEC.md: pyzmq, msgpack, hmac, nothing of bgbot.

It exists to prove that the spec is enough to talk to the daemon (and to bgbot's own test stub).
It must never import bgbot: whatever it needs to know, SPEC.md has to say. The daemon's tests
run it against the real daemon too.
"""

from __future__ import annotations

import hashlib
import hmac
import time
import uuid
from dataclasses import dataclass
from typing import Any

import msgpack  # type: ignore[import-untyped, unused-ignore]
import zmq

DELIMITER = b"BGB1"  # SPEC §3
VERSION = "1.0"  # SPEC §1


@dataclass
class RawReply:
    msg_type: str
    header: dict[str, Any]
    parent: dict[str, Any]
    content: dict[str, Any]


def pack(value: Any) -> bytes:
    data: bytes = msgpack.packb(value, use_bin_type=True)
    return data


def sign(key: bytes, parts: list[bytes]) -> bytes:
    """SPEC §4: hex HMAC-SHA256 over header, parent header and content; empty without a key."""
    if not key:
        return b""
    return hmac.new(key, b"".join(parts), hashlib.sha256).hexdigest().encode("ascii")


def envelope(key: bytes, msg_type: str, content: dict[str, Any], *, msg_id: str | None = None,
             stamp: float | None = None) -> tuple[str, list[bytes]]:
    """SPEC §3: the five frames of a request, and its msg_id."""
    msg_id = msg_id or uuid.uuid4().hex
    header = {"msg_id": msg_id, "msg_type": msg_type, "version": VERSION,
              "time": time.time() if stamp is None else stamp}
    parts = [pack(header), pack({}), pack(content)]
    return msg_id, [DELIMITER, sign(key, parts), *parts]


def read(key: bytes, frames: list[bytes]) -> RawReply | None:
    """SPEC §5 (the checks a client needs): None when the message is not acceptable."""
    if len(frames) != 5 or frames[0] != DELIMITER:
        return None
    _, signature, header_raw, parent_raw, content_raw = frames
    if key and not hmac.compare_digest(signature, sign(key, [header_raw, parent_raw, content_raw])):
        return None
    header = msgpack.unpackb(header_raw, raw=False)
    if abs(time.time() - header["time"]) > 300:
        return None
    return RawReply(header["msg_type"], header, msgpack.unpackb(parent_raw, raw=False),
                    msgpack.unpackb(content_raw, raw=False))


class RawClient:
    """One DEALER to the control endpoint (SPEC §2 and §10)."""

    def __init__(self, endpoint: str, key: bytes) -> None:
        self.key = key
        self.context = zmq.Context()
        self.socket = self.context.socket(zmq.DEALER)
        self.socket.setsockopt(zmq.LINGER, 0)
        self.socket.setsockopt(zmq.IMMEDIATE, 1)
        self.socket.connect(endpoint)

    def send_frames(self, frames: list[bytes]) -> None:
        if not self.socket.poll(5000, zmq.POLLOUT):
            raise TimeoutError("cannot connect: is the daemon running?")
        self.socket.send_multipart(frames)

    def receive(self, msg_id: str | None, timeout: float = 5.0) -> RawReply:
        """The reply whose parent is ``msg_id`` (or an error with an empty parent header)."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not self.socket.poll(int(left * 1000)):
                raise TimeoutError("no reply: is the daemon running, and is the key right?")
            reply = read(self.key, self.socket.recv_multipart())
            if reply is None:
                continue
            parent = reply.parent.get("msg_id")
            if parent == msg_id or (parent is None and reply.msg_type == "error"):
                return reply

    def request(self, msg_type: str, content: dict[str, Any], timeout: float = 5.0) -> RawReply:
        msg_id, frames = envelope(self.key, msg_type, content)
        self.send_frames(frames)
        return self.receive(msg_id, timeout)

    def close(self) -> None:
        self.socket.close(0)
        self.context.term()


def raw_events(endpoint: str, key: bytes, topic: bytes, count: int, timeout: float = 10.0) -> list[tuple[bytes, RawReply]]:
    """Subscribe to ``topic`` (SPEC §9) and return the first ``count`` acceptable events."""
    context = zmq.Context()
    sub = context.socket(zmq.SUB)
    sub.setsockopt(zmq.LINGER, 0)
    sub.setsockopt(zmq.SUBSCRIBE, topic)
    sub.connect(endpoint)
    found: list[tuple[bytes, RawReply]] = []
    deadline = time.monotonic() + timeout
    try:
        while len(found) < count:
            left = deadline - time.monotonic()
            if left <= 0 or not sub.poll(int(left * 1000)):
                raise TimeoutError(f"only {len(found)} of {count} events arrived")
            frames = sub.recv_multipart()
            event = read(key, frames[1:])
            if event is not None and (not topic or frames[0] == topic or topic.endswith(b".")):
                found.append((frames[0], event))
    finally:
        sub.close(0)
        context.term()
    return found
