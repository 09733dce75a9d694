"""Match equity tables: our own, generated from a documented model, and gnubg's XML files.

A match equity table (MET) gives a player's match-winning chances (MWC) at the start of a game
from the two "away" scores (points still needed). Conventions, as in gnubg's tables:

* ``win_probability(a, b)`` with ``a, b >= 2`` is a pre-Crawford score; with one side at
  1-away (and ``post_crawford=False``) it is the value at the start of the Crawford game; with
  ``post_crawford=True`` it is the post-Crawford value (the trailer doubles at once).
* ``a <= 0`` means I have won (1.0), ``b <= 0`` that I have lost (0.0).

**Our model** (reference heuristic-player.md §6.2; every parameter is in `MetModel`):

* Post-Crawford, trailer at ``n``-away: the trailer doubles at once and the leader takes, so
  ``P(n) = ½[(1 − g)·P(n − 2) + g·P(n − 4)]`` with ``P(<=0) = 1`` and ``P(1) = ½``; then the
  leader's *free drop* is subtracted at 2-away and 4-away (the leader may pass the first double
  when it suits him).
* Crawford game, trailer at ``n``-away, no cube: ``½[(1 − g)·P(n − 1) + g·P(n − 2)]``.
* Pre-Crawford: a Janowski-style live-cube model solved in order of increasing ``a + b``. Each
  game starts at p = ½; a side owning cube ``c`` redoubles at the opponent's take point, the
  take points come from the recursion `take_point` (the taker's MWC after taking, owning the
  cube, is a mix of a fully live cube, linear from "lose at c" to "cash at the redouble point",
  and a dead cube, with weight ``cube_efficiency``). The centred-cube MWC at p = ½ mixes the
  same way between the line from the opponent's doubling point to mine and the cubeless value.
  Gammons end a fraction ``gammon_rate`` of the games at either side (no backgammons).

The pre-Crawford gammon rate is fixed at 0.27 (what bots show); the other four parameters
were fitted once (Nelder-Mead, least squares over every score up to 15-away, pre- and
post-Crawford) to the Kazaross-XG2 table read from a gnubg install, then rounded: Crawford
gammon rate 0.295, cube efficiency 0.85, free drops 0.010 and 0.009. Freeing the gammon rate
as well gave an unphysical 0.475 for almost no gain (max error 0.0040 against 0.0045). That is
the only use of the table: no value of it is copied here. Max |ours − Kazaross-XG2| over
1..25-away is 0.0045 (at 2a-3a), within `KXG2_TOLERANCE`, checked by tests/test_met.py.

**gnubg's XML tables** (``/usr/share/gnubg/met/*.xml``) are read at run time by `read_met_xml`
(explicit tables only; gnubg's parametric "mec"/"zadeh" files are refused). Scores beyond a
file's length fall back to our model.
"""

from __future__ import annotations

import functools
import os
import xml.etree.ElementTree as ElementTree
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, NamedTuple

from ..core.errors import BgbotError, FormatError

GNUBG_MET_DIR = Path("/usr/share/gnubg/met")
DEFAULT_LENGTH = 25
"""Our default table covers scores up to 25-away; longer ones come from a lazily built
`EXTENDED_LENGTH` table (64, gnubg's longest match)."""
EXTENDED_LENGTH = 64

Mwc = Callable[[int, int], float]
"""MWC of player A at ``a``-away against B at ``b``-away, after a game (scores may be <= 0)."""


class BeyondTable(BgbotError, ValueError):
    """A score beyond the match equity table: a match longer than the table's length (the
    boundaries refuse such matches first; `bgbot.formats.gnubgid.check_playable`)."""


class GammonRates(NamedTuple):
    """Gammon and backgammon fractions of one side's wins and losses (conditional, 0..1).

    ``win_gammon`` includes backgammons, as in gnubg's outputs.
    """

    win_gammon: float = 0.0
    win_backgammon: float = 0.0
    lose_gammon: float = 0.0
    lose_backgammon: float = 0.0

    def swapped(self) -> GammonRates:
        """The same rates seen from the other side."""
        return GammonRates(
            self.lose_gammon, self.lose_backgammon, self.win_gammon, self.win_backgammon
        )


def outcome_mwc(
    mwc: Mwc, me: int, opp: int, cube: int, rates: GammonRates, backgammon_value: int = 3
) -> tuple[float, float]:
    """(my average MWC when I win, when I lose) a game played for ``cube``."""
    single_win = 1.0 - rates.win_gammon
    gammon_win = rates.win_gammon - rates.win_backgammon
    win = (
        single_win * mwc(me - cube, opp)
        + gammon_win * mwc(me - 2 * cube, opp)
        + rates.win_backgammon * mwc(me - backgammon_value * cube, opp)
    )
    single_loss = 1.0 - rates.lose_gammon
    gammon_loss = rates.lose_gammon - rates.lose_backgammon
    loss = (
        single_loss * mwc(me, opp - cube)
        + gammon_loss * mwc(me, opp - 2 * cube)
        + rates.lose_backgammon * mwc(me, opp - backgammon_value * cube)
    )
    return win, loss


def _swap(mwc: Mwc) -> Mwc:
    """The MWC function seen from the other player."""
    return lambda x, y: 1.0 - mwc(y, x)


def mixed_value(
    p: float, nodes: list[tuple[float, float]], dead: tuple[float, float], x: float
) -> float:
    """x · (piecewise-linear live value through ``nodes``) + (1 − x) · (dead line)."""
    live = nodes[-1][1]
    for (p0, v0), (p1, v1) in zip(nodes, nodes[1:]):
        if p <= p1:
            live = v0 if p1 <= p0 else v0 + (v1 - v0) * (p - p0) / (p1 - p0)
            break
    loss, win = dead
    return x * live + (1.0 - x) * (loss + (win - loss) * p)


def _solve(
    target: float, nodes: list[tuple[float, float]], dead: tuple[float, float], x: float
) -> float:
    """The p in [0, 1] where the (increasing) mixed value reaches ``target``."""
    points = sorted({p for p, _ in nodes} | {0.0, 1.0})
    previous_p = points[0]
    previous_v = mixed_value(previous_p, nodes, dead, x)
    if target <= previous_v:
        return 0.0
    for p in points[1:]:
        value = mixed_value(p, nodes, dead, x)
        if target <= value:
            if value <= previous_v:
                return p
            return previous_p + (p - previous_p) * (target - previous_v) / (value - previous_v)
        previous_p, previous_v = p, value
    return 1.0


def _may_redouble(owner_away: int, cube: int, cube_limit: int) -> bool:
    """Is a redouble from ``cube`` worth anything to its owner (and allowed)?"""
    if cube_limit and 2 * cube > cube_limit:
        return False
    return owner_away > cube  # otherwise a win at ``cube`` already wins the match


def take_point(
    mwc: Mwc,
    taker: int,
    doubler: int,
    cube: int,
    rates: GammonRates,
    efficiency: float,
    backgammon_value: int = 3,
    cube_limit: int = 0,
) -> float:
    """The taker's cubeless win chance at which taking a double to ``cube`` equals passing.

    ``mwc`` is from the taker's side; ``rates`` are the taker's. The taker then owns the cube:
    his MWC is ``efficiency`` × (live: linear from "lose at cube" at p = 0 to "cash" at his
    redouble point, which is 1 − the doubler's own take point one level up, found by the same
    recursion) + (1 − ``efficiency``) × (dead: linear from "lose" to "win" at ``cube``).
    """
    win, loss = outcome_mwc(mwc, taker, doubler, cube, rates, backgammon_value)
    drop = mwc(taker, doubler - cube // 2)
    nodes = _owner_nodes(mwc, taker, doubler, cube, rates, efficiency, backgammon_value, cube_limit)
    return _solve(drop, nodes, (loss, win), efficiency)


def _owner_nodes(
    mwc: Mwc,
    me: int,
    opp: int,
    cube: int,
    rates: GammonRates,
    efficiency: float,
    backgammon_value: int,
    cube_limit: int,
) -> list[tuple[float, float]]:
    """Live-cube nodes (p, MWC) when I own ``cube``: (0, lose), [(cash point, cash)], (1, win)."""
    win, loss = outcome_mwc(mwc, me, opp, cube, rates, backgammon_value)
    nodes = [(0.0, loss)]
    if _may_redouble(me, cube, cube_limit):
        theirs = take_point(
            _swap(mwc), opp, me, 2 * cube, rates.swapped(), efficiency, backgammon_value, cube_limit
        )
        cash_point = 1.0 - theirs
        if 0.0 < cash_point < 1.0:
            nodes.append((cash_point, mwc(me - cube, opp)))
    nodes.append((1.0, win))
    return nodes


def cubeful_mwc(
    mwc: Mwc,
    me: int,
    opp: int,
    cube: int,
    owner: str,
    p: float,
    rates: GammonRates,
    efficiency: float,
    backgammon_value: int = 3,
    cube_limit: int = 0,
    cube_available: bool = True,
) -> float:
    """My cubeful MWC (Janowski-style) for cubeless win chance ``p`` and the cube's state.

    ``owner`` is "centre", "me" or "opp". Live nodes: (0, lose), (my take point, their cash) if
    they may double, (my cash point, my cash) if I may, (1, win); the result mixes that line
    with the cubeless (dead) line by ``efficiency``. ``cube_available=False`` (Crawford game,
    cubeless play) gives the cubeless value.
    """
    win, loss = outcome_mwc(mwc, me, opp, cube, rates, backgammon_value)
    if not cube_available:
        return loss + (win - loss) * p
    nodes = [(0.0, loss)]
    if owner in ("centre", "opp") and _may_redouble(opp, cube, cube_limit):
        mine = take_point(mwc, me, opp, 2 * cube, rates, efficiency, backgammon_value, cube_limit)
        nodes.append((mine, mwc(me, opp - cube)))
    if owner in ("centre", "me") and _may_redouble(me, cube, cube_limit):
        theirs = take_point(
            _swap(mwc), opp, me, 2 * cube, rates.swapped(), efficiency, backgammon_value, cube_limit
        )
        cash_point = 1.0 - theirs
        if cash_point > nodes[-1][0]:
            nodes.append((cash_point, mwc(me - cube, opp)))
    nodes.append((1.0, win))
    return mixed_value(p, nodes, (loss, win), efficiency)


# ---------------------------------------------------------------------- the table


class MatchEquityTable:
    """A MET: pre-Crawford/Crawford entries and the post-Crawford trailer's MWC."""

    def __init__(
        self,
        name: str,
        pre: list[list[float]],
        post: list[float],
        fallback: Callable[[], MatchEquityTable] | None = None,
    ) -> None:
        """``pre[a-1][b-1]`` = MWC at a-away vs b-away (Crawford game when one is 1-away);
        ``post[n-1]`` = the trailer's MWC at n-away vs 1-away, post-Crawford."""
        self.name = name
        self.pre = pre
        self.post = post
        self.length = min(len(pre), len(post))
        self._fallback = fallback

    def win_probability(self, my_away: int, opp_away: int, post_crawford: bool = False) -> float:
        """My MWC at the start of a game at this score (see the module docstring)."""
        if my_away <= 0:
            return 1.0
        if opp_away <= 0:
            return 0.0
        if my_away > self.length or opp_away > self.length:
            if self._fallback is None:
                raise BeyondTable(
                    f"score {my_away}-away vs {opp_away}-away is beyond this "
                    f"{self.length}-point table (matches are at most {self.length} points)"
                )
            return self._fallback().win_probability(my_away, opp_away, post_crawford)
        if post_crawford and (my_away == 1 or opp_away == 1):
            if my_away == 1:
                return 1.0 - self.post[opp_away - 1]
            return self.post[my_away - 1]
        return self.pre[my_away - 1][opp_away - 1]

    def after_game(
        self,
        my_away: int,
        opp_away: int,
        points: int,
        *,
        crawford: bool = False,
        post_crawford: bool = False,
        crawford_rule: bool = True,
    ) -> float:
        """My MWC after the current game ends with ``points`` to me (negative: to my opponent).

        The flags describe the game just played: after a Crawford or post-Crawford game, or
        without the Crawford rule, a 1-away score is post-Crawford; otherwise a side that has
        just reached 1-away plays the Crawford game next.
        """
        if points >= 0:
            my_away -= points
        else:
            opp_away += points
        return self.win_probability(
            my_away, opp_away, post_crawford or crawford or not crawford_rule
        )

    def after_game_function(
        self, *, crawford: bool = False, post_crawford: bool = False, crawford_rule: bool = True
    ) -> Mwc:
        """``mwc(a, b)`` for scores reached when the current game ends (for cube models)."""
        post = post_crawford or crawford or not crawford_rule
        return lambda a, b: self.win_probability(a, b, post)


# ---------------------------------------------------------------------- our model


@dataclass(frozen=True, slots=True)
class MetModel:
    """The parameters of our generated MET (module docstring); defaults are the fitted ones."""

    gammon_rate: float = 0.27
    """Fraction of pre-Crawford games that end in a gammon (fixed at the bots' 26-27 %)."""
    crawford_gammon_rate: float = 0.295
    """Trailer's gammon fraction in the Crawford and post-Crawford games (fitted)."""
    cube_efficiency: float = 0.85
    """Weight of the fully live cube in the pre-Crawford recursion (fitted)."""
    free_drop_2: float = 0.010
    """Leader's free-drop gain, post-Crawford, trailer at 2-away (fitted)."""
    free_drop_4: float = 0.009
    """The same at 4-away (fitted)."""


def _post_crawford(model: MetModel, length: int) -> list[float]:
    g = model.crawford_gammon_rate

    def value(n: int, table: list[float]) -> float:
        return 1.0 if n <= 0 else table[n - 1]

    table: list[float] = []
    for n in range(1, length + 1):
        if n == 1:
            table.append(0.5)
            continue
        v = 0.5 * ((1.0 - g) * value(n - 2, table) + g * value(n - 4, table))
        if n == 2:
            v -= model.free_drop_2
        elif n == 4:
            v -= model.free_drop_4
        table.append(v)
    return table


@functools.cache
def generate_met(model: MetModel = MetModel(), length: int = DEFAULT_LENGTH) -> MatchEquityTable:
    """Our MET for every score up to ``length``-away, from ``model`` (see module docstring)."""
    if length < 1:
        raise ValueError(f"a MET needs length >= 1, got {length}")
    post = _post_crawford(model, length)
    g = model.crawford_gammon_rate
    pre = [[0.5] * length for _ in range(length)]

    def post_value(n: int) -> float:
        return 1.0 if n <= 0 else post[n - 1]

    for n in range(2, length + 1):  # Crawford game: the trailer at n-away, no cube
        trailer = 0.5 * ((1.0 - g) * post_value(n - 1) + g * post_value(n - 2))
        pre[n - 1][0] = trailer
        pre[0][n - 1] = 1.0 - trailer

    def mwc(a: int, b: int) -> float:
        if a <= 0:
            return 1.0
        if b <= 0:
            return 0.0
        return pre[a - 1][b - 1]

    rates = GammonRates(model.gammon_rate, 0.0, model.gammon_rate, 0.0)
    for total in range(4, 2 * length + 1):
        for a in range(max(2, total - length), min(length, total - 2) + 1):
            b = total - a
            pre[a - 1][b - 1] = cubeful_mwc(
                mwc, a, b, 1, "centre", 0.5, rates, model.cube_efficiency
            )
    fallback = None
    if length < EXTENDED_LENGTH:
        fallback = functools.partial(generate_met, model, EXTENDED_LENGTH)
    return MatchEquityTable(f"bgbot model {model}", pre, post, fallback)


def default_met() -> MatchEquityTable:
    """The MET the cube decisions use unless told otherwise: ours, unless
    ``$BGBOT_MET`` names a gnubg XML file (a path, or a name in gnubg's met directory)."""
    choice = os.environ.get("BGBOT_MET", "")
    if not choice:
        return generate_met()
    return _load_named(choice)


@functools.cache
def _load_named(choice: str) -> MatchEquityTable:
    path = Path(choice)
    if not path.exists():
        path = GNUBG_MET_DIR / (choice if choice.endswith(".xml") else choice + ".xml")
    return read_met_xml(path)


# ---------------------------------------------------------------------- gnubg's XML files


def _floats(row: ElementTree.Element, where: str) -> list[float]:
    out = []
    for cell in row.findall("me"):
        text = (cell.text or "").strip()
        try:
            value = float(text)
        except ValueError:
            raise FormatError(where, text, "is not a number") from None
        if not 0.0 <= value <= 1.0:
            raise FormatError(where, text, "is not a probability in 0..1")
        out.append(value)
    return out


def parse_met_xml(
    text: str, fallback: Callable[[], MatchEquityTable] | None = None
) -> MatchEquityTable:
    """Read a gnubg MET XML document (explicit tables only).

    ``fallback`` answers for scores beyond the file's length (default: our model).
    """
    try:
        root = ElementTree.fromstring(text)
    except ElementTree.ParseError as exc:
        raise FormatError("met xml", text[:80], f"is not well-formed XML: {exc}") from None
    if root.tag != "met":
        raise FormatError("met root", root.tag, "must be <met>")
    name = (root.findtext("info/name") or "").strip() or "unnamed MET"
    pre_element = root.find("pre-crawford-table")
    if pre_element is None:
        raise FormatError("pre-crawford-table", None, "is missing")
    kind = pre_element.get("type", "explicit")
    if kind != "explicit":
        raise FormatError("pre-crawford-table type", kind, "only explicit tables are supported")
    pre = [
        _floats(row, f"pre-crawford-table row {i + 1}")
        for i, row in enumerate(pre_element.findall("row"))
    ]
    if not pre:
        raise FormatError("pre-crawford-table", 0, "has no rows")
    size = len(pre)
    for i, row in enumerate(pre):
        if len(row) < size:
            raise FormatError(f"pre-crawford-table row {i + 1}", len(row), f"needs {size} values")
    pre = [row[:size] for row in pre]
    post: list[float] | None = None
    for element in root.findall("post-crawford-table"):
        player = element.get("player", "both")
        if element.get("type", "explicit") != "explicit":
            raise FormatError(
                "post-crawford-table type",
                element.get("type"),
                "only explicit tables are supported",
            )
        if player in ("both", "0") and post is None:
            post_row = element.find("row")
            if post_row is None:
                raise FormatError("post-crawford-table", player, "has no row")
            post = _floats(post_row, "post-crawford-table")
    if post is None:
        raise FormatError("post-crawford-table", None, "is missing (player both or 0)")
    if not post:
        raise FormatError("post-crawford-table", 0, "has no values")
    # Some files carry one post-Crawford value fewer than their rows: the table's length is
    # then the shorter of the two, and longer scores come from the fallback.
    if fallback is None:
        fallback = functools.partial(generate_met, MetModel(), EXTENDED_LENGTH)
    return MatchEquityTable(name, pre, post, fallback)


def read_met_xml(path: str | Path) -> MatchEquityTable:
    """Read a gnubg MET XML file, e.g. ``/usr/share/gnubg/met/Kazaross-XG2.xml``."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise FormatError("met file", str(path), f"cannot be read: {exc.strerror}") from None
    return parse_met_xml(text)


KXG2_TOLERANCE = 0.005
"""Max |ours − Kazaross-XG2| over every score up to 25-away, pre- and post-Crawford (measured
0.0045, at 2a-3a; checked by tests/test_met.py against the installed file)."""
