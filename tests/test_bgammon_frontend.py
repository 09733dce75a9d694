"""The bgammon.org frontend against a STAND-IN server (tests/bgammon_standin.py).

bgammon.org cannot be reached from here and its real server may not be committed, so these
tests run the bot against a stand-in written from the protocol tables and transcripts of
shared/reference/online-servers.md §2. It is a test double of the protocol, not bgammon: the
opponent is a scripted guest (StandInOpponent) that joins the bot's table like a human would.
Real TCP sockets on 127.0.0.1; the games are kept by the rules core with seeded dice.
"""

from __future__ import annotations

import asyncio
import json
import random
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Awaitable, Callable

import pytest

from bgbot.formats.mat import MatchRecord, read_match
from bgbot.frontends.backoff import Backoff
from bgbot.frontends.bgammon import protocol as bp
from bgbot.frontends.bgammon.client import BgammonAccount, BgammonClient
from bgbot.frontends.invitations import InvitationPolicy

from .bgammon_standin import StandInOpponent, StandInServer

BOT = "BOT_alpha"


@dataclass
class Run:
    """What one session against the stand-in left behind."""

    server: StandInServer
    client: BgammonClient
    logs: Path
    events: list[dict[str, Any]] = field(default_factory=list)
    opponents: list[StandInOpponent] = field(default_factory=list)

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [e for e in self.events if e["event"] == kind]

    def sent_by_bot(self) -> list[str]:
        return [line for who, way, line in self.server.transcript if who == BOT and way == "->"]

    def mat(self) -> Path:
        paths = sorted(self.logs.glob("*.mat"))
        assert len(paths) == 1, paths
        return paths[0]


async def _session(tmp: Path, *, seed: int = 4, policy: InvitationPolicy | None = None,
                   opponents: tuple[str, ...] = ("bravo",), double: bool = True, answer: str = "drop",
                   until: Callable[[Run], bool] | None = None,
                   during: Callable[[Run], Awaitable[None]] | None = None,
                   server_options: dict[str, Any] | None = None,
                   account_options: dict[str, Any] | None = None, timeout: float = 30.0) -> Run:
    server = StandInServer(seed=seed, **(server_options or {}))
    port = await server.start()
    # The bot plays the frozen linear evaluation: the games these tests count (a resignation, a
    # played-out game, a drop with seed 4) stay the same while the default player is retrained.
    options: dict[str, Any] = dict(user="bot_alpha", host="127.0.0.1", port=port,
                                   agent="heuristic:eval=linear",
                                   match_length=5, logs_dir=tmp / "logs", settle_seconds=0.1,
                                   recreate_delay=0.1, greeting="Hello {opponent}, good luck!",
                                   farewell="Thanks for the match, {opponent}.",
                                   policy=policy or InvitationPolicy())
    options.update(account_options or {})
    account = BgammonAccount(**options)
    run = Run(server, BgammonClient(account, backoff=Backoff(0.05, 0.4, rng=random.Random(5))),
              account.logs_dir)
    run.client.on_event = run.events.append
    done = until or (lambda r: bool(r.of("match_end")))
    bot = asyncio.create_task(run.client.run())
    tasks = []
    for i, user in enumerate(opponents):
        opponent = StandInOpponent(port, user, table_of=BOT, seed=seed + 10 + i, double=double, answer=answer)
        run.opponents.append(opponent)
        tasks.append(asyncio.create_task(opponent.run()))
    if during is not None:
        tasks.append(asyncio.create_task(during(run)))
    try:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while not done(run) and not bot.done():
            assert loop.time() < deadline, f"timed out; last events: {run.events[-8:]}"
            await asyncio.sleep(0.02)
    finally:
        await run.client.stop()
        await asyncio.wait_for(bot, 5)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await server.close()
    return run


def session(tmp: Path, **kwargs: Any) -> Run:
    return asyncio.run(_session(tmp, **kwargs))


@pytest.fixture(scope="module")
def full_match(tmp_path_factory: pytest.TempPathFactory) -> Run:
    """One 5-point match: the opponent doubles at its first chance in every game and drops the
    bot's doubles (seed 4 gives three games: a resignation, a played-out game and a drop)."""
    # until the farewell has reached the opponent too: on a loaded machine it can still be on
    # its way when the match_end event arrives
    return session(tmp_path_factory.mktemp("full"), until=lambda r: bool(r.of("match_end")) and any(
        e.player == BOT and e.message.startswith("Thanks")
        for e in run_events(r.opponents[0], bp.Say)))


def test_five_point_match_with_doubles_is_played_to_the_end(full_match: Run) -> None:
    run = full_match
    end = run.of("match_end")[-1]
    assert end["how"] == "finished"
    assert max(end["score"]) >= 5
    assert run.of("double") and run.of("take"), "the cube was never turned"
    games = run.of("game_end")
    assert len(games) >= 2 and all(g["recorded"] for g in games)
    # The bot's commands were all legal: the stand-in (the rules core) refused none of them.
    refused = [line for who, way, line in run.server.transcript
               if who == BOT and way == "<-" and '"Type":"failed' in line]
    assert refused == []
    assert run.client.status()["matches_finished"] == 1


def test_the_mat_file_agrees_with_the_server(full_match: Run) -> None:
    run = full_match
    record = read_match(run.mat().open(encoding="utf-8"))
    assert record.length == 5 and record.names == (BOT, "Guest_bravo")
    starts, ends = run.of("game_start"), run.of("game_end")
    assert len(record.games) == len(ends)
    for game, start, end in zip(record.games, starts, ends):
        assert list(game.score) == start["score"]          # the server's score before each game
        assert game.winner == (0 if end["winner"] == "me" else 1)
        assert game.points == end["points"]
        if end["server_points"] and end["server_points"] != end["points"]:
            assert any(f"bgammon scored {end['server_points']} points" in c for c in record.comments)


def test_every_event_is_a_json_line_and_reaches_the_callback(full_match: Run) -> None:
    run = full_match
    lines = [json.loads(line) for line in (run.logs / "bgammon-bot_alpha.jsonl").read_text().splitlines()]
    assert [r["event"] for r in lines] == [e["event"] for e in run.events]
    assert {"connect", "login", "invitation", "match_start", "game_start", "roll", "move",
            "game_end", "match_end"} <= {r["event"] for r in lines}


def test_greeting_and_farewell_name_the_opponent(full_match: Run) -> None:
    said = [e.message for e in run_events(full_match.opponents[0], bp.Say) if e.player == BOT]
    assert said[0] == "Hello Guest_bravo, good luck!"
    assert said[-1] == "Thanks for the match, Guest_bravo."


def run_events(opponent: StandInOpponent, kind: type) -> list[Any]:
    return [e for e in opponent.events if isinstance(e, kind)]


@pytest.mark.gnubg
def test_gnubg_imports_the_mat_of_a_server_match(full_match: Run, gnubg_binary: str,
                                                  tmp_path: Path) -> None:
    ours = full_match.mat()
    back, prefs = tmp_path / "back.mat", tmp_path / "prefs"
    prefs.mkdir()
    subprocess.run([gnubg_binary, "-t", "-q", "-r", "-s", str(prefs)],
                   input=f"import mat {ours}\nexport match mat {back}\n",
                   capture_output=True, text=True, timeout=60, check=False)
    assert back.exists(), "gnubg did not import the match"
    theirs: MatchRecord = read_match(back.open(encoding="utf-8"))
    mine = read_match(ours.open(encoding="utf-8"))
    assert len(theirs.games) == len(mine.games)
    assert theirs.final_score == mine.final_score
    for a, b in zip(theirs.games, mine.games):
        assert (a.score, a.winner, a.points, len(a.actions)) == (b.score, b.winner, b.points, len(b.actions))


def test_table_declined_by_policy_rule_with_the_reason_logged(tmp_path: Path) -> None:
    run = session(tmp_path, policy=InvitationPolicy(block=("guest_pest",)), opponents=("pest",),
                  until=lambda r: len(r.of("table")) >= 2)
    verdict = run.of("invitation")[0]
    assert verdict["opponent"] == "Guest_pest" and verdict["accept"] is False
    assert verdict["reason"] == "Guest_pest is on the block list."
    logged = (run.logs / "bgammon-bot_alpha.jsonl").read_text()
    assert "Guest_pest is on the block list." in logged
    pest = run.opponents[0]
    assert any("block list" in e.message for e in run_events(pest, bp.Say))
    assert any(e.player == BOT for e in run_events(pest, bp.Left))
    assert run.sent_by_bot().count("leave") == 1 and not run.of("match_start")
    tables = run.of("table")
    assert tables[1]["game_id"] != tables[0]["game_id"]      # and a new table was opened


def test_connection_cut_mid_game_is_resumed_and_the_match_finished(tmp_path: Path) -> None:
    async def cut(run: Run) -> None:
        while len(run.of("move")) < 6:
            await asyncio.sleep(0.01)
        # A half-open link: the server notices only after 0.4 s, so the first re-logins are
        # refused with "That username is already in use." and the bot backs off and retries.
        await run.server.cut(BOT, linger=0.4)

    run = session(tmp_path, during=cut)
    assert run.of("disconnect"), "the cut was not noticed"
    assert any("already in use" in e["message"] for e in run.of("notice"))
    assert run.of("match_resumed") and len(run.of("match_start")) == 1
    assert run.of("match_end")[-1]["how"] == "finished"
    assert run.client.status()["connects"] >= 3
    assert any("Rejoined match" in e["message"] for e in run.of("notice"))
    record = read_match(run.mat().open(encoding="utf-8"))
    assert len(record.games) == len(run.of("game_end"))
    waits = [e["seconds"] for e in run.of("reconnect_wait")]
    assert all(0 < w <= 0.4 for w in waits) and len(waits) >= 2


def test_malformed_event_is_answered_by_asking_for_the_board(tmp_path: Path) -> None:
    bad = ['{"Type":"board","Board":[0,1]', "garbage{", '{"Type":"board","Turn":1}',
           "[" * 1000]  # nested deeper than json's recursion limit

    async def inject(run: Run) -> None:
        while len(run.of("move")) < 4:
            await asyncio.sleep(0.01)
        for line in bad:
            await run.server.inject(BOT, line)
            await asyncio.sleep(0.05)

    run = session(tmp_path, during=inject)
    assert len(run.of("malformed")) == len(bad)
    assert run.of("malformed")[0]["line"] == bad[0]
    sent = run.sent_by_bot()
    assert sent.count("board") >= len(bad)
    assert run.of("match_end")[-1]["how"] == "finished"
    assert run.client.status()["errors"] >= len(bad)


async def _idle(tmp: Path, *, ping_interval: float, keepalive: float) -> Run:
    """An idle bot (no opponent) for 1.5 s on a server that drops clients silent for 0.6 s."""
    server = StandInServer(ping_interval=ping_interval, client_timeout=0.6)
    port = await server.start()
    account = BgammonAccount(user="bot_alpha", host="127.0.0.1", port=port, logs_dir=tmp,
                             keepalive_seconds=keepalive, settle_seconds=0.05)
    run = Run(server, BgammonClient(account, backoff=Backoff(0.05, 0.2)), tmp)
    run.client.on_event = run.events.append
    task = asyncio.create_task(run.client.run())
    await asyncio.sleep(1.5)
    await run.client.stop()
    await task
    await server.close()
    return run


def test_keepalive_keeps_an_idle_bot_connected_past_the_servers_deadline(tmp_path: Path) -> None:
    # bgammon.org drops a client that writes nothing for 40 s and pings only every 30 s; here the
    # deadline is 0.6 s and no ping comes, so only the bot's own keep-alive can save it.
    run = asyncio.run(_idle(tmp_path, ping_interval=30.0, keepalive=0.2))
    assert run.client.status()["connects"] == 1
    assert [e["reason"] for e in run.of("disconnect")] == ["stopped"]
    assert run.sent_by_bot().count("pong bgbot") >= 3


def test_pings_are_answered_with_pong(tmp_path: Path) -> None:
    run = asyncio.run(_idle(tmp_path, ping_interval=0.2, keepalive=30.0))
    assert run.client.status()["connects"] == 1
    pings = [json.loads(line)["Message"] for who, way, line in run.server.transcript
             if who == BOT and way == "<-" and '"Type":"ping"' in line]
    assert len(pings) >= 3 and all(f"pong {m}" in run.sent_by_bot() for m in pings)


def test_wrong_password_stops_the_account_without_logging_the_password(tmp_path: Path) -> None:
    async def attempt() -> Run:
        server = StandInServer(accounts={"bot_alpha": "right-one"})
        port = await server.start()
        account = BgammonAccount(user="bot_alpha", host="127.0.0.1", port=port, logs_dir=tmp_path,
                                 password="wrong one")
        out = Run(server, BgammonClient(account, backoff=Backoff(0.05, 0.2)), tmp_path)
        out.client.on_event = out.events.append
        await asyncio.wait_for(out.client.run(), 5)
        await server.close()
        return out

    run = asyncio.run(attempt())
    assert run.client.status()["state"] == "failed"
    assert "No account was found" in run.client.status()["last_error"]
    assert "loginjson" in run.server.transcript[1][2] and "wrong_one" in run.server.transcript[1][2]
    assert "wrong" not in (tmp_path / "bgammon-bot_alpha.jsonl").read_text()
    assert "wrong" not in json.dumps(run.events) and "wrong" not in json.dumps(run.client.status())


def test_bot_joining_bot_tables_never_sits_at_a_humans_table(tmp_path: Path) -> None:
    # A human may name a table like a bot's; the server refuses the bot ("Bots are not allowed
    # to join player matches"), and the bot opens a table of its own instead. (The real server
    # also forgets to release a lock on that refusal; the stand-in does not model that.)
    async def human_table(run: Run) -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", run.server.port)
        writer.write(b"loginjson human/en carol\ncreate public 5 0 BOT_fake's match\n"
                     b"create public 5 0 carol's table\n")
        await writer.drain()
        await asyncio.sleep(30)

    async def scenario() -> Run:
        server = StandInServer()
        port = await server.start()
        account = BgammonAccount(user="bot_alpha", host="127.0.0.1", port=port, logs_dir=tmp_path,
                                 join_bot_matches=True, settle_seconds=0.3)
        run = Run(server, BgammonClient(account), tmp_path)
        run.client.on_event = run.events.append
        human = asyncio.create_task(human_table(run))
        bot = asyncio.create_task(run.client.run())
        for _ in range(200):
            if run.of("table"):
                break
            await asyncio.sleep(0.02)
        await run.client.stop()
        await bot
        human.cancel()
        await server.close()
        return run

    run = asyncio.run(scenario())
    assert [e["name"] for e in run.of("join_table")] == ["BOT_fake's match"]
    failed = run.of("failed")[0]
    assert failed["kind"] == "join" and "Bots are not allowed to join player matches" in failed["reason"]
    assert any(line.startswith("create public 5 0") for line in run.sent_by_bot())
    assert run.of("table"), "the bot did not open its own table"


def test_cli_plays_as_a_bot_account_until_sigterm(tmp_path: Path) -> None:
    import signal
    import sys
    import time

    async def scenario() -> tuple[int, str, StandInServer]:
        server = StandInServer()
        port = await server.start()
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "bgbot.cli", "bgammon", "--host", "127.0.0.1", "--port", str(port),
            "--user", "bot_cli", "--length", "3", "--log-dir", str(tmp_path),
            stderr=asyncio.subprocess.PIPE, env={"BGBOT_BGAMMON_PASSWORD": "", "PATH": ""},
            cwd=Path(__file__).resolve().parents[1])
        deadline = time.monotonic() + 20
        while not any(line.startswith("create public 3 0") for who, way, line in server.transcript
                      if who == "BOT_cli" and way == "->"):
            assert time.monotonic() < deadline, server.transcript
            await asyncio.sleep(0.05)
        proc.send_signal(signal.SIGTERM)
        assert proc.stderr is not None
        err = (await asyncio.wait_for(proc.stderr.read(), 10)).decode()
        code = await proc.wait()
        await server.close()
        return code, err, server

    code, err, server = asyncio.run(scenario())
    assert code == 0, err
    assert "bgbot bgammon: bgammon-bot_cli on 127.0.0.1" in err and "guest login" in err
    assert f"bgbot bgammon: bgammon-bot_cli: connected to 127.0.0.1:" in err
    assert "bgbot bgammon: bgammon-bot_cli: logged in as BOT_cli" in err
    assert (tmp_path / "bgammon-bot_cli.jsonl").exists()


def test_cli_help_has_examples_and_rejects_a_non_bot_name(capsys: pytest.CaptureFixture[str]) -> None:
    from bgbot import cli

    with pytest.raises(SystemExit) as info:
        cli.main(["bgammon", "--help"])
    assert info.value.code == 0
    out = capsys.readouterr().out
    assert "examples:" in out and "bgbot bgammon --user bot_mybot" in out
    assert cli.main(["bgammon", "--user", "alpha"]) == 2
    assert "bot_NAME" in capsys.readouterr().err


def test_a_refused_move_is_replaced_by_another_legal_play(tmp_path: Path) -> None:
    # The server refuses a play the rules core calls legal (their rules disagree): the bot asks
    # for the board and sends a different legal play instead of repeating the refused one.
    async def refuse(run: Run) -> None:
        while len([e for e in run.of("decision") if e["action"] == "move"]) < 2:
            await asyncio.sleep(0.005)
        run.server.refuse_next_move(BOT)

    def settled(run: Run) -> bool:
        failed = [i for i, e in enumerate(run.events) if e["event"] == "failed" and e["kind"] == "move"]
        return bool(failed) and any(e["event"] == "move" and e["by"] == "me" for e in run.events[failed[0]:])

    run = session(tmp_path, during=refuse, until=settled)
    moves = [e for e in run.of("decision") if e["action"] == "move"]
    index = next(i for i, e in enumerate(run.events) if e["event"] == "failed")
    refused = [e for e in run.events[:index] if e["event"] == "decision"][-1]
    retried = next(e for e in run.events[index:] if e["event"] == "decision")
    assert retried["position_id"] == refused["position_id"] and retried["dice"] == refused["dice"]
    assert retried["play"] != refused["play"]
    assert "board" in run.sent_by_bot() and len(moves) >= 3


def test_a_restarted_bot_is_put_back_into_its_match_and_finishes_it(tmp_path: Path) -> None:
    # A daemon restart: a fresh client with no memory of the match logs in under the same name;
    # the server seats it again, the policy accepts the resumed match, and the game under way
    # (whose start it never saw) is left out of the .mat while the later games are written.
    async def scenario() -> tuple[list[dict[str, Any]], list[dict[str, Any]], StandInServer]:
        server = StandInServer(seed=4)
        port = await server.start()
        account = BgammonAccount(user="bot_alpha", host="127.0.0.1", port=port, logs_dir=tmp_path,
                                 settle_seconds=0.1, agent="heuristic:eval=linear")
        opponent = StandInOpponent(port, "bravo", table_of=BOT, seed=14, double=True, answer="drop")
        first, before = BgammonClient(account), []
        first.on_event = before.append
        tasks = [asyncio.create_task(first.run()), asyncio.create_task(opponent.run())]
        while len([e for e in before if e["event"] == "move"]) < 6:
            await asyncio.sleep(0.01)
        await first.stop()
        await tasks[0]
        second, after = BgammonClient(account, backoff=Backoff(0.05, 0.2)), []
        second.on_event = after.append
        tasks.append(asyncio.create_task(second.run()))
        for _ in range(1500):
            if any(e["event"] == "match_end" for e in after):
                break
            await asyncio.sleep(0.02)
        await second.stop()
        for task in tasks[1:]:
            task.cancel()
        await asyncio.gather(*tasks[1:], return_exceptions=True)
        await server.close()
        return before, after, server

    before, after, _ = asyncio.run(scenario())
    kinds = [e["event"] for e in after]
    start = after[kinds.index("match_start")]
    assert start["resumed"] is True and start["opponent"] == "Guest_bravo"
    assert any("Rejoined match" in e.get("message", "") for e in after)
    ends = [e for e in after if e["event"] == "game_end"]
    assert ends[0]["recorded"] is False and all(e["recorded"] for e in ends[1:])
    assert after[kinds.index("match_end")]["how"] == "finished"
    mats = sorted(tmp_path.glob("*.mat"))
    record = read_match(mats[-1].open(encoding="utf-8"))
    assert len(record.games) == len(ends) - 1
