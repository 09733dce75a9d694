"""Speed of bgbot's gnubg external-player listener: decisions/s and request latency.

A local client replays board lines that a real gnubg 1.07 sent (tests/data/
gnubg_player_requests.jsonl, captured from the listener's own JSON-lines logs of gnubg-hosted
matches and money sessions), framed exactly as gnubg frames them (``line\\n\\0``), one request
at a time per connection as gnubg does, and times each round trip (send -> reply line).
Each captured session goes to its own connection (the listener learns its seat per connection).

Usage:
  python bench/gnubg_player_bench.py                           heuristic, 1 client, 2000 requests
  python bench/gnubg_player_bench.py --player random           protocol overhead (trivial agent)
  python bench/gnubg_player_bench.py --clients 8 --requests 8000
  python bench/gnubg_player_bench.py --connect 127.0.0.1:40001 a listener started elsewhere
  python bench/gnubg_player_bench.py --capture-from LOGDIR     rebuild the fixture from logs
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bgbot.frontends.gnubg_log import read_log  # noqa: E402
from bgbot.frontends.gnubg_player import (  # noqa: E402
    GnubgPlayerServer,
    ListenAddress,
    PlayerServerConfig,
)

FIXTURE = Path(__file__).resolve().parents[1] / "tests" / "data" / "gnubg_player_requests.jsonl"


def load_sessions(path: Path) -> list[list[str]]:
    """The captured request lines, one list per captured session, in the order gnubg sent them."""
    sessions: dict[int, list[str]] = {}
    with path.open(encoding="utf-8") as handle:
        for raw in handle:
            record = json.loads(raw)
            sessions.setdefault(int(record["session"]), []).append(record["line"])
    return [sessions[key] for key in sorted(sessions)]


def capture(log_dir: Path, out: Path) -> int:
    """Write the request lines of every log in ``log_dir`` as a fixture; returns the count."""
    count = 0
    with out.open("w", encoding="utf-8") as handle:
        for number, path in enumerate(sorted(log_dir.glob("*.jsonl"))):
            records = read_log(path)
            seat = next((r["seat"] for r in records if r["event"] == "match_start"), None)
            money = next((r["length"] == 0 for r in records if r["event"] == "match_start"), None)
            for record in records:
                if record["event"] == "request":
                    handle.write(json.dumps({"session": number, "seat": seat, "money": money,
                                             "kind": record["kind"], "line": record["line"]},
                                            separators=(",", ":")) + "\n")
                    count += 1
    return count


async def _client(address: ListenAddress, lines: list[str], quota: int,
                  latencies: list[float], errors: list[str]) -> None:
    if address.path is not None:
        reader, writer = await asyncio.open_unix_connection(address.path)
    else:
        assert address.host is not None and address.port is not None
        reader, writer = await asyncio.open_connection(address.host, address.port)
    try:
        done = 0
        while done < quota:
            for line in lines:
                if done >= quota:
                    break
                started = time.perf_counter()
                writer.write(line.encode() + b"\n\x00")
                await writer.drain()
                reply = await reader.readline()
                latencies.append(time.perf_counter() - started)
                if not reply.endswith(b"\n") or reply.startswith(b"Error"):
                    errors.append(reply.decode("utf-8", "replace").strip() or "(closed)")
                done += 1
    finally:
        writer.close()


def _percentile(sorted_values: list[float], fraction: float) -> float:
    index = min(len(sorted_values) - 1, max(0, round(fraction * (len(sorted_values) - 1))))
    return sorted_values[index]


async def run(args: argparse.Namespace) -> dict[str, Any]:
    sessions = load_sessions(args.fixture)
    server: GnubgPlayerServer | None = None
    if args.connect:
        address = ListenAddress.parse(args.connect)
    else:
        server = GnubgPlayerServer(PlayerServerConfig(player=args.player))
        address = await server.start("127.0.0.1:0")
    try:
        # Warm up (tables, bear-off database) outside the measurement: one pass of session 0.
        await _client(address, sessions[0], len(sessions[0]), [], [])
        latencies: list[float] = []
        errors: list[str] = []
        per_client = max(1, args.requests // args.clients)
        started = time.perf_counter()
        cpu = time.process_time()
        await asyncio.gather(*(
            _client(address, sessions[k % len(sessions)], per_client, latencies, errors)
            for k in range(args.clients)
        ))
        wall = time.perf_counter() - started
        cpu_used = time.process_time() - cpu
    finally:
        if server is not None:
            await server.close()
    ordered = sorted(latencies)
    return {
        "player": args.player if not args.connect else f"(listener at {args.connect})",
        "clients": args.clients,
        "requests": len(latencies),
        "errors": len(errors),
        "wall_s": round(wall, 3),
        "decisions_per_s": round(len(latencies) / wall, 1),
        "cpu_s_in_process": round(cpu_used, 3),
        "latency_ms": {
            "p50": round(1e3 * _percentile(ordered, 0.50), 3),
            "p90": round(1e3 * _percentile(ordered, 0.90), 3),
            "p99": round(1e3 * _percentile(ordered, 0.99), 3),
            "max": round(1e3 * ordered[-1], 3),
            "mean": round(1e3 * statistics.fmean(ordered), 3),
        },
        "first_errors": errors[:3],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--player", default="heuristic", help="agent spec (default heuristic)")
    parser.add_argument("--clients", type=int, default=1, help="concurrent connections")
    parser.add_argument("--requests", type=int, default=2000, help="total requests (all clients)")
    parser.add_argument("--connect", default=None, metavar="ADDRESS",
                        help="bench a listener already running there instead of an in-process one")
    parser.add_argument("--fixture", type=Path, default=FIXTURE)
    parser.add_argument("--capture-from", type=Path, default=None, metavar="LOGDIR",
                        help="rebuild --fixture from the listener logs in LOGDIR, then exit")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    args = parser.parse_args()
    if args.capture_from is not None:
        print(f"{capture(args.capture_from, args.fixture)} requests written to {args.fixture}")
        return
    result = asyncio.run(run(args))
    if args.json:
        print(json.dumps(result))
        return
    lat = result["latency_ms"]
    print(f"gnubg-player listener, {result['player']}, {result['clients']} client(s): "
          f"{result['requests']} requests in {result['wall_s']} s = "
          f"{result['decisions_per_s']} decisions/s\n"
          f"  latency ms: p50 {lat['p50']}  p90 {lat['p90']}  p99 {lat['p99']}  "
          f"max {lat['max']}  mean {lat['mean']}\n"
          f"  errors: {result['errors']}  (CPU in this process: {result['cpu_s_in_process']} s)")


if __name__ == "__main__":
    main()
