"""The daemon's control protocol in Python: envelope, signing, replay defence, schema checks.

This module is the executable form of ``protocol/SPEC.md``; where they differ, the spec is
right and this is a bug. A message on the wire is five frames after the ROUTER identities
(an event is preceded by one topic frame instead)::

    DELIMITER, signature, header, parent header, content

``header``, ``parent header`` and ``content`` are msgpack maps. The signature is the lowercase
hex HMAC-SHA256 of the three serialized maps, in that order, with the shared key; it is empty
when no key is in use. Requests are ``<name>_request``, replies ``<name>_reply`` or ``error``.
"""

from __future__ import annotations

import hashlib
import hmac
import math
import os
import re
import stat
import time
import uuid
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

import msgpack  # type: ignore[import-untyped, unused-ignore]

from ..core.errors import BgbotError
from ..util import write_atomically
from .schema import SchemaViolation, Validator, load_schema

__all__ = [
    "DELIMITER",
    "EVENT_TYPES",
    "frontend_topic",
    "MAX_MESSAGE_BYTES",
    "PROTOCOL_VERSION",
    "REQUEST_TYPES",
    "add_messages",
    "ErrorCode",
    "KeyFileError",
    "Message",
    "ProtocolError",
    "Signer",
    "check_request",
    "error_reply",
    "event_topic",
    "load_key",
    "match_topic",
    "message_kind",
    "new_message",
    "reply_type",
    "rollout_topic",
    "request_type",
    "split_identities",
    "validate_content",
    "write_key",
]

PROTOCOL_VERSION = "1.3"
"""The protocol version (``MAJOR.MINOR``); SPEC.md states the same (a test checks)."""
DELIMITER = b"BGB1"
"""The first frame of every message: marks where the envelope starts and carries the major
version (``BGB`` + major)."""
MAX_MESSAGE_BYTES = 4 * 1024 * 1024
"""The most bytes one message may have, all envelope frames together (4 MiB)."""
SIGNATURE_HEX_CHARS = 64

_MAJOR = PROTOCOL_VERSION.split(".")[0]
# fullmatch everywhere: "$" would also match before a final newline ("1.3\n")
_VERSION = re.compile(r"(0|[1-9][0-9]{0,8})\.(0|[1-9][0-9]{0,8})")
_MSG_ID = re.compile(r"[\x21-\x7e]{1,128}")
_MSG_TYPE = re.compile(r"[a-z][a-z0-9_]{0,63}")
_OTHER_DELIMITER = re.compile(rb"BGB[0-9]+")
_FRAMES = 5


class ErrorCode(str, Enum):
    """The closed list of error codes (SPEC.md "Errors"); a new code needs a new major version."""

    BAD_MESSAGE = "bad_message"
    """Frames that are not a protocol message: count, delimiter, msgpack, header fields."""
    BAD_VERSION = "bad_version"
    """Another major protocol version."""
    UNAUTHORIZED = "unauthorized"
    """Missing or wrong signature."""
    REPLAYED = "replayed"
    """A msg_id already seen."""
    STALE = "stale"
    """The header time is too far from the receiver's clock."""
    TOO_LARGE = "too_large"
    """More than MAX_MESSAGE_BYTES."""
    UNKNOWN_TYPE = "unknown_type"
    """A msg_type that does not exist, or is not a request where a request is expected."""
    BAD_VALUE = "bad_value"
    """Content that breaks the schema or cannot be used (a bad position, illegal dice...)."""
    BAD_STATE = "bad_state"
    """A valid request that cannot be done now (the match is over, the frontend runs...)."""
    NOT_FOUND = "not_found"
    """No such match or frontend."""
    BUSY = "busy"
    """At capacity (too many matches, too much queued work): try again later."""
    UNSUPPORTED = "unsupported"
    """A valid request this daemon cannot honour (an agent that cannot evaluate...)."""
    TIMEOUT = "timeout"
    """The work did not finish in time (an engine did not answer)."""
    SHUTTING_DOWN = "shutting_down"
    """The daemon is stopping and takes no new work."""
    INTERNAL = "internal"
    """A bug in the daemon; its log has the details."""


class ProtocolError(BgbotError):
    """A message that cannot be accepted, or a request that failed, with its error code.

    ``msg_id`` is the offending message's id when it could be read, so that an error reply can
    name it as its parent (see `reply`).
    """

    def __init__(
        self,
        code: ErrorCode,
        message: str,
        details: Mapping[str, Any] | None = None,
        *,
        msg_id: str | None = None,
    ) -> None:
        super().__init__(f"{code.value}: {message}")
        self.code = code
        self.message = message
        self.details: dict[str, Any] = dict(details or {})
        if code is ErrorCode.BAD_VALUE:  # the spec promises both keys on every bad_value
            field, colon, rest = message.partition(": ")
            self.details.setdefault("field", field if colon and " " not in field else "")
            self.details.setdefault("reason", rest if colon and " " not in field else message)
        self.msg_id = msg_id

    def reply(self) -> Message:
        """The ``error`` reply to send back: parented to the offending message when known."""
        return _error_message(self.msg_id, self.code, self.message, self.details)


class KeyFileError(BgbotError):
    """The key file is missing, unreadable or readable by every user."""


@dataclass(frozen=True)
class Message:
    """One protocol message, decoded. ``time`` is Unix seconds; ``version`` is the sender's.

    ``session`` (an addition to the brief's interface, optional in the header) names the
    sending client or daemon run, for logs.
    """

    msg_type: str
    content: dict[str, Any]
    msg_id: str
    parent_id: str | None
    time: float
    version: str
    session: str | None = None


# --------------------------------------------------------------------------- catalogue

_validator: Validator | None = None


def _schema() -> Validator:
    global _validator
    if _validator is None:
        _validator = Validator(load_schema())
    return _validator


def _types_of(kind: str) -> set[str]:
    schema = _schema()
    return {name for name in schema.messages if schema.kind(name) == kind}


REQUEST_TYPES: set[str] = _types_of("request")
"""Every ``*_request`` msg_type (the schema's, and those `add_messages` added)."""
REPLY_TYPES: set[str] = _types_of("reply")
"""Every reply msg_type, ``error`` included."""
EVENT_TYPES: set[str] = _types_of("event")
"""Every event msg_type (published on the events socket)."""


def add_messages(messages: Mapping[str, Any]) -> None:
    """Extend the protocol with message types that ``protocol/schema.json`` does not define
    (a plugin's request and its reply, `bgbot.daemon.requests`): ``messages`` maps each
    msg_type to its schema, written as in the schema's ``messages`` section (``x-kind``, for a
    request ``x-reply``). A type already known, or a schema the validator cannot check, is a
    ValueError and changes nothing."""
    for name, schema in messages.items():
        if not _MSG_TYPE.fullmatch(name):
            raise ValueError(f"message type {name!r}: lower case letters, digits and '_'")
        if schema.get("x-kind") == "request" and (
                not name.endswith("_request") or schema.get("x-reply") not in messages):
            raise ValueError(f"request {name!r}: its name ends in _request and its x-reply "
                             "names a reply defined with it")
    _schema().add_messages(messages)
    for name, schema in messages.items():
        {"request": REQUEST_TYPES, "reply": REPLY_TYPES, "event": EVENT_TYPES}[
            schema["x-kind"]].add(name)


def message_kind(msg_type: str) -> str:
    """``request``, ``reply`` or ``event``; ProtocolError UNKNOWN_TYPE for anything else."""
    if not _schema().knows(msg_type):
        raise ProtocolError(ErrorCode.UNKNOWN_TYPE, f"unknown msg_type {msg_type!r}",
                            {"msg_type": msg_type})
    return _schema().kind(msg_type)


def request_type(name: str) -> str:
    """``status`` or ``status_request`` -> ``status_request`` (UNKNOWN_TYPE if there is none)."""
    full = name if name.endswith("_request") else f"{name}_request"
    if full not in REQUEST_TYPES:
        known = ", ".join(sorted(t[: -len("_request")] for t in REQUEST_TYPES))
        raise ProtocolError(ErrorCode.UNKNOWN_TYPE, f"no request {name!r}; known: {known}",
                            {"msg_type": name})
    return full


def reply_type(request: str) -> str:
    """The msg_type of a successful reply to ``request`` (``status_request`` -> ``status_reply``)."""
    reply: str = _schema().messages[request_type(request)]["x-reply"]
    return reply


def check_request(message: Message) -> None:
    """Raise UNKNOWN_TYPE unless ``message`` is a request (the daemon answers nothing else)."""
    if message.msg_type not in REQUEST_TYPES:
        raise ProtocolError(
            ErrorCode.UNKNOWN_TYPE,
            f"{message.msg_type!r} is a {message_kind(message.msg_type)}, not a request",
            {"msg_type": message.msg_type},
            msg_id=message.msg_id,
        )


def validate_content(msg_type: str, content: dict[str, Any]) -> None:
    """Check ``content`` against the schema of ``msg_type``.

    Raises ProtocolError BAD_VALUE whose message and ``details["field"]`` name the field
    (``context.cube_value``, ``players[1]``), or UNKNOWN_TYPE for an unknown msg_type.
    """
    schema = _schema()
    if not schema.knows(msg_type):
        raise ProtocolError(ErrorCode.UNKNOWN_TYPE, f"unknown msg_type {msg_type!r}",
                            {"msg_type": msg_type})
    try:
        schema.validate(msg_type, content)
    except SchemaViolation as exc:
        raise ProtocolError(
            ErrorCode.BAD_VALUE, str(exc), {"field": exc.field or "content", "reason": exc.reason}
        ) from None


# --------------------------------------------------------------------------- building messages


def new_message(
    msg_type: str,
    content: dict[str, Any],
    parent: Message | None = None,
    *,
    session: str | None = None,
) -> Message:
    """A fresh message: a new uuid4 hex id, the current time and our protocol version."""
    return Message(
        msg_type=msg_type,
        content=content,
        msg_id=uuid.uuid4().hex,
        parent_id=parent.msg_id if parent is not None else None,
        time=time.time(),
        version=PROTOCOL_VERSION,
        session=session,
    )


def _error_message(
    parent_id: str | None, code: ErrorCode, message: str, details: Mapping[str, Any] | None
) -> Message:
    return Message(
        msg_type="error",
        content={"code": ErrorCode(code).value, "message": message, "details": dict(details or {})},
        msg_id=uuid.uuid4().hex,
        parent_id=parent_id,
        time=time.time(),
        version=PROTOCOL_VERSION,
    )


def error_reply(
    parent: Message | None,
    code: ErrorCode,
    message: str,
    details: dict[str, Any] | None = None,
) -> Message:
    """The ``error`` reply to ``parent`` (None when the request could not be read at all)."""
    return _error_message(parent.msg_id if parent is not None else None, code, message, details)


def match_topic(match_id: str) -> bytes:
    """The events topic of a hosted match: ``match.<match_id>``. Compare topics exactly:
    ZeroMQ filters subscriptions by prefix."""
    return b"match." + match_id.encode("ascii")


def frontend_topic(name: str) -> bytes:
    """The events topic of a server frontend: ``frontend.<name>`` (protocol 1.1)."""
    return b"frontend." + name.encode("ascii")


def rollout_topic(rollout_id: str) -> bytes:
    """The events topic of a running rollout: ``rollout.<rollout_id>``, the id being its
    request's msg_id (protocol 1.3)."""
    return b"rollout." + rollout_id.encode("ascii")


def event_topic(msg_type: str, content: Mapping[str, Any]) -> bytes:
    """The topic an event of ``msg_type`` with ``content`` is published under (SPEC §9)."""
    if msg_type == "frontend_event":
        return frontend_topic(content["frontend"])
    if msg_type == "rollout_progress":
        return rollout_topic(content["rollout_id"])
    return match_topic(content["match_id"])


def split_identities(frames: Sequence[bytes]) -> tuple[list[bytes], list[bytes]]:
    """Split what a ROUTER received into (routing identities, envelope frames).

    The envelope starts at the first DELIMITER frame. Without one, the first frame (the
    identity the ROUTER added) is taken as the only identity, so the sender still gets an error.
    """
    for index, frame in enumerate(frames):
        if bytes(frame) == DELIMITER:
            return [bytes(f) for f in frames[:index]], [bytes(f) for f in frames[index:]]
    return [bytes(f) for f in frames[:1]], [bytes(f) for f in frames[1:]]


# --------------------------------------------------------------------------- keys


def load_key(path: str | os.PathLike[str]) -> bytes:
    """The shared signing key: the file's bytes without surrounding whitespace.

    An empty file means "no key" (unsigned messages, only where the daemon allows them).
    Refuses files that every user may read or write, with a message that says how to fix it.
    """
    file = Path(path)
    try:
        info = file.stat()
        if not stat.S_ISREG(info.st_mode):
            raise KeyFileError(f"key file {file} is not a regular file")
        data = file.read_bytes()
    except FileNotFoundError:
        raise KeyFileError(
            f"key file {file} does not exist; create one with: "
            f"bgbot ctl keygen {file}  (or: umask 077; head -c 32 /dev/urandom | base64 > {file})"
        ) from None
    except OSError as exc:
        raise KeyFileError(f"cannot read key file {file}: {exc.strerror or exc}") from None
    if info.st_mode & (stat.S_IROTH | stat.S_IWOTH):
        raise KeyFileError(
            f"key file {file} is readable or writable by every user "
            f"(mode {stat.S_IMODE(info.st_mode):04o}); refusing to use it. Fix: chmod 600 {file}"
        )
    return data.strip()


def write_key(path: str | os.PathLike[str], *, overwrite: bool = False) -> bytes:
    """Create a new random key file (mode 0600; 64 hex characters) and return the key."""
    import secrets

    key = secrets.token_hex(32).encode("ascii")
    file = Path(path)
    if not write_atomically(file, key + b"\n", mode=0o600, replace=overwrite):
        raise KeyFileError(f"key file {file} exists already; not overwriting it")
    return key


# --------------------------------------------------------------------------- the wire


def _pack(value: Any, what: str) -> bytes:
    try:
        packed: bytes = msgpack.packb(value, use_bin_type=True)
    except (TypeError, ValueError, OverflowError) as exc:
        raise ProtocolError(ErrorCode.INTERNAL, f"cannot serialize the {what}: {exc}") from None
    return packed


def _refuse_ext(code: int, data: bytes) -> Any:
    raise ValueError(f"msgpack extension types are not allowed (type {code})")


def _unpack(frame: bytes, what: str, msg_id: str | None = None) -> dict[str, Any]:
    try:
        value = msgpack.unpackb(frame, raw=False, strict_map_key=True, ext_hook=_refuse_ext,
                                timestamp=0)
    except Exception as exc:  # msgpack raises many kinds on garbage
        raise ProtocolError(ErrorCode.BAD_MESSAGE, f"the {what} frame is not msgpack: {exc}",
                            {"frame": what}, msg_id=msg_id) from None
    if not isinstance(value, dict):
        raise ProtocolError(ErrorCode.BAD_MESSAGE,
                            f"the {what} frame must be a msgpack map, got {type(value).__name__}",
                            {"frame": what}, msg_id=msg_id)
    _check_plain(value, what, msg_id)
    return value


def _check_plain(value: Any, what: str, msg_id: str | None) -> None:
    """Only msgpack's JSON-like types may appear: nil, bool, int, float, str, array, map."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            for key, sub in item.items():
                if not isinstance(key, str):
                    raise ProtocolError(ErrorCode.BAD_MESSAGE,
                                        f"the {what} has a non-string map key {key!r}",
                                        {"frame": what}, msg_id=msg_id)
                stack.append(sub)
        elif isinstance(item, list):
            stack.extend(item)
        elif item is not None and not isinstance(item, (bool, int, float, str)):
            raise ProtocolError(ErrorCode.BAD_MESSAGE,
                                f"the {what} holds a {type(item).__name__} (binary and extension "
                                "types are not allowed)", {"frame": what}, msg_id=msg_id)


def _header_fields(header: Mapping[str, Any], msg_id: str | None) -> tuple[str, str, str, float, str | None]:
    def fail(field: str, reason: str) -> ProtocolError:
        return ProtocolError(ErrorCode.BAD_MESSAGE, f"header.{field}: {reason}",
                             {"field": f"header.{field}"}, msg_id=msg_id)

    found_id = header.get("msg_id")
    if not isinstance(found_id, str) or not _MSG_ID.fullmatch(found_id):
        raise fail("msg_id", "required: 1-128 printable ASCII characters without spaces")
    msg_type = header.get("msg_type")
    if not isinstance(msg_type, str) or not _MSG_TYPE.fullmatch(msg_type):
        raise fail("msg_type", "required: a name such as status_request")
    version = header.get("version")
    if not isinstance(version, str) or not _VERSION.fullmatch(version):
        raise fail("version", "required: MAJOR.MINOR such as 1.3 (decimal numbers, no leading zeros)")
    stamp = header.get("time")
    if isinstance(stamp, bool) or not isinstance(stamp, (int, float)) or not math.isfinite(stamp):
        raise fail("time", "required: Unix time in seconds (a finite number)")
    session = header.get("session")
    if session is not None and (not isinstance(session, str) or len(session) > 128):
        raise fail("session", "must be a string of at most 128 characters")
    return found_id, msg_type, version, float(stamp), session


class Signer:
    """Turns messages into frames and back, signing, verifying and remembering msg_ids.

    ``key`` None or empty: messages are sent unsigned and signatures are not checked (only
    for daemons configured to allow it). ``replay_window``: how far (seconds) a message's
    time may be from our clock (``math.inf`` turns the check off, for fixtures and tests).
    ``history``: how many msg_ids are remembered against replays; once it overflows, any
    message not newer than the newest id forgotten is refused as stale, so no replay gets
    through. One Signer per receiving socket; not thread-safe.

    Across restarts (the ids are only in memory): `refuse_until` makes every message whose
    time is not later than a given time stale, and ``reserve`` is called before a message
    later than the last time it returned is accepted: it must record, durably, a time at
    least the message's (the daemon keeps it in its store) and return it. The next run
    refuses everything up to the recorded time, so it never accepts what an earlier run did.
    """

    def __init__(
        self, key: bytes | None, *, replay_window: float = 300.0, history: int = 100_000,
        reserve: Callable[[float], float] | None = None,
    ) -> None:
        if history < 1:
            raise ValueError("history must be at least 1")
        self.key = key or b""
        self.replay_window = replay_window
        self.history = history
        self.reserve = reserve
        self._reserved = -math.inf
        self._seen: dict[str, float] = {}
        self._floor = -math.inf

    def refuse_until(self, stamp: float) -> None:
        """Refuse, as stale, every message whose time is not later than ``stamp``."""
        self._floor = max(self._floor, stamp)

    @property
    def signed(self) -> bool:
        return bool(self.key)

    def sign(self, parts: Iterable[bytes]) -> bytes:
        """The signature frame for the serialized header, parent and content."""
        if not self.key:
            return b""
        mac = hmac.new(self.key, digestmod=hashlib.sha256)
        for part in parts:
            mac.update(part)
        return mac.hexdigest().encode("ascii")

    def serialize(self, msg: Message) -> list[bytes]:
        """The frames after the routing identities: DELIMITER, signature, header, parent, content.

        Raises ProtocolError TOO_LARGE when the result exceeds MAX_MESSAGE_BYTES.
        """
        header: dict[str, Any] = {
            "msg_id": msg.msg_id,
            "msg_type": msg.msg_type,
            "version": msg.version,
            "time": float(msg.time),
        }
        if msg.session is not None:
            header["session"] = msg.session
        parent = {"msg_id": msg.parent_id} if msg.parent_id is not None else {}
        parts = [_pack(header, "header"), _pack(parent, "parent header"),
                 _pack(msg.content, "content")]
        frames = [DELIMITER, self.sign(parts), *parts]
        size = sum(len(frame) for frame in frames)
        if size > MAX_MESSAGE_BYTES:
            raise ProtocolError(
                ErrorCode.TOO_LARGE,
                f"the {msg.msg_type} message would be {size} bytes; the limit is {MAX_MESSAGE_BYTES}",
                {"size": size, "limit": MAX_MESSAGE_BYTES},
                msg_id=msg.parent_id,
            )
        return frames

    def deserialize(self, frames: Sequence[bytes]) -> Message:
        """Check and decode the frames after the routing identities (or after an event's topic).

        Checks, in order: frame count, size, delimiter, signature, header, version, time,
        replay, parent, content, msg_type, schema. Raises ProtocolError with the matching code.
        """
        if len(frames) != _FRAMES:
            raise ProtocolError(
                ErrorCode.BAD_MESSAGE,
                f"expected {_FRAMES} frames (delimiter, signature, header, parent, content), "
                f"got {len(frames)}",
                {"frames": len(frames)},
            )
        size = sum(len(frame) for frame in frames)
        if size > MAX_MESSAGE_BYTES:
            raise ProtocolError(ErrorCode.TOO_LARGE,
                                f"message of {size} bytes; the limit is {MAX_MESSAGE_BYTES}",
                                {"size": size, "limit": MAX_MESSAGE_BYTES},
                                msg_id=peek_id(bytes(frames[2])))
        delimiter, signature, header_raw, parent_raw, content_raw = (bytes(f) for f in frames)
        if delimiter != DELIMITER:
            if _OTHER_DELIMITER.fullmatch(delimiter):
                raise ProtocolError(
                    ErrorCode.BAD_VERSION,
                    f"protocol major version {delimiter[3:].decode()} is not spoken here "
                    f"(this side speaks {PROTOCOL_VERSION})",
                    {"supported": [PROTOCOL_VERSION]},
                )
            raise ProtocolError(ErrorCode.BAD_MESSAGE,
                                f"the first frame must be the delimiter {DELIMITER!r}",
                                {"frame": "delimiter"})
        if self.key:
            expected = self.sign((header_raw, parent_raw, content_raw))
            if not signature:
                raise ProtocolError(ErrorCode.UNAUTHORIZED,
                                    "the message is not signed and this side requires signatures",
                                    msg_id=peek_id(header_raw))
            if not hmac.compare_digest(signature, expected):
                raise ProtocolError(ErrorCode.UNAUTHORIZED,
                                    "bad signature: the two sides do not use the same key",
                                    msg_id=peek_id(header_raw))
        header = _unpack(header_raw, "header")
        hint = header.get("msg_id")
        msg_id, msg_type, version, stamp, session = _header_fields(
            header, hint if isinstance(hint, str) and _MSG_ID.fullmatch(hint) else None
        )
        if version.split(".")[0] != _MAJOR:
            raise ProtocolError(ErrorCode.BAD_VERSION,
                                f"protocol version {version} is not spoken here "
                                f"(this side speaks {PROTOCOL_VERSION})",
                                {"supported": [PROTOCOL_VERSION]}, msg_id=msg_id)
        self._check_fresh(msg_id, stamp)
        parent = _unpack(parent_raw, "parent header", msg_id)
        parent_id = parent.get("msg_id")
        if parent_id is not None and (not isinstance(parent_id, str) or not _MSG_ID.fullmatch(parent_id)):
            raise ProtocolError(ErrorCode.BAD_MESSAGE, "parent.msg_id: must be a message id",
                                {"field": "parent.msg_id"}, msg_id=msg_id)
        content = _unpack(content_raw, "content", msg_id)
        if not _schema().knows(msg_type):
            raise ProtocolError(ErrorCode.UNKNOWN_TYPE, f"unknown msg_type {msg_type!r}",
                                {"msg_type": msg_type}, msg_id=msg_id)
        try:
            validate_content(msg_type, content)
        except ProtocolError as exc:
            exc.msg_id = msg_id
            raise
        return Message(msg_type, content, msg_id, parent_id, stamp, version, session)

    def _check_fresh(self, msg_id: str, stamp: float) -> None:
        now = time.time()
        if abs(now - stamp) > self.replay_window:
            raise ProtocolError(
                ErrorCode.STALE,
                f"message time is {now - stamp:+.1f} s off this side's clock "
                f"(allowed: {self.replay_window:g} s); check the clocks",
                {"skew": now - stamp, "window": self.replay_window}, msg_id=msg_id)
        if msg_id in self._seen:
            raise ProtocolError(ErrorCode.REPLAYED, f"msg_id {msg_id} was seen before",
                                {"msg_id": msg_id}, msg_id=msg_id)
        if stamp <= self._floor:
            raise ProtocolError(
                ErrorCode.STALE,
                "message older than the replay history covers; resend it with a new msg_id",
                {"floor": self._floor}, msg_id=msg_id)
        if self.reserve is not None and stamp > self._reserved:
            try:
                self._reserved = self.reserve(stamp)
            except ProtocolError as exc:
                exc.msg_id = msg_id
                raise
        seen = self._seen
        seen[msg_id] = stamp
        if len(seen) > self.history:
            oldest = next(iter(seen))
            self._floor = max(self._floor, seen.pop(oldest))
        horizon = now - self.replay_window
        while seen:  # ids older than the window are refused as stale anyway
            first = next(iter(seen))
            if seen[first] >= horizon:
                break
            del seen[first]


def peek_id(header_raw: bytes) -> str | None:
    """Best effort: the msg_id of a header we are about to reject, to parent the error."""
    try:
        header = msgpack.unpackb(header_raw, raw=False, strict_map_key=True,
                                 ext_hook=_refuse_ext, timestamp=0)
    except Exception:
        return None
    found = header.get("msg_id") if isinstance(header, dict) else None
    return found if isinstance(found, str) and _MSG_ID.fullmatch(found) else None
