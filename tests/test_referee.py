"""The referee hosts matches between agents, checks every decision, and is reproducible."""

from __future__ import annotations

import asyncio
from typing import Sequence

import pytest

from bgbot import Rules
from bgbot.agents import PlayerAgent, parse_agent_spec
from bgbot.deciders import create_agent
from bgbot.agents.base import Agent
from bgbot.core.context import Context
from bgbot.core.dice import ScriptedDice, SeededDice
from bgbot.core.errors import FormatError
from bgbot.core.game import (Action, Beavered, Doubled, Dropped, Moved, OpeningRolled,
                             Raccooned, Taken)
from bgbot.core.position import Play, Position
from bgbot.players.base import TakeDecision
from bgbot.referee import IllegalDecision, Referee
from bgbot.referee import events as ev
from bgbot.referee.series import SeriesConfig, run_series_sync


def acts(events: Sequence[ev.Event], *kinds: type) -> list[Action]:
    """The core actions of ``kinds`` in the referee's events, in order."""
    return [e.action for e in events if isinstance(e, ev.Acted) and isinstance(e.action, kinds)]


def play(agents: Sequence[Agent], seed: int, **kwargs: object) -> tuple[object, list[ev.Event]]:
    events: list[ev.Event] = []
    referee = Referee(agents, SeededDice(seed), listeners=[events.append],  # type: ignore[arg-type]
                      match_id="m", **kwargs)
    return asyncio.run(referee.play()), events


def test_a_seeded_match_is_reproducible() -> None:
    first, events1 = play([create_agent("random:cube=on", seed=1),
                           create_agent("random:cube=on", seed=2)], 11, length=5)
    second, events2 = play([create_agent("random:cube=on", seed=1),
                            create_agent("random:cube=on", seed=2)], 11, length=5)
    assert first.score == second.score  # type: ignore[attr-defined]
    assert [repr(e) for e in events1 if not isinstance(e, ev.GameEnded)] == [
        repr(e) for e in events2 if not isinstance(e, ev.GameEnded)
    ]


def test_a_match_ends_when_a_player_reaches_the_length_r28() -> None:
    result, events = play([create_agent("random:cube=on", seed=3),
                           create_agent("random:cube=on", seed=4)], 5, length=5)
    assert max(result.score) >= 5  # type: ignore[attr-defined]
    assert isinstance(events[-1], ev.MatchEnded)
    started = [e for e in events if isinstance(e, ev.GameStarted)]
    ended = [e for e in events if isinstance(e, ev.GameEnded)]
    assert len(started) == len(ended) == len(result.outcomes)  # type: ignore[attr-defined]


def test_no_double_in_the_crawford_game_r29() -> None:
    for seed in range(8):
        _, events = play([create_agent("random:cube=on", seed=seed),
                          create_agent("random:cube=on", seed=seed + 100)], seed, length=3)
        crawford_games = {e.game for e in events if isinstance(e, ev.GameStarted) and e.crawford}
        assert not [e for e in events if isinstance(e, ev.Acted) and isinstance(e.action, Doubled)
                    and e.game in crawford_games]


def test_every_play_the_referee_accepts_is_legal() -> None:
    _, events = play([create_agent("pubeval"), create_agent("random", seed=5)], 3, length=3)
    for event in acts(events, Moved):
        assert isinstance(event, Moved)
        plays = event.before.legal_plays(event.dice)
        assert event.play in plays or (not plays and not event.play)


class CheatingAgent(Agent):
    """Always answers with a play that moves a chequer from an empty point."""

    name = "cheat"

    async def choose_play(self, position: Position, dice: Sequence[int], context: Context) -> Play:
        return Play([(20, 20 - dice[0])]) if not position.mover[19] else Play([(25, 24)])

    async def should_double(self, position: Position, context: Context) -> bool:
        return False

    async def take_decision(self, position: Position, context: Context) -> TakeDecision:
        return TakeDecision.TAKE


def test_the_referee_rejects_an_illegal_play_r36() -> None:
    with pytest.raises(IllegalDecision, match="cheat made 3 illegal plays"):
        play([CheatingAgent(), create_agent("random", seed=1)], 1, length=1)


class BeaverEverywhere(CheatingAgent):
    name = "beaverer"

    async def choose_play(self, position: Position, dice: Sequence[int], context: Context) -> Play:
        return position.legal_plays(dice)[0]

    async def take_decision(self, position: Position, context: Context) -> TakeDecision:
        return TakeDecision.BEAVER


class AlwaysDouble(BeaverEverywhere):
    name = "doubler"

    async def should_double(self, position: Position, context: Context) -> bool:
        return True

    async def take_decision(self, position: Position, context: Context) -> TakeDecision:
        return TakeDecision.TAKE


def test_a_beaver_is_refused_in_match_play_r24() -> None:
    with pytest.raises(IllegalDecision, match="beavered where the rules do not allow it"):
        play([AlwaysDouble(), BeaverEverywhere()], 2, length=5)


def test_beavers_in_money_play_when_the_rules_allow_r24() -> None:
    result, events = play([AlwaysDouble(), BeaverEverywhere()], 2, length=0, games=1,
                          rules=Rules(beavers=True))
    beavers = acts(events, Beavered)
    assert beavers and beavers[0].cube == 4  # type: ignore[union-attr]


class DoubleAndBeaver(BeaverEverywhere):
    name = "double-and-beaver"

    async def should_double(self, position: Position, context: Context) -> bool:
        return True


@pytest.mark.parametrize("limit", [1, 2, 3])
def test_beaver_chains_stop_at_the_rules_limit_r24(limit: int) -> None:
    _, events = play([DoubleAndBeaver(), DoubleAndBeaver()], 3, length=0, games=1,
                     rules=Rules(beavers=True, beaver_limit=limit))
    cube = acts(events, Doubled, Beavered, Raccooned, Taken)
    first_take = next(k for k, e in enumerate(cube) if isinstance(e, Taken))
    exchange = cube[:first_take + 1]
    assert isinstance(exchange[0], Doubled) and len(exchange) == limit + 2
    redoubles = exchange[1:-1]
    assert all(isinstance(e, (Beavered, Raccooned)) for e in redoubles)
    assert [isinstance(e, Raccooned) for e in redoubles] == [False] + [True] * (limit - 1)
    seats = [e.seat for e in exchange]  # type: ignore[union-attr]
    assert all(a != b for a, b in zip(seats, seats[1:-1]))  # the two sides alternate
    assert exchange[-1].cube == 2 << limit  # type: ignore[union-attr]


class FixedAnswer(BeaverEverywhere):
    def __init__(self, answer: TakeDecision) -> None:
        self.answer = answer
        self.name = answer.value

    async def take_decision(self, position: Position, context: Context) -> TakeDecision:
        return self.answer


def test_a_game_resumed_mid_chain_asks_the_side_to_act_r24() -> None:
    from bgbot.core.game import Game

    game = Game.start_from(Position.initial(), 0, rules=Rules(beavers=True))
    game.double()
    game.beaver()
    game.raccoon()  # seat 0 raccooned: seat 1 (the beaverer) must answer the 8
    events: list[ev.Event] = []
    referee = Referee([FixedAnswer(TakeDecision.DROP), FixedAnswer(TakeDecision.TAKE)],
                      SeededDice(1), length=0, listeners=[events.append], match_id="r")
    asyncio.run(referee.play_game(game))
    answer = next(e for e in events
                  if isinstance(e, ev.Acted) and isinstance(e.action, (Taken, Dropped)))
    assert answer == ev.Acted("r", 1, Taken(1, 8))
    assert game.history[3] == Taken(1, 8)


def test_mirrored_self_play_of_a_deterministic_agent_cancels_exactly() -> None:
    tally, played = run_series_sync(
        SeriesConfig("pubeval", "pubeval", length=0, games=20, mirror=True, rules=Rules(cube=False))
    )
    assert tally.games == 20
    assert tally.points == 0
    assert all(unit == 0 for unit in tally.units)
    assert len(tally.units) == 10


def test_heuristic_beats_random_clearly() -> None:
    tally, _ = run_series_sync(
        SeriesConfig("heuristic", "random", length=0, games=20, mirror=True, rules=Rules(cube=False))
    )
    assert tally.ppg > 1.0
    low, _ = tally.ppg_interval()
    assert low > 0


def test_opening_dice_are_the_scripted_ones() -> None:
    dice = ScriptedDice(openings=[(6, 6), (3, 1)], rolls=[(6, 5)] * 400)
    events: list[ev.Event] = []
    referee = Referee([create_agent("pubeval"), create_agent("pubeval")], dice, length=1,
                      listeners=[events.append], rules=Rules(cube=False))
    asyncio.run(referee.play())
    openings = acts(events, OpeningRolled)
    assert [(e.die0, e.die1) for e in openings][:2] == [(6, 6), (3, 1)]  # type: ignore[union-attr]
    first_play = acts(events, Moved)[0]
    assert isinstance(first_play, Moved)
    assert first_play.seat == 0 and first_play.dice == (3, 1)
    assert str(first_play.play) == "8/5 6/5"


@pytest.mark.parametrize(
    "text, message",
    [("", "agent name"), ("heuristic:plies", "key=value"), ("nosuch", "unknown agent"),
     ("heuristic:depth=2", "unknown; known options"), ("heuristic:plies=x", "integer"),
     ("pubeval:a=1,a=2", "given twice")],
)
def test_bad_agent_specs_are_named(text: str, message: str) -> None:
    with pytest.raises(FormatError, match=message):
        create_agent(text)


def test_agent_specs_parse_options() -> None:
    spec = parse_agent_spec("Heuristic:plies=1, noise=0.02")
    assert spec.name == "heuristic" and dict(spec.options) == {"plies": "1", "noise": "0.02"}
    assert str(spec) == "heuristic:plies=1,noise=0.02"
    assert isinstance(create_agent("random:seed=4"), PlayerAgent)


def test_a_decided_game_ends_in_a_resignation_the_other_side_accepts_r27() -> None:
    from bgbot.core.game import Game

    from .conftest import board

    # Seat 0 is on roll with all fifteen chequers in the outfield; the opponent bears off its
    # last two chequers with any roll: the gammon is certain, a backgammon impossible.
    hopeless = board({18: 3, 17: 3, 16: 3, 15: 3, 14: 3}, {1: 2})
    game = Game.start_from(hopeless, 0, rules=Rules(cube=False))
    events: list[ev.Event] = []
    referee = Referee([create_agent("heuristic"), create_agent("heuristic")], SeededDice(1),
                      length=0, listeners=[events.append], match_id="r")
    asyncio.run(referee.play_game(game))
    records = [ev.action_record(e.action) for e in events if isinstance(e, ev.Acted)]
    resigned = [fields for kind, fields in filter(None, records) if kind == "resign"]
    assert resigned and resigned[0]["seat"] == 0 and resigned[0]["accepted"]
    assert game.outcome is not None and game.outcome.ending == "resign"
    assert resigned[0]["value"] == 2
    assert game.outcome.winner == 1 and game.outcome.points == 2
