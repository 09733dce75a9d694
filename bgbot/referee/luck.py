"""Luck adjustment of game results: take the dice's share out of the points.

The luck of one roll, for the player who rolled it, is the equity he reaches with the dice he got
(after the best play, as a reference evaluator — the *judge* — sees it) minus the average of that
over all 36 rolls (the 21 distinct rolls, doubles weight 1, others 2; for the opening roll the 30
non-doubles, which are the only rolls the opening can bring). Summed over a game it estimates how
much of the result the dice gave; subtracting A's luck and adding B's leaves an estimate of the
result with the same mean (luck averages zero over the rolls, whatever the judge) and, with a
judge that sees equity roughly right, a much smaller variance.

Units are cubeless money equity (ppg). In a cubeful game each roll's luck is multiplied by the cube
value in force when it was rolled (the points at stake scale with the cube); this ignores the
cube's ownership and leverage, a first-order correction we document rather than hide. Automatic
doubles are not seen (the referee reports no event for them). Match-play results would need luck in
match winning chances; the tracker still reports ppg-unit luck there, which is only indicative.
"""

from __future__ import annotations

import asyncio
import threading
from typing import TYPE_CHECKING, Any, Callable, Coroutine, Protocol, TypeVar

from ..core.context import Context
from ..core.game import Moved, OpeningRolled, Rolled, Taken
from ..core.position import Position
from ..players.base import Probabilities
from ..players.evaluator import HeuristicEvaluator, equity_after
from ..players.features import ROLLS
from ..players.pubeval import pubeval_score
from . import events as ev

if TYPE_CHECKING:
    from ..engines.gnubg import GnubgEngine

__all__ = [
    "HeuristicJudge",
    "LuckJudge",
    "LuckTracker",
    "adjusted_points",
    "gnubg_judge",
    "heuristic_judge",
    "roll_luck",
]

OPENING_ROLLS: tuple[tuple[int, int, int], ...] = tuple(r for r in ROLLS if r[0] != r[1])
"""The 15 distinct non-double rolls, weight 2 each (30 of 36): what an opening roll can be."""

T = TypeVar("T")


class LuckJudge(Protocol):
    """Anything that evaluates cubeless money equity for the player on roll."""

    def equity_after_roll(self, position: Position, dice: tuple[int, int],
                          context: Context) -> float:
        """Best equity the player on roll in ``position`` reaches with ``dice`` (after the best
        play, from the roller's side)."""
        ...


class _BoundedCache:
    """(position key, dice) -> equity; cleared when full (cheap, and positions rarely repeat
    across games, so an LRU would not pay for itself)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.data: dict[tuple[tuple[int, ...], tuple[int, int]], float] = {}

    def get(self, position: Position, dice: tuple[int, int],
            compute: Callable[[], float]) -> float:
        key = (position.key(), (min(dice), max(dice)))
        found = self.data.get(key)
        if found is None:
            if len(self.data) >= self.limit:
                self.data.clear()
            found = self.data[key] = compute()
        return found


class HeuristicJudge:
    """bgbot's `HeuristicEvaluator` at 0-ply: the best play by cubeless equity, its equity.

    With ``prefilter`` (default, as `HeuristicPlayer` does) rolls with more than 16 plays keep
    the 12 best by pubeval's cheap score before the evaluator looks at them. The context is not
    used: the judge's unit is cubeless money equity.
    """

    PREFILTER_ABOVE = 16
    PREFILTER_KEEP = 12

    def __init__(self, evaluator: HeuristicEvaluator | None = None, *, prefilter: bool = True,
                 cache_size: int = 200_000) -> None:
        if evaluator is None:
            from ..players.heuristic import _shared_evaluator

            evaluator = _shared_evaluator()
        self.evaluator = evaluator
        self.prefilter = prefilter
        self.cache = _BoundedCache(cache_size)

    def equity_after_roll(self, position: Position, dice: tuple[int, int],
                          context: Context) -> float:
        del context
        return self.cache.get(position, dice, lambda: self._best(position, dice))

    def _best(self, position: Position, dice: tuple[int, int]) -> float:
        # evaluate_sides(after.opponent, after.mover): the opponent on roll after our play
        # (a finished game included), so minus its equity is ours.
        evaluate = self.evaluator.evaluate_sides
        results = position.play_results(dice)
        if not results:  # no play: the board stays, the turn passes
            return -evaluate(position.opponent, position.mover).equity()
        afters = [after for _, after in results]
        if self.prefilter and len(afters) > self.PREFILTER_ABOVE:
            race = position.is_race()
            afters.sort(key=lambda after: pubeval_score(after, race), reverse=True)
            del afters[self.PREFILTER_KEEP:]
        return -min(evaluate(after.opponent, after.mover).equity() for after in afters)


def heuristic_judge(**options: Any) -> LuckJudge:
    """The default judge: `HeuristicJudge` (options: evaluator, prefilter, cache_size)."""
    return HeuristicJudge(**options)


def roll_luck(judge: LuckJudge, position: Position, dice: tuple[int, int], context: Context,
              *, opening: bool = False) -> float:
    """Equity after the actual roll minus its mean over all 36 rolls (the 30 non-doubles for
    an ``opening`` roll), for the player on roll in ``position``."""
    rolls = OPENING_ROLLS if opening else ROLLS
    total = 0.0
    weight = 0
    for a, b, w in rolls:
        total += w * judge.equity_after_roll(position, (a, b), context)
        weight += w
    actual = (min(dice), max(dice))
    return judge.equity_after_roll(position, actual, context) - total / weight


class LuckTracker:
    """A referee listener: sums each seat's roll luck per game (times the cube in force).

    Use one tracker per match or money session (games are keyed by their number). It sees every
    `Moved` action, including forced passes (no legal play: an unlucky roll too); an opening
    roll is recognised by the `OpeningRolled` action that precedes it.
    """

    def __init__(self, judge: LuckJudge, *, context: Context | None = None) -> None:
        self.judge = judge
        self.context = context if context is not None else Context()
        self._luck: dict[int, list[float]] = {}
        self._cube: dict[int, int] = {}
        self._opening: dict[int, bool] = {}
        self.rolls = 0
        """Rolls judged so far."""

    def __call__(self, event: ev.Event) -> None:
        if isinstance(event, ev.GameStarted):
            self._luck[event.game] = [0.0, 0.0]
            self._cube[event.game] = 1
            self._opening[event.game] = False
        elif isinstance(event, ev.Acted):
            action, game = event.action, event.game
            if isinstance(action, OpeningRolled):
                self._opening[game] = action.winner is not None
            elif isinstance(action, Rolled):
                self._opening[game] = False
            elif isinstance(action, Taken):
                self._cube[game] = action.cube
            elif isinstance(action, Moved):
                opening = self._opening.get(game, False)
                self._opening[game] = False
                luck = roll_luck(self.judge, action.before, action.dice, self.context,
                                 opening=opening)
                self._luck.setdefault(game, [0.0, 0.0])[action.seat] += \
                    luck * self._cube.get(game, 1)
                self.rolls += 1

    def game_luck(self, number: int) -> tuple[float, float]:
        """(luck of seat 0, luck of seat 1) in game ``number`` (1-based), in ppg units."""
        try:
            luck = self._luck[number]
        except KeyError:
            raise KeyError(f"no game {number} seen by this luck tracker") from None
        return (luck[0], luck[1])


def adjusted_points(points: float, luck_a: float, luck_b: float) -> float:
    """A's points minus its net luck (A's luck minus B's), in cubeless ppg units."""
    return points - (luck_a - luck_b)


# --------------------------------------------------------------------------- gnubg as the judge


class GnubgJudge:
    """gnubg as the judge: for each roll, gnubg's own best play (its ``external`` move request at
    the engine's plies), then gnubg's cubeless evaluation of the position after it.

    `GnubgEngine` is asynchronous and the judge is called synchronously from a referee listener
    (inside the referee's event loop), so the engine lives on a private event loop in a daemon
    thread; each question blocks until gnubg answers. Two requests per roll, 21 rolls per turn
    (cached per position and roll): slow, and meant for small careful duels. Call `close`.
    """

    def __init__(self, engine: GnubgEngine, *, cache_size: int = 200_000) -> None:
        self.engine = engine
        self.cache = _BoundedCache(cache_size)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="gnubg-judge",
                                        daemon=True)
        self._thread.start()

    def _run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result()

    def _probabilities(self, position: Position) -> Probabilities:
        return self._run(self.engine.evaluate(position, Context())).probabilities

    def equity_after_roll(self, position: Position, dice: tuple[int, int],
                          context: Context) -> float:
        del context
        return self.cache.get(position, dice, lambda: self._best(position, dice))

    def _best(self, position: Position, dice: tuple[int, int]) -> float:
        results = position.play_results(dice)
        if not results:
            return equity_after(self._probabilities, position)
        if len(results) == 1:
            after = results[0][1]
        else:
            play = self._run(self.engine.choose_play(position, dice, Context()))
            after = position.apply(play)
        return equity_after(self._probabilities, after)

    def close(self) -> None:
        """Stop gnubg and the judge's thread."""
        if self._loop.is_closed():
            return
        self._run(self.engine.close())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
        self._loop.close()


def gnubg_judge(**options: Any) -> GnubgJudge:
    """gnubg as the judge (options go to `GnubgEngine`: plies, binary, timeout, ...; default
    0-ply). Raises `EngineNotFound` on first use when gnubg is not installed."""
    from ..engines.gnubg import GnubgEngine

    return GnubgJudge(GnubgEngine(**options))
