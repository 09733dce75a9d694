"""GnubgEngine: gnubg's external server mode as an Agent, checked against gnubg's own data.

Most tests run the real gnubg (marked ``gnubg``; skipped when it is not installed). The
reference files under shared/testdata were produced by gnubg independently of this engine, so
agreeing with them checks the board orientation and the score order end to end.
"""

from __future__ import annotations

import asyncio
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Awaitable, Callable, TypeVar

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bgbot.deciders import create_agent
from bgbot.core.context import Context, CubeOwner
from bgbot.core.dice import SeededDice
from bgbot.core.errors import FormatError
from bgbot.core.game import Moved
from bgbot.core.position import Play, Position
from bgbot.core.rules import Rules
from bgbot.engines import gnubg as gnubg_module
from bgbot.engines.gnubg import MAX_LINE, GnubgEngine, _board_line
from bgbot.engines.process import EngineError
from bgbot.formats.fibsboard import Request
from bgbot.players.base import TakeDecision
from bgbot.referee import Referee
from bgbot.referee import events as ev

from .conftest import board

T = TypeVar("T")


def run(make: Callable[[GnubgEngine], Awaitable[T]], **options: Any) -> tuple[T, GnubgEngine]:
    """Run ``make(engine)`` with a fresh engine in a fresh event loop, then close it."""
    engine = GnubgEngine(**options)

    async def main() -> T:
        try:
            return await make(engine)
        finally:
            await engine.close()

    return asyncio.run(main()), engine


MONEY = Context()
# A race without gammon chances (three chequers off each) that the side on roll wins ~93%.
BIG_RACE_LEAD = board({6: 2, 5: 2, 4: 2, 3: 2, 2: 2, 1: 2}, {6: 4, 5: 4, 4: 4})
# The side on roll cannot win and loses a gammon whatever happens (no contact).
CERTAIN_GAMMON = board({13: 3, 14: 3, 15: 3, 16: 2, 17: 2, 18: 2}, {1: 2})
# As above but stuck in the opponent's home board: a certain backgammon.
CERTAIN_BACKGAMMON = board({19: 5, 20: 5, 21: 5}, {1: 2})


# ------------------------------------------------------------------ no gnubg needed


@st.composite
def positions(draw: st.DrawFn) -> Position:
    """Any legal board: each side's chequers on random points, never both on one point."""
    mover = [0] * 25
    for _ in range(15 - draw(st.integers(0, 14))):
        mover[draw(st.integers(0, 24))] += 1
    free = [i for i in range(24) if not mover[23 - i]] + [24]
    opponent = [0] * 25
    for _ in range(15 - draw(st.integers(0, 14))):
        opponent[draw(st.sampled_from(free))] += 1
    return Position(opponent, mover)


@st.composite
def contexts(draw: st.DrawFn) -> Context:
    length = draw(st.sampled_from([0, 1, 3, 7, 25, 64]))
    me = draw(st.integers(0, max(length - 1, 0))) if length else draw(st.integers(0, 9999))
    them = draw(st.integers(0, max(length - 1, 0))) if length else draw(st.integers(0, 9999))
    away = length - 1
    crawford = bool(length) and (me == away) != (them == away) and draw(st.booleans())
    post = bool(length) and away in (me, them) and not crawford
    cube = 1 if crawford else 2 ** draw(st.integers(0, 15))
    owner = CubeOwner.CENTRE if cube == 1 else draw(st.sampled_from(list(CubeOwner)))
    return Context(cube_value=cube, cube_owner=owner, match_length=length, my_score=me,
                   opponent_score=them, crawford=crawford, post_crawford=post,
                   rules=Rules(jacoby=True, crawford=draw(st.booleans())))


@settings(max_examples=150, deadline=None)
@given(positions(), contexts(), st.sampled_from(list(Request)[:3]), st.tuples(
    st.integers(1, 6), st.integers(1, 6)))
def test_every_request_fits_gnubg_line_limit(position: Position, context: Context,
                                             kind: Request, dice: tuple[int, int]) -> None:
    """gnubg 1.07 aborts on lines over 254 characters: even the longest request fits."""
    line = _board_line(position, context, kind, dice if kind is Request.MOVE else None)
    longest = f"evaluation fibsboard {line} plies 4 cubeful resignation 3"
    assert len(longest) <= MAX_LINE
    assert len(line.split(" ")[0].split(":")) == 53  # all 50 integers, never stale ones


def test_the_widest_possible_board_fits() -> None:
    """Stacks of 10+ chequers on negative slots and the largest numbers in every field."""
    wide = Position([10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 5, 0],
                    [0, 11, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4])
    spread = Position([1] * 12 + [0] * 12 + [3], [1] * 12 + [0] * 12 + [3])
    context = Context(cube_value=2**15, cube_owner=CubeOwner.OPPONENT, match_length=64,
                      my_score=62, opponent_score=63, post_crawford=True)
    for position in (wide, spread, wide.swapped(), spread.swapped()):
        for kind in (Request.MOVE, Request.TAKE):
            line = _board_line(position, context, kind, (6, 6) if kind is Request.MOVE else None)
            assert len(f"evaluation fibsboard {line} plies 4 cubeful") <= MAX_LINE


def test_agent_spec_options_are_checked() -> None:
    engine = create_agent("gnubg:plies=1,noise=0.02,seed=5")
    assert isinstance(engine, GnubgEngine)
    assert (engine.plies, engine.noise, engine.seed) == (1, 0.02, 5)
    assert engine.name == "gnubg:plies=1,noise=0.02,seed=5"
    for bad in ("gnubg:plies=-1", "gnubg:plies=9", "gnubg:noise=x", "gnubg:depth=2"):
        with pytest.raises(FormatError):
            create_agent(bad)
    with pytest.raises(FormatError):
        GnubgEngine(plies=-1)  # gnubg 1.07 never answers a negative look-ahead


class _ScriptedServer:
    """Stands in for gnubg: answers each request with the next scripted reply."""

    def __init__(self, replies: list[str]) -> None:
        self.replies = replies
        self.lines: list[str] = []
        self.pid = None

    async def ask(self, line: str, timeout: float) -> str:
        self.lines.append(line)
        return self.replies.pop(0)

    async def close(self) -> None:
        pass


def _scripted(replies: list[str]) -> GnubgEngine:
    engine = GnubgEngine()
    engine.process = _ScriptedServer(replies)  # type: ignore[assignment]
    return engine


def test_unusable_answers_are_replaced_by_safe_legal_ones() -> None:
    position = Position.initial()
    engine = _scripted(["24/18 24/18", "foo", "13/10 13/7", "maybe", "what", "?"])

    async def ask() -> None:
        for _ in range(3):
            play = await engine.choose_play(position, (6, 3), MONEY)
            assert play in position.legal_plays((6, 3))
        assert await engine.should_double(position, MONEY) is False
        assert await engine.take_decision(position, MONEY) is TakeDecision.TAKE
        assert await engine.accept_resignation(position, MONEY, 1) is False

    asyncio.run(ask())
    assert engine.stats.unusable == 5  # two bad plays (one legal answer), three bad words


def test_a_beaver_answer_is_a_take_where_beavers_are_not_allowed() -> None:
    """gnubg 1.07 ignores the per-request `beavers off`, so it may still answer `beaver`."""
    position = Position.initial()
    engine = _scripted(["beaver", "beaver", "beaver", "drop"])

    async def ask() -> list[TakeDecision]:
        return [
            await engine.take_decision(position, Context(rules=Rules(beavers=True))),
            await engine.take_decision(position, Context(rules=Rules(beavers=False))),
            await engine.take_decision(position, Context(match_length=5)),
            await engine.take_decision(position, MONEY),
        ]

    assert asyncio.run(ask()) == [TakeDecision.BEAVER, TakeDecision.TAKE, TakeDecision.TAKE,
                                  TakeDecision.DROP]
    assert engine.stats.unusable == 0


def test_money_requests_always_say_whether_jacoby_applies() -> None:
    """The server's jacobyrule default is on: every money board names the rule in force."""
    engine = _scripted(["roll", "roll", "roll"])

    async def ask() -> None:
        await engine.should_double(Position.initial(), Context(rules=Rules(jacoby=True)))
        await engine.should_double(Position.initial(), MONEY)
        await engine.should_double(Position.initial(), Context(match_length=3,
                                                               rules=Rules(crawford=False)))

    asyncio.run(ask())
    lines = engine.process.lines  # type: ignore[attr-defined]
    assert lines[0].endswith(" jacobyrule on")
    assert lines[1].endswith(" jacobyrule off")
    assert lines[2].endswith(" crawfordrule off")


def test_no_cube_question_without_cube_access() -> None:
    """The server does not check cube access, so the engine must not ask."""
    engine = _scripted([])
    position = Position.initial()

    async def ask() -> list[bool]:
        return [
            await engine.should_double(position, Context(cube_value=2,
                                                         cube_owner=CubeOwner.OPPONENT)),
            await engine.should_double(position, Context(match_length=3, my_score=2,
                                                         crawford=True)),
            await engine.should_double(position, Context(rules=Rules(cube=False))),
        ]

    assert asyncio.run(ask()) == [False, False, False]


# ------------------------------------------------------------------ the real gnubg


def _sample(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Records with a real choice, a few for each kind of position (bar, bear-off, ...)."""
    rng = random.Random(7)
    chosen: dict[str, dict[str, Any]] = {}
    tags = ["bar_enter", "bar_multi", "bearoff", "bearoff_higher_die", "doubles", "partial",
            "higher_die_rule", "lower_die_only", "hit", "race", "wins", "all_home"]
    for tag in tags:
        pool = [r for r in records if tag in r["tags"] and r["n_plays"] > 1]
        for record in rng.sample(pool, min(6, len(pool))):
            chosen[record["position_id"] + str(record["dice"])] = record
    for record in rng.sample([r for r in records if r["n_plays"] > 1], 20):
        chosen[record["position_id"] + str(record["dice"])] = record
    return list(chosen.values())


@pytest.mark.gnubg
def test_gnubg_plays_are_legal_in_both_dice_orders(
    gnubg_binary: str, legal_move_records: list[dict[str, Any]]
) -> None:
    sample = _sample(legal_move_records)

    async def ask(engine: GnubgEngine) -> list[tuple[dict[str, Any], tuple[int, int], Play]]:
        answers = []
        for record in sample:
            position = Position.from_board(record["board"])
            d1, d2 = record["dice"]
            for dice in ((d1, d2), (d2, d1)):
                answers.append((record, dice, await engine.choose_play(position, dice, MONEY)))
        return answers

    answers, engine = run(ask)
    assert len(answers) >= 100
    for record, dice, play in answers:
        after = Position.from_board(record["board"]).apply(play).position_id()
        assert after in record["moves"], (record["position_id"], dice, str(play))
    assert engine.stats.unusable == 0  # every gnubg answer passed the rules check as it was
    assert engine.stats.requests == len(answers)


@pytest.mark.gnubg
def test_zero_ply_evaluations_match_gnubg_reference(
    gnubg_binary: str, equity_records: list[dict[str, Any]]
) -> None:
    """Cubeless money 0-ply, for the side on roll: within 1e-3 of gnubg's own evaluate()."""

    async def ask(engine: GnubgEngine) -> list[tuple[dict[str, Any], Any]]:
        return [(r, await engine.evaluate(Position.from_board(r["board"]), MONEY))
                for r in equity_records]

    keys = ("win", "win_gammon", "win_backgammon", "lose_gammon", "lose_backgammon")
    for record, evaluation in run(ask)[0]:
        for key, value in zip(keys, evaluation.probabilities):
            assert value == pytest.approx(record[key], abs=1e-3), (record["position_id"], key)
        assert evaluation.equity == pytest.approx(record["equity"], abs=1e-3)
        assert evaluation.probabilities.equity() == pytest.approx(record["equity"], abs=1e-3)


@pytest.mark.gnubg
def test_cube_answers_in_clear_positions(gnubg_binary: str) -> None:
    async def ask(engine: GnubgEngine) -> None:
        for context in (MONEY, Context(match_length=7), Context(match_length=5, my_score=1,
                                                                 opponent_score=2)):
            assert await engine.should_double(BIG_RACE_LEAD, context)
            assert await engine.take_decision(BIG_RACE_LEAD, context.swapped()) is TakeDecision.DROP
            assert not await engine.should_double(Position.initial(), context)
            assert (await engine.take_decision(Position.initial(), context.swapped())
                    is TakeDecision.TAKE)

    run(ask)


@pytest.mark.gnubg
def test_scores_reach_gnubg_in_the_right_order(gnubg_binary: str) -> None:
    """A FIBS-ordered line would swap the scores in server mode; ours must not."""

    async def ask(engine: GnubgEngine) -> None:
        ahead = await engine.evaluate(Position.initial(), Context(match_length=5, my_score=3))
        behind = await engine.evaluate(Position.initial(), Context(match_length=5,
                                                                   opponent_score=3))
        assert ahead.match_play and ahead.equity > 0.65 and behind.equity < 0.35
        # Post-Crawford, 5-point match, the doubler far ahead in the race. Leading 4-3, the
        # taker must drop (a take risks the match on a 7% shot); trailing 3-4 a drop loses the
        # match at once, so it takes.
        leading = Context(match_length=5, my_score=4, opponent_score=3, post_crawford=True)
        assert await engine.take_decision(BIG_RACE_LEAD, leading) is TakeDecision.DROP
        assert await engine.take_decision(BIG_RACE_LEAD, leading.swapped()) is TakeDecision.TAKE
        # The post-Crawford trailer doubles at once.
        trailer = Context(match_length=5, my_score=2, opponent_score=4, post_crawford=True)
        assert await engine.should_double(Position.initial(), trailer)

    run(ask)


@pytest.mark.gnubg
def test_resignations_follow_the_jacoby_rule(gnubg_binary: str) -> None:
    """With Jacoby and a centred cube a gammon counts single, so a single resignation is enough."""

    async def ask(engine: GnubgEngine) -> None:
        plain = Context()
        jacoby = Context(rules=Rules(jacoby=True))
        # accept_resignation: the resigner is on roll; the context is the acceptor's.
        assert [await engine.accept_resignation(CERTAIN_GAMMON, plain, v) for v in (1, 2, 3)] == [
            False, True, True]
        assert await engine.accept_resignation(CERTAIN_GAMMON, jacoby, 1)
        assert [await engine.accept_resignation(CERTAIN_BACKGAMMON, plain, v)
                for v in (1, 2, 3)] == [False, False, True]
        assert await engine.offer_resignation(CERTAIN_GAMMON, plain) == 2
        assert await engine.offer_resignation(CERTAIN_GAMMON, jacoby) == 1
        assert await engine.offer_resignation(CERTAIN_BACKGAMMON, plain) == 3
        assert await engine.offer_resignation(Position.initial(), plain) == 0
        assert await engine.offer_resignation(BIG_RACE_LEAD.swapped(), plain) == 0

    run(ask)


@pytest.mark.gnubg
def test_noise_is_deterministic(gnubg_binary: str,
                                legal_move_records: list[dict[str, Any]]) -> None:
    cases = [(Position.from_board(r["board"]), tuple(r["dice"]))
             for r in legal_move_records[:400] if r["n_plays"] > 8][:25]

    async def plays(engine: GnubgEngine) -> list[Play]:
        return [await engine.choose_play(p, d, MONEY) for p, d in cases]

    noisy = run(plays, noise=0.05, seed=1)[0]
    assert run(plays, noise=0.05, seed=2)[0] == noisy  # gnubg's noise is a function of the board
    assert run(plays)[0] != noisy


@pytest.mark.gnubg
def test_referee_hosts_heuristic_against_gnubg(gnubg_binary: str) -> None:
    engine = GnubgEngine(plies=0)
    events: list[ev.Event] = []

    async def main() -> Any:
        try:
            referee = Referee([create_agent("heuristic"), engine], SeededDice(5), length=3,
                              listeners=[events.append])
            return await referee.play()
        finally:
            await engine.close()

    result = asyncio.run(main())
    assert max(result.score) >= 3
    played = [e.action for e in events if isinstance(e, ev.Acted)
              and isinstance(e.action, Moved) and e.action.seat == 1]
    assert played
    for event in played:
        assert event.play in event.before.legal_plays(event.dice) or not event.play
    assert engine.stats.unusable == 0 and engine.stats.restarts == 0


@pytest.mark.gnubg
def test_a_killed_gnubg_is_restarted_and_the_match_goes_on(gnubg_binary: str) -> None:
    engine = GnubgEngine(plies=0)
    killed: list[int] = []
    gnubg_plays = [0]

    def kill_twice(event: ev.Event) -> None:
        """SIGKILL gnubg after gnubg's 2nd and 6th plays, in the middle of the match."""
        if isinstance(event, ev.Acted) and isinstance(event.action, Moved) \
                and event.action.seat == 1:
            gnubg_plays[0] += 1
            if gnubg_plays[0] in (2, 6) and engine.pid is not None:
                killed.append(engine.pid)
                os.kill(engine.pid, signal.SIGKILL)

    async def main() -> Any:
        try:
            referee = Referee([create_agent("pubeval"), engine], SeededDice(8), length=3,
                              listeners=[kill_twice])
            return await referee.play()
        finally:
            await engine.close()

    result = asyncio.run(main())
    assert max(result.score) >= 3
    assert len(killed) == 2 and killed[0] != killed[1]
    assert engine.stats.restarts >= 2 and engine.stats.crashes >= 2


@pytest.mark.gnubg
def test_a_gnubg_killed_in_its_first_start_up_is_started_again(gnubg_binary: str,
                                                                tmp_path: Any) -> None:
    """The real gnubg behind a launcher that SIGKILLs itself on the first start only."""
    marker = tmp_path / "started-once"
    launcher = tmp_path / "gnubg"
    launcher.write_text(f"#!/bin/sh\nif [ ! -e '{marker}' ]; then : > '{marker}'; kill -9 $$; fi\n"
                        f"exec '{gnubg_binary}' \"$@\"\n")
    launcher.chmod(0o755)

    async def main() -> Any:
        engine = GnubgEngine(plies=0, binary=str(launcher))
        try:
            await engine.start()
            return engine.stats.starts, await engine.choose_play(Position.initial(), (3, 1), MONEY)
        finally:
            await engine.close()

    starts, play = asyncio.run(main())
    assert marker.exists() and starts == 2
    assert play in Position.initial().legal_plays((3, 1))


@pytest.mark.gnubg
def test_a_hung_gnubg_times_out_and_is_replaced(gnubg_binary: str) -> None:
    position = Position.initial()

    async def ask(engine: GnubgEngine) -> tuple[Play, int | None, int | None]:
        await engine.start()
        stopped = engine.pid
        assert stopped is not None
        os.kill(stopped, signal.SIGSTOP)
        play = await engine.choose_play(position, (3, 1), MONEY)
        return play, stopped, engine.pid

    (play, stopped, now), engine = run(ask, timeout=1.0)
    assert play in position.legal_plays((3, 1))
    assert now is not None and now != stopped
    assert engine.stats.timeouts == 1 and engine.stats.restarts == 1
    with pytest.raises(ProcessLookupError):
        os.kill(stopped, 0)  # the hung one is gone, not left behind


@pytest.mark.gnubg
def test_one_engine_serves_several_event_loops_and_closing_leaves_no_gnubg(
    gnubg_binary: str,
) -> None:
    engine = GnubgEngine()
    position = Position.initial()
    first = asyncio.run(engine.choose_play(position, (4, 2), MONEY))
    pid = engine.pid
    second = asyncio.run(engine.choose_play(position, (4, 2), MONEY))  # another event loop
    assert first == second and engine.pid == pid and engine.stats.starts == 1
    asyncio.run(engine.close())
    assert engine.pid is None and pid is not None
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


@pytest.mark.gnubg
def test_evaluate_rejects_bad_plies(gnubg_binary: str) -> None:
    async def ask(engine: GnubgEngine) -> None:
        with pytest.raises(FormatError):
            await engine.evaluate(Position.initial(), MONEY, plies=-1)
        cubeful = await engine.evaluate(Position.initial(), MONEY, plies=1, cubeful=True)
        assert cubeful.cubeful and cubeful.plies == 1

    run(ask)


def test_a_missing_gnubg_is_reported(tmp_path: Any) -> None:
    engine = GnubgEngine(binary=str(tmp_path / "no-such-gnubg"))

    async def ask() -> None:
        with pytest.raises(EngineError):
            await engine.choose_play(Position.initial(), (3, 1), MONEY)
        await engine.close()

    asyncio.run(ask())


def test_module_logger_name() -> None:
    assert gnubg_module.log.name == "bgbot.engines.gnubg"


def test_an_engine_left_open_removes_its_directory_when_python_exits(gnubg_binary: str) -> None:
    """A caller that never closes the engine (a crash path, a forgotten ``close``) still leaves
    no private directory behind once the interpreter exits normally."""
    scratch = Path(tempfile.mkdtemp(prefix="eng-", dir="/tmp"))  # short: kept for the socket
    script = (
        "import asyncio\n"
        "from bgbot.core.position import Position\n"
        "from bgbot.engines.gnubg import GnubgEngine\n"
        "engine = GnubgEngine()\n"
        "async def main():\n"
        "    await engine.start()\n"
        "    await engine.evaluate(Position.initial())\n"
        "asyncio.run(main())\n"
        "import os; print(len(os.listdir(os.environ['TMPDIR'])))\n"
    )
    env = {**os.environ, "TMPDIR": str(scratch), "BGBOT_GNUBG": gnubg_binary}
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                          text=True, timeout=120)
    left = sorted(p.name for p in scratch.iterdir())
    shutil.rmtree(scratch)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "1"  # the directory existed while the engine was open
    assert left == []
