"""One trial of a rollout played by any agent, cubeless or cubeful: the referee hosts it.

Where the C kernel cannot play a trial (another player than bgbot's 0-ply one, the cube in
play), the trial is a game hosted by the `Referee` from the rolled-out position, both seats
played by the same agent (`Agent` is asynchronous, so gnubg runs through the same code as our
players), the cube handled by the agent's own ``should_double`` and ``take_decision`` and the
rules by the core's `Game`. Two things differ from a match:

* nobody resigns: every game is played out, as gnubg's rollouts do;
* the dice are the trial's (`dice.RolloutDice`); with ``truncate`` they run out before roll
  ``truncate`` (after the player on roll made his cube decision), and the trial's value is
  taken there: the player's cubeless evaluation of the position (its own, `RolloutPlayer`),
  and in cubeful play the cube model's value of it (`values.ValueMap.cut`).

Variance reduction follows every move (`Moved`): its roll's luck, judged as in `trial`
(`judged_after_roll` minus `roll_average`, our evaluator at 0-ply), from the viewer's side;
in cubeful play each roll's luck is also valued (`ValueMap.luck`) and scaled by the cube in
force over the position's cube. Played by bgbot's 0-ply player, a cubeless trial here is the
C kernel's trial to the last bit (tests).
"""

from __future__ import annotations

from typing import Sequence

from ..agents.base import Agent, PlayerAgent
from ..core.context import Context, CubeOwner
from ..core.dice import DiceExhausted, DiceSource, GameDice
from ..core.game import Game, Moved
from ..core.position import Play, Position
from ..players.base import Probabilities, TakeDecision
from ..players.evaluator import HeuristicEvaluator
from ..players.heuristic import HeuristicPlayer, roll_average
from ..referee import events as ev
from ..referee.referee import Referee
from .dice import RolloutDice, TrialRolls
from .settings import RolloutJob
from .trial import Trial, flip_luck, judged_after_roll
from .values import ValueMap

__all__ = ["RolloutPlayer", "agent_trial"]


class PlaysOn(Agent):
    """An agent that never resigns (a rollout plays every game out); otherwise ``agent``."""

    def __init__(self, agent: Agent) -> None:
        self.agent = agent
        self.name = agent.name

    async def choose_play(self, position: Position, dice: Sequence[int], context: Context) -> Play:
        return await self.agent.choose_play(position, dice, context)

    async def should_double(self, position: Position, context: Context) -> bool:
        return await self.agent.should_double(position, context)

    async def take_decision(self, position: Position, context: Context) -> TakeDecision:
        return await self.agent.take_decision(position, context)

    def reseed(self, key: str) -> None:
        self.agent.reseed(key)


class RolloutPlayer:
    """The agent that plays a rollout, with what a trial needs besides its decisions: its
    cubeless evaluation where a trial is cut, and the judge of the luck (bgbot's 0-ply
    evaluator: the player's own where the player is bgbot's heuristic, the shared default
    otherwise)."""

    def __init__(self, agent: Agent, default_judge: HeuristicEvaluator) -> None:
        self.agent = agent
        self.heuristic: HeuristicPlayer | None = None
        """The heuristic player behind the agent, if it is one."""
        if isinstance(agent, PlayerAgent) and isinstance(agent.player, HeuristicPlayer):
            self.heuristic = agent.player
        self.judge = self.heuristic.evaluator if self.heuristic is not None else default_judge
        self.seats = PlaysOn(agent)

    async def chances(self, position: Position, context: Context) -> Probabilities:
        """The player's cubeless chances of the side on roll in ``position`` (before
        rolling): the heuristic's evaluator, an engine's ``evaluate`` (gnubg), else the
        judge's."""
        if self.heuristic is not None:
            return self.heuristic.evaluator.evaluate(position)
        evaluate = getattr(self.agent, "evaluate", None)
        if evaluate is not None:
            found = await evaluate(position, context)
            chances = getattr(found, "probabilities", found)
            return Probabilities(*chances)
        return self.judge.evaluate(position)


class _Truncated(DiceExhausted):
    """The trial's dice ran out: it is cut here."""


class _TrialDice(DiceSource, GameDice):
    """The dice of one trial as the referee asks for them, running out at ``limit`` rolls
    (0: never)."""

    def __init__(self, rolls: TrialRolls, limit: int) -> None:
        self.rolls = rolls
        self.limit = limit

    def for_game(self, game: int) -> GameDice:
        return self

    def opening(self) -> tuple[int, int]:
        raise AssertionError("a rollout starts after the opening roll")

    def roll(self) -> tuple[int, int]:
        if self.limit and self.rolls.played == self.limit:
            raise _Truncated(f"truncated after {self.limit} plies")
        return self.rolls.next()


class _Luck:
    """A referee listener summing the viewer's luck over the trial's moves."""

    def __init__(self, judge: HeuristicEvaluator, viewer: int, values: ValueMap, cube: int,
                 game: Game) -> None:
        self.judge = judge
        self.viewer = viewer
        self.values = values
        self.cube = cube
        self.game = game
        self.chances = [0.0] * 5
        self.cubeful = 0.0

    def __call__(self, event: ev.Event) -> None:
        if not isinstance(event, ev.Acted) or not isinstance(event.action, Moved):
            return
        move = event.action
        judged = judged_after_roll(self.judge, move.before, move.dice)
        mean = roll_average(self.judge, move.before)
        delta = [judged[h] - mean[h] for h in range(5)]
        mine = delta if move.seat == self.viewer else flip_luck(delta)
        for h in range(5):
            self.chances[h] += mine[h]
        self.cubeful += self.values.luck(mine) * (self.game.cube_value / self.cube)


def start_game(position: Position, context: Context) -> Game:
    """A game in ``position`` with the side on roll (seat 0) about to roll or double, in
    ``context`` (seat 0's)."""
    owner = context.cube_owner
    return Game.start_from(
        position, 0, rules=context.rules, match_length=context.match_length,
        score=(context.my_score, context.opponent_score), crawford=context.crawford,
        post_crawford=context.post_crawford, cube_value=context.cube_value,
        cube_owner=None if owner is CubeOwner.CENTRE else 0 if owner is CubeOwner.ME else 1)


async def agent_trial(player: RolloutPlayer, job: RolloutJob, dice: RolloutDice, trial: int,
                      values: ValueMap) -> Trial:
    """Trial ``trial`` of ``job``, hosted by the referee (module docstring), for the viewer
    (whose context ``values`` holds)."""
    settings = job.settings
    game = start_game(job.position, job.context)
    viewer = 0 if job.for_roller else 1
    luck = _Luck(player.judge, viewer, values, job.context.cube_value, game)
    rolls = dice.rolls(trial)
    referee = Referee((player.seats, player.seats), _TrialDice(rolls, settings.truncate),
                      length=job.context.match_length, rules=job.context.rules,
                      listeners=(luck,) if settings.vr else (),
                      seed=f"rollout:{settings.seed}:{trial}")
    cubeful: float | None = None
    try:
        await referee.play_game(game)
    except _Truncated:
        roller = game.seat_on_roll
        context = game.context_for(roller)
        chances = await player.chances(game.position, context)
        outcome = chances if roller == viewer else chances.flipped()
        if job.cubeful:
            cubeful = values.cut(chances, game.position, context, roller == viewer)
    else:
        result = game.outcome
        assert result is not None
        won = result.winner == viewer
        kind = result.kind
        mine = Probabilities(1.0, float(kind >= 2), float(kind >= 3), 0.0, 0.0)
        outcome = mine if won else mine.flipped()
        if job.cubeful:
            cubeful = values.game_result(result.points if won else -result.points)
    five = (outcome[0], outcome[1], outcome[2], outcome[3], outcome[4])
    lucky = luck.chances
    return Trial(five, (lucky[0], lucky[1], lucky[2], lucky[3], lucky[4]), rolls.played,
                 cubeful, luck.cubeful if job.cubeful else 0.0)
