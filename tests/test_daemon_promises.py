"""The daemon keeps the promises of protocol/SPEC.md (issue 30): one reply to every request
however deeply its content nests, strict patterns (no final newline), a strict version, the
agents a signed request may name, no new work after ``shutdown_reply``.

One real `bgbot serve` for the read-mostly tests of the module; requests over its real
ZeroMQ socket, many written with the spec-only client (tests/spec_client.py).
"""

from __future__ import annotations

import sys
import time
import uuid
from pathlib import Path
from typing import Any, Iterator

import pytest

from bgbot.daemon.client import DaemonError
from bgbot.daemon.protocol import REQUEST_TYPES, ErrorCode
from tests.daemon_harness import Daemon, DaemonDirs, remove_tree, short_tmpdir, start_daemon
from tests.spec_client import DELIMITER, RawClient, pack, sign


def shipped_weights() -> Path:
    from bgbot.players.network import SHIPPED_FILE

    return Path(SHIPPED_FILE)


ENGINE = f"{sys.executable} -m bgbot.cli ubgi --player heuristic"
"""bgbot itself as a UBGI engine: a real program the named agent ``selfubgi`` runs."""
NAMED = f"""
[[agents.named]]
name = "selfubgi"
spec = "ubgi:command={ENGINE},timeout=30"

[[agents.named]]
name = "shippednet"
spec = "heuristic:weights={shipped_weights()}"
"""


@pytest.fixture(scope="module")
def daemon() -> Iterator[Daemon]:
    dirs = DaemonDirs(short_tmpdir())
    dirs.write_config(NAMED)
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


# ------------------------------------------------------------------ what a key holder may name (item 1)


def bad_value(daemon: Daemon, msg_type: str, **content: Any) -> DaemonError:
    with pytest.raises(DaemonError) as caught:
        daemon.client(timeout=20).request(msg_type, **content)
    assert caught.value.code is ErrorCode.BAD_VALUE, caught.value
    return caught.value


def start_shapes(spec: str) -> list[tuple[str, dict[str, Any], str]]:
    """Every place a request names an agent: (msg_type, content, the field refused)."""
    return [
        ("match_start", {"players": [spec, "random"], "length": 1}, "players[0]"),
        ("match_start", {"players": ["random", spec], "length": 1}, "players[1]"),
        ("choose_play", {"position": "4HPwATDgc/ABMA", "dice": [3, 1], "agent": spec}, "agent"),
        ("evaluate", {"position": "4HPwATDgc/ABMA", "agent": spec}, "agent"),
        ("cube_decision", {"position": "4HPwATDgc/ABMA", "agent": spec}, "agent"),
        ("frontend_start", {"name": "sneaky", "kind": "gnubg_external",
                            "options": {"listen": "127.0.0.1:0", "agent": spec}},
         "options.agent"),
        ("rollout", {"position": "4HPwATDgc/ABMA", "player": spec, "trials": 36}, "player"),
    ]


@pytest.mark.parametrize("shape", range(7))
def test_a_request_cannot_run_a_program(daemon: Daemon, shape: int) -> None:
    target = daemon.dirs.root / f"ran-{shape}"
    msg_type, content, field = start_shapes(f"ubgi:command=/usr/bin/touch {target}")[shape]
    error = bad_value(daemon, msg_type, **content)
    assert error.details["field"] == field
    assert "command" in error.message and "[[agents.named]]" in error.message
    time.sleep(0.5)
    assert not target.exists(), "the daemon ran the program a request named"


def test_every_file_option_of_the_player_is_refused(daemon: Daemon) -> None:
    """A crashed-position network (``crashed=FILE``) is a file too, and so is a race network
    (``race=FILE``), while ``race=model`` names none and is served."""
    error = bad_value(daemon, "evaluate", position="4HPwATDgc/ABMA",
                      agent="heuristic:crashed=/etc/hostname")
    assert error.details["field"] == "agent" and "crashed" in error.message
    error = bad_value(daemon, "evaluate", position="4HPwATDgc/ABMA",
                      agent="heuristic:race=/etc/hostname")
    assert error.details["field"] == "agent" and "option race" in error.message
    answer = daemon.client(timeout=20).request("evaluate", position="4HPwATDgc/ABMA",
                                               agent="heuristic:race=model")
    assert answer["equity"] is not None


def test_a_fallback_cannot_name_a_file_either(daemon: Daemon) -> None:
    error = bad_value(daemon, "evaluate", position="4HPwATDgc/ABMA",
                      agent="ubgi:fallback=heuristic:weights=/etc/hostname")
    assert error.details["field"] == "agent"


@pytest.mark.parametrize("shape", range(7))
def test_a_request_cannot_read_a_file_nor_learn_whether_it_exists(daemon: Daemon,
                                                                   shape: int) -> None:
    answers = []
    for path in ("/etc/hostname", "/no/such/file", str(daemon.dirs.key_file)):
        msg_type, content, field = start_shapes(f"heuristic:weights={path}")[shape]
        error = bad_value(daemon, msg_type, **content)
        assert error.details["field"] == field
        answers.append((error.message, error.details))
    assert answers[0] == answers[1] == answers[2]


@pytest.mark.parametrize("shape", range(7))
def test_the_human_agent_is_refused_where_it_is_named(daemon: Daemon, shape: int) -> None:
    """Issue 31 item 8: it used to be accepted, and the match then failed with a traceback."""
    msg_type, content, field = start_shapes("human")[shape]
    error = bad_value(daemon, msg_type, **content)
    assert error.details["field"] == field and "terminal" in error.message
    assert daemon.client().status()["matches"]["active"] == 0


def test_a_named_agent_runs_what_the_configuration_says(daemon: Daemon) -> None:
    client = daemon.client(timeout=60)
    hello = client.hello()
    assert "selfubgi" in hello["agents"] and "shippednet" in hello["agents"]
    reply = client.choose_play("4HPwATDgc/ABMA", [3, 1], agent="selfubgi")
    assert reply["agent"] == "selfubgi" and reply["play"]
    assert client.evaluate("4HPwATDgc/ABMA", agent="shippednet")["agent"] == "shippednet"


def test_a_named_agent_hosts_a_match(daemon: Daemon) -> None:
    client = daemon.client(timeout=60)
    events = list(client.follow(lambda: str(client.match_start(
        ["shippednet", "random"], length=1, seed=3)["match"]["match_id"]), timeout=60))
    assert events[-1][0] == "match_ended"
    assert events[0][0] in ("match_started", "game_started")


def test_a_named_agent_plays_a_rollout(daemon: Daemon) -> None:
    """In the daemon's rollout workers too, which know the configuration's named agents:
    the figures of the spec it names, rolled out in this process."""
    from bgbot.core.context import Context
    from bgbot.core.position import Position
    from bgbot.rollout import RolloutSettings, rollout_position

    settings = {"trials": 36, "truncate": 2, "seed": 4, "cubeful": False}
    reply = daemon.client(timeout=120).request("rollout", position="4HPwATDgc/ABMA",
                                               player="shippednet", **settings)
    here = rollout_position(Position.initial(), Context(), RolloutSettings(
        player=f"heuristic:weights={shipped_weights()}", **settings))
    assert reply["result"]["player"] == "shippednet"
    assert reply["result"]["chances"] == here.to_json()["chances"]


@pytest.mark.parametrize("spec", ["selfubgi:timeout=1", "shippednet:plies=1"])
def test_a_named_agent_takes_no_options_from_a_request(daemon: Daemon, spec: str) -> None:
    error = bad_value(daemon, "evaluate", position="4HPwATDgc/ABMA", agent=spec)
    assert error.details["field"] == "agent" and "named agent" in error.message


def test_options_without_files_stay_free(daemon: Daemon) -> None:
    client = daemon.client(timeout=30)
    assert client.evaluate("4HPwATDgc/ABMA", agent="heuristic:plies=1,noise=0.01")["agent"]
    assert client.choose_play("4HPwATDgc/ABMA", [3, 1], agent="random:seed=4")["play"]


@pytest.mark.parametrize("where", ["elsewhere", "control socket", "relative"])
def test_a_request_listens_on_unix_sockets_only_in_the_runtime_directory(daemon: Daemon,
                                                                         where: str) -> None:
    dirs = daemon.dirs
    listen = {"elsewhere": str(dirs.root / "player.sock"),
              "control socket": str(dirs.runtime / "control"), "relative": "player.sock"}[where]
    error = bad_value(daemon, "frontend_start", name=f"unix-{where.replace(' ', '-')}",
                      kind="gnubg_external", options={"listen": listen})
    assert error.details["field"] == "options.listen"
    assert (dirs.runtime / "control").exists()
    assert not (dirs.root / "player.sock").exists()


def test_a_request_may_listen_in_the_runtime_directory(daemon: Daemon) -> None:
    client = daemon.client()
    path = daemon.dirs.runtime / "gnubg-player.sock"
    started = client.frontend_start("unix-ok", kind="gnubg_external",
                                    options={"listen": str(path)})
    assert started["frontend"]["state"] == "running" and path.exists()
    client.frontend_stop("unix-ok")
