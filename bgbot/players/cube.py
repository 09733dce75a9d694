"""Cube decisions from cubeless chances: Janowski's live-cube model, in points or through a MET.

Reference: heuristic-player.md §6. All functions take the on-roll player's cubeless chances
(gnubg's five outputs, before rolling) and a `Context`.

**Money.** W and L are the points per win and per loss (gammons 2, backgammons
``rules.backgammon_value``). With cube efficiency x, the cubeful equity is
x·E_live + (1 − x)·E_dead: E_dead is the cubeless equity and E_live is piecewise linear
through (0, −L), (TP, −1), (CP, +1), (1, W), where TP = (L − ½)/(W + L + ½) is my take point
and CP = (L + 1)/(W + L + ½) my cash point; owning the cube drops the TP node, the opponent
owning it drops the CP node. With the Jacoby rule and a centred cube, the no-double equity
counts gammons as single games.

**Match.** The same mix, but in match-winning chances through a MET (`met.cubeful_mwc`): the
node values are MET entries after the game, the take and cash points come from the live-cube
recursion of `met.take_point`, with the position's own gammon rates. Special cases: no cube in
the Crawford game; when any win of the opponent at the current cube already wins him the match
(post-Crawford trailer, or an "automatic redouble"), my cube has no live value beyond cashing,
so the dead values decide and I double unless I am too good to (the trailer doubles at once).
The leader's free drop follows from the MET values.

Cube efficiency x (gnubg's values [S12]): 0.68 with contact, 0.6 when both sides are bearing
off, and in other races 0.6 to 0.7 by the on-roll side's pip count, linear from 40 to 120.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..core.position import Position
from .base import Context, CubeOwner, Probabilities, TakeDecision
from .met import (
    GammonRates,
    MatchEquityTable,
    Mwc,
    cubeful_mwc,
    default_met,
    mixed_value,
)

CONTACT_EFFICIENCY = 0.68
BEAROFF_EFFICIENCY = 0.6
RACE_EFFICIENCY_LOW = 0.6
RACE_EFFICIENCY_HIGH = 0.7
RACE_PIPS_LOW = 40
RACE_PIPS_HIGH = 120


@dataclass(frozen=True, slots=True)
class CubeAnalysis:
    """The three cube equities from the doubler's side, and the decisions they imply.

    Money: equities per unit of the current cube (double/pass = +1). Match: MWC (0..1).
    """

    no_double: float
    double_take: float
    double_pass: float
    units: str
    """"equity" (money) or "mwc" (match)."""
    cubeless: float
    """Cubeless equity (money, per unit cube) or cubeless MWC at the current cube."""
    efficiency: float
    may_double: bool
    double: bool
    """The doubler should double (False when he may not)."""
    take: bool
    """The taker should take (double/take is no better than double/pass for the doubler)."""
    beaver: bool
    """The taker should beaver (money with beavers only)."""

    @property
    def too_good(self) -> bool:
        """No double because playing on beats cashing."""
        return self.may_double and not self.take and self.no_double > self.double_pass


def cube_efficiency(position: Position) -> float:
    """Janowski's x for this position (module docstring)."""
    if position.is_contact():
        return CONTACT_EFFICIENCY
    if not any(position.mover[6:]) and not any(position.opponent[6:]):
        return BEAROFF_EFFICIENCY
    pips = position.pip_counts()[0]
    fraction = (pips - RACE_PIPS_LOW) / (RACE_PIPS_HIGH - RACE_PIPS_LOW)
    fraction = min(max(fraction, 0.0), 1.0)
    return RACE_EFFICIENCY_LOW + (RACE_EFFICIENCY_HIGH - RACE_EFFICIENCY_LOW) * fraction


def gammon_rates(probs: Probabilities) -> GammonRates:
    """Conditional gammon/backgammon fractions of the wins and losses in ``probs``."""
    win = probs.win
    loss = 1.0 - probs.win

    def part(value: float, of: float) -> float:
        return min(max(value / of, 0.0), 1.0) if of > 1e-12 else 0.0

    return GammonRates(
        part(probs.win_gammon, win),
        part(probs.win_backgammon, win),
        part(probs.lose_gammon, loss),
        part(probs.lose_backgammon, loss),
    )


def money_cubeless(probs: Probabilities, backgammon_value: int = 3, gammons: bool = True) -> float:
    """Cubeless money equity per unit cube (gammons as single games when ``gammons`` is off)."""
    if not gammons:
        return 2.0 * probs.win - 1.0
    extra = backgammon_value - 2
    return (
        2.0 * probs.win
        - 1.0
        + probs.win_gammon
        - probs.lose_gammon
        + extra * (probs.win_backgammon - probs.lose_backgammon)
    )


def _points_per_game(
    probs: Probabilities, backgammon_value: int, gammons: bool
) -> tuple[float, float]:
    """(W, L): average points per win and per loss."""
    if not gammons:
        return 1.0, 1.0
    extra = backgammon_value - 2
    win, loss = probs.win, 1.0 - probs.win
    w = 1.0 + (probs.win_gammon + extra * probs.win_backgammon) / win if win > 1e-12 else 1.0
    l_ = 1.0 + (probs.lose_gammon + extra * probs.lose_backgammon) / loss if loss > 1e-12 else 1.0
    return w, l_


def money_cubeful(
    probs: Probabilities,
    owner: CubeOwner,
    efficiency: float,
    *,
    backgammon_value: int = 3,
    gammons: bool = True,
    i_may_double: bool = True,
    opponent_may_double: bool = True,
) -> float:
    """Janowski's cubeful money equity per unit cube for the player whose chances are ``probs``."""
    w, l_ = _points_per_game(probs, backgammon_value, gammons)
    take_point = (l_ - 0.5) / (w + l_ + 0.5)
    cash_point = (l_ + 1.0) / (w + l_ + 0.5)
    nodes = [(0.0, -l_)]
    if owner is not CubeOwner.ME and opponent_may_double:
        nodes.append((take_point, -1.0))
    if owner is not CubeOwner.OPPONENT and i_may_double:
        nodes.append((cash_point, 1.0))
    nodes.append((1.0, w))
    return mixed_value(probs.win, nodes, (-l_, w), efficiency)


def _owner_name(owner: CubeOwner) -> str:
    return {CubeOwner.CENTRE: "centre", CubeOwner.ME: "me", CubeOwner.OPPONENT: "opp"}[owner]


def _aways(context: Context) -> tuple[int, int]:
    return context.match_length - context.my_score, context.match_length - context.opponent_score


def match_mwc_function(context: Context, met: MatchEquityTable | None = None) -> Mwc:
    """``mwc(a, b)``: my MWC at the score reached when the current game ends."""
    table = met if met is not None else default_met()
    return table.after_game_function(
        crawford=context.crawford,
        post_crawford=context.post_crawford,
        crawford_rule=context.rules.crawford,
    )


def _can_raise(cube: int, cube_limit: int) -> bool:
    return not cube_limit or 2 * cube <= cube_limit


def analyse_cube(
    probs: Probabilities,
    context: Context,
    position: Position,
    *,
    met: MatchEquityTable | None = None,
    efficiency: float | None = None,
) -> CubeAnalysis:
    """No double / double-take / double-pass for the player on roll in ``position``.

    ``probs``: his cubeless chances before rolling; ``context``: from his side (before the
    double). ``efficiency`` overrides `cube_efficiency` (for tests and analysis).
    """
    x = cube_efficiency(position) if efficiency is None else efficiency
    rules = context.rules
    cube = context.cube_value
    may_double = context.may_double()
    if context.is_money:
        return _analyse_money(probs, context, x, may_double)
    mwc = match_mwc_function(context, met)
    me, opp = _aways(context)
    rates = gammon_rates(probs)
    bgv = rules.backgammon_value
    limit = rules.cube_limit
    cube_available = rules.cube and not context.crawford
    cubeless = cubeful_mwc(mwc, me, opp, cube, "centre", probs.win, rates, x, bgv, limit, False)
    dead_for_opponent = opp <= cube  # any win of his at this cube wins him the match
    x_used = 0.0 if dead_for_opponent else x
    no_double = cubeful_mwc(
        mwc, me, opp, cube, _owner_name(context.cube_owner), probs.win, rates, x_used, bgv, limit,
        cube_available,
    )
    double_take = cubeful_mwc(
        mwc, me, opp, 2 * cube, "opp", probs.win, rates, x_used, bgv, limit
    )
    double_pass = mwc(me - cube, opp)
    take = double_take <= double_pass
    best_if_doubled = min(double_take, double_pass)
    if dead_for_opponent:
        double = may_double and best_if_doubled >= no_double
    else:
        double = may_double and best_if_doubled > no_double
    return CubeAnalysis(
        no_double, double_take, double_pass, "mwc", cubeless, x, may_double, double, take, False
    )


def _analyse_money(
    probs: Probabilities, context: Context, x: float, may_double: bool
) -> CubeAnalysis:
    rules = context.rules
    cube = context.cube_value
    bgv = rules.backgammon_value
    limit = rules.cube_limit
    jacoby_centred = rules.jacoby and rules.cube and context.cube_owner is CubeOwner.CENTRE
    cube_on = rules.cube
    no_double = money_cubeful(
        probs,
        context.cube_owner,
        x if cube_on else 0.0,
        backgammon_value=bgv,
        gammons=not jacoby_centred,
        i_may_double=cube_on and _can_raise(cube, limit),
        opponent_may_double=cube_on and _can_raise(cube, limit),
    )
    double_take = 2.0 * money_cubeful(
        probs,
        CubeOwner.OPPONENT,
        x,
        backgammon_value=bgv,
        opponent_may_double=_can_raise(2 * cube, limit),
    )
    double_pass = 1.0
    take = double_take <= double_pass
    beaver = (
        take
        and rules.beavers
        and double_take < 0.0
        and _can_raise(2 * cube, limit)
    )
    double = may_double and min(double_take, double_pass) > no_double
    cubeless = money_cubeless(probs, bgv, gammons=not jacoby_centred)
    return CubeAnalysis(
        no_double, double_take, double_pass, "equity", cubeless, x, may_double, double, take, beaver
    )


def should_double(
    probs: Probabilities,
    context: Context,
    position: Position,
    *,
    met: MatchEquityTable | None = None,
    efficiency: float | None = None,
) -> bool:
    """Should the player on roll double (or redouble) now? (probs and context are his.)"""
    if not context.may_double():
        return False
    return analyse_cube(probs, context, position, met=met, efficiency=efficiency).double


def take_decision(
    probs: Probabilities,
    context: Context,
    position: Position,
    *,
    met: MatchEquityTable | None = None,
    efficiency: float | None = None,
) -> TakeDecision:
    """Take, drop or beaver a double to ``2 * context.cube_value``.

    ``probs``: the doubler's cubeless chances (he is on roll in ``position``); ``context``:
    from the taker's side, before the double. BEAVER only in money play with beavers on.
    """
    doubler = context.swapped()
    analysis = analyse_cube(probs, doubler, position, met=met, efficiency=efficiency)
    if not analysis.take:
        return TakeDecision.DROP
    if analysis.beaver and context.is_money and context.rules.beavers:
        return TakeDecision.BEAVER
    return TakeDecision.TAKE


def cubeful_value(
    probs: Probabilities,
    context: Context,
    position: Position,
    *,
    met: MatchEquityTable | None = None,
    efficiency: float | None = None,
) -> float:
    """The on-roll player's cubeful value before rolling, doubling when that is right.

    Money: points (equity × cube value). Match: MWC.
    """
    analysis = analyse_cube(probs, context, position, met=met, efficiency=efficiency)
    value = analysis.no_double
    if analysis.double:
        value = min(analysis.double_take, analysis.double_pass)
    return value * context.cube_value if context.is_money else value


def match_equity(
    probs: Probabilities, context: Context, met: MatchEquityTable | None = None
) -> float:
    """Cubeless MWC of the player whose chances are ``probs``, at the current cube.

    Σ over the six outcomes of P(outcome) × MET(score after it). Match play only.
    """
    if context.is_money:
        raise ValueError("match_equity is for match play; use play_value for money")
    mwc = match_mwc_function(context, met)
    me, opp = _aways(context)
    return cubeful_mwc(
        mwc, me, opp, context.cube_value, "centre", probs.win, gammon_rates(probs), 0.0,
        context.rules.backgammon_value, cube_available=False,
    )


def play_value(
    probs: Probabilities, context: Context, met: MatchEquityTable | None = None
) -> float:
    """What chequer play maximises for the player whose chances are ``probs``.

    Match: cubeless MWC (`match_equity`). Money: cubeless equity per unit cube, with the
    rules' backgammon value, and gammons as singles under Jacoby with a centred cube.
    """
    if not context.is_money:
        return match_equity(probs, context, met)
    rules = context.rules
    jacoby_centred = rules.jacoby and rules.cube and context.cube_owner is CubeOwner.CENTRE
    return money_cubeless(probs, rules.backgammon_value, gammons=not jacoby_centred)


def mwc_after_play(
    opponent_probs: Probabilities, context: Context, met: MatchEquityTable | None = None
) -> float:
    """My value after my play, from my opponent's chances (he is on roll after it).

    ``context`` is mine. Match: my cubeless MWC; money: my cubeless equity (`play_value`).
    """
    return play_value(opponent_probs.flipped(), context, met)


def match_utility(
    probs: Probabilities, context: Context, met: MatchEquityTable | None = None
) -> float:
    """`play_value` under the name the heuristic player looks for (MWC in match play)."""
    return play_value(probs, context, met)


def mwc_to_emg(mwc: float, context: Context, met: MatchEquityTable | None = None) -> float:
    """My match-winning chances ``mwc`` as gnubg's EMG (equivalent money equity): the straight
    line through losing a single game at the current cube (-1) and winning one (+1).

    ``(2 mwc - (W + L)) / (W - L)``, W and L my MWC after winning and after losing
    ``context.cube_value`` points (gnubg's ``mwc2eq``). Match play only.
    """
    if context.is_money:
        raise ValueError("mwc_to_emg is for match play")
    mwc_after = match_mwc_function(context, met)
    me, opp = _aways(context)
    cube = context.cube_value
    win, loss = mwc_after(me - cube, opp), mwc_after(me, opp - cube)
    return (2.0 * mwc - (win + loss)) / (win - loss)
