"""The daemon as a real process (`bgbot serve`) with real IPC sockets.

Covers: decision round trips against the in-process player, a client written from SPEC.md
alone, every kind of bad message answered (or dropped) while the daemon keeps serving, kill -9
in the middle of a hosted match (the resumed match equals an uninterrupted one), systemd
notifications on a real NOTIFY_SOCKET, SIGTERM, SIGHUP, frontends, and status latency while
matches play.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import os
import signal
import socket
import sqlite3
import statistics
import subprocess
import time
import uuid
from pathlib import Path
from typing import Any, Iterator

import msgpack
import pytest
import zmq

from bgbot.agents.players import SERVING_AGENT
from bgbot.agents.spec import parse_agent_spec
from bgbot.core.position import Position
from bgbot.daemon.client import DaemonError
from bgbot.daemon.protocol import REQUEST_TYPES, ErrorCode
from bgbot.formats.gnubgid import decode_gnubgid
from bgbot.players.base import Context
from bgbot.players.heuristic import HeuristicPlayer

from .daemon_harness import (
    Daemon,
    DaemonDirs,
    mat_body,
    pid_alive,
    remove_tree,
    serve_command,
    short_tmpdir,
    start_daemon,
    wait_for,
)


@pytest.fixture(scope="module")
def shared_daemon() -> Iterator[Daemon]:
    """One daemon for the read-mostly tests of this module."""
    dirs = DaemonDirs(short_tmpdir())
    dirs.write_config()
    daemon = start_daemon(dirs)
    yield daemon
    assert daemon.stop() == 0, daemon.log
    remove_tree(dirs.root)


@pytest.fixture()
def dirs() -> Iterator[DaemonDirs]:
    d = DaemonDirs(short_tmpdir())
    yield d
    remove_tree(d.root)


# ============================================================================ round trips


def test_hello_lists_every_request_and_the_limits(shared_daemon: Daemon) -> None:
    hello = shared_daemon.client().hello()
    assert set(hello["requests"]) == set(REQUEST_TYPES)
    assert "played" in hello["events"] and "match_aborted" in hello["events"]
    assert hello["limits"]["signed"] is True
    assert "heuristic" in hello["agents"]


def test_status_reports_the_daemon(shared_daemon: Daemon) -> None:
    status = shared_daemon.client().status()
    assert status["state"] == "running"
    assert status["pid"] == shared_daemon.proc.pid
    assert status["uptime"] >= 0
    assert len(status["load"]["loadavg"]) == 3


def test_evaluate_matches_the_in_process_evaluator(shared_daemon: Daemon) -> None:
    client = shared_daemon.client()
    position = Position.from_position_id("4HPwATDgc/ABMA")
    reply = client.evaluate("4HPwATDgc/ABMA")
    local = HeuristicPlayer(plies=2).evaluator.evaluate(position)  # the serving agent's
    assert reply["probabilities"]["win"] == pytest.approx(local.win)
    assert reply["equity"] == pytest.approx(local.equity())


@pytest.mark.parametrize("position_id, dice", [
    ("4HPwATDgc/ABMA", (3, 1)), ("4HPwATDgc/ABMA", (6, 6)), ("sGfwATDgc/AFIA", (5, 2)),
])
def test_choose_play_is_legal_and_the_players_choice(shared_daemon: Daemon, position_id: str,
                                                     dice: tuple[int, int]) -> None:
    client = shared_daemon.client()
    position = Position.from_position_id(position_id)
    reply = client.choose_play(position_id, list(dice))
    legal = {after.position_id(): play for play, after in position.play_results(dice)}
    assert reply["after"] in legal
    assert reply["play"] == str(legal[reply["after"]])
    serving = parse_agent_spec(SERVING_AGENT)
    assert serving.name == "heuristic"
    chosen = HeuristicPlayer(plies=int(serving.options.get("plies", 0))).choose_play(
        position, dice, Context())
    assert reply["after"] == position.apply(chosen).position_id()


def test_choose_play_candidates_start_with_the_choice(shared_daemon: Daemon) -> None:
    reply = shared_daemon.client().choose_play("4HPwATDgc/ABMA", [4, 2], candidates=5)
    candidates = reply["candidates"]
    assert 1 < len(candidates) <= 5
    assert candidates[0]["play"] == reply["play"]
    rest = [c["equity"] for c in candidates[1:]]
    assert rest == sorted(rest, reverse=True)


@pytest.mark.parametrize("plies", [0, 1])
def test_choose_play_candidates_are_ranked_as_bgbot_hint_ranks_them(shared_daemon: Daemon,
                                                                    plies: int) -> None:
    position, dice = Position.from_position_id("4HPwATDgc/ABMA"), (6, 3)
    reply = shared_daemon.client().choose_play(position.position_id(), list(dice),
                                               candidates=64, agent=f"heuristic:plies={plies}")
    ranked = HeuristicPlayer(plies=plies).rank_plays(position, dice, Context())
    assert [c["play"] for c in reply["candidates"]] == [str(r.play) for r in ranked]
    assert reply["candidates"][0]["play"] == reply["play"]


def test_cube_take_and_resign_decisions(shared_daemon: Daemon) -> None:
    client = shared_daemon.client()
    assert client.cube_decision("4HPwATDgc/ABMA")["double"] is False
    assert client.take_decision("4HPwATDgc/ABMA")["decision"] in ("take", "drop")
    assert client.resign_decision("4HPwATDgc/ABMA")["resign"] == 0
    with pytest.raises(DaemonError) as info:  # the opponent owns the cube: no double possible
        client.cube_decision("4HPwATDgc/ABMA", context={"cube_value": 2,
                                                        "cube_owner": "opponent"})
    assert info.value.code is ErrorCode.BAD_VALUE


def test_a_bad_value_names_the_field(shared_daemon: Daemon) -> None:
    client = shared_daemon.client()
    with pytest.raises(DaemonError) as info:
        client.request("choose_play", position="4HPwATDgc/ABMA", dice=[7, 1])
    assert info.value.code is ErrorCode.BAD_VALUE
    assert info.value.details["field"].startswith("dice")
    with pytest.raises(DaemonError) as info:
        client.request("match_start", players=["heuristic", "nosuchagent"])
    assert info.value.details["field"] == "players[1]"


# ============================================================================ SPEC.md alone


class SpecClient:
    """A client written from protocol/SPEC.md §3-§5 and §10 only: pyzmq, msgpack, hmac."""

    def __init__(self, endpoint: str, key: bytes) -> None:
        self.key = key
        self.ctx = zmq.Context()
        self.sock = self.ctx.socket(zmq.DEALER)
        self.sock.setsockopt(zmq.LINGER, 0)
        self.sock.setsockopt(zmq.IMMEDIATE, 1)
        self.sock.connect(endpoint)

    @staticmethod
    def pack(obj: Any) -> bytes:
        return msgpack.packb(obj, use_bin_type=True)

    def sign(self, parts: list[bytes]) -> bytes:
        return hmac.new(self.key, b"".join(parts), hashlib.sha256).hexdigest().encode()

    def frames(self, msg_type: str, content: dict[str, Any], *, msg_id: str | None = None,
               when: float | None = None) -> tuple[str, list[bytes]]:
        msg_id = msg_id or uuid.uuid4().hex
        header = {"msg_id": msg_id, "msg_type": msg_type, "version": "1.0",
                  "time": time.time() if when is None else when}
        parts = [self.pack(header), self.pack({}), self.pack(content)]
        return msg_id, [b"BGB1", self.sign(parts), *parts]

    def send(self, frames: list[bytes]) -> None:
        self.sock.send_multipart(frames)

    def receive(self, timeout: float = 5.0) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
        if not self.sock.poll(int(timeout * 1000)):
            raise TimeoutError("no reply")
        delimiter, signature, header, parent, content = self.sock.recv_multipart()
        assert delimiter == b"BGB1"
        expected = hmac.new(self.key, header + parent + content, hashlib.sha256).hexdigest()
        assert hmac.compare_digest(signature, expected.encode()), "reply not signed with our key"
        return msgpack.unpackb(header), msgpack.unpackb(parent), msgpack.unpackb(content)

    def ask(self, msg_type: str, content: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        msg_id, frames = self.frames(msg_type, content)
        self.send(frames)
        header, parent, reply = self.receive()
        assert parent.get("msg_id") == msg_id
        return header["msg_type"], reply

    def close(self) -> None:
        self.sock.close(0)
        self.ctx.term()


@pytest.fixture()
def spec_client(shared_daemon: Daemon) -> Iterator[SpecClient]:
    client = SpecClient(shared_daemon.dirs.control, shared_daemon.dirs.key)
    yield client
    client.close()


def test_a_client_written_from_the_spec_alone(spec_client: SpecClient) -> None:
    kind, status = spec_client.ask("status_request", {})
    assert kind == "status_reply" and status["state"] == "running"
    kind, reply = spec_client.ask("choose_play_request",
                                  {"position": "4HPwATDgc/ABMA", "dice": [3, 1]})
    assert kind == "choose_play_reply"
    assert reply["play"] in {str(p) for p in Position.initial().legal_plays((3, 1))}


def _error(spec_client: SpecClient, frames: list[bytes]) -> dict[str, Any]:
    spec_client.send(frames)
    header, _, content = spec_client.receive()
    assert header["msg_type"] == "error", content
    return content


def test_unsigned_forged_replayed_and_garbage_messages_get_errors(spec_client: SpecClient) -> None:
    _, frames = spec_client.frames("status_request", {})
    unsigned = [frames[0], b"", *frames[2:]]
    assert _error(spec_client, unsigned)["code"] == "unauthorized"
    forged = [frames[0], b"0" * 64, *frames[2:]]
    assert _error(spec_client, forged)["code"] == "unauthorized"
    other_key = hmac.new(b"not the key", b"".join(frames[2:]), hashlib.sha256).hexdigest()
    assert _error(spec_client, [frames[0], other_key.encode(), *frames[2:]])["code"] == \
        "unauthorized"
    spec_client.send(frames)  # the genuine message once...
    header, _, _ = spec_client.receive()
    assert header["msg_type"] == "status_reply"
    assert _error(spec_client, frames)["code"] == "replayed"  # ...and never twice
    assert _error(spec_client, [b"hello"])["code"] == "bad_message"
    assert _error(spec_client, [b"BGB1", b"", b"\xc1\xc1", b"", b""])["code"] in (
        "bad_message", "unauthorized")
    assert _error(spec_client, [b"BGB2", *frames[1:]])["code"] == "bad_version"
    _, stale = spec_client.frames("status_request", {}, when=time.time() - 3600)
    assert _error(spec_client, stale)["code"] == "stale"
    _, unknown = spec_client.frames("teleport_request", {})
    assert _error(spec_client, unknown)["code"] == "unknown_type"
    _, reply_as_request = spec_client.frames("shutdown_reply", {"state": "stopping"})
    assert _error(spec_client, reply_as_request)["code"] == "unknown_type"
    _, extra_field = spec_client.frames("status_request", {"verbose": True})
    assert _error(spec_client, extra_field)["code"] == "bad_value"
    kind, _ = spec_client.ask("status_request", {})
    assert kind == "status_reply"


def test_oversized_messages_are_refused_and_the_daemon_keeps_serving(
        spec_client: SpecClient) -> None:
    # two big frames, each under ZMQ_MAXMSGSIZE, together over the 4 MiB limit: an error reply
    big = "x" * (3 * 1024 * 1024)
    header = spec_client.pack({"msg_id": uuid.uuid4().hex, "msg_type": "status_request",
                               "version": "1.0", "time": time.time()})
    parent = spec_client.pack({"padding": big})
    content = spec_client.pack({"padding": big})
    frames = [b"BGB1", spec_client.sign([header, parent, content]), header, parent, content]
    assert _error(spec_client, frames)["code"] == "too_large"
    # one frame over the limit: ZeroMQ drops the connection, no reply (SPEC.md §5)
    huge = spec_client.pack({"padding": "y" * (5 * 1024 * 1024)})
    spec_client.send([b"BGB1", b"", header, spec_client.pack({}), huge])
    with pytest.raises(TimeoutError):
        spec_client.receive(timeout=1.0)
    # the DEALER reconnects by itself and the daemon answers again
    kind, _ = wait_for(lambda: _try_status(spec_client), timeout=20)
    assert kind == "status_reply"


def _try_status(client: SpecClient) -> tuple[str, dict[str, Any]] | None:
    msg_id, frames = client.frames("status_request", {})
    client.send(frames)
    try:
        header, parent, content = client.receive(timeout=1.0)
    except TimeoutError:
        return None
    return header["msg_type"], content


# ============================================================================ hosted matches


def _match_row(dirs: DaemonDirs, match_id: str) -> tuple[str, int]:
    db = sqlite3.connect(dirs.state / "state.db")
    try:
        state, played = db.execute("SELECT state, played FROM matches WHERE id = ?",
                                   (match_id,)).fetchone()
        return str(state), int(played)
    finally:
        db.close()


def _journal_length(dirs: DaemonDirs, match_id: str) -> int:
    db = sqlite3.connect(dirs.state / "state.db")
    try:
        return int(db.execute("SELECT COUNT(*) FROM journal WHERE match_id = ?",
                              (match_id,)).fetchone()[0])
    finally:
        db.close()


def _wait_finished(daemon: Daemon, match_id: str, timeout: float = 120.0) -> dict[str, Any]:
    client = daemon.client()
    return wait_for(lambda: (lambda r: r if r["match"]["state"] != "playing" else None)(
        client.match_get(match_id, mat=True)), timeout=timeout, interval=0.1)


def _reference_mat(tmp: Path, agent_a: str, agent_b: str, length: int, seed: int) -> str:
    """The same match played uninterrupted, in-process (as `bgbot play` plays it)."""
    from bgbot.referee.matlog import MatLogger
    from bgbot.referee.series import SeriesConfig, run_series_sync

    config = SeriesConfig(agent_a, agent_b, length=length, seed=seed)
    logger = MatLogger(tmp, config)
    run_series_sync(config, listeners=logger.listeners)
    return logger.paths[0].read_text()


def test_kill_9_in_a_hosted_match_then_restart_finishes_it_as_if_never_interrupted(
        dirs: DaemonDirs, tmp_path: Path) -> None:
    dirs.write_config()
    daemon = start_daemon(dirs)
    try:
        client = daemon.client()
        workers = client.status()["load"]["match_workers"]
        started = client.match_start(["heuristic", "pubeval"], length=11, seed=20261129)
        match_id = started["match"]["match_id"]
        # kill in the middle of a game, after at least one finished game, with most of the game
        # still to play: a game that is nearly over can end between the look and the kill
        # (it did, on a loaded machine), and the restart then has no game to resume
        wait_for(lambda: _match_row(dirs, match_id)[1] >= 1 and
                 _far_from_the_end(client.match_get(match_id)["position"]),
                 timeout=60, interval=0.01)
        daemon.proc.kill()
        daemon.proc.wait(10)
        state, played = _match_row(dirs, match_id)
        assert state == "running"
        journalled = _journal_length(dirs, match_id)
        assert journalled > 0
        wait_for(lambda: not any(pid_alive(p) for p in workers), timeout=10)  # none orphaned
    finally:
        daemon.stop()
    daemon = start_daemon(dirs, log_name="daemon2.log")
    try:
        resumed = _wait_finished(daemon, match_id)
        assert resumed["match"]["state"] == "finished", (resumed.get("error"), daemon.log[-2000:])
        assert "resuming game" in daemon.log
        assert _journal_length(dirs, match_id) > journalled
    finally:
        assert daemon.stop() == 0
    reference = _reference_mat(tmp_path, "heuristic", "pubeval", 11, 20261129)
    assert mat_body(resumed["mat"]) == mat_body(reference)
    assert mat_body(Path(resumed["match"]["mat_path"]).read_text()) == mat_body(reference)


def _far_from_the_end(gnubgid: str | None, pips: int = 90) -> bool:
    """A game is in progress and both sides still have at least ``pips`` to bear off."""
    if gnubgid is None:
        return False
    position, _ = decode_gnubgid(gnubgid)
    return min(position.pip_counts()) >= pips


def test_the_hosted_match_equals_bgbot_play_with_the_same_seed(shared_daemon: Daemon,
                                                               tmp_path: Path) -> None:
    started = shared_daemon.client().match_start(["heuristic", "pubeval"], length=5, seed=77)
    hosted = _wait_finished(shared_daemon, started["match"]["match_id"])
    reference = _reference_mat(tmp_path, "heuristic", "pubeval", 5, 77)
    assert mat_body(hosted["mat"]) == mat_body(reference)
    assert hosted["match"]["state"] == "finished" and hosted["match"]["winner"] in (0, 1)


def test_info_logs_what_an_operator_needs_not_every_move(shared_daemon: Daemon) -> None:
    started = shared_daemon.client().match_start(["pubeval", "random"], length=3, seed=31)
    match_id = started["match"]["match_id"]
    hosted = _wait_finished(shared_daemon, match_id)
    assert hosted["match"]["state"] == "finished"
    lines = wait_for(lambda: (lambda found: found if any("match finished" in line for line in found)
                              else None)([line for line in shared_daemon.log.splitlines()
                                          if f"match={match_id}" in line]))
    events = {line.split(": ", 1)[1].split()[0] for line in lines if "bgbot.events" in line}
    assert {"game_ended", "match_ended"} <= events
    assert any("match started" in line for line in lines)
    assert not events & {"rolled", "played", "doubled", "taken", "game_started"}
    assert len(lines) < 20  # a handful per match, not a line per roll and move


def test_events_of_a_match_arrive_on_its_topic(shared_daemon: Daemon) -> None:
    client = shared_daemon.client()
    ctx = zmq.Context.instance()
    from bgbot.daemon.protocol import Signer

    sub = ctx.socket(zmq.SUB)
    sub.setsockopt(zmq.LINGER, 0)
    sub.setsockopt(zmq.SUBSCRIBE, b"match.")
    sub.connect(shared_daemon.dirs.events)
    time.sleep(0.3)  # let the subscription reach the daemon
    signer = Signer(shared_daemon.dirs.key)
    match_id = client.match_start(["pubeval", "heuristic"], length=3, seed=3)["match"]["match_id"]
    seen: list[str] = []
    deadline = time.monotonic() + 60
    try:
        while time.monotonic() < deadline and "match_ended" not in seen:
            if not sub.poll(1000):
                continue
            topic, *frames = sub.recv_multipart()
            msg = signer.deserialize(frames)
            if topic == f"match.{match_id}".encode():
                assert msg.content["match_id"] == match_id
                seen.append(msg.msg_type)
    finally:
        sub.close(0)
    assert seen[0] == "match_started"
    assert seen[1] == "game_started"
    assert {"rolled", "played", "game_ended", "match_ended"} <= set(seen)


def test_match_abort_stops_a_match_for_good(shared_daemon: Daemon) -> None:
    client = shared_daemon.client()
    match_id = client.match_start(["heuristic", "heuristic"], length=25, seed=5)["match"][
        "match_id"]
    reply = client.match_abort(match_id, reason="testing")
    assert reply["match"]["state"] == "aborted"
    got = client.match_get(match_id)
    assert got["match"]["state"] == "aborted" and "testing" in got["error"]
    with pytest.raises(DaemonError) as info:
        client.match_abort(match_id)
    assert info.value.code is ErrorCode.BAD_STATE
    with pytest.raises(DaemonError) as info:
        client.match_get("nosuchmatch")
    assert info.value.code is ErrorCode.NOT_FOUND
    listed = client.match_list("finished")["matches"]
    assert match_id in {m["match_id"] for m in listed}


LAGS: list[float] = []


def _status_latencies(daemon: Daemon, until: Any, interval: float = 0.02) -> list[float]:
    client = daemon.client()
    times: list[float] = []
    while not until():
        begin = time.perf_counter()
        status = client.status()
        times.append(time.perf_counter() - begin)
        LAGS.append(status["load"]["loop_lag_ms"])
        time.sleep(interval)
    return times


def _host_many(daemon: Daemon, count: int, length: int) -> tuple[list[str], list[float]]:
    client = daemon.client(timeout=30)
    ids = [client.match_start(["heuristic", "pubeval"], length=length, seed=1000 + i)["match"][
        "match_id"] for i in range(count)]
    assert client.status()["matches"]["active"] >= 1

    def all_done() -> bool:
        listed = client.match_list("active", limit=10_000)["matches"]
        return not any(m["match_id"] in ids for m in listed)

    latencies = _status_latencies(daemon, all_done)
    return ids, latencies


def _check_hosted(daemon: Daemon, ids: list[str], latencies: list[float], *,
                  strict: bool) -> None:
    """Every match finished with its .mat file; status answered within 50 ms: every time
    (``strict``), or 95% of the time and at a median below 10 ms (the normal suite, which
    must not fail because another process on the machine took the CPU for a moment)."""
    client = daemon.client()
    for match_id in ids:
        got = client.match_get(match_id)
        assert got["match"]["state"] == "finished", got
        assert Path(got["match"]["mat_path"]).exists()
    assert len(latencies) >= 5, "the matches ended before status was asked"
    ordered = sorted(latencies)
    p95 = ordered[int(0.95 * (len(ordered) - 1))]
    summary = (f"status: median {statistics.median(ordered) * 1000:.1f} ms, p95 "
               f"{p95 * 1000:.1f} ms, max {ordered[-1] * 1000:.1f} ms over {len(ordered)} "
               f"requests; the daemon's loop lag max {max(LAGS):.1f} ms")
    if strict:
        assert ordered[-1] < 0.050, summary
    else:
        assert p95 < 0.050 and statistics.median(ordered) < 0.010, summary


def test_ten_concurrent_matches_complete_and_status_stays_fast(dirs: DaemonDirs) -> None:
    dirs.write_config(workers=2)
    daemon = start_daemon(dirs)
    try:
        ids, latencies = _host_many(daemon, 10, 3)
        _check_hosted(daemon, ids, latencies, strict=False)
    finally:
        assert daemon.stop() == 0


@pytest.mark.slow
def test_a_hundred_concurrent_matches_complete_and_status_stays_fast(dirs: DaemonDirs) -> None:
    dirs.write_config(workers=2)
    daemon = start_daemon(dirs)
    try:
        ids, latencies = _host_many(daemon, 100, 7)
        _check_hosted(daemon, ids, latencies, strict=True)
    finally:
        assert daemon.stop() == 0


# ============================================================================ signals, systemd


def _notify_socket(path: Path) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(str(path))
    sock.settimeout(0.2)
    return sock


def _until(sock: socket.socket, wanted: str, timeout: float = 30.0) -> list[str]:
    got: list[str] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            data = sock.recv(4096).decode()
        except socket.timeout:
            continue
        got.append(data)
        if wanted in data.split("\n"):
            return got
    raise AssertionError(f"{wanted} never arrived; got {got}")


def test_notify_socket_sigterm_and_resume_after_a_clean_stop(dirs: DaemonDirs) -> None:
    dirs.write_config()
    sock = _notify_socket(dirs.root / "notify")
    env = {"NOTIFY_SOCKET": str(dirs.root / "notify"), "WATCHDOG_USEC": "400000"}
    daemon = start_daemon(dirs, env=env, wait=False)
    try:
        ready = _until(sock, "READY=1")
        assert any(line.startswith("STATUS=") for m in ready for line in m.split("\n"))
        daemon.wait_ready()
        _until(sock, "WATCHDOG=1", timeout=3)
        client = daemon.client()
        match_id = client.match_start(["heuristic", "pubeval"], length=9, seed=9)["match"][
            "match_id"]
        daemon.signal(signal.SIGHUP)
        reload_messages = _until(sock, "RELOADING=1")
        assert "MONOTONIC_USEC=" in reload_messages[-1]
        _until(sock, "READY=1")
        wait_for(lambda: _journal_length(dirs, match_id) > 20, timeout=30, interval=0.01)
        daemon.signal(signal.SIGTERM)
        _until(sock, "STOPPING=1")
        assert daemon.wait(20) == 0
        assert _match_row(dirs, match_id)[0] == "suspended"
    finally:
        daemon.stop()
        sock.close()
    daemon = start_daemon(dirs, log_name="daemon2.log")
    try:
        assert _wait_finished(daemon, match_id)["match"]["state"] == "finished"
    finally:
        assert daemon.stop() == 0


def test_config_errors_name_the_file_line_and_key(dirs: DaemonDirs) -> None:
    dirs.write_config("max_matchs = 3\n")
    result = subprocess.run([*serve_command(), "--config", str(dirs.config_file)],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    line = dirs.config_file.read_text().splitlines().index("max_matchs = 3") + 1
    assert f"{dirs.config_file}:{line}: limits.max_matchs" in result.stderr
    assert "max_matches" in result.stderr  # the suggestion


def test_a_second_daemon_on_the_same_state_is_refused(shared_daemon: Daemon) -> None:
    result = subprocess.run([*serve_command(), "--config", str(shared_daemon.dirs.config_file)],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert "another bgbot daemon" in result.stderr
    assert shared_daemon.client().status()["state"] == "running"


def test_reload_request_applies_live_keys_and_refuses_a_broken_file(dirs: DaemonDirs) -> None:
    dirs.write_config()
    daemon = start_daemon(dirs)
    try:
        client = daemon.client()
        dirs.write_config("[logging]\nlevel = \"debug\"\n")
        reply = client.reload()
        assert reply["changed"] == ["logging.level"] and reply["restart_needed"] == []
        client.status()
        wait_for(lambda: "<< status_request" in daemon.log, timeout=5)  # wire traffic at DEBUG
        dirs.write_config("[logging]\nlevel = \"loud\"\n")
        with pytest.raises(DaemonError) as info:
            client.reload()
        assert info.value.code is ErrorCode.BAD_VALUE and "logging.level" in str(info.value)
        assert client.status()["state"] == "running"
        assert client.shutdown(reason="test")["state"] == "stopping"
        assert daemon.wait(20) == 0
    finally:
        daemon.stop()


def test_gnubg_player_frontends_start_and_stop(dirs: DaemonDirs) -> None:
    dirs.write_config('[[gnubg_player]]\nname = "g1"\nlisten = "127.0.0.1:0"\n')
    daemon = start_daemon(dirs)
    try:
        client = daemon.client()
        (configured,) = client.frontends()["frontends"]
        assert configured["name"] == "g1" and configured["state"] == "running"
        host, port = configured["listen"].rsplit(":", 1)
        with socket.create_connection((host, int(port)), timeout=5) as conn:
            board = ("board:You:gnubg:1:0:0:0:-2:0:0:0:0:5:0:3:0:0:0:-5:5:0:0:0:-3:0:-5:0:0:0:0"
                     ":2:0:1:3:1:0:0:1:1:1:0:1:-1:0:25:0:0:0:0:0:0:0:0\r\n")
            conn.sendall(board.encode())
            reply = conn.recv(256).decode()
            assert "/" in reply  # a move such as "8/5 6/5"
        started = client.frontend_start("g2", kind="gnubg_external",
                                        options={"listen": "127.0.0.1:0", "agent": "pubeval"})
        assert started["frontend"]["state"] == "running"
        with pytest.raises(DaemonError) as info:
            client.frontend_start("g2", kind="gnubg_external", options={"listen": "127.0.0.1:0"})
        assert info.value.code is ErrorCode.BAD_STATE
        with pytest.raises(DaemonError) as info:
            client.frontend_start("g3", kind="fibs", options={})
        assert info.value.code is ErrorCode.UNSUPPORTED
        assert client.frontend_stop("g2")["frontend"]["state"] == "stopped"
        assert client.status()["frontends"] == {"running": 1, "total": 2}
    finally:
        assert daemon.stop() == 0


def test_unsigned_mode_and_inline_decisions_when_configured(dirs: DaemonDirs) -> None:
    dirs.write_config("inline_decisions = true\n", control="allow_unsigned = true\n")
    dirs.key = b""
    daemon = start_daemon(dirs)
    try:
        client = daemon.client(key=b"")
        assert client.hello()["limits"]["signed"] is False
        reply = client.choose_play("4HPwATDgc/ABMA", [6, 4])
        assert reply["play"] in {str(p) for p in Position.initial().legal_plays((6, 4))}
        status = client.status()
        assert status["state"] == "running" and status["load"]["decision_workers"] == []
    finally:
        assert daemon.stop() == 0


def test_quick_decisions_are_answered_on_the_loop_and_look_ahead_in_workers(
        dirs: DaemonDirs) -> None:
    """0-ply decisions of in-process players are answered by the daemon itself: they still
    come back while every decision worker is frozen (SIGSTOP), whereas a 1-ply decision,
    which goes to a worker, times out; bad input is refused with the field named either way."""
    dirs.write_config("decision_timeout = 3.0\n")
    daemon = start_daemon(dirs)
    workers: list[int] = []
    try:
        client = daemon.client(timeout=30)
        legal = {str(p) for p in Position.initial().legal_plays((6, 4))}
        quick = ("heuristic", "pubeval", "random", "heuristic:plies=0")
        for agent in (*quick, "heuristic:plies=1"):
            client.choose_play("4HPwATDgc/ABMA", [3, 1], agent=agent)  # creates the players
        workers = client.status()["load"]["decision_workers"]
        assert workers
        for pid in workers:
            os.kill(pid, signal.SIGSTOP)
        for agent in quick:
            assert client.choose_play("4HPwATDgc/ABMA", [6, 4], agent=agent)["play"] in legal
        assert client.evaluate("4HPwATDgc/ABMA", agent="heuristic")["equity"] < 1.0
        with pytest.raises(DaemonError) as refused:
            client.choose_play("4HPwATDgc/ABMA", [6, 7], agent="heuristic")
        assert refused.value.code.value == "bad_value" and "dice" in refused.value.message
        with pytest.raises(DaemonError) as slow:
            client.choose_play("4HPwATDgc/ABMA", [6, 4], agent="heuristic:plies=1")
        assert slow.value.code.value == "timeout"
    finally:
        for pid in workers:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGCONT)
        assert daemon.stop() == 0


def test_tcp_endpoints_use_curve(dirs: DaemonDirs) -> None:
    import zmq.auth

    from bgbot.daemon.client import Client

    if not zmq.has("curve"):
        pytest.skip("libzmq without CURVE")
    public_file, secret_file = zmq.auth.create_certificates(str(dirs.root), "server")
    server_public, _ = zmq.auth.load_certificate(public_file)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    dirs.write_config(control=f'key_file = "{dirs.key_file}"\n'
                              f'requests = "tcp://127.0.0.1:{port}"\n'
                              f'curve.secret_key_file = "{secret_file}"\n')
    daemon = start_daemon(dirs, wait=False)
    try:
        client = Client(f"tcp://127.0.0.1:{port}", dirs.events, key=dirs.key, timeout=10,
                        server_public_key=server_public)
        try:
            assert wait_for(lambda: _status_or_none(client), timeout=30)["state"] == "running"
        finally:
            client.close()
        plain = Client(f"tcp://127.0.0.1:{port}", key=dirs.key, timeout=1.5)
        try:
            with pytest.raises(DaemonError):  # no CURVE: the handshake fails, no reply
                plain.status()
        finally:
            plain.close()
    finally:
        assert daemon.stop() == 0


def _status_or_none(client: Any) -> dict[str, Any] | None:
    try:
        result: dict[str, Any] = client.status()
        return result
    except DaemonError:
        return None


def test_ipc_sockets_are_private(shared_daemon: Daemon) -> None:
    for name in ("control", "events"):
        mode = os.stat(shared_daemon.dirs.runtime / name).st_mode & 0o777
        assert mode == 0o600, oct(mode)


def test_kill_9_during_start_up_leaves_no_child_behind(dirs: DaemonDirs) -> None:
    """The start-up child that prepares the players' caches dies with a daemon killed by
    ``kill -9`` (it used to live on and write the cache beside the restarted daemon)."""
    from tests.test_soak import descendants

    dirs.write_config()
    # an empty cache: the child builds the bear-off database, seconds of work
    daemon = start_daemon(dirs, wait=False, env={"BGBOT_CACHE_DIR": str(dirs.root / "cache")})
    try:
        children = wait_for(lambda: descendants(daemon.proc.pid), timeout=30, interval=0.01)
        daemon.proc.kill()
        daemon.proc.wait(10)
        wait_for(lambda: not any(pid_alive(p) for p in children), timeout=3)
    finally:
        daemon.stop()
