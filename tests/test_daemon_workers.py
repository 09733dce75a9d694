"""Worker plumbing: in-process players answered without an event loop, and a decision pool of
real processes answering, timing out and replacing a dead worker."""

from __future__ import annotations

import asyncio
import os
import signal
from typing import Any

import pytest

from bgbot.daemon.protocol import ErrorCode, ProtocolError
from bgbot.core.position import Position
from bgbot.daemon.decisions import AgentCache, answer, answer_now
from bgbot.daemon.workers import DecisionPool, WorkerSettings

from .conftest import board


def test_in_process_players_answer_without_an_event_loop() -> None:
    agents = AgentCache()
    content = {"position": "4HPwATDgc/ABMA", "dice": [6, 5], "candidates": 3}
    assert answer_now("choose_play_request", content, agents,
                      default_agent="heuristic") is None  # not created yet
    slow = asyncio.run(answer("choose_play_request", content, agents, default_agent="heuristic"))
    fast = answer_now("choose_play_request", content, agents, default_agent="heuristic")
    assert fast == slow and fast is not None
    assert fast["play"] in {str(p) for p in Position.initial().legal_plays((6, 5))}
    with pytest.raises(ProtocolError) as info:
        answer_now("cube_decision_request", {"position": "4HPwATDgc/ABMA",
                                             "context": {"crawford": True, "match_length": 5,
                                                         "my_score": 4}},
                   agents, default_agent="heuristic")
    assert info.value.details["field"] == "context"


def test_a_decision_pool_answers_times_out_and_replaces_dead_workers(
        tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BGBOT_AGENT_MODULES", "tests.slow_agent")  # the workers know `slow`

    async def run() -> None:
        pool = DecisionPool(2, WorkerSettings(state_db=str(tmp_path / "unused.db")))
        try:
            await pool.start()
            content = {"position": "4HPwATDgc/ABMA", "dice": [3, 1]}
            replies = await asyncio.gather(*(
                pool.submit("choose_play_request", content, "heuristic", 30) for _ in range(6)))
            assert {r["play"] for r in replies} == {replies[0]["play"]}
            with pytest.raises(ProtocolError) as info:
                await pool.submit("choose_play_request", {"position": "4HPwATDgc/ABMA",
                                                          "dice": [3, 1], "agent": "nosuch"},
                                  "heuristic", 30)
            assert info.value.code is ErrorCode.BAD_VALUE
            victim = pool.workers[0]
            assert victim.pid is not None
            os.kill(victim.pid, signal.SIGKILL)
            for _ in range(200):
                if victim not in pool.workers and len(pool.pids()) == 2:
                    break
                await asyncio.sleep(0.05)
            assert victim not in pool.workers
            reply = await pool.submit("evaluate_request", {"position": "4HPwATDgc/ABMA"},
                                      "heuristic", 30)
            assert 0 < reply["probabilities"]["win"] < 1
            # both workers held for seconds (the test agent `slow` sleeps in every play): a
            # request queued behind them times out, however late this loaded machine lets
            # the loop run -- its deadline is ten times shorter than the work ahead of it
            slow = {"position": "4HPwATDgc/ABMA", "dice": [3, 1], "agent": "slow:seconds=5"}
            busy = [pool.request("choose_play_request", slow, "heuristic", 60) for _ in range(2)]
            with pytest.raises(ProtocolError) as info:
                await pool.submit("evaluate_request", {"position": "4HPwATDgc/ABMA"},
                                  "heuristic", 0.5)
            assert info.value.code is ErrorCode.TIMEOUT
            assert all("play" in r for r in await asyncio.gather(*busy))
        finally:
            await pool.close()

    asyncio.run(run())


def test_frontend_players_decide_in_the_workers_as_they_would_at_home(tmp_path: Any) -> None:
    """`frontend_agent`: engines and (with quick decisions) 0-ply players stay as they are; a
    1-ply player becomes a `PooledAgent` whose decisions, made by a worker, are the ones the
    same player makes in this process; a decision the workers cannot make (they have stopped)
    raises `DecisionFailed`."""
    from bgbot.agents.base import PlayerAgent
    from bgbot.core.context import Context
    from bgbot.deciders import create_agent
    from bgbot.engines.gnubg import GnubgEngine
    from bgbot.players.base import TakeDecision
    from bgbot.daemon.workers import DecisionFailed, PooledAgent, frontend_agent

    async def run() -> None:
        pool = DecisionPool(1, WorkerSettings(state_db=str(tmp_path / "unused.db")))
        try:
            def place(spec: str, quick: bool = True) -> Any:
                return frontend_agent(spec, 5, pool, quick=quick, timeout=lambda: 30.0)

            assert isinstance(place("gnubg"), GnubgEngine)
            assert isinstance(place("pubeval"), PlayerAgent)
            assert isinstance(place("pubeval", quick=False), PooledAgent)
            assert isinstance(frontend_agent("heuristic:plies=1", 5, None, quick=True,
                                             timeout=lambda: 30.0), PlayerAgent)
            pooled = place("heuristic:plies=1")
            assert isinstance(pooled, PooledAgent)
            home = create_agent("heuristic:plies=1", seed=5)
            money = Context()
            race = board({6: 2, 5: 2, 4: 2, 3: 2, 2: 2, 1: 2}, {6: 4, 5: 4, 4: 4})
            for position, dice in ((Position.initial(), (6, 5)), (Position.initial(), (2, 1)),
                                   (race, (4, 4))):
                assert await pooled.choose_play(position, dice, money) == \
                    await home.choose_play(position, dice, money)
            assert await pooled.should_double(race, money) == \
                await home.should_double(race, money)
            assert await pooled.take_decision(race, money) is \
                await home.take_decision(race, money)
            assert await pooled.offer_resignation(race, money) == \
                await home.offer_resignation(race, money)
            assert await pooled.take_decision(Position.initial(), money) is TakeDecision.TAKE
        finally:
            await pool.close()
        with pytest.raises(DecisionFailed, match="stopping"):
            await pooled.choose_play(Position.initial(), (1, 1), money)

    asyncio.run(run())
