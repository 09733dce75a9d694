"""What a trial is worth to the side whose results are reported (the viewer).

Money: equity per unit of the position's cube (gnubg's normalisation, as `cube.analyse_cube`
gives it): cubeless, the five chances' money equity (gammons 2, backgammons the rules' value);
cubeful, the points the game ended with (the cube included) over the position's cube. Match
play: match-winning chances converted to EMG at the position's cube (`cube.mwc_to_emg`),
cubeless from the MET after each outcome at the current cube, cubeful from the MET after the
game's actual result. Where a trial is cut, cubeful values come from the cube model
(`cube.analyse_cube`: the no-double value, the player on roll having just made his cube
decision).
"""

from __future__ import annotations

from typing import Sequence

from ..core.context import Context
from ..core.position import Position
from ..players import cube
from ..players.base import Probabilities
from ..players.met import MatchEquityTable, default_met

__all__ = ["ValueMap"]

_OUTCOMES = (
    (0.0, 0.0, 0.0, 0.0, 0.0),  # single loss
    (1.0, 0.0, 0.0, 0.0, 0.0),  # single win
    (1.0, 1.0, 0.0, 0.0, 0.0),  # gammon win
    (1.0, 1.0, 1.0, 0.0, 0.0),  # backgammon win
    (0.0, 0.0, 0.0, 1.0, 0.0),  # gammon loss
    (0.0, 0.0, 0.0, 1.0, 1.0),  # backgammon loss
)


class ValueMap:
    """Values for the viewer, whose context (before the trials) is ``context``."""

    def __init__(self, context: Context, met: MatchEquityTable | None = None) -> None:
        self.context = context
        self.met = met if context.is_money else (met if met is not None else default_met())
        values = [self.cubeless(Probabilities(*outcome)) for outcome in _OUTCOMES]
        single_loss, single_win, gammon_win, backgammon_win, gammon_loss, backgammon_loss = values
        self.linear: tuple[float, float, float, float, float] = (
            single_win - single_loss, gammon_win - single_win, backgammon_win - gammon_win,
            gammon_loss - single_loss, backgammon_loss - gammon_loss)
        """The cubeless value's coefficients of the five chances (it is affine in them): what
        a shift of the chances (a roll's luck) is worth."""

    @property
    def units(self) -> str:
        """"equity" (money, per unit cube) or "emg" (match play)."""
        return "equity" if self.context.is_money else "emg"

    def cubeless(self, chances: Sequence[float]) -> float:
        """The viewer's cubeless value of his chances (gammons count, Jacoby never does:
        cubeless play, R26)."""
        probs = Probabilities(*chances)
        context = self.context
        if context.is_money:
            return cube.money_cubeless(probs, context.rules.backgammon_value)
        return cube.mwc_to_emg(cube.match_equity(probs, context, self.met), context, self.met)

    def luck(self, luck: Sequence[float]) -> float:
        """What a shift ``luck`` of the five chances is worth (the linear part)."""
        c = self.linear
        return c[0] * luck[0] + c[1] * luck[1] + c[2] * luck[2] + c[3] * luck[3] + c[4] * luck[4]

    def game_result(self, points: int) -> float:
        """A finished cubeful game's value: ``points`` won by the viewer (negative: lost),
        the cube included."""
        context = self.context
        if context.is_money:
            return points / context.cube_value
        mwc_after = cube.match_mwc_function(context, self.met)
        me = context.match_length - context.my_score
        opp = context.match_length - context.opponent_score
        mwc = mwc_after(me - points, opp) if points >= 0 else mwc_after(me, opp + points)
        return cube.mwc_to_emg(mwc, context, self.met)

    def cut(self, chances: Probabilities, position: Position, roller: Context,
            viewer_rolls: bool) -> float:
        """A cubeful trial cut before a roll: the cube model's no-double value of the player on
        roll in ``position`` with his ``chances`` and context ``roller``, for the viewer (the
        roller when ``viewer_rolls``)."""
        analysis = cube.analyse_cube(chances, roller, position, met=self.met)
        context = self.context
        if context.is_money:
            points = analysis.no_double * roller.cube_value
            return (points if viewer_rolls else -points) / context.cube_value
        mwc = analysis.no_double if viewer_rolls else 1.0 - analysis.no_double
        return cube.mwc_to_emg(mwc, context, self.met)
