"""Answering decision requests (evaluate, choose_play, cube / take / resign decisions).

The same code runs in the decision worker processes and, with ``inline_decisions``, on the
daemon's event loop. The workers also answer the decisions of the frontends' in-process
players (`answer_call`, asked by `bgbot.daemon.workers.PooledAgent`). Requests are decoded by `bgbot.daemon.wire`; agents come from agent specs
and are kept started in an `AgentCache`. Answers from agents that live outside the process
(engines) are checked with the rules core before they are returned.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from functools import lru_cache
from typing import Any, Mapping

from ..agents.base import Agent, PlayerAgent
from ..agents.spec import parse_agent_spec
from ..core.errors import BgbotError
from ..core.position import Play, Position
from ..deciders import create_agent
from ..players.base import Context, Probabilities, TakeDecision
from .protocol import ErrorCode, ProtocolError
from .wire import DecisionRequest, decision_request, evaluation_to_wire

DECISION_TYPES = frozenset({
    "evaluate_request", "choose_play_request", "cube_decision_request",
    "take_decision_request", "resign_decision_request",
})


QUICK_AGENTS = frozenset({"heuristic", "pubeval", "random"})
"""In-process players whose 0-ply decisions cost well under a millisecond."""


@lru_cache(maxsize=256)
def is_quick(spec: str) -> bool:
    """Whether ``spec`` names an in-process player deciding at 0-ply (cheap enough to answer
    on the daemon's event loop); False for look-ahead, engines and specs that do not parse."""
    try:
        parsed = parse_agent_spec(spec)
    except BgbotError:
        return False
    if parsed.name not in QUICK_AGENTS:
        return False
    level = parsed.options.get("level")
    if level is not None and "plies" not in parsed.options:
        from ..players.heuristic import LEVELS

        named = LEVELS.get(str(level).strip())
        return named is not None and named[0] == 0
    plies = parsed.options.get("plies", "0")
    return str(plies).strip() in ("0", "")


class AgentCache:
    """Started agents by spec and seed, least recently used dropped (and closed) past ``size``."""

    def __init__(self, size: int = 8) -> None:
        self.size = size
        self._agents: OrderedDict[tuple[str, int], Agent] = OrderedDict()

    async def get(self, spec: str, seed: int = 0) -> Agent:
        key = (spec, seed)
        agent = self._agents.get(key)
        if agent is not None:
            self._agents.move_to_end(key)
            return agent
        try:
            agent = create_agent(spec, seed=seed)
        except BgbotError as exc:
            raise ProtocolError(ErrorCode.BAD_VALUE, f"agent: {exc}",
                            {"field": "agent", "reason": str(exc)}) from None
        await agent.start()
        self._agents[key] = agent
        while len(self._agents) > self.size:
            _, old = self._agents.popitem(last=False)
            await _close_quietly(old)
        return agent

    def peek(self, spec: str, seed: int = 0) -> Agent | None:
        """The started agent for ``spec`` if there is one (no creation)."""
        agent = self._agents.get((spec, seed))
        if agent is not None:
            self._agents.move_to_end((spec, seed))
        return agent

    async def close(self) -> None:
        while self._agents:
            _, agent = self._agents.popitem()
            await _close_quietly(agent)


async def _close_quietly(agent: Agent) -> None:
    try:
        await agent.close()
    except Exception:
        pass


def _request(msg_type: str, content: Mapping[str, Any]) -> DecisionRequest:
    request = decision_request(msg_type, content)
    if msg_type == "cube_decision_request" and not request.context.may_double():
        text = str(content.get("position", ""))
        field = "position" if (":" in text or "=" in text) else "context"
        raise ProtocolError(ErrorCode.BAD_VALUE, f"{field}: the player on roll may not double "
                            "here (Crawford game, cube owned by the opponent, dead cube, cube "
                            "limit or cubeless rules)",
                            {"field": field, "reason": "no double is possible"})
    if msg_type == "take_decision_request":
        refusal = request.context.swapped().double_refusal()  # the doubler's view
        if refusal is not None:
            text = str(content.get("position", ""))
            field = "position" if (":" in text or "=" in text) else "context"
            raise ProtocolError(ErrorCode.BAD_VALUE, f"{field}: the player on roll could not "
                                f"have doubled: {refusal}",
                                {"field": field, "reason": "no double is possible"})
    return request


async def answer(msg_type: str, content: Mapping[str, Any], agents: AgentCache, *,
                 default_agent: str, max_candidates: int = 32) -> dict[str, Any]:
    """The reply content for a decision request; ProtocolError for anything unusable."""
    request = _request(msg_type, content)
    spec = request.agent or default_agent
    agent = await agents.get(spec)
    try:
        return await _decide(msg_type, request, agent, spec, max_candidates)
    except ProtocolError:
        raise
    except BgbotError as exc:
        # an engine that cannot answer (gnubg missing, a bad reply): not a daemon bug
        raise ProtocolError(ErrorCode.UNSUPPORTED, f"{spec}: {exc}", {"agent": spec}) from None


def answer_now(msg_type: str, content: Mapping[str, Any], agents: AgentCache, *,
               default_agent: str, max_candidates: int = 32) -> dict[str, Any] | None:
    """`answer` without an event loop when an in-process player (already in ``agents``)
    decides: its coroutines never wait, so one step runs the whole decision. None when the
    agent is an engine or not created yet (then use `answer`)."""
    request = _request(msg_type, content)
    spec = request.agent or default_agent
    agent = agents.peek(spec)
    if not isinstance(agent, PlayerAgent):
        return None
    step = _decide(msg_type, request, agent, spec, max_candidates)
    try:
        step.send(None)
    except StopIteration as done:
        result: dict[str, Any] = done.value
        return result
    step.close()  # pragma: no cover - a PlayerAgent never awaits
    raise RuntimeError(f"{spec} awaited something; in-process players must not")


AGENT_DECISIONS = frozenset({"choose_play", "should_double", "take_decision",
                             "offer_resignation", "accept_resignation"})
"""The `Agent` methods `answer_call` runs."""


async def answer_call(agents: AgentCache, spec: str, seed: int, method: str,
                      board: tuple[tuple[int, ...], tuple[int, ...]],
                      args: tuple[Any, ...]) -> Any:
    """``method(position, *args)`` of the agent ``spec`` / ``seed``, kept in ``agents``;
    ``board`` is the position's (opponent, mover) counts."""
    if method not in AGENT_DECISIONS:
        raise ProtocolError(ErrorCode.BAD_VALUE, f"{method} is not an agent decision",
                            {"field": "method", "reason": "unknown"})
    agent = await agents.get(spec, seed)
    return await getattr(agent, method)(Position(*board), *args)


async def _decide(msg_type: str, request: DecisionRequest, agent: Agent, spec: str,
                  max_candidates: int) -> dict[str, Any]:
    position, context = request.position, request.context
    if msg_type == "evaluate_request":
        return evaluation_to_wire(await evaluate(agent, position, context), spec)
    if msg_type == "choose_play_request":
        assert request.dice is not None
        return await _choose_play(agent, spec, position, request.dice, context,
                                  min(request.candidates, max_candidates))
    if msg_type == "cube_decision_request":
        double = await agent.should_double(position, context)
        return {"double": bool(double), "agent": spec}
    if msg_type == "take_decision_request":
        decision = await agent.take_decision(position, context)
        if decision is TakeDecision.BEAVER and not (context.is_money and context.rules.beavers):
            decision = TakeDecision.TAKE  # an engine's beaver where the rules allow none
        return {"decision": decision.value, "agent": spec}
    if msg_type == "resign_decision_request":
        if request.offered:
            accept = await agent.accept_resignation(position, context, request.offered)
            return {"accept": bool(accept), "agent": spec}
        value = await agent.offer_resignation(position, context)
        return {"resign": value if value in (1, 2, 3) else 0, "agent": spec}
    raise ProtocolError(ErrorCode.UNKNOWN_TYPE, f"{msg_type} is not a decision request",
                        {"msg_type": msg_type})


async def evaluate(agent: Agent, position: Position, context: Context) -> Probabilities:
    """Chances for the side on roll: the agent's evaluator (in-process players that have one)
    or its own ``evaluate`` (engines); UNSUPPORTED for agents that only pick moves."""
    player = agent.player if isinstance(agent, PlayerAgent) else None
    evaluator = getattr(player, "evaluator", None)
    if evaluator is not None and hasattr(evaluator, "evaluate"):
        probs: Probabilities = evaluator.evaluate(position)
        return probs
    method = getattr(agent, "evaluate", None)
    if method is not None and asyncio.iscoroutinefunction(method):
        result = await method(position, context)
        found: Probabilities = getattr(result, "probabilities", result)
        return found
    raise ProtocolError(ErrorCode.UNSUPPORTED, f"agent {agent.name!r} cannot evaluate positions",
                        {"agent": agent.name})


async def _choose_play(agent: Agent, spec: str, position: Position, dice: tuple[int, int],
                       context: Context, candidates: int) -> dict[str, Any]:
    play = await agent.choose_play(position, dice, context)
    try:
        after = position.apply(play)
    except BgbotError as exc:
        raise ProtocolError(ErrorCode.INTERNAL, f"{spec} chose an impossible play {play}: {exc}",
                            {"agent": spec}) from None
    legal: dict[Position, Play] | None = None
    if not isinstance(agent, PlayerAgent) or candidates:
        # engines are checked; in-process players use the core's generator already
        legal = {result: p for p, result in position.play_results(dice)}
        illegal = after not in legal if legal else bool(play)
        if illegal:
            raise ProtocolError(ErrorCode.INTERNAL, f"{spec} chose an illegal play {play}",
                                {"agent": spec})
        play = legal.get(after, play)
    reply: dict[str, Any] = {"play": str(play), "after": after.position_id(), "agent": spec}
    if candidates:
        assert legal is not None
        reply["candidates"] = _ranked(agent, legal, after, candidates, position, dice, context)
    return reply


def _ranked(agent: Agent, legal: dict[Position, Play], chosen: Position, limit: int,
            position: Position, dice: tuple[int, int], context: Context
            ) -> list[dict[str, Any]]:
    """The agent's play, then the others best first: as the player's own search ranks them
    (`HeuristicPlayer.rank_plays`, the ranking of ``bgbot hint`` and ``bgbot plays``, with
    the cubeless equity of the chances it found), else by 0-ply cubeless equity for players
    with only an evaluator; UNSUPPORTED for the others."""
    player = agent.player if isinstance(agent, PlayerAgent) else None
    rank_plays = getattr(player, "rank_plays", None)
    if rank_plays is not None:
        ranked = rank_plays(position, dice, context)
        ranked.sort(key=lambda r: r.after != chosen)  # stable: the agent's choice first
        return [{"play": str(r.play), "after": r.after.position_id(),
                 "equity": float(r.chances.equity())} for r in ranked[:limit]]
    evaluator = getattr(player, "evaluator", None)
    items = list(legal.items())
    if evaluator is not None and hasattr(evaluator, "evaluate"):
        scored: list[tuple[float, Position, Play]] = []
        for after, play in items:
            kind = after.win_kind()
            equity = float(kind) if kind else -float(evaluator.evaluate(after.swapped()).equity())
            scored.append((equity, after, play))
        scored.sort(key=lambda s: (s[1] != chosen, -s[0]))  # the agent's choice, then by equity
        return [{"play": str(p), "after": a.position_id(), "equity": e}
                for e, a, p in scored[:limit]]
    raise ProtocolError(ErrorCode.UNSUPPORTED, f"agent {agent.name!r} cannot rank plays; ask "
                        "without candidates", {"agent": agent.name})
