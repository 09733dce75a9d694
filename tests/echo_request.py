"""A daemon request type that ``protocol/schema.json`` does not have, ``echo``, added the way a
plugin adds one: one handler registered with `handles`, bringing its messages' schemas along.
Nothing under ``bgbot/`` names it (tests/test_architecture.py)."""

from __future__ import annotations

from typing import Any

from bgbot.daemon.protocol import Message
from bgbot.daemon.requests import handles

SCHEMA = {
    "echo_request": {
        "x-kind": "request", "x-reply": "echo_reply", "description": "Say it back.",
        "type": "object", "properties": {"text": {"type": "string", "maxLength": 100}},
        "required": ["text"], "additionalProperties": False,
    },
    "echo_reply": {
        "x-kind": "reply", "description": "What was said, and the daemon's state.",
        "type": "object",
        "properties": {"text": {"type": "string"}, "state": {"type": "string"}},
        "required": ["text", "state"], "additionalProperties": False,
    },
}


@handles("echo_request", quick=True, schema=SCHEMA)
def echo(daemon: Any, msg: Message) -> dict[str, Any]:
    return {"text": msg.content["text"], "state": daemon.state}
