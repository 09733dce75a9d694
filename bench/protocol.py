"""Speed and size of the daemon: choose_play round trips over IPC and TCP, RSS while hosting.

Starts a real `bgbot serve` (a private directory tree under /tmp, a fresh key), then:

1. choose_play of ``--agent`` (default: the heuristic at 0-ply) over IPC, and over TCP with CURVE:
   - one request at a time (``--window 1``): latency p50 / p99 of the round trip;
   - ``--window N`` requests in flight on one DEALER: decisions per second, and latency.
   The positions are real: boards and rolls from self-play with a fixed seed, each asked once
   per pass, so no answer is cached anywhere.
2. RSS of the daemon (its own process plus its worker processes; PSS too, which counts
   shared pages once) sampled while it hosts ``--matches`` 7-point matches.

Goals (issue "The daemon"): p99 <= 5 ms, >= 2,000 decisions/s, <= 150 MB.

Usage:
  python bench/protocol.py                        everything, defaults
  python bench/protocol.py --requests 5000 --window 16
  python bench/protocol.py --skip-rss --json      only the round trips, one JSON line at the end
  python bench/protocol.py --agent random --skip-rss   the protocol's cost alone
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import zmq  # noqa: E402

from bgbot.daemon.protocol import Signer, new_message, write_key  # noqa: E402

GOALS = {"p99_ms": 5.0, "decisions_per_s": 2000.0, "rss_mb": 150.0}


# ============================================================================ the daemon


class Daemon:
    """`bgbot serve` in a private directory tree."""

    def __init__(self, *, tcp: bool = False, workers: int = 0, inline: bool = False) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="bgbench-", dir="/tmp"))
        self.key = write_key(self.root / "control.key")
        self.server_public: bytes | None = None
        control = f'key_file = "{self.root / "control.key"}"\n'
        self.endpoint = f"ipc://{self.root / 'run' / 'control'}"
        if tcp:
            import zmq.auth

            public_file, secret_file = zmq.auth.create_certificates(str(self.root), "server")
            self.server_public = zmq.auth.load_certificate(public_file)[0]
            port = _free_port()
            self.endpoint = f"tcp://127.0.0.1:{port}"
            control += (f'requests = "{self.endpoint}"\n'
                        f'curve.secret_key_file = "{secret_file}"\n')
        config = self.root / "bgbot.toml"
        config.write_text(
            f'[daemon]\nstate_dir = "{self.root / "state"}"\nlogs_dir = "{self.root / "logs"}"\n'
            f'runtime_dir = "{self.root / "run"}"\n[control]\n{control}'
            f"[limits]\nmatch_workers = {workers}\ndecision_workers = {workers}\n"
            f"inline_decisions = {str(inline).lower()}\n"
            f'[logging]\nlevel = "warning"\n')
        self.log = (self.root / "daemon.log").open("wb")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "bgbot.cli", "serve", "--config", str(config)],
            stdout=self.log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            cwd=Path(__file__).resolve().parents[1])
        self.client = RawClient(self.endpoint, self.key, self.server_public)
        try:
            self._wait_until_it_answers()
        except BaseException:
            self.close()  # a daemon that never answered is not left running
            raise

    def _wait_until_it_answers(self) -> None:
        deadline = time.monotonic() + 60
        while True:
            try:
                self.client.ask("status_request", {}, timeout=1.0)
                break
            except StaleError:
                continue  # sent before the daemon started: it refuses that as a replay (SPEC)
            except TimeoutError:
                if time.monotonic() > deadline or self.proc.poll() is not None:
                    raise RuntimeError(f"the daemon did not start; see {self.root}/daemon.log")

    def pids(self) -> list[int]:
        """The daemon and every process below it (workers, helpers)."""
        return [self.proc.pid, *_descendants(self.proc.pid)]

    def close(self) -> None:
        self.client.close()
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.log.close()
        shutil.rmtree(self.root, ignore_errors=True)


def _descendants(root: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(entry.name))
    found, stack = [], [root]
    while stack:
        for child in children.get(stack.pop(), []):
            found.append(child)
            stack.append(child)
    return found


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class StaleError(RuntimeError):
    """The daemon refused a message as older than its replay history (e.g. one queued before
    it started): send a new one."""


class RawClient:
    """A DEALER with the protocol module's signer; many requests may be in flight."""

    def __init__(self, endpoint: str, key: bytes, server_public: bytes | None) -> None:
        self.ctx = zmq.Context()
        self.sock = self.ctx.socket(zmq.DEALER)
        self.sock.setsockopt(zmq.LINGER, 0)
        if server_public is not None:
            public, secret = zmq.curve_keypair()
            self.sock.curve_serverkey = server_public
            self.sock.curve_publickey = public
            self.sock.curve_secretkey = secret
        self.sock.connect(endpoint)
        self.signer = Signer(key)

    def send(self, msg_type: str, content: dict[str, Any]) -> str:
        msg = new_message(msg_type, content)
        self.sock.send_multipart(self.signer.serialize(msg))
        return msg.msg_id

    def receive(self, timeout: float = 10.0) -> tuple[str | None, Any]:
        if not self.sock.poll(int(timeout * 1000)):
            raise TimeoutError("no reply")
        reply = self.signer.deserialize(self.sock.recv_multipart())
        if reply.msg_type == "error":
            if reply.content.get("code") == "stale":
                raise StaleError(f"error reply: {reply.content}")
            raise RuntimeError(f"error reply: {reply.content}")
        return reply.parent_id, reply.content

    def ask(self, msg_type: str, content: dict[str, Any], timeout: float = 10.0) -> tuple[str, Any]:
        msg_id = self.send(msg_type, content)
        while True:
            parent, reply = self.receive(timeout)
            if parent == msg_id:
                return msg_id, reply

    def close(self) -> None:
        self.sock.close(0)
        self.ctx.term()


# ============================================================================ measurements


def sample_requests(count: int, seed: int = 7) -> list[dict[str, Any]]:
    """choose_play requests for boards and rolls met in self-play (heuristic vs pubeval)."""
    from bgbot.core.game import Moved
    from bgbot.referee import events as ev
    from bgbot.referee.series import SeriesConfig, run_series_sync

    found: list[dict[str, Any]] = []

    def listeners(index: int, mirrored: bool, names: Any) -> list[Any]:
        def on_event(event: Any) -> None:
            action = event.action if isinstance(event, ev.Acted) else None
            if isinstance(action, Moved) and len(found) < count:
                found.append({"position": action.before.position_id(), "dice": list(action.dice)})
        return [on_event]

    matches = 1
    while len(found) < count:
        run_series_sync(SeriesConfig("heuristic", "pubeval", length=7, matches=matches,
                                     seed=seed), listeners=listeners)
        matches *= 2
    return found


def cpu_seconds(pids: list[int]) -> float:
    """User + system CPU time used so far by the processes."""
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])
    return total / os.sysconf("SC_CLK_TCK")


def round_trips(client: RawClient, requests: list[dict[str, Any]], window: int,
                daemon: Daemon | None = None) -> dict[str, Any]:
    """Send ``requests`` keeping ``window`` in flight; latency of each, the rate, and (with
    ``daemon``) the CPU time each decision cost the daemon's processes and this client."""
    main_before = workers_before = 0.0
    if daemon is not None:
        workers = _descendants(daemon.proc.pid)
        main_before = cpu_seconds([daemon.proc.pid])
        workers_before = cpu_seconds(workers)
    client_before = time.process_time()
    sent: dict[str, float] = {}
    latencies: list[float] = []
    next_index = 0
    begin = time.perf_counter()
    while next_index < len(requests) or sent:
        while next_index < len(requests) and len(sent) < window:
            msg_id = client.send("choose_play_request", requests[next_index])
            sent[msg_id] = time.perf_counter()
            next_index += 1
        parent, _ = client.receive()
        started = sent.pop(parent or "", None)
        if started is not None:
            latencies.append(time.perf_counter() - started)
    elapsed = time.perf_counter() - begin
    latencies.sort()
    cost: dict[str, Any] = {}
    if daemon is not None:
        count = len(latencies)
        cost = {"cpu_us_per_decision": {
            "daemon": round((cpu_seconds([daemon.proc.pid]) - main_before) / count * 1e6),
            "workers": round((cpu_seconds(workers) - workers_before) / count * 1e6),
            "client": round((time.process_time() - client_before) / count * 1e6)}}
    return {
        **cost,
        "window": window,
        "requests": len(latencies),
        "decisions_per_s": round(len(latencies) / elapsed, 1),
        "p50_ms": round(latencies[len(latencies) // 2] * 1000, 3),
        "p99_ms": round(latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))] * 1000, 3),
        "max_ms": round(latencies[-1] * 1000, 3),
        "mean_ms": round(statistics.fmean(latencies) * 1000, 3),
    }


def memory(pids: list[int]) -> tuple[float, float]:
    """Total RSS and PSS (MB) of the processes."""
    rss = pss = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/smaps_rollup") as handle:
                for line in handle:
                    if line.startswith("Rss:"):
                        rss += int(line.split()[1])
                    elif line.startswith("Pss:"):
                        pss += int(line.split()[1])
        except OSError:
            continue
    return rss / 1024, pss / 1024


def hosting_memory(matches: int, workers: int) -> dict[str, Any]:
    daemon = Daemon(workers=workers)
    try:
        client = daemon.client
        idle_rss, idle_pss = memory(daemon.pids())
        for i in range(matches):
            client.ask("match_start_request", {"players": ["heuristic", "pubeval"],
                                               "length": 7, "seed": 5000 + i})
        peak_rss = peak_pss = 0.0
        status_times: list[float] = []
        begin = time.perf_counter()
        while True:
            started = time.perf_counter()
            _, status = client.ask("status_request", {})
            status_times.append(time.perf_counter() - started)
            rss, pss = memory(daemon.pids())
            peak_rss, peak_pss = max(peak_rss, rss), max(peak_pss, pss)
            if status["matches"]["active"] == 0:
                break
            time.sleep(0.1)
        elapsed = time.perf_counter() - begin
        status_times.sort()
        return {
            "matches": matches, "seconds": round(elapsed, 1),
            "idle_rss_mb": round(idle_rss, 1), "idle_pss_mb": round(idle_pss, 1),
            "peak_rss_mb": round(peak_rss, 1), "peak_pss_mb": round(peak_pss, 1),
            "status_p50_ms": round(status_times[len(status_times) // 2] * 1000, 2),
            "status_max_ms": round(status_times[-1] * 1000, 2),
            "processes": len(daemon.pids()),
        }
    finally:
        daemon.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--requests", type=int, default=3000, help="requests per measurement")
    parser.add_argument("--window", type=int, default=8,
                        help="requests in flight for the throughput run (default 8)")
    parser.add_argument("--workers", type=int, default=0,
                        help="match and decision workers (0 = one per CPU)")
    parser.add_argument("--matches", type=int, default=100, help="hosted matches for the RSS")
    parser.add_argument("--agent", default="heuristic",
                        help="agent answering the requests (default: heuristic, at 0-ply, "
                        "answered on the daemon's loop); 'random' measures the protocol's own "
                        "cost, heuristic:plies=1 the daemon's default (SERVING_AGENT)")
    parser.add_argument("--inline", action="store_true",
                        help="decisions on the daemon's event loop (limits.inline_decisions)")
    parser.add_argument("--skip-tcp", action="store_true")
    parser.add_argument("--skip-rss", action="store_true")
    parser.add_argument("--json", action="store_true", help="end with one JSON line")
    args = parser.parse_args(argv)

    requests = sample_requests(args.requests)
    requests = [{**r, "agent": args.agent} for r in requests]
    results: dict[str, Any] = {"cpus": os.cpu_count(), "requests": len(requests),
                               "agent": args.agent}
    for transport in ("ipc", "tcp"):
        if transport == "tcp" and args.skip_tcp:
            continue
        daemon = Daemon(tcp=transport == "tcp", workers=args.workers, inline=args.inline)
        try:
            round_trips(daemon.client, requests[:200], args.window)  # warm the workers up
            single = round_trips(daemon.client, requests, 1, daemon)
            piped = round_trips(daemon.client, requests, args.window, daemon)
        finally:
            daemon.close()
        results[transport] = {"sequential": single, "pipelined": piped}
        cost = piped["cpu_us_per_decision"]
        print(f"{transport}: one at a time: {single['decisions_per_s']:.0f}/s, p50 "
              f"{single['p50_ms']:.2f} ms, p99 {single['p99_ms']:.2f} ms; {args.window} in "
              f"flight: {piped['decisions_per_s']:.0f}/s, p50 {piped['p50_ms']:.2f} ms, p99 "
              f"{piped['p99_ms']:.2f} ms; CPU per decision: daemon {cost['daemon']} us, "
              f"workers {cost['workers']} us, this client {cost['client']} us")
    if not args.skip_rss:
        hosting = hosting_memory(args.matches, args.workers)
        results["hosting"] = hosting
        print(f"hosting {hosting['matches']} matches ({hosting['processes']} processes): peak "
              f"RSS {hosting['peak_rss_mb']:.0f} MB (PSS {hosting['peak_pss_mb']:.0f} MB), "
              f"idle {hosting['idle_rss_mb']:.0f} MB; {hosting['seconds']:.0f} s; status p50 "
              f"{hosting['status_p50_ms']:.1f} ms, max {hosting['status_max_ms']:.1f} ms")
    print(f"goals: p99 <= {GOALS['p99_ms']} ms, >= {GOALS['decisions_per_s']:.0f} decisions/s, "
          f"<= {GOALS['rss_mb']:.0f} MB")
    if args.json:
        print(json.dumps(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
