"""bgbot's own player: the heuristic evaluator with optional 1-ply look-ahead and noise.

* ``plies=0``: play the candidate whose resulting position has the best utility for us, judged
  by `HeuristicEvaluator`: cubeless money equity, or in match play (and for unusual money
  rules) ``bgbot.players.cube.match_utility`` (match winning chances from the MET). With the
  evaluator's compiled net, the candidates come from the C move generator
  (`HeuristicEvaluator.legal_plays`: boards and steps, no Python positions or plays) and every
  one is evaluated (a compiled evaluation costs less than a pubeval score). With the
  pure-Python evaluator and more than ``PREFILTER_ABOVE`` candidates, pubeval's cheap score
  keeps the best ``PREFILTER_KEEP`` first (measured: no loss of strength, twice the speed).
* ``plies=1``: keep the best 0-ply candidates (at most ``MAX_CANDIDATES`` within ``THRESHOLD``
  of the best), then for each average over the opponent's 21 rolls the value after the
  opponent's best 0-ply reply (heuristic-player.md §4). Every reply is evaluated
  (``reply_keep`` 0, the default); with the evaluator's compiled net the whole look-ahead runs
  in C (`HeuristicEvaluator.one_ply`, the same result as the Python loop to the last bit).
* ``noise``: Gaussian noise of that standard deviation on each candidate's equity, from a
  ``random.Random(seed)``, for weaker and varied play.

Cube and resignation decisions come from ``bgbot.players.cube`` (Janowski money / MET match
cube, with this evaluator's chances averaged over the roller's 21 rolls when ``cube_plies`` is 1:
the static evaluation's error, about 0.2 equity RMS against gnubg, made the cube double and take
on noise; the look-ahead cuts the error where cube decisions are close) and ``bgbot.players.resign`` (resign only on proof; accept
when the offer is worth at least playing on).
"""

from __future__ import annotations

import random
from typing import Callable, Sequence

from ..core.position import Play, Position
from . import cube, resign
from .base import Context, CubeOwner, Probabilities, TakeDecision
from .evaluator import CompiledPlay, HeuristicEvaluator, _terminal
from .features import ROLLS
from .pubeval import pubeval_score

PREFILTER_ABOVE = 16
"""With more candidates than this (mostly doubles), keep only the best ``PREFILTER_KEEP`` by
pubeval's cheap score before evaluating (as bgsage does; heuristic-player.md §4). Pure-Python
evaluator only (``prefilter``): with the compiled net every candidate is evaluated."""
PREFILTER_KEEP = 12
MAX_CANDIDATES = 5
"""1-ply move filter: how many 0-ply candidates survive at most."""
THRESHOLD = 0.16
"""1-ply move filter: survivors are within this much equity of the 0-ply best."""
REPLY_KEEP = 0
"""1-ply reply filter: of the opponent's plays for each roll, pubeval's best few are evaluated
(as the move prefilter does at 0-ply); 0 (the default) evaluates them all, in C when the
evaluator's compiled net is in use (`HeuristicEvaluator.one_ply`: move generation and contact
evaluations without Python objects)."""


class HeuristicPlayer:
    """The heuristic player (see the module docstring)."""

    def __init__(self, plies: int = 0, noise: float = 0.0, seed: int = 0,
                 evaluator: HeuristicEvaluator | None = None, prefilter: bool = True,
                 cube_plies: int = 1, reply_keep: int = REPLY_KEEP) -> None:
        if plies not in (0, 1):
            raise ValueError(f"plies must be 0 or 1, got {plies}")
        if cube_plies not in (0, 1):
            raise ValueError(f"cube_plies must be 0 or 1, got {cube_plies}")
        self.cube_plies = cube_plies
        self.reply_keep = reply_keep
        self.plies = plies
        self.noise = noise
        self.seed = seed
        self.evaluator = evaluator if evaluator is not None else _shared_evaluator()
        self.prefilter = prefilter
        self._rng = random.Random(seed)
        self._affine_cache: dict[Context, tuple[float, ...] | None] = {}
        self.name = f"heuristic-{plies}ply" + (f"-noise{noise:g}" if noise else "")

    # ----------------------------------------------------------------- chequer play

    @staticmethod
    def _plain_money(context: Context) -> bool:
        """Money play where a gammon counts 2 and a backgammon 3 (plain cubeless equity)."""
        rules = context.rules
        if not context.is_money or rules.backgammon_value != 3:
            return False
        return not (rules.jacoby and rules.cube and context.cube_owner is CubeOwner.CENTRE)

    def _utility(self, probs: Probabilities, context: Context) -> float:
        """What we maximise, for chances seen from us: cubeless money equity, or what the cube
        module's ``match_utility`` says (match winning chances in match play; the rules'
        backgammon value and the Jacoby rule in money play)."""
        if self._plain_money(context):
            return probs.equity()
        return cube.match_utility(probs, context)

    def _after_values(self, results: list[tuple[Play, Position]], context: Context) -> list[float]:
        """0-ply utility for us of each candidate's resulting position (mover's view = us)."""
        evaluate = self.evaluator.evaluate_sides
        if self._plain_money(context):
            return [-evaluate(after.opponent, after.mover).equity() for _, after in results]
        return [
            self._utility(evaluate(after.opponent, after.mover).flipped(), context)
            for _, after in results
        ]

    def _one_ply_probs(self, after: Position) -> Probabilities:
        """Our chances after our move ``after``, averaged over the opponent's 21 rolls, each
        answered by the opponent's best 0-ply reply (by cubeless equity). With every reply
        evaluated (``reply_keep`` 0) and the compiled net, the C kernel does it."""
        if not self.reply_keep:
            found = self.evaluator.one_ply(after)
            if found is not None:
                return found
        return self._one_ply_python(after)

    def _one_ply_python(self, after: Position) -> Probabilities:
        """`_one_ply_probs` in Python (the definition of the C kernel, and the path of the
        pubeval reply filter)."""
        terminal = _terminal(after)
        if terminal is not None:
            return terminal
        theirs = after.swapped()
        evaluate = self.evaluator.evaluate
        evaluate_sides = self.evaluator.evaluate_sides
        keep = self.reply_keep
        race = theirs.is_race()
        total = [0.0] * 5
        for a, b, weight in ROLLS:
            results = theirs.play_results((a, b))
            if not results:
                probs = evaluate(after)  # they stand pat; we are on roll
            else:
                if keep and len(results) > keep:
                    results = sorted(results, key=lambda r: pubeval_score(r[1], race),
                                     reverse=True)[:keep]
                best: Probabilities | None = None
                best_eq = 1e9
                for _, reply in results:
                    # reply is from their side; we are on roll after it.
                    mine = _terminal(reply)
                    ours = mine.flipped() if mine is not None else evaluate_sides(
                        reply.opponent, reply.mover)
                    eq = ours.equity()
                    if eq < best_eq:
                        best, best_eq = ours, eq
                assert best is not None
                probs = best
            for k in range(5):
                total[k] += weight * probs[k]
        return Probabilities(*(t / 36.0 for t in total))

    def choose_play(self, position: Position, dice: Sequence[int], context: Context) -> Play:
        plays = self.evaluator.legal_plays(position, dice)
        if plays is not None:
            return self._choose_compiled(plays, context)
        results = position.play_results(dice)
        if not results:
            return Play()
        if len(results) == 1:
            return results[0][0]
        if self.prefilter and len(results) > PREFILTER_ABOVE:
            race = position.is_race()
            ranked = sorted(results, key=lambda r: pubeval_score(r[1], race), reverse=True)
            results = ranked[:PREFILTER_KEEP]
        values = self._after_values(results, context)
        return results[self._pick(values, lambda i: results[i][1], context)][0]

    def _choose_compiled(self, plays: list[CompiledPlay], context: Context) -> Play:
        """`choose_play` on the C move generator's plays (the evaluator's compiled path).

        Every candidate is evaluated: no pubeval prefilter, since a compiled evaluation costs
        less than a pubeval score. Positions are built only for 1-ply survivors, and a `Play`
        only for the choice. The same candidates in the same order as `play_results`, so the
        same choice as the Python path with ``prefilter=False`` (up to the pure-Python
        evaluator's 1e-7 rounding). Other than plain money, the 0-ply values come from
        `_affine_utility` (equal to `_utility` up to float rounding, about 1e-16).
        """
        if not plays:
            return Play()
        if len(plays) == 1:
            return Play._trusted(plays[0][0])
        evaluate = self.evaluator.evaluate_sides
        plain = self._plain_money(context)
        coefficients = None if plain else self._affine_utility(context)
        if coefficients is not None:
            c0, c1, c2, c3, c4, c5 = coefficients
            values = []
            for _, mover, opponent in plays:
                # the opponent's chances on roll; ours are their flip
                win, win_g, win_bg, lose_g, lose_bg = evaluate(opponent, mover)
                values.append(c0 + c1 * (1.0 - win) + c2 * lose_g + c3 * lose_bg + c4 * win_g
                              + c5 * win_bg)
        elif plain:
            values = [-evaluate(opponent, mover).equity() for _, mover, opponent in plays]
        else:
            utility = self._utility
            values = [utility(evaluate(opponent, mover).flipped(), context)
                      for _, mover, opponent in plays]
        best = self._pick(values, lambda i: Position._trusted(plays[i][2], plays[i][1]),
                          context)
        return Play._trusted(plays[best][0])

    def _affine_utility(self, context: Context) -> tuple[float, ...] | None:
        """(c0, c_win, c_win_gammon, c_win_backgammon, c_lose_gammon, c_lose_backgammon) with
        ``_utility(p, context)`` = c0 + Σ c·p for our chances p, or None when it is not affine.

        Every utility `_utility` gives (match winning chances, money with other backgammon
        values or Jacoby) is an expectation over the six outcomes of the game, so affine in the
        five chances: its values at the six outcomes give the coefficients, and two inner
        points confirm them (to 1e-12). One dot product per candidate then replaces the
        MET look-ups (about 7 µs). Probed once per context (cached on the player).
        """
        cache = self._affine_cache
        if context in cache:
            return cache[context]
        if len(cache) > 256:
            cache.clear()

        def u(*chances: float) -> float:
            return self._utility(Probabilities(*chances), context)

        single_loss, single_win = u(0.0, 0.0, 0.0, 0.0, 0.0), u(1.0, 0.0, 0.0, 0.0, 0.0)
        gammon_win, backgammon_win = u(1.0, 1.0, 0.0, 0.0, 0.0), u(1.0, 1.0, 1.0, 0.0, 0.0)
        gammon_loss, backgammon_loss = u(0.0, 0.0, 0.0, 1.0, 0.0), u(0.0, 0.0, 0.0, 1.0, 1.0)
        coefficients = (single_loss, single_win - single_loss, gammon_win - single_win,
                        backgammon_win - gammon_win, gammon_loss - single_loss,
                        backgammon_loss - gammon_loss)
        found: tuple[float, ...] | None = coefficients
        for probe in ((0.55, 0.2, 0.05, 0.1, 0.02), (0.3, 0.1, 0.0, 0.25, 0.08)):
            affine = coefficients[0] + sum(c * p for c, p in zip(coefficients[1:], probe))
            if abs(affine - u(*probe)) > 1e-12:
                found = None
        cache[context] = found
        return found

    def _pick(self, values: list[float], after: Callable[[int], Position],
              context: Context) -> int:
        """Index of the candidate to play, from each candidate's 0-ply utility ``values``
        (``after(i)``: candidate i's resulting position, asked for 1-ply survivors only): the
        1-ply filter and look-ahead when ``plies`` is 1, then noise; the last of equal bests."""
        scored = [(value, i) for i, value in enumerate(values)]
        if self.plies == 1:
            scored.sort(reverse=True)
            best0 = scored[0][0]
            survivors = [s for s in scored[:MAX_CANDIDATES] if s[0] >= best0 - THRESHOLD]
            if len(survivors) > 1:
                scored = [
                    (self._utility(self._one_ply_probs(after(i)), context), i)
                    for _, i in survivors
                ]
            else:
                scored = survivors
        if self.noise:
            gauss = self._rng.gauss
            scored = [(value + gauss(0.0, self.noise), i) for value, i in scored]
        return max(scored)[1]

    # ----------------------------------------------------------------- cube and resignation

    def cube_probabilities(self, position: Position) -> Probabilities:
        """Cubeless chances of the player on roll in ``position`` (before rolling) for cube
        decisions: the 0-ply evaluation, or with ``cube_plies`` = 1 its average over his 21
        rolls, each played by the best 0-ply cubeless equity."""
        if self.cube_plies == 0:
            return self.evaluator.evaluate(position)
        return roll_average(self.evaluator, position)

    def should_double(self, position: Position, context: Context) -> bool:
        if not context.may_double():
            return False
        return cube.should_double(self.cube_probabilities(position), context, position)

    def take_decision(self, position: Position, context: Context) -> TakeDecision:
        return cube.take_decision(self.cube_probabilities(position), context, position)

    def offer_resignation(self, position: Position, context: Context) -> int:
        return resign.offer_resignation(position, context, self.evaluator)

    def accept_resignation(self, position: Position, context: Context, value: int) -> bool:
        return resign.accept_resignation(position, context, value, self.evaluator)


def roll_average(evaluator: HeuristicEvaluator, position: Position, *, keep: int = 0,
                 above: int | None = None) -> Probabilities:
    """The roller's chances in ``position`` before rolling, one ply ahead: the average over
    his 21 rolls of the 0-ply chances after his best play by cubeless equity. With ``keep``,
    only pubeval's best ``keep`` plays of a roll are scored, when it has more than ``above``
    (default ``keep``) plays. Without ``keep`` and with the compiled net, the C kernel does it
    (`HeuristicEvaluator.roll_average`)."""
    if not keep:
        found = evaluator.roll_average(position)
        if found is not None:
            return found
    return _roll_average_python(evaluator, position, keep, above)


def _roll_average_python(evaluator: HeuristicEvaluator, position: Position, keep: int,
                         above: int | None) -> Probabilities:
    """`roll_average` in Python (the definition of the C kernel)."""
    evaluate = evaluator.evaluate_sides
    race = position.is_race()
    limit = keep if above is None else above
    total = [0.0] * 5
    for a, b, weight in ROLLS:
        results = position.play_results((a, b))
        if not results:
            probs = evaluate(position.opponent, position.mover).flipped()
        else:
            if keep and len(results) > limit:
                results = sorted(results, key=lambda r: pubeval_score(r[1], race),
                                 reverse=True)[:keep]
            best: Probabilities | None = None
            best_eq = -1e9
            for _, after in results:
                done = _terminal(after)
                ours = done if done is not None else evaluate(after.opponent,
                                                              after.mover).flipped()
                eq = ours.equity()
                if eq > best_eq:
                    best, best_eq = ours, eq
            assert best is not None
            probs = best
        for k in range(5):
            total[k] += weight * probs[k]
    return Probabilities(*(t / 36.0 for t in total))


_SHARED: list[HeuristicEvaluator] = []


def _shared_evaluator() -> HeuristicEvaluator:
    """One evaluator per process (its tables take a moment to build; its caches are shared)."""
    if not _SHARED:
        _SHARED.append(HeuristicEvaluator())
    return _SHARED[0]

