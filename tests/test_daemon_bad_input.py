"""The daemon's answers to bad requests (issue 17 items 2 and 9): proper `bad_value` errors
with a field and a reason, never `internal`; the envelope rules as SPEC.md states them.

One real `bgbot serve` for the module; requests over its real ZeroMQ socket, some written with
the spec-only client (tests/spec_client.py).
"""

from __future__ import annotations

import time
import uuid
from typing import Any, Iterator

import pytest

from bgbot.daemon.client import DaemonError
from bgbot.daemon.protocol import ErrorCode
from tests.daemon_harness import Daemon, DaemonDirs, remove_tree, short_tmpdir, start_daemon
from tests.spec_client import DELIMITER, RawClient, envelope, pack, sign


@pytest.fixture(scope="module")
def daemon() -> Iterator[Daemon]:
    dirs = DaemonDirs(short_tmpdir())
    dirs.write_config()
    running = start_daemon(dirs)
    yield running
    assert running.stop() == 0, running.log
    remove_tree(dirs.root)


def refused(daemon: Daemon, msg_type: str, **content: Any) -> DaemonError:
    with pytest.raises(DaemonError) as caught:
        daemon.client().request(msg_type, **content)
    return caught.value


# ------------------------------------------------------------------ match lengths (item 2)


@pytest.mark.parametrize("msg_type", ["choose_play", "cube_decision", "take_decision"])
def test_a_context_longer_than_64_points_is_a_bad_value(daemon: Daemon, msg_type: str) -> None:
    content: dict[str, Any] = {"position": "4HPwATDgc/ABMA",
                               "context": {"match_length": 65, "my_score": 3}}
    if msg_type == "choose_play":
        content["dice"] = [3, 1]
    error = refused(daemon, msg_type, **content)
    assert error.code is ErrorCode.BAD_VALUE
    assert error.details["field"] == "context.match_length"


def test_a_64_point_match_is_answered(daemon: Daemon) -> None:
    reply = daemon.client().request("choose_play", position="4HPwATDgc/ABMA", dice=[3, 1],
                                    context={"match_length": 64, "my_score": 60,
                                             "opponent_score": 2})
    assert reply["play"]


def test_a_match_start_longer_than_64_points_is_a_bad_value(daemon: Daemon) -> None:
    error = refused(daemon, "match_start", players=["random", "random"], length=65)
    assert error.code is ErrorCode.BAD_VALUE and error.details["field"] == "length"


# ------------------------------------------------------------------ bad_value details (item 9)


@pytest.mark.parametrize("content, field", [
    ({"position": "not an id at all", "dice": [3, 1]}, "position"),
    ({"position": "4HPwATDgc/ABMA:cAkAAAAAAAAA", "dice": [3, 1], "context": {"match_length": 5}},
     "context"),
    ({"position": "AAAAAAAAAAAAAA", "dice": [3, 1]}, "position"),
    ({"position": "4HPwATDgc/ABMA", "dice": [3, 1], "context": {"match_length": 5, "my_score": 5}},
     "context.my_score"),
    ({"position": "4HPwATDgc/ABMA:cIkqAAAAAAAA", "dice": [6, 6]}, "dice"),
    ({"position": "4HPwATDgc/ABMA"}, "dice"),
], ids=["bad position text", "context with a gnubg id", "game over", "score at the length",
        "dice against the id", "dice missing"])
def test_every_bad_value_names_its_field_and_reason(daemon: Daemon, content: dict[str, Any],
                                                    field: str) -> None:
    error = refused(daemon, "choose_play", **content)
    assert error.code is ErrorCode.BAD_VALUE
    assert error.details["field"] == field
    assert isinstance(error.details["reason"], str) and error.details["reason"]


def test_take_decision_in_the_crawford_game_is_refused(daemon: Daemon) -> None:
    error = refused(daemon, "take_decision", position="4HPwATDgc/ABMA",
                    context={"match_length": 5, "my_score": 4, "opponent_score": 2,
                             "crawford": True})
    assert error.code is ErrorCode.BAD_VALUE and error.details["field"] == "context"
    assert "Crawford" in error.message


# ------------------------------------------------------------------ the envelope (item 9)


def test_an_integer_header_time_is_accepted(daemon: Daemon) -> None:
    """SPEC 5: a time not later than the daemon's start is `stale`, and a whole second may
    read as earlier than a start within that second; so wait for the next whole second."""
    started = daemon.client().request("status_request")["started"]
    while int(time.time()) <= started:
        time.sleep(0.05)
    client = RawClient(daemon.dirs.control, daemon.dirs.key)
    try:
        msg_id, frames = envelope(daemon.dirs.key, "status_request", {}, stamp=int(time.time()))
        client.send_frames(frames)
        assert client.receive(msg_id).msg_type == "status_reply"
    finally:
        client.close()


def test_too_large_names_the_request_it_refuses(daemon: Daemon) -> None:
    """Every frame under the limit (else ZeroMQ drops the connection), the whole over it."""
    client = RawClient(daemon.dirs.control, daemon.dirs.key)
    try:
        msg_id = uuid.uuid4().hex
        header = pack({"msg_id": msg_id, "msg_type": "status_request", "version": "1.1",
                       "time": time.time()})
        parent = pack({"padding": "x" * (3 * 1024 * 1024)})  # readers ignore other keys
        content = pack({"padding": "y" * (2 * 1024 * 1024)})
        key = daemon.dirs.key
        client.send_frames([DELIMITER, sign(key, [header, parent, content]), header, parent, content])
        reply = client.receive(msg_id)
        assert reply.msg_type == "error" and reply.content["code"] == "too_large"
        assert reply.parent == {"msg_id": msg_id}
    finally:
        client.close()


# ------------------------------------------------------------------ issue 30: ids beyond 64 points

LONG_IDS = {
    "gnubg id 65": "4HPwATDgc/ABMA:cAkgCDAACAAA",
    "gnubg id 99": "4HPwATDgc/ABMA:cAlgDAAAAAAA",
    "gnubg id 32767": "4HPwATDgc/ABMA:cAng/68AGAAA",
    "xgid 65": "XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0:65:10",
    "xgid 99": "XGID=-b----E-C---eE---c-e----B-:0:0:1:00:3:1:0:99:10",
}
ROLLED_LONG_IDS = {
    "gnubg id 65 rolled": "4HPwATDgc/ABMA:cIk2CBAAEAAA",
    "xgid 99 rolled": "XGID=-b----E-C---eE---c-e----B-:0:0:1:52:3:1:0:99:10",
}


@pytest.mark.parametrize("msg_type", ["cube_decision", "take_decision", "resign_decision",
                                      "evaluate"])
@pytest.mark.parametrize("name", sorted(LONG_IDS))
def test_a_match_longer_than_64_points_in_an_id_is_a_bad_value(daemon: Daemon, msg_type: str,
                                                                name: str) -> None:
    content: dict[str, Any] = {"position": LONG_IDS[name]}
    if msg_type == "resign_decision":
        content["offered"] = 1
    error = refused(daemon, msg_type, **content)
    assert error.code is ErrorCode.BAD_VALUE, error
    assert error.details["field"] == "position" and "64" in error.message


@pytest.mark.parametrize("name", sorted(ROLLED_LONG_IDS))
def test_choose_play_with_candidates_in_a_long_match_is_a_bad_value(daemon: Daemon,
                                                                    name: str) -> None:
    error = refused(daemon, "choose_play", position=ROLLED_LONG_IDS[name], candidates=3)
    assert error.code is ErrorCode.BAD_VALUE and error.details["field"] == "position"


@pytest.mark.parametrize("position", ["4HPwATDgc/ABMA:cAmgAFAAEAAA", "4HPwATDgc/ABMA:cAngACAAOAAA",
                                      "XGID=-b----E-C---eE---c-e----B-:0:0:1:00:5:0:0:5:10"])
def test_a_score_at_the_match_length_in_an_id_is_refused_as_in_a_context(daemon: Daemon,
                                                                         position: str) -> None:
    error = refused(daemon, "cube_decision", position=position)
    assert error.code is ErrorCode.BAD_VALUE and error.details["field"] == "position"
    assert "over" in error.message


def test_the_beavers_bit_of_a_money_xgid_is_honoured(daemon: Daemon) -> None:
    """The doubler is far behind: with beavers the taker beavers; the bit used to be dropped."""
    client = daemon.client(timeout=30)
    with_bit = client.take_decision("XGID=------------------O---eee-:0:0:1:D:0:0:2:0:10")
    without = client.take_decision("XGID=------------------O---eee-:0:0:1:D:0:0:0:0:10")
    assert with_bit["decision"] == "beaver" and without["decision"] == "take"
