"""bgbot's own player: the heuristic evaluator with optional 1-ply look-ahead and noise.

* ``plies=0``: play the candidate whose resulting position has the best utility for us, judged
  by `HeuristicEvaluator`: cubeless money equity, or in match play (and for unusual money
  rules) ``bgbot.players.cube.match_utility`` (match winning chances from the MET). The
  candidates and their 0-ply chances come from `HeuristicEvaluator.plays` (with the C
  extension: one call for the move generator and every evaluation, no Python positions or
  plays). With the pure-Python linear evaluator and more than ``PREFILTER_ABOVE``
  candidates, pubeval's cheap score keeps the best ``PREFILTER_KEEP`` first (measured: no
  loss of strength, twice the speed).
* ``plies=1`` and ``plies=2``: gnubg-style move filters (`MOVE_FILTERS`): of the candidates
  ranked at one depth, at most a few within a threshold of the best are looked at one ply
  deeper. 1-ply averages over the opponent's 21 rolls the value after the opponent's best
  0-ply reply (heuristic-player.md §4; every reply evaluated with ``reply_keep`` 0, the
  default); 2-ply does the same with the opponent's best few replies (`TWO_PLY_REPLIES`) looked
  at one ply deeper in turn. With the C extension both run in C
  (`HeuristicEvaluator.one_ply`, `two_ply`: the same results as the Python loops, which are
  their definition, to the last bit).
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
from typing import Callable, NamedTuple, Sequence

from pathlib import Path

from ..core.position import Play, Position
from . import cube, resign
from .base import Context, CubeOwner, Probabilities, TakeDecision
from .evaluator import HeuristicEvaluator, ScoredPlay, _terminal
from .features import ROLLS
from .network import WeightsFile, shipped_zero_ply_weights
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
MOVE_FILTERS: dict[int, tuple[tuple[int, float], ...]] = {
    0: (),
    1: ((MAX_CANDIDATES, THRESHOLD),),
    2: ((8, 0.16), (3, 0.08)),
}
"""Per search depth, the filter before each deeper look: (at most N candidates, within T of the
best at the depth just scored). 2-ply: 8 within 0.16 of the 0-ply best are scored at 1-ply,
then 3 within 0.08 of the 1-ply best at 2-ply (gnubg's "normal" filter keeps up to 8 within
0.16 at 0-ply)."""
TWO_PLY_REPLIES = (1, 0.0)
"""2-ply reply filter: of the opponent's replies to each roll, ranked at 0-ply, the best N
within T are looked at one ply deeper (and the best of them at that depth is his answer)."""
REPLY_KEEP = 0
"""1-ply reply filter: of the opponent's plays for each roll, pubeval's best few are evaluated
(as the move prefilter does at 0-ply); 0 (the default) evaluates them all, in C when the
evaluator's compiled net is in use (`HeuristicEvaluator.one_ply`: move generation and contact
evaluations without Python objects)."""


class RankedPlay(NamedTuple):
    """One candidate of `HeuristicPlayer.rank_plays`."""

    play: Play
    after: Position
    """The position after the play, still from the mover's side."""
    chances: Probabilities
    """The mover's cubeless chances after the play, at ``depth``."""
    value: float
    """What the player maximises: cubeless money equity, or in match play (and other money
    rules) `cube.match_utility` (match winning chances)."""
    depth: int
    """The plies of look-ahead the play was scored at (0 = static evaluation)."""


class HeuristicPlayer:
    """The heuristic player (see the module docstring)."""

    def __init__(self, plies: int = 0, noise: float = 0.0, seed: int = 0,
                 evaluator: HeuristicEvaluator | None = None, prefilter: bool = True,
                 cube_plies: int = 1, reply_keep: int = REPLY_KEEP,
                 cube_life: float | None = None) -> None:
        if plies not in MOVE_FILTERS:
            raise ValueError(f"plies must be 0, 1 or 2, got {plies}")
        if cube_plies not in (0, 1):
            raise ValueError(f"cube_plies must be 0 or 1, got {cube_plies}")
        if cube_life is not None and not 0.0 <= cube_life <= 1.0:
            raise ValueError(f"cube_life must be 0..1, got {cube_life}")
        self.cube_plies = cube_plies
        self.cube_life = cube_life
        """Janowski's cube efficiency x in contact positions (None: `cube.CONTACT_EFFICIENCY`);
        races keep `cube.cube_efficiency`'s values."""
        self.reply_keep = reply_keep
        self.plies = plies
        self.noise = noise
        self.seed = seed
        self.evaluator = evaluator if evaluator is not None else shared_evaluator(
            zero_ply=plies == 0)
        """Without one given, the shipped networks of this depth (`shared_evaluator`: at 0-ply
        the 0-ply network where one is shipped), as the agent ``heuristic`` has them."""
        self.prefilter = prefilter
        self._rng = random.Random(seed)
        self._affine_cache: dict[Context, tuple[float, ...] | None] = {}
        self.name = f"heuristic-{plies}ply" + (f"-noise{noise:g}" if noise else "")

    def reseed(self, key: str) -> None:
        """Restart the noise stream from this player's seed and ``key`` (`Agent.reseed`)."""
        if self.noise:
            self._rng = random.Random(f"{self.seed}:{key}")

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
        """0-ply utility for us of each candidate's resulting position (mover's view = us),
        scored one by one (the pure-Python linear path)."""
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

    def _two_ply_probs(self, after: Position) -> Probabilities:
        """Our chances after our move ``after``, two plies ahead (see `_two_ply_python`); in C
        when the evaluator is compiled."""
        keep, threshold = TWO_PLY_REPLIES
        found = self.evaluator.two_ply(after, keep, threshold)
        if found is not None:
            return found
        return self._two_ply_python(after, keep, threshold)

    def _two_ply_python(self, after: Position, keep: int, threshold: float) -> Probabilities:
        """`_two_ply_probs` in Python (the definition of the C kernel): over the opponent's 21
        rolls, his replies ranked by his 0-ply cubeless equity (ties in `play_results` order),
        the best ``keep`` within ``threshold`` of the best looked at one ply deeper
        (`_one_ply_python` from his side), and the one best for him there taken; where he
        cannot move, our own roll is looked at (`roll_average`)."""
        terminal = _terminal(after)
        if terminal is not None:
            return terminal
        theirs = after.swapped()
        evaluate_sides = self.evaluator.evaluate_sides
        total = [0.0] * 5
        for a, b, weight in ROLLS:
            results = theirs.play_results((a, b))
            if not results:
                best = _roll_average_python(self.evaluator, after, 0, None)
            else:
                ranked = []
                for k, (_, reply) in enumerate(results):
                    done = _terminal(reply)  # from their side
                    ours = done.flipped() if done is not None else evaluate_sides(
                        reply.opponent, reply.mover)
                    ranked.append((-ours.equity() - 1e-12 * k, k, reply))
                ranked.sort(key=lambda r: r[0], reverse=True)
                top = ranked[0][0]
                best_eq = -1e9
                best = Probabilities(0.0, 0.0, 0.0, 0.0, 0.0)
                for eq0, _, reply in ranked[:keep]:
                    if eq0 < top - threshold:
                        break
                    deeper = self._one_ply_python(reply)  # their chances
                    if deeper.equity() > best_eq:
                        best_eq, best = deeper.equity(), deeper.flipped()
            for k in range(5):
                total[k] += weight * best[k]
        return Probabilities(*(t / 36.0 for t in total))

    def choose_play(self, position: Position, dice: Sequence[int], context: Context) -> Play:
        if not self.evaluator.compiled and self.prefilter and self.evaluator.network is None:
            return self._choose_prefiltered(position, dice, context)
        return self._choose_scored(self.evaluator.plays(position, dice), context)

    def _choose_prefiltered(self, position: Position, dice: Sequence[int],
                            context: Context) -> Play:
        """`choose_play` of the pure-Python linear evaluator: pubeval keeps the best
        ``PREFILTER_KEEP`` of many candidates, the rest are scored one by one."""
        results = position.play_results(dice)
        if not results:
            return Play()
        if len(results) == 1:
            return results[0][0]
        if len(results) > PREFILTER_ABOVE:
            race = position.is_race()
            ranked = sorted(results, key=lambda r: pubeval_score(r[1], race), reverse=True)
            results = ranked[:PREFILTER_KEEP]
        values = self._after_values(results, context)
        return results[self._pick(values, lambda i: results[i][1], context)][0]

    def _choose_scored(self, plays: list[ScoredPlay], context: Context) -> Play:
        """`choose_play` from `HeuristicEvaluator.plays`: every candidate with our 0-ply
        chances after it (no pubeval prefilter: a compiled evaluation costs less than a
        pubeval score). Positions are built only for the survivors of a look-ahead's filter,
        and a `Play` only for the choice. Other than plain money, the 0-ply values come from
        `_affine_utility` (equal to `_utility` up to float rounding, about 1e-16).
        """
        if not plays:
            return Play()
        if len(plays) == 1:
            return Play._trusted(plays[0][0])
        plain = self._plain_money(context)
        coefficients = None if plain else self._affine_utility(context)
        if coefficients is not None:
            c0, c1, c2, c3, c4, c5 = coefficients
            values = [c0 + c1 * win + c2 * win_g + c3 * win_bg + c4 * lose_g + c5 * lose_bg
                      for _, _, _, (win, win_g, win_bg, lose_g, lose_bg) in plays]
        elif plain:
            values = [probs.equity() for _, _, _, probs in plays]
        else:
            utility = self._utility
            values = [utility(probs, context) for _, _, _, probs in plays]
        best = self._pick(values, lambda i: Position._trusted(plays[i][2], plays[i][1]),
                          context)
        return Play._trusted(plays[best][0])

    def play_utility(self, context: Context) -> tuple[float, ...] | None:
        """How 0-ply play values the mover's chances after a candidate in ``context``: None
        for cubeless equity (plain money), else the coefficients (c0, c_win, c_win_gammon,
        c_win_backgammon, c_lose_gammon, c_lose_backgammon) of the affine utility
        `_choose_scored` uses (so a C loop can play as this player does). Raises ValueError
        when the utility is not affine."""
        if self._plain_money(context):
            return None
        coefficients = self._affine_utility(context)
        if coefficients is None:
            raise ValueError(f"the play utility is not affine in {context}")
        return coefficients

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
        (``after(i)``: candidate i's resulting position, asked for look-ahead survivors only):
        the move filters and look-ahead of ``plies`` (`_search`), then noise; the last of
        equal bests."""
        scored = [(value, i) for value, i, _ in self._search(values, after, context)[-1]]
        if self.noise:
            gauss = self._rng.gauss
            scored = [(value + gauss(0.0, self.noise), i) for value, i in scored]
        return max(scored)[1]

    def _search(self, values: list[float], after: Callable[[int], Position], context: Context
                ) -> list[list[tuple[float, int, Probabilities | None]]]:
        """The candidates scored at each depth of ``plies`` (`MOVE_FILTERS`): (utility, index,
        chances at that depth, None at 0-ply) per candidate; depth 0 holds every candidate,
        each deeper level the survivors of its filter (the search stops early when one is
        left)."""
        scored: list[tuple[float, int, Probabilities | None]] = [
            (value, i, None) for i, value in enumerate(values)]
        levels = [scored]
        for depth, (limit, threshold) in enumerate(MOVE_FILTERS[self.plies], start=1):
            ranked = sorted(scored, key=lambda s: (s[0], s[1]), reverse=True)
            best = ranked[0][0]
            survivors = [s for s in ranked[:limit] if s[0] >= best - threshold]
            if len(survivors) == 1:
                levels.append(survivors)
                break
            deeper = self._one_ply_probs if depth == 1 else self._two_ply_probs
            scored = []
            for _, i, _ in survivors:
                probs = deeper(after(i))
                scored.append((self._utility(probs, context), i, probs))
            levels.append(scored)
        return levels

    def rank_plays(self, position: Position, dice: Sequence[int],
                   context: Context) -> list[RankedPlay]:
        """Every legal play of ``dice``, best first, as `choose_play` weighs them (without
        noise), like gnubg's ``hint``: the plays the look-ahead reached, by their deepest
        value, then the others by their value one depth shallower, and so on down to 0-ply."""
        plays = self.evaluator.plays(position, dice)
        if not plays:
            return []
        values = [self._utility(probs, context) for _, _, _, probs in plays]
        levels = self._search(values, lambda i: Position._trusted(plays[i][2], plays[i][1]),
                              context)
        placed: set[int] = set()
        out: list[RankedPlay] = []
        for depth in range(len(levels) - 1, -1, -1):
            level = sorted(levels[depth], key=lambda s: (s[0], s[1]), reverse=True)
            # a lone survivor of a filter is not looked at deeper (`_search` stops there): its
            # chances are those of the depth before
            scored_at = depth - 1 if depth and len(level) == 1 and any(
                probs is level[0][2] for _, _, probs in levels[depth - 1]) else depth
            for value, i, probs in level:
                if i in placed:
                    continue
                placed.add(i)
                steps, mover, opponent, zero = plays[i]
                out.append(RankedPlay(Play._trusted(steps), Position._trusted(opponent, mover),
                                      probs if probs is not None else zero, value,
                                      scored_at if probs is not None else 0))
        return out

    # ----------------------------------------------------------------- cube and resignation

    def cube_probabilities(self, position: Position) -> Probabilities:
        """Cubeless chances of the player on roll in ``position`` (before rolling) for cube
        decisions: the 0-ply evaluation, or with ``cube_plies`` = 1 its average over his 21
        rolls, each played by the best 0-ply cubeless equity."""
        if self.cube_plies == 0:
            return self.evaluator.evaluate(position)
        return roll_average(self.evaluator, position)

    def _efficiency(self, position: Position) -> float | None:
        """The cube efficiency to use in ``position`` (None: the cube module's own)."""
        if self.cube_life is None or not position.is_contact():
            return None
        return self.cube_life

    def should_double(self, position: Position, context: Context) -> bool:
        if not context.may_double():
            return False
        return cube.should_double(self.cube_probabilities(position), context, position,
                                  efficiency=self._efficiency(position))

    def take_decision(self, position: Position, context: Context) -> TakeDecision:
        return cube.take_decision(self.cube_probabilities(position), context, position,
                                  efficiency=self._efficiency(position))

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


LEVELS: dict[str, tuple[int, float]] = {
    "beginner": (0, 0.12),
    "intermediate": (0, 0.05),
    "advanced": (0, 0.0),
    "expert": (1, 0.0),
    "strongest": (2, 0.0),
}
"""Named strengths for online play (``heuristic:level=NAME``): (plies, equity noise). What each
measured against pubeval is in the README ("The player")."""

_SHARED: dict[tuple[str | None, str | None, bool, str | None, str | None, bool],
              HeuristicEvaluator] = {}


def shared_evaluator(eval: str | None = None, weights: Path | None = None,
                     race_model: bool = False, crashed: Path | None = None,
                     race: Path | None = None, zero_ply: bool = False) -> HeuristicEvaluator:
    """One evaluator per process and kind (its tables take a moment to build, the networks
    are read once; its caches are shared): ``eval`` as `HeuristicEvaluator` takes it,
    ``weights`` a contact network file instead of the shipped one, ``race_model`` the race
    formula instead of the race network, ``race`` a race network file, ``crashed`` a crashed
    network file, ``zero_ply`` the shipped 0-ply network (`network.SHIPPED_ZERO_PLY_FILE`) as
    the contact network, where one is shipped and neither ``weights`` nor the linear heads are
    asked for (the agent ``heuristic`` at ``plies=0``). Raises `WeightsError` (a ValueError)
    for a weights file that cannot be used."""
    zero_ply_network = (shipped_zero_ply_weights()
                        if zero_ply and weights is None and eval != "linear" else None)
    key = (eval, None if weights is None else str(weights), race_model,
           None if crashed is None else str(crashed), None if race is None else str(race),
           zero_ply_network is not None)
    found = _SHARED.get(key)
    if found is None:
        network = (zero_ply_network if weights is None
                   else WeightsFile.read(weights, phase="contact"))
        crashed_network = None if crashed is None else WeightsFile.read(crashed, phase="crashed")
        race_network: WeightsFile | bool | None = (
            False if race_model else None if race is None
            else WeightsFile.read(race, phase="race"))
        found = _SHARED[key] = HeuristicEvaluator(
            eval=eval if network is None or eval is not None else "net", network=network,
            race_network=race_network, crashed_network=crashed_network)
    return found


def _shared_evaluator() -> HeuristicEvaluator:
    """The default evaluator, shared (`shared_evaluator`)."""
    return shared_evaluator()

