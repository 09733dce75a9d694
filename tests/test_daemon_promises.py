"""The daemon keeps the promises of protocol/SPEC.md (issue 30): one reply to every request
however deeply its content nests, strict patterns (no final newline), a strict version, the
agents a signed request may name, no new work after ``shutdown_reply``.

One real `bgbot serve` for the read-mostly tests of the module; requests over its real
ZeroMQ socket, many written with the spec-only client (tests/spec_client.py).
"""

from __future__ import annotations

import time
import uuid
from typing import Any, Iterator

import pytest

from bgbot.daemon.client import DaemonError
from bgbot.daemon.protocol import REQUEST_TYPES, ErrorCode
from tests.daemon_harness import Daemon, DaemonDirs, remove_tree, short_tmpdir, start_daemon
from tests.spec_client import DELIMITER, RawClient, pack, sign


@pytest.fixture(scope="module")
def daemon() -> Iterator[Daemon]:
    dirs = DaemonDirs(short_tmpdir())
    dirs.write_config()
    running = start_daemon(dirs)
    yield running
    assert running.stop() == 0, running.log
    remove_tree(dirs.root)


@pytest.fixture()
def raw(daemon: Daemon) -> Iterator[RawClient]:
    client = RawClient(daemon.dirs.control, daemon.dirs.key)
    yield client
    client.close()


def send(raw: RawClient, key: bytes, header: dict[str, Any], content: Any) -> str:
    parts = [pack(header), pack({}), pack(content)]
    raw.send_frames([DELIMITER, sign(key, parts), *parts])
    return str(header.get("msg_id"))


def header(kind: str, **extra: Any) -> dict[str, Any]:
    return {"msg_id": uuid.uuid4().hex, "msg_type": kind, "version": "1.3",
            "time": time.time(), **extra}


def nested(depth: int, leaf: Any = "x", *, as_map: bool = False) -> Any:
    value = leaf
    for _ in range(depth):
        value = {"k": value} if as_map else [value]
    return value


# ------------------------------------------------------------------ one reply each (item 3)


@pytest.mark.parametrize("depth", [990, 1000, 1022])
@pytest.mark.parametrize("field, as_map", [
    ("frontend_start_request.options", False), ("frontend_start_request.options", True),
    ("match_start_request.players", False), ("match_start_request.rules", True),
    ("choose_play_request.context", True), ("hello_request.versions", False),
])
def test_deep_nesting_gets_exactly_one_reply(daemon: Daemon, raw: RawClient, depth: int,
                                             field: str, as_map: bool) -> None:
    msg_type, _, name = field.partition(".")
    content: dict[str, Any] = {"name": "deep", "kind": "gnubg_external"} \
        if msg_type == "frontend_start_request" else {}
    value = nested(depth, as_map=as_map)
    content[name] = {"listen": value} if name == "options" else value
    msg_id = send(raw, daemon.dirs.key, header(msg_type), content)
    reply = raw.receive(msg_id, timeout=10)
    assert reply.msg_type == "error"
    assert reply.content["code"] in ("bad_value", "bad_message")
    assert reply.parent == {"msg_id": msg_id}
    assert daemon.client().status()["state"] == "running"


def test_every_request_type_nested_deep_in_each_field_is_answered(daemon: Daemon,
                                                                  raw: RawClient) -> None:
    from bgbot.daemon.protocol import _schema

    sent = []
    for msg_type in sorted(REQUEST_TYPES):
        for name in list(_schema().messages[msg_type].get("properties", {})) or ["extra"]:
            sent.append(send(raw, daemon.dirs.key, header(msg_type), {name: nested(1010)}))
    for msg_id in sent:
        reply = raw.receive(msg_id, timeout=10)
        assert reply.msg_type == "error" and reply.content["code"] != "internal", reply.content


# ------------------------------------------------------------------ strict patterns (item 4)


@pytest.mark.parametrize("key, value", [
    ("version", "1.3\n"), ("version", "01.3"), ("version", "1.03"), ("version", "1.3 "),
    ("msg_type", "status_request\n"),
])
def test_header_fields_are_matched_whole(daemon: Daemon, raw: RawClient, key: str,
                                         value: str) -> None:
    msg_id = send(raw, daemon.dirs.key, header("status_request", **{key: value}), {})
    reply = raw.receive(msg_id)
    assert reply.msg_type == "error" and reply.content["code"] == "bad_message"
    assert reply.content["details"]["field"] == f"header.{key}"


def test_a_msg_id_ending_in_a_newline_is_refused(daemon: Daemon, raw: RawClient) -> None:
    bad = header("status_request")
    bad["msg_id"] = uuid.uuid4().hex + "\n"
    send(raw, daemon.dirs.key, bad, {})
    reply = raw.receive(None)
    assert reply.msg_type == "error" and reply.content["code"] == "bad_message"
    assert reply.parent == {}


def test_a_frontend_name_ending_in_a_newline_is_refused_and_the_list_stays_valid(
        daemon: Daemon) -> None:
    client = daemon.client()
    with pytest.raises(DaemonError) as caught:
        client.request("frontend_start", name="gnubg9\n", kind="gnubg_external",
                       options={"listen": "127.0.0.1:0"})
    assert caught.value.code is ErrorCode.BAD_VALUE and caught.value.details["field"] == "name"
    names = [f["name"] for f in client.frontends()["frontends"]]  # the client checks the schema
    assert "gnubg9\n" not in names
