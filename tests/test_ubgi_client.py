"""bgbot.engines.ubgi: any UBGI engine as an Agent, driven here against `bgbot ubgi` itself and
against small scripted engines that crash, hang, cheat or support chequer play only."""

from __future__ import annotations

import asyncio
import os
import sys
import textwrap
from pathlib import Path

import pytest

from bgbot.deciders import create_agent
from bgbot.core.dice import SeededDice
from bgbot.core.position import Position
from bgbot.engines.process import EngineError, EngineNotFound
from bgbot.engines.ubgi import UbgiEngine, UbgiErrorReply, create
from bgbot.agents.spec import parse_agent_spec
from bgbot.players.base import Context, TakeDecision
from bgbot.referee.referee import Referee

ENGINE = [sys.executable, "-m", "bgbot.cli", "ubgi", "--player", "heuristic"]

# A scripted engine: bgbot's own session, misbehaving on the N-th `go` (counted in a file, so
# the count survives restarts): "die" exits, "hang" sleeps, "illegal" answers an illegal move,
# "chequer" refuses every decision but chequer play (as many third-party engines do).
CHAOS = textwrap.dedent("""
    import asyncio, os, sys, time
    from bgbot.frontends.ubgi import UbgiSession
    mode, counter, at = sys.argv[1], sys.argv[2], int(sys.argv[3])

    async def main():
        session = UbgiSession("heuristic")
        for line in sys.stdin:
            words = line.split()
            if words[:1] == ["go"]:
                n = int(open(counter).read() or 0) + 1 if os.path.exists(counter) else 1
                open(counter, "w").write(str(n))
                if n == at and mode == "die":
                    os._exit(3)
                if n == at and mode == "hang":
                    time.sleep(3600)
                if mode == "illegal" and words[1:2] == ["chequer"]:
                    print("bestmove 24/1", flush=True)
                    continue
                if mode == "chequer" and words[1:2] != ["chequer"]:
                    print("error unsupported " + " ".join(words), flush=True)
                    continue
            for out in await session.handle(line):
                print(out, flush=True)
            if session.finished:
                break

    asyncio.run(main())
""")


@pytest.fixture
def chaos(tmp_path: Path):  # type: ignore[no-untyped-def]
    script = tmp_path / "chaos_engine.py"
    script.write_text(CHAOS)

    def command(mode: str, at: int = 0) -> list[str]:
        return [sys.executable, str(script), mode, str(tmp_path / f"count-{mode}"), str(at)]

    return command


def play_match(agent: UbgiEngine, length: int = 3, seed: int = 1) -> tuple[int, int]:
    """A whole match of ``agent`` against the in-process heuristic; the final score."""

    async def run() -> tuple[int, int]:
        other = create_agent("heuristic")
        await agent.start()
        try:
            result = await Referee((agent, other), SeededDice(seed), length=length).play()
        finally:
            await agent.close()
        return result.score

    return asyncio.run(run())


# --------------------------------------------------------------------------- full matches


def test_our_client_plays_full_matches_against_our_engine() -> None:
    agent = UbgiEngine(ENGINE, strict=True, timeout=60)
    score = play_match(agent, length=3, seed=7)
    assert max(score) >= 3
    stats = agent.stats
    assert stats.requests > 20 and stats.starts == 1
    assert (stats.fallbacks, stats.unusable, stats.crashes, stats.timeouts) == (0, 0, 0, 0)
    assert agent.info.proto == "0.2" and "engine.ply" in agent.info.keys


def test_agent_spec_builds_the_client_and_passes_engine_keys() -> None:
    spec = f"ubgi:command={' '.join(ENGINE)},engine.ply=2,timeout=60,strict=on"
    agent = create_agent(spec)
    assert isinstance(agent, UbgiEngine)
    assert agent.options == {"engine.ply": "2"} and agent.timeout == 60 and agent.strict

    async def run() -> str:
        await agent.start()
        try:
            play = await agent.choose_play(Position.initial(), (6, 1), Context())
            assert await agent.process.ask([], "go chequer", "bestmove", agent.timeout)  # same state
            return str(play)
        finally:
            await agent.close()

    assert asyncio.run(run()) == "13/7 8/7"


def test_refused_option_value_is_a_configuration_error() -> None:
    agent = UbgiEngine(ENGINE, options={"engine.ply": "9"})

    async def run() -> None:
        try:
            await agent.start()
        finally:
            await agent.close()

    with pytest.raises(ValueError, match="engine.ply"):
        asyncio.run(run())
    with pytest.raises(ValueError, match="declares no such key"):
        agent = UbgiEngine(ENGINE, options={"engine.bogus": "1"})
        asyncio.run(run())


def test_spec_errors_name_the_option() -> None:
    with pytest.raises(ValueError, match="command"):
        create(parse_agent_spec("ubgi"), 0)
    with pytest.raises(ValueError, match="bogus"):
        create(parse_agent_spec("ubgi:command=x,bogus=1"), 0)
    with pytest.raises(ValueError, match="context"):
        create(parse_agent_spec("ubgi:command=x,context=sometimes"), 0)


def test_missing_binary_raises_not_found() -> None:
    agent = UbgiEngine(["/nonexistent/ubgi-engine"])
    with pytest.raises(EngineNotFound):
        asyncio.run(agent.start())


# --------------------------------------------------------------------------- failures


def test_engine_that_dies_mid_match_is_restarted(chaos) -> None:  # type: ignore[no-untyped-def]
    agent = UbgiEngine(chaos("die", at=5), strict=True, timeout=30)
    score = play_match(agent, length=1, seed=3)
    assert max(score) >= 1
    assert agent.stats.crashes == 1 and agent.stats.restarts == 1 and agent.stats.fallbacks == 0


def test_engine_that_hangs_is_killed_and_restarted(chaos) -> None:  # type: ignore[no-untyped-def]
    agent = UbgiEngine(chaos("hang", at=3), strict=True, timeout=2.0)

    async def run() -> None:
        await agent.start()
        first_pid = agent.pid
        try:
            for _ in range(4):
                play = await agent.choose_play(Position.initial(), (6, 1), Context())
                assert str(play) == "13/7 8/7"
            assert agent.pid is not None and agent.pid != first_pid
        finally:
            await agent.close()

    asyncio.run(run())
    assert agent.stats.timeouts == 1 and agent.stats.restarts == 1


def test_engine_that_keeps_dying_falls_back_or_raises(chaos) -> None:  # type: ignore[no-untyped-def]
    async def ask(agent: UbgiEngine) -> str:
        try:
            return str(await agent.choose_play(Position.initial(), (6, 1), Context()))
        finally:
            await agent.close()

    # an engine that exits before answering anything, at every start
    dead = [sys.executable, "-c", "import sys; sys.stdin.readline(); sys.exit(4)"]
    strict = UbgiEngine(dead, strict=True, retries=1, start_timeout=20)
    with pytest.raises(EngineError):
        asyncio.run(ask(strict))
    lenient = UbgiEngine(dead, retries=1, start_timeout=20)
    assert asyncio.run(ask(lenient)) == "13/7 8/7"  # the heuristic fallback's choice
    assert lenient.stats.fallbacks == 1


def test_illegal_bestmove_is_refused_by_the_rules_core(chaos) -> None:  # type: ignore[no-untyped-def]
    async def ask(agent: UbgiEngine) -> str:
        try:
            return str(await agent.choose_play(Position.initial(), (6, 1), Context()))
        finally:
            await agent.close()

    lenient = UbgiEngine(chaos("illegal"))
    assert asyncio.run(ask(lenient)) == "13/7 8/7"
    assert lenient.stats.unusable == 1 and lenient.stats.fallbacks == 1
    with pytest.raises(EngineError, match="24/1"):
        asyncio.run(ask(UbgiEngine(chaos("illegal"), strict=True)))


def test_chequer_only_engine_gets_fallback_cube_decisions(chaos) -> None:  # type: ignore[no-untyped-def]
    agent = UbgiEngine(chaos("chequer"))
    score = play_match(agent, length=3, seed=11)
    assert max(score) >= 3
    assert agent.stats.unusable == 0 and agent.stats.fallbacks >= 1
    assert {"cube"} <= agent._unsupported  # asked once, then remembered


def test_take_uses_the_go_take_extension() -> None:
    agent = UbgiEngine(ENGINE, strict=True)
    # the doubler (on roll) bears off both chequers with any roll: a certain loss, drop
    from tests.conftest import board

    position = board({1: 1, 2: 1}, {5: 2, 6: 2})

    async def run() -> TakeDecision:
        try:
            return await agent.take_decision(position, Context())
        finally:
            await agent.close()

    assert asyncio.run(run()) is TakeDecision.DROP


def test_error_reply_carries_the_code() -> None:
    error = UbgiErrorReply("go cube", "unsupported", "go cube")
    assert error.code == "unsupported" and "go cube" in str(error)


def test_one_engine_serves_several_event_loops_without_a_restart() -> None:
    """The engine's channel belongs to no event loop (one model with gnubg's): successive
    ``asyncio.run`` calls use the same process, and closing leaves none behind."""
    agent = UbgiEngine(ENGINE, strict=True, timeout=60)
    first = asyncio.run(agent.choose_play(Position.initial(), (6, 1), Context()))
    pid = agent.pid
    second = asyncio.run(agent.choose_play(Position.initial(), (6, 1), Context()))
    assert first == second and pid is not None and agent.pid == pid
    assert agent.stats.starts == 1 and agent.stats.restarts == 0
    asyncio.run(agent.close())
    assert agent.pid is None
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
