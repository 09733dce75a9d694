"""Client, AsyncClient and `bgbot ctl` against a tiny in-test daemon stub on real ZeroMQ sockets
(IPC in a temporary directory), and the SPEC-only raw client (tests/spec_client.py) against it."""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import shutil
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Iterator

import msgpack  # type: ignore[import-untyped, unused-ignore]
import pytest
import zmq

from bgbot.cli import ctl as cli_ctl
from bgbot.daemon import AsyncClient, Client, DaemonError, DaemonUnreachable, ErrorCode
from bgbot.daemon.protocol import (
    Message,
    ProtocolError,
    Signer,
    check_request,
    error_reply,
    match_topic,
    new_message,
    reply_type,
    split_identities,
)
from tests import spec_client

SPEC = (Path(__file__).resolve().parents[1] / "protocol" / "SPEC.md").read_text("utf-8")
EXAMPLES = {m.group(1): json.loads(m.group(2))
            for m in re.finditer(r"^```json ([a-z_]+)\n(.*?)^```$", SPEC, re.S | re.M)}
MATCH = "0f3c9a1e77b2"
EVENT_SEQUENCE = ["match_started", "game_started", "rolled", "played", "doubled", "taken",
                  "game_ended", "match_ended"]


class Stub:
    """A stand-in daemon: answers a few requests with SPEC examples, publishes events.

    - status, hello, match_get (of MATCH only; others: not_found), match_start, choose_play,
      frontend_list: the SPEC examples;
    - reload: answered after ``slow`` seconds (late replies);
    - shutdown: never answered (timeouts);
    - anything it cannot accept: the error reply the spec prescribes.
    It publishes EVENT_SEQUENCE for MATCH, and decoys for MATCH + "ff" and "other", every tick.
    """

    def __init__(self, directory: Path, key: bytes, slow: float = 0.6) -> None:
        self.control = f"ipc://{directory}/control"
        self.events = f"ipc://{directory}/events"
        self.key = key
        self.slow = slow
        self.received: list[str] = []
        self._stop = threading.Event()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()
        assert self._ready.wait(5)

    def _serve(self) -> None:
        context = zmq.Context()
        router = context.socket(zmq.ROUTER)
        router.setsockopt(zmq.LINGER, 0)
        router.bind(self.control)
        pub = context.socket(zmq.PUB)
        pub.setsockopt(zmq.LINGER, 0)
        pub.bind(self.events)
        signer = Signer(self.key)
        later: list[tuple[float, list[bytes], Message]] = []
        tick = 0
        self._ready.set()
        try:
            while not self._stop.is_set():
                if router.poll(20):
                    identities, frames = split_identities(router.recv_multipart())
                    reply = self._answer(signer, frames)
                    if reply is not None:
                        if reply.msg_type == "reload_reply":
                            later.append((time.monotonic() + self.slow, identities, reply))
                        else:
                            router.send_multipart(identities + signer.serialize(reply))
                now = time.monotonic()
                for due, identities, reply in [item for item in later if item[0] <= now]:
                    later.remove((due, identities, reply))
                    router.send_multipart(identities + signer.serialize(reply))
                tick += 1
                name = EVENT_SEQUENCE[tick % len(EVENT_SEQUENCE)]
                for match_id in (MATCH + "ff", "other", MATCH):
                    content = {**EXAMPLES[name], "match_id": match_id}
                    pub.send_multipart([match_topic(match_id),
                                        *signer.serialize(new_message(name, content))])
        finally:
            router.close(0)
            pub.close(0)
            context.term()

    def _answer(self, signer: Signer, frames: list[bytes]) -> Message | None:
        try:
            request = signer.deserialize(frames)
            check_request(request)
        except ProtocolError as exc:
            return exc.reply()
        self.received.append(request.msg_type)
        name = request.msg_type[: -len("_request")]
        if name == "shutdown":
            return None
        if name == "match_get" and request.content["match_id"] != MATCH:
            return error_reply(request, ErrorCode.NOT_FOUND, f"no match {request.content['match_id']}",
                               {"match_id": request.content["match_id"]})
        example = EXAMPLES.get(reply_type(request.msg_type))
        if example is None:
            return error_reply(request, ErrorCode.UNSUPPORTED, f"the stub does not do {name}")
        return new_message(reply_type(request.msg_type), example, request)

    def close(self) -> None:
        self._stop.set()
        self._thread.join(5)


@pytest.fixture()
def workdir() -> Iterator[Path]:
    # A short path: IPC socket paths are limited to about 107 bytes.
    path = Path(tempfile.mkdtemp(prefix="bgb", dir="/tmp"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture()
def key_file(workdir: Path) -> Path:
    path = workdir / "control.key"
    path.write_bytes(b"0123456789abcdef-test-key\n")
    path.chmod(0o600)
    return path


@pytest.fixture()
def stub(workdir: Path, key_file: Path) -> Iterator[Stub]:
    server = Stub(workdir, key_file.read_bytes().strip())
    yield server
    server.close()


def client_for(stub: Stub, key_file: Path, **options: Any) -> Client:
    return Client(stub.control, stub.events, key_file=key_file, **options)


# ----------------------------------------------------------------------------- sync client


def test_request_returns_the_reply_content(stub: Stub, key_file: Path) -> None:
    with client_for(stub, key_file) as client:
        assert client.status() == EXAMPLES["status_reply"]
        assert client.request("status_request") == EXAMPLES["status_reply"]
        assert client.hello()["protocol_version"] == EXAMPLES["hello_reply"]["protocol_version"]
        reply = client.request_message("match_get", {"match_id": MATCH})
        assert reply.msg_type == "match_get_reply" and reply.parent_id is not None
    assert stub.received[:2] == ["status_request", "status_request"]


def test_convenience_methods_send_valid_requests(stub: Stub, key_file: Path) -> None:
    with client_for(stub, key_file) as client:
        assert client.choose_play("4HPwATDgc/ABMA", (3, 1), candidates=3)["play"] == "8/5 6/5"
        assert client.match_start(["heuristic", "pubeval"], length=5, seed=7,
                                  rules={"crawford": True})["seed"] == 7
        assert client.frontends()["frontends"][0]["name"] == "gnubg"
        assert client.match_get(MATCH, mat=True)["mat"].startswith(" 5 point match")
        assert client.evaluate("4HPwATDgc/ABMA", context={"cube_value": 2},
                               agent="heuristic")["equity"] == 0.0612
    assert "choose_play_request" in stub.received


def test_error_reply_raises_daemon_error_with_the_code(stub: Stub, key_file: Path) -> None:
    with client_for(stub, key_file) as client:
        with pytest.raises(DaemonError) as info:
            client.match_get("nosuchmatch")
        assert info.value.code is ErrorCode.NOT_FOUND
        assert info.value.details == {"match_id": "nosuchmatch"}
        assert "nosuchmatch" in info.value.message
        assert client.status()["state"] == "running"  # still usable


def test_bad_request_is_refused_before_sending(stub: Stub, key_file: Path) -> None:
    with client_for(stub, key_file) as client:
        with pytest.raises(DaemonError) as info:
            client.choose_play("4HPwATDgc/ABMA", (7, 1))
        assert info.value.code is ErrorCode.BAD_VALUE and info.value.details["field"] == "dice[0]"
        with pytest.raises(DaemonError) as info:
            client.request("launch")
        assert info.value.code is ErrorCode.UNKNOWN_TYPE
    assert stub.received == []


def test_timeout_says_what_to_check_and_late_replies_are_dropped(stub: Stub, key_file: Path) -> None:
    with client_for(stub, key_file, timeout=0.25) as client:
        started = time.monotonic()
        with pytest.raises(DaemonUnreachable) as info:
            client.reload()  # the stub answers after 0.6 s
        assert time.monotonic() - started < 2.0
        text = str(info.value)
        assert "no reply" in text and "0.25 s" in text
        assert "daemon running" in text and "key" in text
        assert info.value.code is ErrorCode.TIMEOUT
        time.sleep(0.6)  # the late reload reply is now queued on our socket
        assert client.status() == EXAMPLES["status_reply"]


def test_no_daemon_gives_a_quick_clear_error(workdir: Path, key_file: Path) -> None:
    client = Client(f"ipc://{workdir}/nothing", key_file=key_file, timeout=0.3)
    with client, pytest.raises(DaemonUnreachable) as info:
        client.status()
    assert "does not exist" in str(info.value) and "daemon running" in str(info.value)


def test_wrong_key_is_diagnosed(stub: Stub, workdir: Path) -> None:
    with Client(stub.control, key=b"not the daemon's key", timeout=2) as client:
        with pytest.raises(DaemonError) as info:
            client.status()
    assert info.value.code is ErrorCode.UNAUTHORIZED
    assert "key" in info.value.message


def test_unsigned_client_reads_the_daemons_refusal(stub: Stub) -> None:
    with Client(stub.control, key=b"", timeout=2) as client:
        with pytest.raises(DaemonError) as info:
            client.status()
    assert info.value.code is ErrorCode.UNAUTHORIZED
    assert "not signed" in info.value.message


def test_watch_yields_only_the_matchs_events(stub: Stub, key_file: Path) -> None:
    with client_for(stub, key_file) as client:
        seen = []
        for event in client.watch(MATCH, timeout=5):
            assert event.content["match_id"] == MATCH
            seen.append(event.msg_type)
            if len(seen) >= len(EVENT_SEQUENCE):
                break
    assert set(seen) == set(EVENT_SEQUENCE)


def test_watch_of_everything_sees_every_match(stub: Stub, key_file: Path) -> None:
    with client_for(stub, key_file) as client:
        matches = set()
        for event in client.watch(timeout=5):
            matches.add(event.content["match_id"])
            if len(matches) == 3:
                break
    assert matches == {MATCH, MATCH + "ff", "other"}


def test_watch_with_the_wrong_key_raises(stub: Stub) -> None:
    with Client(stub.control, stub.events, key=b"wrong") as client:
        with pytest.raises(DaemonError) as info:
            next(iter(client.watch(timeout=5)))
    assert info.value.code is ErrorCode.UNAUTHORIZED


def test_watch_idle_timeout_ends_the_iteration(stub: Stub, key_file: Path) -> None:
    with Client(stub.control, stub.events, key_file=key_file) as client:
        assert list(client.watch("quietmatch", timeout=0.3)) == []


def test_a_watch_that_cannot_connect_says_so(workdir: Path, key_file: Path) -> None:
    with Client(f"ipc://{workdir}/c", f"ipc://{workdir}/no-events", key_file=key_file,
                timeout=0.5) as client:
        with pytest.raises(DaemonUnreachable, match="events endpoint .*no-events"):
            list(client.watch(timeout=0.3))


# ----------------------------------------------------------------------------- async client


def test_async_client_concurrent_requests_errors_and_timeouts(stub: Stub, key_file: Path) -> None:
    async def scenario() -> None:
        async with AsyncClient(stub.control, stub.events, key_file=key_file, timeout=0.3) as client:
            replies = await asyncio.gather(*(client.status() for _ in range(20)),
                                           client.match_get(MATCH))
            assert all(reply == EXAMPLES["status_reply"] for reply in replies[:20])
            assert replies[20]["match"]["match_id"] == MATCH
            with pytest.raises(DaemonError) as info:
                await client.match_get("missing")
            assert info.value.code is ErrorCode.NOT_FOUND
            with pytest.raises(DaemonUnreachable):
                await client.shutdown()
            assert (await client.hello())["server"] == "bgbot 0.1.0"
            seen = []
            async for event in client.watch(MATCH, timeout=5):
                seen.append(event.msg_type)
                if len(seen) == len(EVENT_SEQUENCE):
                    break
            assert set(seen) == set(EVENT_SEQUENCE)

    asyncio.run(scenario())


# ----------------------------------------------------------------------------- SPEC-only client


def test_the_spec_client_knows_nothing_of_bgbot() -> None:
    source = Path(spec_client.__file__).read_text("utf-8")
    assert not re.search(r"^\s*(from|import) bgbot", source, re.M)


def test_a_client_written_from_the_spec_alone_can_talk(stub: Stub, key_file: Path) -> None:
    key = key_file.read_bytes().strip()
    raw = spec_client.RawClient(stub.control, key)
    try:
        status = raw.request("status_request", {})
        assert status.msg_type == "status_reply" and status.content["state"] == "running"
        missing = raw.request("match_get_request", {"match_id": "nope"})
        assert missing.msg_type == "error" and missing.content["code"] == "not_found"
        # a forged request: the error names the request as its parent
        msg_id, frames = spec_client.envelope(b"forger", "status_request", {})
        raw.send_frames(frames)
        forged = raw.receive(msg_id)
        assert forged.msg_type == "error" and forged.content["code"] == "unauthorized"
        # a replay of a request already answered
        msg_id, frames = spec_client.envelope(key, "status_request", {})
        raw.send_frames(frames)
        assert raw.receive(msg_id).msg_type == "status_reply"
        raw.send_frames(frames)
        assert raw.receive(msg_id).content["code"] == "replayed"
        # a stale request and garbage frames
        msg_id, frames = spec_client.envelope(key, "status_request", {}, stamp=time.time() - 3600)
        raw.send_frames(frames)
        assert raw.receive(msg_id).content["code"] == "stale"
        raw.send_frames([b"GARBAGE", b"", b"\xc1"])
        assert raw.receive(None).content["code"] == "bad_message"
        big_id, oversized = spec_client.envelope(key, "status_request", {})
        oversized[4] = msgpack.packb({"pad": "x" * (4 * 1024 * 1024)}, use_bin_type=True)
        raw.send_frames(oversized)
        assert raw.receive(big_id).content["code"] == "too_large"  # its header was readable
    finally:
        raw.close()
    events = spec_client.raw_events(stub.events, key, match_topic(MATCH), 4)
    assert all(topic == match_topic(MATCH) for topic, _ in events)
    assert all(event.content["match_id"] == MATCH for _, event in events)


# ----------------------------------------------------------------------------- bgbot ctl


def ctl(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    parser = argparse.ArgumentParser(prog="bgbot")
    cli_ctl.register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["ctl", *argv])
    code: int = args.func(args)
    out, err = capsys.readouterr()
    return code, out, err


def test_ctl_status_human_and_json(stub: Stub, key_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = ["--endpoint", stub.control, "--key-file", str(key_file)]
    code, out, _ = ctl([*base, "status"], capsys)
    assert code == 0
    assert "pid 4242" in out and "3 playing, 120 finished (limit 100)" in out and "up 1h 00m 00s" in out
    code, out, _ = ctl(["status", "--json", *base], capsys)
    assert code == 0 and json.loads(out) == EXAMPLES["status_reply"]


def test_ctl_commands_print_replies(stub: Stub, key_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = ["--endpoint", stub.control, "--key-file", str(key_file)]
    code, out, _ = ctl([*base, "matches"], capsys)
    assert code == 0 and MATCH in out and "heuristic vs pubeval" in out and "alice vs bob" in out
    code, out, _ = ctl([*base, "match", "get", MATCH], capsys)
    assert code == 0 and "4HPwBSCwZ/ABMA:UYmqACAACAAE" in out and "seed 7" in out
    code, out, _ = ctl([*base, "match", "get", MATCH, "--mat"], capsys)
    assert out == EXAMPLES["match_get_reply"]["mat"]
    code, out, _ = ctl([*base, "play", "4HPwATDgc/ABMA", "31", "--candidates", "3"], capsys)
    assert code == 0 and out.splitlines()[0] == "8/5 6/5" and "+0.152" in out
    code, out, _ = ctl([*base, "frontends"], capsys)
    assert code == 0 and "127.0.0.1:4321" in out
    code, out, _ = ctl([*base, "match", "start", "heuristic", "pubeval", "--seed", "7"], capsys)
    assert code == 0 and "seed 7" in out and MATCH in out


def test_ctl_error_reply_and_unreachable_exit_codes(stub: Stub, key_file: Path, workdir: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = ctl(["--endpoint", stub.control, "--key-file", str(key_file),
                        "match", "get", "nosuchmatch"], capsys)
    assert code == cli_ctl.EXIT_ERROR_REPLY and "not_found" in err
    code, out, _ = ctl(["--endpoint", stub.control, "--key-file", str(key_file), "--json",
                        "match", "get", "nosuchmatch"], capsys)
    assert code == cli_ctl.EXIT_ERROR_REPLY and json.loads(out)["error"]["code"] == "not_found"
    code, _, err = ctl(["--endpoint", f"ipc://{workdir}/none", "--key-file", str(key_file), "status"],
                       capsys)
    assert code == cli_ctl.EXIT_UNREACHABLE and "does not exist" in err


def test_ctl_watch_prints_events_until_the_match_ends(stub: Stub, key_file: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = ctl(["--endpoint", stub.control, "--events-endpoint", stub.events,
                        "--key-file", str(key_file), "watch", MATCH], capsys)
    assert code == 0
    lines = out.splitlines()
    assert lines[-1] == "match over: heuristic wins 5-3 after 6 games"
    # the stub cycles through EVENT_SEQUENCE: the watch starts anywhere in it
    names = {0: "heuristic", 1: "pubeval"}
    readable = {cli_ctl.describe_event(name, EXAMPLES[name], names.__getitem__)
                for name in EVENT_SEQUENCE}
    assert set(lines) <= readable and "game 1: heuristic plays 31: 8/5 6/5" in readable


def test_ctl_keygen_writes_a_private_key(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = workdir / "k" / "control.key"
    code, out, _ = ctl(["keygen", str(target)], capsys)
    assert code == 0 and (target.stat().st_mode & 0o777) == 0o600 and str(target) in out


@pytest.mark.parametrize("msg_type", [name for name in EXAMPLES if name in (
    "match_started", "game_started", "rolled", "played", "doubled", "taken", "dropped",
    "beavered", "resigned", "game_ended", "match_ended", "match_aborted")])
def test_every_event_has_a_readable_line(msg_type: str) -> None:
    line = cli_ctl.describe_event(msg_type, EXAMPLES[msg_type], lambda seat: f"P{seat}")
    assert line and "{" not in line
    if "seat" in EXAMPLES[msg_type] and EXAMPLES[msg_type]["seat"] >= 0:
        assert f"P{EXAMPLES[msg_type]['seat']}" in line


def test_ctl_help_has_examples(capsys: pytest.CaptureFixture[str]) -> None:
    parser = argparse.ArgumentParser(prog="bgbot")
    cli_ctl.register(parser.add_subparsers(dest="command"))
    for argv in (["ctl", "--help"], ["ctl", "match", "start", "--help"], ["ctl", "watch", "--help"]):
        with pytest.raises(SystemExit):
            parser.parse_args(argv)
        assert "example" in capsys.readouterr().out


def test_ctl_watch_says_one_game_not_one_games() -> None:
    ended = {**EXAMPLES["match_ended"], "games": 1, "score": [1, 0], "winner": 0}
    line = cli_ctl.describe_event("match_ended", ended, {0: "heuristic", 1: "pubeval"}.__getitem__)
    assert line == "match over: heuristic wins 1-0 after 1 game"
