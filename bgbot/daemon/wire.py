"""Game objects <-> protocol content: positions, contexts, rules, plays, referee events.

The envelope lives in `bgbot.daemon.protocol`; this module gives the meaning of the content
fields (SPEC.md "Positions", "Plays", "Decision requests", "Events") in one place, so the
daemon, the client and the command line read and write them the same way. Every failure is
a ProtocolError BAD_VALUE that names the field.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields
from typing import Any, Mapping, Sequence

from ..core import game
from ..core.context import Context, CubeOwner
from ..core.errors import BgbotError, FormatError
from ..core.match import Match
from ..core.position import Position, check_dice
from ..core.rules import Rules
from ..formats.gnubgid import MatchState, check_playable
from ..formats.xgid import decode_any_id_with_xgid
from ..players.base import Probabilities
from ..referee import events as ev
from ..rollout import CandidateResult, RolloutResult, RolloutSettings
from ..rollout.runner import CANDIDATES
from ..rollout.settings import DEFAULT_TRIALS
from .protocol import ErrorCode, Message, ProtocolError, match_topic, new_message

__all__ = [
    "ASKS_OPPONENT",
    "DecisionRequest",
    "RolloutRequest",
    "context_from_state",
    "context_from_wire",
    "context_to_wire",
    "decision_request",
    "event_content",
    "evaluation_to_wire",
    "rules_from_wire",
    "rollout_request",
    "rollout_to_wire",
    "rules_to_wire",
]

_OWNERS = {"centre": CubeOwner.CENTRE, "me": CubeOwner.ME, "opponent": CubeOwner.OPPONENT}
_OWNER_NAMES = {owner: name for name, owner in _OWNERS.items()}
_DECISIONS = ("evaluate", "choose_play", "cube_decision", "take_decision", "resign_decision")
ASKS_OPPONENT = ("take_decision",)
"""Requests that ask the player NOT on roll (also resign_decision with ``offered`` > 0)."""


def _bad(field: str, message: str, **details: Any) -> ProtocolError:
    return ProtocolError(ErrorCode.BAD_VALUE, f"{field}: {message}", {"field": field, **details})


# --------------------------------------------------------------------------- rules, context


def rules_to_wire(rules: Rules) -> dict[str, Any]:
    """Every rule option by name (the schema's ``rules`` object)."""
    return asdict(rules)


def rules_from_wire(data: Mapping[str, Any] | None) -> Rules:
    """A ``rules`` object (already schema-checked) -> Rules; absent fields take the defaults."""
    if not data:
        return Rules()
    known = {f.name for f in fields(Rules)}
    for key in data:
        if key not in known:
            raise _bad(f"rules.{key}", "unknown rule option")
    try:
        return Rules(**dict(data))
    except BgbotError as exc:
        raise _bad("rules", str(exc)) from None


def context_to_wire(context: Context) -> dict[str, Any]:
    """A Context as the ``context`` object (its rules travel separately, as ``rules``)."""
    return {
        "cube_value": context.cube_value,
        "cube_owner": _OWNER_NAMES[context.cube_owner],
        "match_length": context.match_length,
        "my_score": context.my_score,
        "opponent_score": context.opponent_score,
        "crawford": context.crawford,
        "post_crawford": context.post_crawford,
    }


def context_from_wire(data: Mapping[str, Any] | None, rules: Rules | None = None) -> Context:
    """A ``context`` object (schema-checked) -> Context, with the score checked against the length."""
    data = data or {}
    length = int(data.get("match_length", 0))
    mine = int(data.get("my_score", 0))
    theirs = int(data.get("opponent_score", 0))
    crawford = bool(data.get("crawford", False))
    post = bool(data.get("post_crawford", False))
    if length:
        if mine >= length:
            raise _bad("context.my_score", f"must be below the match length {length}, got {mine}")
        if theirs >= length:
            raise _bad("context.opponent_score",
                       f"must be below the match length {length}, got {theirs}")
    elif crawford or post:
        raise _bad("context.crawford" if crawford else "context.post_crawford",
                   "there is no Crawford game in money play (match_length 0)")
    if crawford and post:
        raise _bad("context.post_crawford", "a game cannot be Crawford and post-Crawford")
    return Context(
        cube_value=int(data.get("cube_value", 1)),
        cube_owner=_OWNERS[str(data.get("cube_owner", "centre"))],
        match_length=length,
        my_score=mine,
        opponent_score=theirs,
        crawford=crawford,
        post_crawford=post,
        rules=(rules or Rules()).for_match(length),
    )


def context_from_state(state: MatchState, seat: int, rules: Rules | None = None) -> Context:
    """The context of gnubg seat ``seat`` from a Match ID's state.

    The Match ID's Jacoby flag overrides ``rules.jacoby``; post-Crawford is inferred (a
    non-Crawford game of a Crawford-rule match where a player has length - 1 points).
    """
    base = rules or Rules()
    base = Rules(**{**asdict(base), "jacoby": state.jacoby})
    length = state.match_length
    owner = state.cube_owner
    post = bool(length and base.crawford and not state.crawford and length - 1 in state.score)
    return Context(
        cube_value=state.cube,
        cube_owner=CubeOwner.CENTRE if owner < 0 else CubeOwner.ME if owner == seat else CubeOwner.OPPONENT,
        match_length=length,
        my_score=state.score[seat],
        opponent_score=state.score[1 - seat],
        crawford=state.crawford,
        post_crawford=post,
        rules=base.for_match(length),
    )


# --------------------------------------------------------------------------- decisions


@dataclass(frozen=True)
class DecisionRequest:
    """A decision request's content, decoded.

    ``position`` is seen from the player on roll; ``context`` from the player asked (the
    player on roll, except for take_decision and for resign_decision with ``offered`` > 0).
    """

    position: Position
    context: Context
    dice: tuple[int, int] | None
    agent: str | None
    offered: int
    candidates: int


def _dice_from_wire(value: Any) -> tuple[int, int]:
    try:
        return check_dice((int(value[0]), int(value[1])))
    except (BgbotError, TypeError, ValueError, IndexError) as exc:
        raise _bad("dice", str(exc)) from None


def decision_request(msg_type: str, content: Mapping[str, Any]) -> DecisionRequest:
    """Decode the content of evaluate / choose_play / cube / take / resign requests.

    ``position`` is a bare Position ID (then ``context`` gives the rest), or a GNU BG ID or
    XGID (then the match state comes from the id and ``context`` is refused).
    """
    name = msg_type[: -len("_request")] if msg_type.endswith("_request") else msg_type
    if name not in _DECISIONS:
        raise ValueError(f"{msg_type} is not a decision request")
    offered = int(content.get("offered", 0))
    asks_opponent = name in ASKS_OPPONENT or (name == "resign_decision" and offered > 0)
    position, context, dice = _situation(content, asks_opponent=asks_opponent)
    if name == "choose_play" and dice is None:
        raise _bad("dice", "required: the roll to play (or a GNU BG ID / XGID with the dice rolled)")
    if position.is_game_over():
        raise _bad("position", "the game is over in this position")
    return DecisionRequest(
        position=position,
        context=context,
        dice=dice,
        agent=content.get("agent"),
        offered=offered,
        candidates=int(content.get("candidates", 0)),
    )


def _situation(content: Mapping[str, Any], *, asks_opponent: bool = False
               ) -> tuple[Position, Context, tuple[int, int] | None]:
    """A request's ``position``, ``context``, ``rules`` and ``dice``, decoded: the board from
    the player on roll, the context of the player asked (the other one when
    ``asks_opponent``), the dice rolled (given, or in the id; None: not rolled)."""
    rules = rules_from_wire(content.get("rules"))
    text = str(content.get("position", "")).strip()
    dice = _dice_from_wire(content["dice"]) if "dice" in content else None
    if ":" not in text and "=" not in text:
        try:
            position = Position.from_position_id(text)
        except BgbotError as exc:
            raise _bad("position", str(exc)) from None
        context = context_from_wire(content.get("context"), rules)
    else:
        if "context" in content:
            raise _bad("context", "not allowed with a GNU BG ID or XGID, which carry the match state")
        try:
            position, state, xgid = decode_any_id_with_xgid(text)
            check_playable(state, "position")
        except BgbotError as exc:
            raise _bad("position", str(exc)) from None
        if xgid is not None and xgid.beavers:  # a money XGID's rules field: bit 1 = beavers
            rules = Rules(**{**asdict(rules), "beavers": True})
        seat = 1 - state.on_roll if asks_opponent else state.on_roll
        context = context_from_state(state, seat, rules)
        if state.rolled:
            if dice is not None and sorted(dice) != sorted(state.dice):
                raise _bad("dice", f"the id says {state.dice[0]}{state.dice[1]}, dice say "
                           f"{dice[0]}{dice[1]}")
            dice = dice or state.dice
    return position, context, dice


# --------------------------------------------------------------------------- rollouts


DEFAULT_ROLLOUT_PLAYER = "heuristic"
"""The player of a rollout request that names none: bgbot's 0-ply player, as ``bgbot
rollout`` (not the daemon's default agent, which looks ahead: a rollout plays thousands of
games)."""


@dataclass(frozen=True)
class RolloutRequest:
    """A rollout request's content, decoded (SPEC §8.11): the position and its context from
    the player on roll, the dice (None: the position's own rollout), the settings, and how many
    candidate plays to roll out."""

    position: Position
    context: Context
    dice: tuple[int, int] | None
    settings: RolloutSettings
    candidates: int


def rollout_request(content: Mapping[str, Any]) -> RolloutRequest:
    """Decode a rollout_request's content (schema-checked); BAD_VALUE names the field."""
    position, context, dice = _situation(content)
    if position.is_game_over():
        raise _bad("position", "the game is over in this position: there is nothing to roll out")
    if "candidates" in content and dice is None:
        raise _bad("candidates", "only with dice: how many plays of the roll to roll out")
    target = content.get("se_target")
    try:
        settings = RolloutSettings(
            player=str(content.get("player", DEFAULT_ROLLOUT_PLAYER)),
            trials=int(content.get("trials", DEFAULT_TRIALS)),
            truncate=int(content.get("truncate", 0)), seed=int(content.get("seed", 1)),
            vr=bool(content.get("vr", True)), cubeful=content.get("cubeful"),
            se_target=None if target is None else float(target))
    except FormatError as exc:
        raise _bad(exc.field, exc.reason) from None
    return RolloutRequest(position, context, dice, settings,
                          int(content.get("candidates", CANDIDATES)))


def rollout_to_wire(rollout_id: str, request: RolloutRequest,
                    found: RolloutResult | Sequence[CandidateResult]) -> dict[str, Any]:
    """The content of a rollout_reply: ``result`` for a position, ``dice`` and
    ``candidates`` for a roll's plays; a figure that does not exist (NaN) is nil."""
    reply: dict[str, Any] = {
        "rollout_id": rollout_id, "position_id": request.position.position_id(),
        "context": context_to_wire(request.context),
        "rules": rules_to_wire(request.context.rules)}
    if isinstance(found, RolloutResult):
        reply["result"] = _finite(found.to_json())
    else:
        assert request.dice is not None
        reply["dice"] = list(request.dice)
        reply["candidates"] = [_finite(candidate.to_json()) for candidate in found]
    return reply


def _finite(value: Any) -> Any:
    """``value`` with every NaN or infinite float replaced by None (JSON and the protocol's
    readers have no NaN)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_finite(item) for item in value]
    return value


def evaluation_to_wire(probabilities: Probabilities, agent: str) -> dict[str, Any]:
    """The content of an evaluate_reply."""
    return {
        "probabilities": {
            "win": float(probabilities.win),
            "win_gammon": float(probabilities.win_gammon),
            "win_backgammon": float(probabilities.win_backgammon),
            "lose_gammon": float(probabilities.lose_gammon),
            "lose_backgammon": float(probabilities.lose_backgammon),
        },
        "equity": float(probabilities.equity()),
        "agent": agent,
    }


# --------------------------------------------------------------------------- events


def event_message(event: ev.Event) -> tuple[bytes, Message] | None:
    """A `bgbot.referee.events` event as (topic ``match.<id>``, event message), or None for an
    action the protocol has no event for (see `event_content`)."""
    found = event_content(event)
    if found is None:
        return None
    msg_type, content = found
    return match_topic(content["match_id"]), new_message(msg_type, content)


def event_content(event: ev.Event) -> tuple[str, dict[str, Any]] | None:
    """A referee event as (msg_type, content); seats are the referee's (players[0] = seat 0).

    The core's actions map onto the protocol's events: an opening roll is ``rolled`` with
    ``opening`` (``seat`` the winner, -1 on a tie), a raccoon ``beavered`` with ``raccoon``, and
    a resignation one ``resigned`` once it is answered (``seat`` the resigner). None for the
    actions without an event of their own (an automatic double, a resignation's offer)."""
    if isinstance(event, ev.Acted):
        return _action_content(event)
    if isinstance(event, ev.GameStarted):
        return "game_started", {
            "match_id": event.match_id, "game": event.game, "score": list(event.score),
            "crawford": event.crawford, "post_crawford": event.post_crawford,
        }
    if isinstance(event, ev.GameEnded):
        outcome = event.outcome
        return "game_ended", {
            "match_id": event.match_id, "game": event.game, "winner": outcome.winner,
            "points": outcome.points, "kind": outcome.kind, "ending": outcome.ending,
            "cube": outcome.cube, "score": list(event.score),
        }
    if isinstance(event, ev.MatchEnded):
        return "match_ended", {
            "match_id": event.match_id, "score": list(event.score), "winner": event.winner,
            "games": event.games,
        }
    raise TypeError(f"not a referee event: {event!r}")


def match_events(match_id: str, length: int, rules: Rules, games: Sequence[game.Game],
                 ended: tuple[tuple[int, int], int | None, int] | None = None
                 ) -> list[tuple[str, dict[str, Any]]]:
    """Every event a hosted match has published, rebuilt from its games (as the journal
    replays them), in order and numbered (``n`` = 1, 2, ...): the events `event_content` makes
    of the referee's events, game by game; ``ended`` (score, winner, games) adds
    ``match_ended``. The daemon's own ``match_started`` and ``match_aborted`` are not in the
    sequence (they carry no ``n``). ``match_get`` answers ``events`` with this list, and a
    match worker numbers each new event after it (protocol 1.2)."""
    found: list[tuple[str, dict[str, Any]]] = []
    match = Match(length, rules)
    for number, played in enumerate(games, 1):
        before = match.score
        if played.outcome is not None:
            match.record(played.outcome)
        found += game_events(match_id, number, played, before, match.score)
    if ended is not None:
        found.append(match_ended_event(match_id, *ended))
    for n, (_, content) in enumerate(found, 1):
        content["n"] = n
    return found


def game_events(match_id: str, number: int, played: game.Game, before: tuple[int, int],
                after: tuple[int, int]) -> list[tuple[str, dict[str, Any]]]:
    """The events of game ``number`` of a match, without their ``n``: ``game_started`` (the
    score ``before`` it), one per action with an event, and ``game_ended`` (the score
    ``after`` it) once it is over. Each journalled action has exactly one event."""
    events: list[ev.Event] = [ev.GameStarted(match_id, number, before, played.crawford,
                                             played.post_crawford)]
    events += [ev.Acted(match_id, number, action) for action in played.history]
    if played.outcome is not None:
        events.append(ev.GameEnded(match_id, number, played.outcome, after, played))
    return [item for item in map(event_content, events) if item is not None]


def match_ended_event(match_id: str, score: tuple[int, int], winner: int | None,
                      games: int) -> tuple[str, dict[str, Any]]:
    """The ``match_ended`` event (without its ``n``)."""
    return "match_ended", {"match_id": match_id, "score": list(score), "winner": winner,
                           "games": games}


_CUBE_EVENTS = {game.Doubled: "doubled", game.Taken: "taken", game.Dropped: "dropped",
                game.Beavered: "beavered", game.Raccooned: "beavered"}


def _action_content(event: ev.Acted) -> tuple[str, dict[str, Any]] | None:
    action = event.action
    where = {"match_id": event.match_id, "game": event.game}
    if isinstance(action, game.OpeningRolled):
        winner = -1 if action.winner is None else action.winner
        return "rolled", {**where, "seat": winner, "dice": [action.die0, action.die1],
                          "opening": True}
    if isinstance(action, game.Rolled):
        return "rolled", {**where, "seat": action.seat, "dice": list(action.dice),
                          "opening": False}
    if isinstance(action, game.Moved):
        return "played", {
            **where, "seat": action.seat, "dice": list(action.dice), "play": str(action.play),
            "before": action.before.position_id(),
            "after": action.before.apply(action.play).position_id(),
        }
    if isinstance(action, (game.Doubled, game.Taken, game.Dropped, game.Beavered,
                           game.Raccooned)):
        name = _CUBE_EVENTS[type(action)]
        content = {**where, "seat": action.seat, "cube": action.cube}
        if name == "beavered":
            content["raccoon"] = isinstance(action, game.Raccooned)
        return name, content
    if isinstance(action, (game.ResignationAccepted, game.ResignationRejected)):
        return "resigned", {**where, "seat": 1 - action.seat, "value": action.value,
                            "accepted": isinstance(action, game.ResignationAccepted)}
    return None

