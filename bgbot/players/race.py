"""The race formula: cubeless chances in a race (no contact) from effective pip counts.

The race class's evaluator where no race network is given (heuristic-player.md §5):

* P(win) = Φ((lead + 4) / (s √(pip sum))) on effective pips (§5.3, the Kleinman/EPC model,
  `race_probit`), its spread s refitted on self-play outcomes (``tools/train_heuristic.py
  --calibrate``: the textbook 1.5 was under-confident, 0.25 predicted where 0.13 happened);
* gammons and backgammons from the same normal model on "rolls to get a first chequer off"
  (or out of the other's home board) against "rolls to finish" (`race_chances`);
* effective pips: the pip count plus the wastage of the home board the side would have with
  every chequer still outside on its 6-point, exact from the bear-off database when it is
  installed (§5.1), else Keith's adjustments (§5.4) (`effective_pips`).

`RaceFormula` is the evaluator (per-side caches); ``bgbot.players._contact`` computes the same
formula in C, operation for operation (`set_race_formula`; the tests hold the two equal to the
last bit).
"""

from __future__ import annotations

import math
from typing import Any, Callable, NamedTuple, Protocol, Sequence

from ..core.position import Position
from .base import Probabilities
from .caches import BoundedCache

RACE_SPREAD = 1.5
"""Default spread s of the race model P(win) = Φ((lead + 4) / (s √(pip sum))) (§5.3);
``tools/train_heuristic.py --calibrate`` refits it on self-play outcomes."""
RACE_SPREAD_KEY = "race_spread"
"""`linear.load_weights` of a JSON file puts its race spread under this key, as a 1-element
list."""
_NORMAL_SCALE = 1.0 / math.sqrt(2.0)
PIPS_PER_ROLL = 49.0 / 6.0
ROLL_VARIANCE_PER_PIP = 0.0339
"""Variance of the number of rolls needed to move N pips is about 0.0339 N (renewal theory)."""


class BearoffDatabase(Protocol):
    """What the race and bear-off evaluators need of `bgbot.players.bearoff.BearoffDatabase`."""

    def probabilities(self, position: Position) -> Probabilities | None: ...

    def expected_rolls(self, side: Sequence[int]) -> float: ...

    def c_tables(self) -> tuple[Any, ...]: ...


def load_bearoff() -> BearoffDatabase | None:
    """The process's one-sided bear-off database (`bearoff.default_database`: read from the
    cache, or built the first time, which takes seconds)."""
    from .bearoff import default_database

    return default_database()


def load_race_spread(path: Any = None) -> float:
    """The race model's spread: from the weights JSON ``path`` (key "race_spread") or the tuned
    module ``heuristic_weights``, else `RACE_SPREAD`."""
    if path is not None:
        import json

        return float(json.loads(path.read_text()).get(RACE_SPREAD_KEY, RACE_SPREAD))
    try:
        from . import heuristic_weights as tuned  # type: ignore[attr-defined, unused-ignore]
    except ImportError:
        return RACE_SPREAD
    module: Any = tuned
    return float(getattr(module, "RACE_SPREAD", RACE_SPREAD))


def _phi(x: float) -> float:
    return 0.5 * math.erfc(-x * _NORMAL_SCALE)


def effective_pips(side: Sequence[int], database: BearoffDatabase | None = None) -> float:
    """Pip count plus a wastage estimate.

    With the bear-off database: the exact wastage (EPC - pips, §5.1) of the home board you get
    by putting every chequer still outside on the 6-point. Without: Keith's adjustments (§5.4).
    """
    pips = 0
    for index in range(25):
        pips += side[index] * (index + 1)
    if database is not None:
        home = list(side[:6])
        home[5] += sum(side[6:])
        home_pips = sum(n * (i + 1) for i, n in enumerate(home))
        try:
            return pips + database.expected_rolls(home) * PIPS_PER_ROLL - home_pips
        except ValueError:  # a small test database that does not hold 15 chequers
            pass
    extra = 2 * max(0, side[0] - 1) + max(0, side[1] - 1) + max(0, side[2] - 3)
    extra += (side[3] == 0) + (side[4] == 0) + (side[5] == 0)
    return pips + extra


def _rolls_beyond(side: Sequence[int], boundary: int) -> float:
    """Pips one side must move so that no chequer stays above own point ``boundary``."""
    return float(sum(side[i] * (i + 1 - boundary) for i in range(boundary, 25)))


def _lag_probability(loser_pips: float, loser_extra: float, winner_epc: float,
                     loser_on_roll: bool) -> float:
    """P(the loser needs more turns for ``loser_pips`` than the winner needs to finish).

    The loser's turns are ``loser_pips`` / 8.17 + ``loser_extra``; the player on roll gets the
    first turn, so the loser on roll is late only when strictly slower.
    """
    mean = loser_pips / PIPS_PER_ROLL + loser_extra - winner_epc / PIPS_PER_ROLL
    var = ROLL_VARIANCE_PER_PIP * (loser_pips + winner_epc) + 0.25
    threshold = 0.5 if loser_on_roll else -0.5
    return _phi((mean - threshold) / math.sqrt(var))


def race_probit(my_epc: float, other_epc: float) -> float:
    """(lead + 4) / √(pip sum) on effective pips, for the player on roll (§5.3)."""
    return (other_epc - my_epc + 4.0) / math.sqrt(max(my_epc + other_epc, 1.0))


class RaceSide(NamedTuple):
    """What the race model needs of one side (`RaceFormula` caches it per side)."""

    epc: float
    """Effective pip count."""
    full: bool
    """No chequer borne off yet (it can still be gammoned)."""
    home_lag: float
    """Pips to move before every chequer is home (`_rolls_beyond` 6)."""
    back: bool
    """A chequer on the bar or in the other side's home board (it can be backgammoned)."""
    back_lag: float
    """Pips to move before no chequer is in the other side's home board or on the bar."""


def race_side(side: Sequence[int], epc: float) -> RaceSide:
    """`RaceSide` of ``side`` (25 counts) with effective pip count ``epc``."""
    return RaceSide(epc, sum(side) == 15, _rolls_beyond(side, 6), any(side[18:25]),
                    _rolls_beyond(side, 18))


def race_probabilities(position: Position, database: BearoffDatabase | None = None,
                       epc: Callable[[tuple[int, ...]], float] | None = None,
                       spread: float = RACE_SPREAD) -> Probabilities:
    """Cubeless chances in a race (no contact) for the player on roll, from formulas
    (effective pip counts from ``database`` when given; ``epc`` may supply them cached):
    P(win) = Φ(`race_probit` / ``spread``)."""
    me, other = position.mover, position.opponent
    if epc is None:
        my_epc, other_epc = effective_pips(me, database), effective_pips(other, database)
    else:
        my_epc, other_epc = epc(me), epc(other)
    return race_chances(race_side(me, my_epc), race_side(other, other_epc), spread)


def race_chances(me: RaceSide, other: RaceSide, spread: float = RACE_SPREAD) -> Probabilities:
    """`race_probabilities` from the two sides' `RaceSide` facts (``me`` on roll)."""
    my_epc, other_epc = me.epc, other.epc
    win = _phi(race_probit(my_epc, other_epc) / spread)
    win_g = win_bg = lose_g = lose_bg = 0.0
    if other.full:
        win_g = _lag_probability(other.home_lag, 1.0, my_epc, False)
        if other.back:
            win_bg = _lag_probability(other.back_lag, 0.5, my_epc, False)
    if me.full:
        lose_g = _lag_probability(me.home_lag, 1.0, other_epc, True)
        if me.back:
            lose_bg = _lag_probability(me.back_lag, 0.5, other_epc, True)
    # The hard constraints of heuristic-player.md §2.7 and the ordering of outputs.
    win = min(max(win, 0.0), 1.0)
    lose = 1.0 - win
    if not other.full:
        win_g = win_bg = 0.0
    elif not other.back:
        win_bg = 0.0
    if not me.full:
        lose_g = lose_bg = 0.0
    elif not me.back:
        lose_bg = 0.0
    win_g = min(max(win_g, 0.0), win)
    win_bg = min(max(win_bg, 0.0), win_g)
    lose_g = min(max(lose_g, 0.0), lose)
    lose_bg = min(max(lose_bg, 0.0), lose_g)
    return Probabilities(win, win_g, win_bg, lose_g, lose_bg)


class RaceFormula:
    """The race class's evaluator by the formulas (module docstring), ``spread`` its s.

    With ``use_bearoff`` the effective pips take their wastage from the bear-off database,
    loaded at the first race (`database`). Each side's effective pips and `RaceSide` facts are
    cached (`BoundedCache`).
    """

    def __init__(self, spread: float = RACE_SPREAD, use_bearoff: bool = True) -> None:
        self.spread = spread
        self.use_bearoff = use_bearoff
        self._database: BearoffDatabase | None = None
        self._loaded = not use_bearoff
        self._epc: BoundedCache[tuple[int, ...], float] = BoundedCache()
        self._sides: BoundedCache[tuple[int, ...], RaceSide] = BoundedCache()

    def __getstate__(self) -> dict[str, Any]:
        """Pickled without the database and the caches (loaded again where it lands)."""
        state = dict(self.__dict__)
        state.update(_database=None, _loaded=not self.use_bearoff, _epc=BoundedCache(),
                     _sides=BoundedCache())
        return state

    @property
    def database_loaded(self) -> bool:
        """Whether `database` has been asked for (it loads the database the first time)."""
        return self._loaded

    @property
    def database(self) -> BearoffDatabase | None:
        """The bear-off database the effective pips use (loaded at the first ask), or None."""
        if not self._loaded:
            self._database = load_bearoff()
            self._loaded = True
        return self._database

    def effective_pips(self, side: tuple[int, ...]) -> float:
        """`effective_pips` of ``side`` with this formula's database, cached."""
        found = self._epc.get(side)
        if found is None:
            found = self._epc.put(side, effective_pips(side, self.database))
        return found

    def race_side(self, side: tuple[int, ...]) -> RaceSide:
        """`race_side` with this formula's effective pips, cached."""
        found = self._sides.get(side)
        if found is None:
            found = self._sides.put(side, race_side(side, self.effective_pips(side)))
        return found

    def evaluate_sides(self, mover: tuple[int, ...], opponent: tuple[int, ...]) -> Probabilities:
        """`race_chances` of the race with ``mover`` on roll."""
        return race_chances(self.race_side(mover), self.race_side(opponent), self.spread)

    def probit(self, mover: tuple[int, ...], opponent: tuple[int, ...]) -> float:
        """`race_probit` of the race with ``mover`` on roll (for calibration)."""
        return race_probit(self.effective_pips(mover), self.effective_pips(opponent))
