"""Regenerate ``protocol/fixtures/*.msgpack`` from the examples in ``SPEC.md``.

Run from the repository root: ``python protocol/make_fixtures.py``. Each ```` ```json TYPE ````
block of SPEC.md is the content of the fixture ``TYPE.msgpack``; the envelope values are the
fixed ones SPEC.md section 11 states. Regenerate only when the protocol changes on purpose
(and say so in CHANGELOG.md): the fixtures are the golden copies that the tests compare with.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from pathlib import Path
from typing import Any

import msgpack

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from bgbot.daemon.protocol import Message, Signer, event_topic, message_kind  # noqa: E402

FIXTURE_KEY = b"bgbot-protocol-fixtures"
FIXTURE_TIME = 1767225600.25
FIXTURE_SESSION = "fixture-client"
_BLOCK = re.compile(r"^```json ([a-z_]+)\n(.*?)^```$", re.S | re.M)


def examples(spec: str) -> dict[str, dict[str, Any]]:
    """``{msg_type: content}`` from the tagged JSON blocks of SPEC.md."""
    found: dict[str, dict[str, Any]] = {}
    for match in _BLOCK.finditer(spec):
        name, body = match.group(1), match.group(2)
        if name in found:
            raise SystemExit(f"SPEC.md: two examples for {name}")
        found[name] = json.loads(body)
    return found


def fixture_id(msg_type: str) -> str:
    return hashlib.sha256(b"bgbot fixture " + msg_type.encode()).hexdigest()[:32]


def parent_of(msg_type: str) -> str | None:
    if msg_type == "error":
        return fixture_id("match_get_request")
    if msg_type.endswith("_reply"):
        return fixture_id(msg_type[: -len("_reply")] + "_request")
    return None


def fixture_frames(msg_type: str, content: dict[str, Any]) -> list[bytes]:
    kind = message_kind(msg_type)
    message = Message(
        msg_type=msg_type,
        content=content,
        msg_id=fixture_id(msg_type),
        parent_id=parent_of(msg_type),
        time=FIXTURE_TIME,
        version="1.0",
        session=FIXTURE_SESSION if kind == "request" else None,
    )
    frames = Signer(FIXTURE_KEY).serialize(message)
    if kind == "event":
        frames.insert(0, event_topic(msg_type, content))
    return frames


def main() -> None:
    out = HERE / "fixtures"
    out.mkdir(exist_ok=True)
    for msg_type, content in sorted(examples((HERE / "SPEC.md").read_text("utf-8")).items()):
        data = msgpack.packb(fixture_frames(msg_type, content), use_bin_type=True)
        (out / f"{msg_type}.msgpack").write_bytes(data)
        print(f"{msg_type}.msgpack  {len(data)} bytes")


if __name__ == "__main__":
    main()
