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


def test_a_decision_pool_answers_times_out_and_replaces_dead_workers(tmp_path: Any) -> None:
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
            # both workers busy with 1-ply plays: a request queued behind them times out
            slow = {"position": "4HPwATDgc/ABMA", "dice": [1, 1], "agent": "heuristic:plies=1"}
            busy = [pool.request("choose_play_request", slow, "heuristic", 30) for _ in range(2)]
            with pytest.raises(ProtocolError) as info:
                await pool.submit("evaluate_request", {"position": "4HPwATDgc/ABMA"},
                                  "heuristic", 0.001)
            assert info.value.code is ErrorCode.TIMEOUT
            assert all("play" in r for r in await asyncio.gather(*busy))
        finally:
            await pool.close()

    asyncio.run(run())
