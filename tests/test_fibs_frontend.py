"""The FIBS frontend over real TCP sockets on 127.0.0.1 -- against a STAND-IN server.

FIBS itself cannot be reached from the test machines. tests/fibs_standin.py is our own small
server written from the protocol tables and transcripts of reference/online-servers.md §1; it
is not FIBS and may differ from it where the reference is silent. It keeps a real core `Game`
(seeded dice, validated moves), so the true record of every match is known and the `.mat` files
the clients rebuild from the server's messages can be checked against it.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Awaitable, Callable, Sequence

import pytest

from bgbot.agents.base import PlayerAgent
from bgbot.core.game import Doubled, Moved, Taken
from bgbot.core.position import Position
from bgbot.formats.mat import MatchRecord, format_match, parse_match
from bgbot.frontends.fibs.client import FibsAccount, FibsClient
from bgbot.frontends.invitations import InvitationPolicy, PolicyState
from bgbot.util import resolve_secret
from bgbot.players.base import Context, TakeDecision
from bgbot.players.pubeval import PubevalPlayer

from .fibs_standin import Account, Faults, StandinServer

PASSWORD = "s3cret-Pw"


class QuickAgent(PlayerAgent):
    """pubeval chequer play (no bear-off database to build) and a pip-count cube, so matches
    have doubles, takes and drops."""

    def __init__(self) -> None:
        super().__init__(PubevalPlayer())

    async def should_double(self, position: Position, context: Context) -> bool:
        mine, theirs = position.pip_counts()
        return theirs - mine >= 15

    async def take_decision(self, position: Position, context: Context) -> TakeDecision:
        doubler, me = position.pip_counts()
        return TakeDecision.DROP if me - doubler >= 35 else TakeDecision.TAKE

    async def offer_resignation(self, position: Position, context: Context) -> int:
        mine, theirs = position.pip_counts()
        return 1 if position.is_race() and mine - theirs >= 60 else 0

    async def accept_resignation(self, position: Position, context: Context, value: int) -> bool:
        return True


def account(user: str, port: int, tmp: Path, **extra: Any) -> FibsAccount:
    options: dict[str, Any] = dict(host="127.0.0.1", port=port, logs_dir=tmp / user,
                                   state_path=tmp / user / "policy.json", retry_after=0.6,
                                   autoroll_grace=0.2, invite_grace=0.15, flush_after=0.2,
                                   backoff_base=0.05, backoff_cap=0.2, keepalive=60)
    options.update(extra)
    return FibsAccount(user, PASSWORD, **options)


@dataclass
class Run:
    server: StandinServer
    clients: dict[str, FibsClient]
    events: dict[str, list[dict[str, Any]]]
    logs: list[str] = field(default_factory=list)

    def of(self, user: str, kind: str) -> list[dict[str, Any]]:
        return [e for e in self.events[user] if e["event"] == kind]


class _Collect(logging.Handler):
    def __init__(self, out: list[str]) -> None:
        super().__init__(logging.DEBUG)
        self.out = out

    def emit(self, record: logging.LogRecord) -> None:
        self.out.append(record.getMessage())


async def play(server: StandinServer, accounts: Sequence[FibsAccount],
               until: Callable[[Run], bool], timeout: float = 40.0,
               during: Callable[[Run], Awaitable[None]] | None = None) -> Run:
    """Run clients for ``accounts`` against ``server`` until ``until(run)`` (or time out)."""
    await server.start()
    accounts = [a if a.port else _with_port(a, server.port) for a in accounts]
    events: dict[str, list[dict[str, Any]]] = {a.user: [] for a in accounts}
    clients = {a.user: FibsClient(a, agent=QuickAgent(), on_event=events[a.user].append)
               for a in accounts}
    run = Run(server, clients, events)
    handler = _Collect(run.logs)
    logger = logging.getLogger("bgbot")
    old_level = logger.level
    logger.setLevel(logging.DEBUG)
    logger.addHandler(handler)
    tasks = [asyncio.create_task(c.run()) for c in clients.values()]
    try:
        if during is not None:
            await during(run)
        deadline = time.monotonic() + timeout
        while not until(run):
            assert time.monotonic() < deadline, "timed out; last lines: " + "\n".join(
                f"{w} {d} {t}" for w, d, t in server.transcript[-30:])
            for task in tasks:
                if task.done():
                    task.result()
            await asyncio.sleep(0.05)
        await asyncio.sleep(0.3)  # let farewells and the last events through
    finally:
        for client in clients.values():
            await client.stop()
        await asyncio.wait_for(asyncio.gather(*tasks, return_exceptions=True), 10)
        await server.close()
        logger.removeHandler(handler)
        logger.setLevel(old_level)
    return run


async def bounded(step: Awaitable[Any], what: str, seconds: float = 15.0) -> Any:
    """``await step``, failing with its name instead of hanging the run."""
    try:
        return await asyncio.wait_for(step, seconds)
    except asyncio.TimeoutError:
        raise AssertionError(f"{what} did not finish within {seconds:g} s") from None


def _with_port(a: FibsAccount, port: int) -> FibsAccount:
    from dataclasses import replace
    return replace(a, port=port)


def match_over(run: Run) -> bool:
    return bool(run.server.finished) and all(run.of(u, "match_end") for u in run.clients)


def mat_of(run: Run, user: str) -> MatchRecord:
    paths = [e["mat"] for e in run.of(user, "match_end")]
    assert paths and paths[-1], f"{user} wrote no .mat"
    return parse_match(Path(paths[-1]).read_text())


def story(record: MatchRecord) -> list[list[tuple[Any, ...]]]:
    """Each game as (who, what, dice, play) seen by name, so both seat orders compare; read back
    through the .mat format (which holds no separate roll records)."""
    record = parse_match(format_match(record))
    games = []
    for game in record.games:
        steps: list[tuple[Any, ...]] = []
        for action in game.actions:
            seat = getattr(action, "seat", None)
            who = record.names[seat] if seat is not None else None
            if isinstance(action, Moved):
                steps.append((who, "move", tuple(sorted(action.dice)), tuple(sorted(action.play))))
            elif seat is not None:
                steps.append((who, type(action).__name__, getattr(action, "cube", None)))
        assert game.outcome is not None
        steps.append((record.names[game.outcome.winner], game.outcome.points, game.outcome.ending))
        games.append(steps)
    return games


# ====================================================================== a whole match


@pytest.fixture(scope="module")
def five_point(tmp_path_factory: pytest.TempPathFactory) -> Run:
    """alpha invites bravo to 5 points; both are bgbot. The server glues lines to boards, leaves
    the invitation's second line unterminated, loses one `roll` and corrupts one board."""
    tmp = tmp_path_factory.mktemp("five")
    server = StandinServer(seed=14, faults=Faults(glue_after_board=True, lose_roll=4,
                                                  malformed_board=25))
    accounts = [
        account("alpha", 0, tmp, invite=(("bravo", 5),), greeting="Hello {opponent}, good luck!",
                farewell="Thanks for the game, {opponent}."),
        account("bravo", 0, tmp),
    ]
    return asyncio.run(play(server, accounts, match_over))


def test_full_five_point_match_with_doubles_is_played_to_the_end(five_point: Run) -> None:
    truth = five_point.server.finished[0]
    assert truth.match.is_over and max(truth.match.score) >= 5
    actions = [a for g in truth.record.games for a in g.actions]
    assert any(isinstance(a, Doubled) for a in actions) and any(isinstance(a, Taken) for a in actions)
    games = truth.record.games
    assert {g.outcome.ending for g in games if g.outcome} == {"drop", "normal", "resign"}
    assert any(g.crawford for g in games) and games[-1].post_crawford
    for user in ("alpha", "bravo"):
        end = five_point.of(user, "match_end")[-1]
        assert end["games_lost"] == 0 and end["games_recorded"] == len(truth.record.games)


def test_mat_files_rebuilt_from_server_messages_match_the_servers_record(five_point: Run) -> None:
    truth = five_point.server.finished[0].record
    for user in ("alpha", "bravo"):
        ours = mat_of(five_point, user)
        assert ours.names[0] == user and ours.length == 5
        assert story(ours) == story(truth)
        by_name = dict(zip(ours.names, ours.final_score))
        assert by_name == dict(zip(truth.names, truth.final_score))


def test_settings_login_greeting_and_farewell_follow_the_reference(five_point: Run) -> None:
    sent = five_point.server.sent_by("bravo")
    assert sent[0] == "login bgbot 1008 bravo"  # the stand-in hides the password it received
    assert sent[1] == "set boardstyle 3"
    # A new account has ready, moreboards off and report on: only those are flipped.
    assert sorted(c for c in sent if c.startswith("toggle")) == [
        "toggle moreboards", "toggle ready", "toggle report"]
    alpha = five_point.server.sent_by("alpha")
    assert "invite bravo 5" in alpha and "join alpha" in sent
    assert "tell bravo Hello bravo, good luck!" in alpha
    assert alpha.index("tell bravo Thanks for the game, bravo.") > alpha.index("tell bravo Hello "
                                                                               "bravo, good luck!")


def test_lost_roll_is_retried_after_silence(five_point: Run) -> None:
    server = five_point.server
    sent = [(w, t) for w, d, t in server.transcript if d == "->"]
    rolls = [i for i, (w, t) in enumerate(sent) if t == "roll"]
    lost = rolls[3]  # the 4th roll command is the one the server ignored
    who = sent[lost][0]
    after = [t for w, t in sent[lost + 1:] if w == who]
    assert after[:2] == ["board", "roll"]


def test_malformed_board_is_answered_with_a_board_request(five_point: Run) -> None:
    server = five_point.server
    bad = [e for u in ("alpha", "bravo") for e in five_point.of(u, "malformed_board")]
    assert len(bad) == 1
    who = "alpha" if five_point.of("alpha", "malformed_board") else "bravo"
    index = next(i for i, (w, d, t) in enumerate(server.transcript)
                 if w == who and d == "<-" and t.startswith("board:") and t.count(":") < 50)
    reply = next(t for w, d, t in server.transcript[index:] if w == who and d == "->")
    assert reply == "board"


def test_events_go_to_the_listener_and_the_jsonl_log_without_the_password(five_point: Run) -> None:
    kinds = {e["event"] for e in five_point.events["alpha"]}
    assert {"connect", "login", "match_start", "game_start", "roll", "move", "double",
            "game_end", "match_end"} <= kinds
    log_file = Path(five_point.clients["alpha"].account.logs_dir or ".") / "alpha-events.jsonl"
    records = [json.loads(line) for line in log_file.read_text().splitlines()]
    assert [r["event"] for r in records] == [e["event"] for e in five_point.events["alpha"]]
    assert any("login bgbot 1008 alpha ********" in m for m in five_point.logs)
    for text in [*five_point.logs, log_file.read_text(), repr(five_point.clients["alpha"].account),
                 json.dumps(five_point.clients["alpha"].status())]:
        assert PASSWORD not in text


def test_finished_match_is_remembered_for_the_cooldown(five_point: Run) -> None:
    path = five_point.clients["bravo"].account.state_path
    assert path is not None and PolicyState(path).last_match_end("alpha") is not None
    assert five_point.clients["bravo"].status()["matches_finished"] == 1


@pytest.mark.gnubg
def test_mat_of_a_server_match_imports_into_gnubg(five_point: Run, gnubg_binary: str,
                                                  tmp_path: Path) -> None:
    from .test_mat import gnubg_round_trip, moves_unordered

    path = Path(five_point.of("alpha", "match_end")[-1]["mat"])
    text = path.read_text()
    back = gnubg_round_trip(gnubg_binary, text, tmp_path)
    assert moves_unordered(back) == moves_unordered(text)
    assert parse_match(back).final_score == parse_match(text).final_score


# ====================================================================== a dropped connection


@pytest.mark.parametrize("cut", [Faults(drop_user="bravo", drop_after_moves=7),
                                 Faults(drop_user="alpha", drop_on_double=1)],
                         ids=["after-a-move", "with-a-double-pending"])
def test_connection_cut_mid_game_reconnects_and_resumes_the_match(tmp_path: Path,
                                                                  cut: Faults) -> None:
    server = StandinServer(seed=5, faults=cut)
    accounts = [account("alpha", 0, tmp_path, invite=(("bravo", 3),)),
                account("bravo", 0, tmp_path)]
    run = asyncio.run(play(server, accounts, match_over))
    dropped = cut.drop_user
    assert run.clients[dropped].status()["connects"] == 2
    assert run.of(dropped, "disconnect") and run.of(dropped, "match_resumed")
    assert any("Your running match was loaded." in t for w, d, t in server.transcript if d == "<-")
    # The resume came from an invitation without a length, as FIBS resumes saved matches.
    sent = server.sent_by("alpha") + server.sent_by("bravo")
    assert "invite bravo" in sent or "invite alpha" in sent
    if cut.drop_on_double:
        # The double was pending when the line went: the doubled side answers it after the resume.
        loaded = next(i for i, (w, d, t) in enumerate(server.transcript)
                      if "Your running match was loaded." in t)
        answers = [t for w, d, t in server.transcript[loaded:] if w == "bravo" and d == "->"
                   and t in ("accept", "reject")]
        assert answers, "the pending double was never answered"
    # Settings persist on the server: the second login flips nothing again.
    assert len([c for c in server.sent_by(dropped) if c.startswith("toggle")]) == 3
    truth = server.finished[0].record
    for user in ("alpha", "bravo"):
        assert story(mat_of(run, user)) == story(truth)


# ====================================================================== the invitation policy


class RawClient:
    """A bare CLIP client (a person at a terminal) for the invitation tests."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer

    @classmethod
    async def login(cls, port: int, name: str) -> RawClient:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        client = cls(reader, writer)
        await reader.readuntil(b"login: ")
        client.send(f"login rawtest 1008 {name} pw")
        await client.expect(r"^6$")
        client.send("toggle ready")
        return client

    def send(self, line: str) -> None:
        self.writer.write(line.encode() + b"\r\n")

    async def expect(self, pattern: str, timeout: float = 5.0) -> str:
        async def find() -> str:
            while True:
                line = (await self.reader.readline()).decode().strip()
                if re.search(pattern, line):
                    return line
        return await asyncio.wait_for(find(), timeout)


def test_invitations_are_declined_by_each_policy_rule_with_the_reason_logged(
        tmp_path: Path) -> None:
    policy = InvitationPolicy(max_length=7, allow_unlimited=False, min_rating=1400,
                              max_rating=2000, min_experience=10, allow_bots=False,
                              block=("troll",), cooldown_seconds=3600,
                              allow=("alice", "lowrated", "shark", "newbie", "hal", "friend",
                                     "pal", "troll"))
    state_path = tmp_path / "bot" / "policy.json"
    PolicyState(state_path).record_match_end("friend", time.time() - 60)  # before a restart
    accounts = [Account("alice", "pw", 1500, 50), Account("lowrated", "pw", 1200, 50),
                Account("shark", "pw", 2100, 50), Account("newbie", "pw", 1500, 5),
                Account("hal", "pw", 1500, 50, client="ParlorBot"), Account("friend", "pw", 1500, 50),
                Account("pal", "pw", 1500, 50), Account("troll", "pw", 1500, 50),
                Account("stranger", "pw", 1500, 50)]
    server = StandinServer(seed=2, accounts=accounts)
    cases = [("alice", "9", "9-point match"), ("alice", "unlimited", "unlimited"),
             ("lowrated", "3", "below the minimum 1400"), ("shark", "3", "above the maximum 2000"),
             ("newbie", "3", "experience 5 is below"), ("hal", "3", "bot"),
             ("troll", "3", "block list"), ("stranger", "3", "allow list"),
             ("friend", "3", "cool-down")]

    async def invite_all(run: Run) -> None:
        await asyncio.sleep(0.1)
        deadline = time.monotonic() + 5
        while not run.clients["bot"].status()["state"] == "idle":
            assert time.monotonic() < deadline
            await asyncio.sleep(0.05)
        for name, length, _ in cases:
            raw = await RawClient.login(run.server.port, name)
            raw.send(f"invite bot {length}")
            await raw.expect("You invited bot")
            seen = len(run.of("bot", "invitation"))
            while len(run.of("bot", "invitation")) == seen:
                await asyncio.sleep(0.02)
        # Two invitations at once: the first is taken, the second meets "one match at a time".
        pal, alice = await RawClient.login(run.server.port, "pal"), \
            await RawClient.login(run.server.port, "alice")
        pal.send("invite bot 1")
        await pal.expect("You invited bot")
        alice.send("invite bot 3")
        await alice.expect("You invited bot")
        await pal.expect("has joined you")
        pal.send("leave")

    run = asyncio.run(play(server, [account("bot", 0, tmp_path, policy=policy,
                                            state_path=state_path)],
                           until=lambda r: len(r.of("bot", "invitation")) >= len(cases) + 2,
                           during=invite_all))
    verdicts = run.of("bot", "invitation")
    for (name, _, words), event in zip(cases, verdicts):
        assert event["opponent"] == name and not event["accept"], event
        assert words in event["reason"], event
        assert any(m.startswith(f"bot: declining {name}: ") and event["reason"] in m
                   for m in run.logs)
    pal_verdict, alice_verdict = verdicts[len(cases):]
    assert pal_verdict["opponent"] == "pal" and pal_verdict["accept"]
    assert alice_verdict["opponent"] == "alice" and not alice_verdict["accept"]
    assert "one match at a time" in alice_verdict["reason"]
    assert not any(c.startswith("join") and "pal" not in c for c in server.sent_by("bot"))


# ====================================================================== small parts


def test_keepalive_is_sent_inside_the_idle_timeout(tmp_path: Path) -> None:
    server = StandinServer(seed=1)
    run = asyncio.run(play(server, [account("idler", 0, tmp_path, keepalive=0.3)],
                           until=lambda r: "show saved" in r.server.sent_by("idler"), timeout=5))
    assert "show saved" in run.server.sent_by("idler")


def test_wrong_password_backs_off_and_retries(tmp_path: Path) -> None:
    server = StandinServer(seed=1, accounts=[Account("locked", "other")])
    run = asyncio.run(play(server, [account("locked", 0, tmp_path)],
                           until=lambda r: len(r.of("locked", "login_failed")) >= 2, timeout=5))
    assert not run.of("locked", "login")
    assert run.clients["locked"].status()["connects"] >= 2


def test_password_comes_from_environment_config_or_systemd_credential(tmp_path: Path) -> None:
    """The order every server kind shares (bgbot.util.resolve_secret); before it was one, FIBS
    put the configured password ahead of the environment."""
    def resolve_password(configured: str | None, environ: dict[str, str]) -> str | None:
        return resolve_secret("fibs", "me", value=configured, environ=environ)[0]

    (tmp_path / "fibs-password").write_text("fromcred\n")
    assert resolve_password("fromconfig", environ={"BGBOT_FIBS_PASSWORD": "x"}) == "x"
    assert resolve_password("fromconfig", environ={}) == "fromconfig"
    assert resolve_password(None, environ={"BGBOT_FIBS_PASSWORD": "fromenv"}) == "fromenv"
    assert resolve_password(None, environ={"CREDENTIALS_DIRECTORY": str(tmp_path)}) == "fromcred"
    assert resolve_password(None, environ={}) is None
    assert "hunter2" not in repr(FibsAccount("me", "hunter2"))


def test_config_accounts_map_onto_fibs_accounts_with_named_errors(tmp_path: Path) -> None:
    """[[fibs.accounts]] tables of bgbot.toml (the daemon's schema) -> FibsAccount."""
    from bgbot.daemon.config import ConfigError, parse_config
    from bgbot.frontends.kinds import account_for
    from bgbot.util import SecretError

    def fibs_account(entry: Any, **places: Any) -> FibsAccount:
        account = account_for("fibs", entry, **places)
        assert isinstance(account, FibsAccount)
        return account

    secret = tmp_path / "pw"
    secret.write_text("frompasswordfile\n")
    config = parse_config(
        f'[[fibs.accounts]]\nuser = "MyBot"\nport = 4321\npassword_file = "{secret}"\n'
        'invite = ["friend:5", "pal:unlimited", "buddy"]\nmatch_length = 3\n'
        'max_length = 7\nblock = ["troll"]\ncooldown = 600.0\n', environ={})
    entry = config.accounts("fibs")[0]
    parsed = fibs_account(entry, logs_dir=tmp_path, state_path=None, environ={})
    assert parsed.password == "frompasswordfile"
    assert parsed.invite == (("friend", 5), ("pal", None), ("buddy", 3))
    assert parsed.policy == InvitationPolicy(max_length=7, block=("troll",), cooldown_seconds=600)
    with pytest.raises(ConfigError, match=r"fibs.accounts\[0\].max_lenght"):
        parse_config('[[fibs.accounts]]\nuser = "MyBot"\nmax_lenght = 7\n', environ={})
    bare = parse_config('[[fibs.accounts]]\nuser = "MyBot"\n', environ={}).accounts("fibs")[0]
    with pytest.raises(SecretError, match="BGBOT_FIBS_PASSWORD"):
        fibs_account(bare, logs_dir=None, state_path=None, environ={})
    assert fibs_account(bare, logs_dir=None, state_path=None,
                        environ={"BGBOT_FIBS_PASSWORD": "x"}).password == "x"


def test_cli_logs_in_and_stops_cleanly_on_sigterm(tmp_path: Path) -> None:
    import os
    import signal
    import socket
    import subprocess
    import sys

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    root = Path(__file__).resolve().parents[1]
    env = {**os.environ, "BGBOT_FIBS_PASSWORD": PASSWORD, "PYTHONPATH": str(root)}
    server = subprocess.Popen([sys.executable, str(root / "tests" / "fibs_standin.py"), "--port",
                               str(port)], stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert server.stdout is not None and "listening" in server.stdout.readline()
        bot = subprocess.Popen([sys.executable, "-m", "bgbot.cli", "fibs", "--host", "127.0.0.1",
                                "--port", str(port), "--user", "clibot", "--agent", "pubeval",
                                "--logs", str(tmp_path), "--state", str(tmp_path / "s.json"),
                                "-vv"], stderr=subprocess.PIPE, text=True, env=env)

        async def who() -> str:
            raw = await RawClient.login(port, "watcher")
            deadline = time.monotonic() + 10
            while True:
                raw.send("rawwho clibot")
                try:
                    line = await raw.expect(r"^5 clibot ", timeout=0.5)
                    if line.split()[4] == "1":  # ready: the bot toggled it on
                        return line
                except asyncio.TimeoutError:
                    pass
                assert time.monotonic() < deadline

        asyncio.run(who())
        bot.send_signal(signal.SIGTERM)
        _, errors = bot.communicate(timeout=10)
        assert bot.returncode == 0, errors
        assert "login bgbot 1008 clibot ********" in errors and PASSWORD not in errors
    finally:
        server.terminate()
        server.wait(timeout=5)


def test_a_restarted_bot_resumes_the_saved_match_when_invited_back(tmp_path: Path) -> None:
    """bravo's connection is cut and its process "restarts" (a new FibsClient, nothing in
    memory): alpha invites it back, the saved match is resumed and finished; the interrupted
    game is left out of the new .mat, which says so."""
    server = StandinServer(seed=5, faults=Faults(drop_user="bravo", drop_after_moves=7))

    async def scenario() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        await server.start()
        alpha_events: list[dict[str, Any]] = []
        first: list[dict[str, Any]] = []
        second: list[dict[str, Any]] = []
        alpha = FibsClient(account("alpha", server.port, tmp_path, invite=(("bravo", 3),)),
                           agent=QuickAgent(), on_event=alpha_events.append)
        slow = account("bravo", server.port, tmp_path, backoff_base=30, backoff_cap=30)
        bravo = FibsClient(slow, agent=QuickAgent(), on_event=first.append)
        clients = [alpha, bravo]
        tasks = [asyncio.create_task(alpha.run()), asyncio.create_task(bravo.run())]
        try:
            deadline = time.monotonic() + 20
            while not any(e["event"] == "disconnect" for e in first):
                assert time.monotonic() < deadline
                await asyncio.sleep(0.05)
            await bounded(bravo.stop(), "bravo.stop()")
            await bounded(tasks[1], "bravo.run() after stop()")
            fresh = FibsClient(account("bravo", server.port, tmp_path), agent=QuickAgent(),
                               on_event=second.append)
            clients.append(fresh)
            tasks[1] = asyncio.create_task(fresh.run())
            while not (server.finished and any(e["event"] == "match_end" for e in second)):
                assert time.monotonic() < deadline, server.transcript[-20:]
                await asyncio.sleep(0.05)
        finally:
            # stop every client: a bare cancel can be lost in Python 3.11's asyncio.wait_for
            # (gh-86296) when it meets a queue item, and the client would play on
            for client in clients:
                await bounded(client.stop(), "stop()")
            for client_task in tasks:
                if not client_task.done():
                    client_task.cancel()
            await bounded(asyncio.gather(*tasks, return_exceptions=True), "the clients' ends")
            await bounded(server.close(), "server.close()")
        return alpha_events, second

    alpha_events, second = asyncio.run(scenario())
    invitation = next(e for e in second if e["event"] == "invitation")
    assert invitation["resume"] and invitation["accept"] and "Resuming" in invitation["reason"]
    assert any(e["event"] == "match_resumed" and not e["mirror"] for e in second)
    end = next(e for e in second if e["event"] == "match_end")
    assert end["games_lost"] == 1 and end["mat"].endswith("-resumed.mat")
    truth = story(server.finished[0].record)
    assert end["games_recorded"] == len(truth) - 1 >= 1
    resumed = parse_match(Path(end["mat"]).read_text())
    assert story(resumed) == truth[1:]
    alpha_end = next(e for e in alpha_events if e["event"] == "match_end")
    assert alpha_end["games_lost"] == 0


# ====================================================================== longer than bgbot plays


@pytest.mark.parametrize("length", [65, 99])
def test_a_match_longer_than_64_points_is_left_and_the_client_plays_on(tmp_path: Path,
                                                                       length: int) -> None:
    """Issue 30 item 5: the heuristic player's match equity table ends at 64 points (gnubg's
    limit); a board line of a longer match (FIBS has 99-point matches, and a saved one can be
    resumed whatever the invitation policy says) used to crash `FibsClient.run()`."""
    from bgbot.deciders import create_agent

    server = StandinServer(seed=2)  # the bot moves first: its decisions need the table
    events: list[dict[str, Any]] = []

    async def scenario() -> bool:
        await server.start()
        policy = InvitationPolicy(max_length=99)  # a resumed match would come in anyway
        bot = FibsClient(account("bot", server.port, tmp_path, policy=policy),
                         agent=create_agent("heuristic"), on_event=events.append)
        task = asyncio.create_task(bot.run())
        try:
            deadline = time.monotonic() + 20
            while bot.status()["state"] != "idle":
                assert time.monotonic() < deadline and not task.done()
                await asyncio.sleep(0.05)
            person = await RawClient.login(server.port, "carol")
            person.send(f"invite bot {length}")
            await person.expect("has joined you")
            while not any(e["event"] == "match_too_long" for e in events):
                assert time.monotonic() < deadline, server.transcript[-20:]
                if task.done():
                    task.result()  # the crash, if there was one
                await asyncio.sleep(0.05)
            await person.expect("terminated|left|saved", timeout=5)
            person.send("invite bot")  # resume the saved match: declined, still no crash
            while not any(e["event"] == "invitation" for e in events):
                assert time.monotonic() < deadline and not task.done()
                await asyncio.sleep(0.05)
            await asyncio.sleep(0.5)
            return not task.done()
        finally:
            await bounded(bot.stop(), "bot.stop()")
            await bounded(asyncio.gather(task, return_exceptions=True), "bot.run()")
            await bounded(server.close(), "server.close()")

    assert asyncio.run(scenario()), "the client stopped"
    left = next(e for e in events if e["event"] == "match_too_long")
    assert left["length"] == length and "64" in left["reason"]
    assert "leave" in server.sent_by("bot")
    assert not any(e["event"] == "fatal" for e in events)
    resume = [e for e in events if e["event"] == "invitation"]
    assert resume and resume[-1]["resume"] and not resume[-1]["accept"]


def test_a_server_that_never_ends_a_line_costs_the_client_neither_memory_nor_time(
        tmp_path: Path) -> None:
    """Issue 30 item 9: 32 MiB without a line end, then a login prompt, over a real socket. A
    bare asyncio server stands in for a hostile one (nothing else can be reached from here)."""
    received: list[bytes] = []

    async def hostile(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        block = b"x" * (1 << 20)
        for _ in range(32):
            writer.write(block)
            await writer.drain()
        writer.write(b"\r\nlogin: ")
        await writer.drain()
        received.append(await asyncio.wait_for(reader.readline(), 30))
        writer.close()

    async def scenario() -> float:
        server = await asyncio.start_server(hostile, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        bot = FibsClient(account("bot", port, tmp_path, backoff_base=30, backoff_cap=30),
                         agent=QuickAgent(), on_event=lambda event: None)
        task = asyncio.create_task(bot.run())
        started = time.monotonic()
        try:
            while not received:
                assert time.monotonic() - started < 20, "no login after the long line"
                assert not task.done()
                await asyncio.sleep(0.05)
            return time.monotonic() - started
        finally:
            await bounded(bot.stop(), "bot.stop()")
            await bounded(asyncio.gather(task, return_exceptions=True), "bot.run()")
            server.close()
            await server.wait_closed()

    asyncio.run(scenario())
    assert received[0].startswith(b"login ") and b" bot " in received[0]
