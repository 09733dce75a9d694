"""The referee: hosts a match or money session between two agents (DESIGN §5).

It owns the dice (a `DiceSource`, so a seed reproduces a match and mirrored sources replay the
same dice with the seats swapped), asks each agent for its decisions, checks every decision with
the rules core before it takes effect, and tells its listeners what happened.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from dataclasses import dataclass, field
from typing import Sequence

from ..agents.base import Agent
from ..core.dice import DiceSource
from ..core.errors import BgbotError, IllegalAction
from ..core.game import Game, GameOutcome, Phase
from ..core.match import Match
from ..core.position import Play
from ..core.rules import Rules
from ..players.base import Context, TakeDecision
from . import events as ev

log = logging.getLogger(__name__)

SEEDING_VERSION = 2
"""How agents' random streams are derived: 1 = one stream per agent, seeded once when it is
built (a resumed match drew differently); 2 = restarted before every decision from the match
seed, the game and the point in it (`Referee._ask`). Stores of seeded results record it."""

MAX_ATTEMPTS = 3
"""How often an agent is asked again after an illegal play before the referee gives up (R36)."""

BREATHE_EVERY = 0.05
"""Seconds a match may hold the event loop: in-process agents never wait, so without a yield
now and then a whole session would run without letting signals, timers or other tasks in."""


class IllegalDecision(BgbotError):
    """An agent kept answering with something the rules do not allow."""


async def legal_play(agent: Agent, game: Game, context: Context, where: str) -> Play:
    """Ask ``agent`` for its play of ``game``'s roll and make it, asking again after an
    illegal one (each is logged, ``where`` saying in which game) up to `MAX_ATTEMPTS` times;
    the canonical play made. `IllegalDecision` after that many illegal plays in a row."""
    dice = game.dice
    assert dice is not None
    before = game.position
    candidate = Play()
    for attempt in range(1, MAX_ATTEMPTS + 1):
        candidate = await agent.choose_play(before, dice, context)
        try:
            return game.move(candidate)
        except IllegalAction as exc:
            log.warning("%s: %s made an illegal play (attempt %d): %s", where, agent.name,
                        attempt, exc)
    raise IllegalDecision(f"{agent.name} made {MAX_ATTEMPTS} illegal plays in a row with "
                          f"{dice[0]}{dice[1]}; last: {candidate}")


@dataclass
class MatchResult:
    """What a hosted match produced: final score, winner, and every game's outcome (not the
    games themselves: a session of 100,000 games must not keep them in memory)."""

    match_id: str
    names: tuple[str, str]
    length: int
    score: tuple[int, int]
    winner: int | None
    outcomes: list[GameOutcome] = field(default_factory=list)
    """The games played by this `Referee.play` (a resumed match: not the earlier ones)."""
    played: int = 0
    """Games of the match played in all, resumed ones included."""


@dataclass
class Resume:
    """Where `Referee.play` takes up a match: its state, the game in play (None between
    games), and how many games were started before (the game in play counted)."""

    match: Match
    current: Game | None
    played: int


def context_for(game: Game, seat: int) -> Context:
    """The decision context of ``seat`` in ``game``, seen from that seat."""
    return game.context_for(seat)


class Referee:
    """Plays one match (``length`` > 0) or money session (``length`` 0, ``games`` games)."""

    def __init__(
        self,
        agents: Sequence[Agent],
        dice: DiceSource,
        *,
        length: int = 7,
        games: int = 1,
        rules: Rules | None = None,
        listeners: Sequence[ev.Listener] = (),
        match_id: str | None = None,
        names: Sequence[str] | None = None,
        seed: str | None = None,
    ) -> None:
        if len(agents) != 2:
            raise ValueError(f"a match needs two agents, got {len(agents)}")
        if length < 0:
            raise ValueError(f"length must be >= 0 (0 = money session), got {length}")
        if length == 0 and games < 1:
            raise ValueError(f"a money session needs at least one game, got {games}")
        self.agents = (agents[0], agents[1])
        self.dice = dice
        self.length = length
        self.money_games = games
        self.rules = rules if rules is not None else Rules()
        self.listeners = list(listeners)
        self.match_id = match_id or uuid.uuid4().hex[:12]
        chosen = names if names is not None else (agents[0].name, agents[1].name)
        self.names = (str(chosen[0]), str(chosen[1]))
        self.current_game: Game | None = None
        """The game in play during `play` (None between games)."""
        self._seen = 0
        """How many of the current game's actions have been emitted."""
        self.seed = seed
        """The match's seed for the agents' random streams (None: the agents keep their own
        streams); see `_ask`."""
        self.stopping = False
        """`stop_after_game` was called: no new game is started."""
        self._breathed = time.monotonic()

    def _ask(self, seat: int, kind: str, game: Game, number: int) -> Agent:
        """The agent in ``seat``, its random stream restarted for this decision: keyed by the
        match seed, the game, how many actions the game has and the question, so that a game
        resumed from its journal asks each question with the same stream as when it was first
        played (DESIGN §2). Derivation version `SEEDING_VERSION`."""
        agent = self.agents[seat]
        if self.seed is not None:
            agent.reseed(f"bgbot-decision:{self.seed}:{number}:{len(game.history)}:{seat}:{kind}")
        return agent

    def stop_after_game(self) -> None:
        """End `play` after the game in play: the match (or session) ends there, unfinished
        (``winner`` None), as if it had been that long."""
        self.stopping = True

    async def _breathe(self) -> None:
        """Yield to the event loop when this match has held it for `BREATHE_EVERY` seconds."""
        now = time.monotonic()
        if now - self._breathed >= BREATHE_EVERY:
            await asyncio.sleep(0)
            self._breathed = time.monotonic()

    def _emit(self, event: ev.Event) -> None:
        for listener in self.listeners:
            listener(event)

    def _acted(self, game: Game, number: int) -> None:
        """Emit the actions ``game`` recorded since the last call, each in its envelope."""
        history = game.history
        for action in history[self._seen:]:
            self._emit(ev.Acted(self.match_id, number, action))
        self._seen = len(history)

    async def play(self, resume: Resume | None = None, *,
                   announce_end: bool = True) -> MatchResult:
        """Play the match to its end, from the start or from ``resume`` (a match rebuilt from a
        journal); ``announce_end`` False leaves the ``MatchEnded`` event to the caller (who
        first makes the result durable)."""
        if resume is None:
            match, game, number = Match(self.length, self.rules), None, 0
        else:
            match, game, number = resume.match, resume.current, resume.played
        result = MatchResult(self.match_id, self.names, self.length, (0, 0), None)
        while True:
            if game is None:
                if match.is_over or self.stopping or not (
                        self.length or number < self.money_games):
                    break
                number += 1
                game = match.new_game()
                self._emit(ev.GameStarted(self.match_id, number, match.score, game.crawford,
                                          game.post_crawford))
            self.current_game = game
            await self.play_game(game, number)
            assert game.outcome is not None
            match.record(game.outcome)
            result.outcomes.append(game.outcome)
            self.current_game = None
            self._emit(ev.GameEnded(self.match_id, number, game.outcome, match.score, game))
            game = None
        result.score = match.score
        result.winner = match.winner
        result.played = number
        if announce_end:
            self._emit(ev.MatchEnded(self.match_id, match.score, match.winner, number))
        return result

    async def play_game(self, game: Game, number: int = 1) -> None:
        """Play ``game`` to its end from whatever phase it is in (a new game, or one set up
        with `Game.start_from`), with the dice of game ``number`` of the dice source."""
        dice = self.dice.for_game(number - 1)
        self._seen = len(game.history)  # a resumed game's actions were emitted before
        while game.phase is Phase.OPENING:
            game.opening_roll(*dice.opening())
            self._acted(game, number)
        while not game.is_over:
            await self._breathe()
            phase = game.phase
            seat = game.seat_on_roll
            if phase is Phase.ROLL:
                if await self._maybe_resign(game, number, seat):
                    continue
                if game.may_double() and await self._ask(seat, "double", game, number).should_double(
                    game.position, context_for(game, seat)
                ):
                    game.double()
                    self._acted(game, number)
                    await self._answer_double(game, number, seat)
                    continue
                game.roll(dice.roll())
                self._acted(game, number)
            elif phase is Phase.MOVE:
                await self._move(game, number, seat)
            elif phase is Phase.TAKE:
                await self._answer_double(game, number, seat)
            elif phase is Phase.BEAVER_TAKE:
                await self._answer_beaver(game, number, seat, 1 - seat)
            else:
                raise IllegalDecision(f"referee reached an unexpected phase {phase.value}")

    async def _maybe_resign(self, game: Game, number: int, seat: int) -> bool:
        """Ask the player on roll whether it resigns; True when the game ended."""
        agent = self._ask(seat, "resign", game, number)
        value = await agent.offer_resignation(game.position, context_for(game, seat))
        if not value:
            return False
        if value not in (1, 2, 3) or not game.may_resign(seat, value):
            log.warning("match %s: %s offered an invalid resignation %r; ignored",
                        self.match_id, agent.name, value)
            return False
        game.resign(seat, value)
        other = 1 - seat
        accepted = await self._ask(other, "accept", game, number).accept_resignation(
            game.position, context_for(game, other), value
        )
        if accepted:
            game.accept_resignation()
        else:
            game.reject_resignation()
        self._acted(game, number)
        return game.is_over

    async def _answer_double(self, game: Game, number: int, doubler: int) -> None:
        taker = 1 - doubler
        decision = await self._ask(taker, "take", game, number).take_decision(
            game.position, context_for(game, taker))
        if decision is TakeDecision.DROP:
            game.drop()
            self._acted(game, number)
            return
        if decision is TakeDecision.BEAVER:
            if not game.may_beaver():
                raise IllegalDecision(
                    f"{self.agents[taker].name} beavered where the rules do not allow it "
                    f"(legal: {', '.join(game.legal_actions())})"
                )
            game.beaver()
            self._acted(game, number)
            await self._answer_beaver(game, number, doubler, taker)
            return
        game.take()
        self._acted(game, number)

    async def _answer_beaver(self, game: Game, number: int, doubler: int, beaverer: int) -> None:
        """The pending beaver or raccoon is answered, back and forth, until a take or a drop.

        Each side may raccoon (redouble again) while `Game.may_raccoon` allows it, that is up
        to `Rules.max_redoubles` beavers and raccoons after one double (gnubg's ``set beavers
        N``); a redouble asked for beyond that is a take. The answering side is the game's
        `seat_to_act` (``doubler`` and ``beaverer`` only name the first exchange), so a game
        resumed in the middle of a chain is answered by the right side. The question reuses
        `take_decision`: the answering side is asked as if the other side had doubled it, with
        the board seen from that other side (a tempo off for the doubler, who is really on
        roll; documented approximation).
        """
        while game.phase is Phase.BEAVER_TAKE:
            answering = game.seat_to_act
            assert answering is not None
            redoubler = 1 - answering
            decision = await self._ask(answering, "take", game, number).take_decision(
                game.board_for(redoubler), context_for(game, answering)
            )
            if decision is TakeDecision.DROP:
                game.drop()
            elif decision is TakeDecision.BEAVER and game.may_raccoon():
                game.raccoon()
            else:
                game.take()
            self._acted(game, number)

    async def _move(self, game: Game, number: int, seat: int) -> None:
        plays = game.legal_plays()
        if len(plays) <= 1:
            game.move(plays[0] if plays else Play())
        else:
            await legal_play(self._ask(seat, "play", game, number), game, context_for(game, seat),
                             f"match {self.match_id} game {number}")
        self._acted(game, number)
