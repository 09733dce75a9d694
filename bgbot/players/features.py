"""Position features for the heuristic evaluator (heuristic-player.md §2), built for speed.

Everything is computed for both sides of a position seen from the player on roll (the
"roller", ``position.mover``) and the other player (``position.opponent``). Features come in
three kinds, so that the evaluator can score a candidate quickly:

* **per-point** features, additive over the 25 locations of one side (made points by location,
  blots by zone, stacking, pips, chequers back, crossovers...). A linear model turns them into
  one table lookup per location (`point_features` is their single definition);
* **global one-sided** features, nonlinear in one side's chequers (prime length, home board
  strength, off / not off...). They and the per-point ones depend on one side only, so the
  evaluator caches them per side tuple: across the candidates of one move, the side that did
  not move is the same;
* **cross** features, which need both sides: shots at blots (enumerated over the 36 rolls
  against blocking points), escape counts against primes, entry odds from the bar, contact.

Numbering: each side counts its own points 1..24 from its home, 25 = its bar. A chequer of one
side on its point q is on the other side's point 25 - q. Bit masks use bit p for own point p.
"""

from __future__ import annotations

from typing import NamedTuple

# --------------------------------------------------------------------------------- rolls

ROLLS: tuple[tuple[int, int, int], ...] = tuple(
    (a, b, 1 if a == b else 2) for a in range(1, 7) for b in range(a, 7)
)
"""The 21 distinct rolls with their weight out of 36."""


def _roll_bit(a: int, b: int) -> int:
    """The bits of roll {a, b} in a 36-bit set of ordered rolls (two bits unless doubles)."""
    return (1 << ((a - 1) * 6 + (b - 1))) | (1 << ((b - 1) * 6 + (a - 1)))


def _hit_rolls(distance: int, blocked: int) -> int:
    """Rolls (36-bit set) with which a chequer hits a blot ``distance`` pips ahead.

    Bit t - 1 of ``blocked`` says that the point t pips ahead of the hitter is blocked; the blot's
    own point is open by definition. A roll counts if one chequer can reach the blot by landing
    only on open points (doubles move four times).
    """
    rolls = 0
    for a in range(1, 7):
        for b in range(a, 7):
            if a == b:
                for k in range(1, 5):
                    if a * k == distance:
                        if all(not (blocked >> (a * j - 1)) & 1 for j in range(1, k)):
                            rolls |= _roll_bit(a, b)
                        break
            elif distance in (a, b) or (
                distance == a + b
                and (not (blocked >> (a - 1)) & 1 or not (blocked >> (b - 1)) & 1)
            ):
                rolls |= _roll_bit(a, b)
    return rolls


_HIT_CACHE: dict[int, int] = {}


def hit_rolls(distance: int, blocked: int) -> int:
    """Memoised `_hit_rolls`; ``blocked`` holds only the distance - 1 points in between."""
    key = (distance << 24) | blocked
    found = _HIT_CACHE.get(key)
    if found is None:
        found = _HIT_CACHE[key] = _hit_rolls(distance, blocked) if distance <= 24 else 0
    return found


def _escape_count(blocked: int) -> int:
    """Rolls (of 36) with which a chequer plays both dice past the 12 points ahead of it.

    The landing point of the whole roll must be open and at least one intermediate landing point
    must be open; doubles count as two steps only (heuristic-player.md §2.3).
    """
    count = 0
    for a in range(1, 7):
        for b in range(1, 7):
            if a == b:
                ok = not (blocked >> (a - 1)) & 1 and not (blocked >> (2 * a - 1)) & 1
            else:
                ok = not (blocked >> (a + b - 1)) & 1 and (
                    not (blocked >> (a - 1)) & 1 or not (blocked >> (b - 1)) & 1
                )
            count += ok
    return count


ESCAPES: tuple[int, ...] = tuple(_escape_count(mask) for mask in range(4096))
"""Escape count (0..36) for every 12-bit mask of blocked points ahead of a chequer."""

# ------------------------------------------------------------------ per-point features

POINT_FEATURES: tuple[str, ...] = (
    *(f"made_{p}" for p in range(1, 25)),
    "blots_home",
    "blots_outfield",
    "blots_back",
    "stack_home",
    "stack_outside",
    "pips",
    "bar",
    "back",
    "outside_home",
    "crossovers",
    "buried",
    "spares_builders",
    "builders",
)
_P = {name: i for i, name in enumerate(POINT_FEATURES)}


def point_features(index: int, count: int) -> list[tuple[int, float]]:
    """The per-point features of ``count`` chequers on own index ``index`` (24 = bar).

    Returns (feature index in POINT_FEATURES, value) pairs for the nonzero features. This is
    the one definition the evaluator's lookup tables are built from.
    """
    if count == 0:
        return []
    point = index + 1
    out: list[tuple[int, float]] = [(_P["pips"], count * point / 100.0)]
    if index == 24:
        out.append((_P["bar"], float(count)))
        out.append((_P["back"], count / 5.0))
        out.append((_P["outside_home"], count / 15.0))
        out.append((_P["crossovers"], count * 4 / 30.0))
        return out
    if count >= 2:
        out.append((_P[f"made_{point}"], 1.0))
    elif point <= 6:
        out.append((_P["blots_home"], 1.0))
    elif point <= 18:
        out.append((_P["blots_outfield"], 1.0))
    else:
        out.append((_P["blots_back"], 1.0))
    if count > 3:
        out.append((_P["stack_home" if point <= 6 else "stack_outside"], (count - 3) / 3.0))
    if point >= 19:
        out.append((_P["back"], count / 5.0))
    if point >= 7:
        out.append((_P["outside_home"], count / 15.0))
        out.append((_P["crossovers"], count * (index // 6) / 30.0))
    if point <= 2:
        out.append((_P["buried"], count / 5.0))
    if 4 <= point <= 11:
        out.append((_P["builders"], count / 10.0))
        if count > 2:
            out.append((_P["spares_builders"], (count - 2) / 5.0))
    return out


def point_feature_sums(side: tuple[int, ...]) -> list[float]:
    """Σ over the 25 locations of `point_features` (the dense per-point vector of one side)."""
    out = [0.0] * len(POINT_FEATURES)
    for index in range(25):
        for feature, value in point_features(index, side[index]):
            out[feature] += value
    return out


# ------------------------------------------------------------------ one-sided summary


class SideInfo(NamedTuple):
    """Facts about one side, in its own numbering; computed once per distinct side tuple."""

    made: int
    """Bit p set when own point p (1..24) holds two or more chequers."""
    blots: int
    """Bit p set when own point p (1..24) holds exactly one chequer."""
    occupied: int
    """Bit p set when own point p (1..25, 25 = bar) holds a chequer."""
    pips: int
    off: int
    bar: int
    home_made: int
    prime: int
    """Length of the longest run of made points."""
    prime_top: int
    """Highest point of that run (0 if none)."""
    rearmost: int
    """Highest occupied own point (25 = bar, 0 if all off)."""
    back: int
    """Chequers on the bar or in the opponent's home board (own points 19..24)."""
    anchors: int
    """Points made in the opponent's home board (own points 19..24)."""


# One side's facts are packed into a single integer per (location, count) so that one C-level
# sum over the 25 locations yields them all (no carries: each field is wide enough).
BLOT_SHIFT, OCC_SHIFT, PIP_SHIFT, COUNT_SHIFT, BACK_SHIFT = 26, 52, 78, 88, 93
FACT_BITS = 98
"""Bits used by the packed facts; callers may pack more fields above them."""
FACT_MASK = (1 << FACT_BITS) - 1
_BITS26 = (1 << 26) - 1


def fact_entry(index: int, count: int) -> int:
    """The packed facts of ``count`` chequers on own index ``index`` (24 = bar)."""
    if count == 0:
        return 0
    bit = 1 << (index + 1)
    value = (bit << OCC_SHIFT) | (count * (index + 1)) << PIP_SHIFT | count << COUNT_SHIFT
    if index < 24:
        value |= bit if count >= 2 else bit << BLOT_SHIFT
    if index >= 18:
        value |= count << BACK_SHIFT
    return value


FACT_TABLE: tuple[tuple[int, ...], ...] = tuple(
    tuple(fact_entry(index, n) for n in range(16)) for index in range(25)
)
_getitem = tuple.__getitem__
HOME_MASK = 0b1111110
ANCHOR_MASK = 0b1111110 << 18
_STRUCTURE: dict[int, tuple[int, int, int, int]] = {}


def _structure(made: int) -> tuple[int, int, int, int]:
    """(home points made, longest run of made points, its top point, anchors) of a mask."""
    found = _STRUCTURE.get(made)
    if found is None:
        run = made
        length = 0
        top_run = 0
        while run:
            top_run = run
            run &= run << 1
            length += 1
        if len(_STRUCTURE) > 100_000:
            _STRUCTURE.clear()
        found = _STRUCTURE[made] = (
            (made & HOME_MASK).bit_count(),
            length,
            top_run.bit_length() - 1 if made else 0,
            (made & ANCHOR_MASK).bit_count(),
        )
    return found


def info_from_facts(facts: int, bar: int) -> SideInfo:
    """Unpack the sum of `fact_entry` over a side's 25 locations into its `SideInfo`."""
    made = facts & _BITS26
    occupied = (facts >> OCC_SHIFT) & _BITS26
    home_made, prime, prime_top, anchors = _structure(made)
    return SideInfo(
        made,
        (facts >> BLOT_SHIFT) & _BITS26,
        occupied,
        (facts >> PIP_SHIFT) & 1023,
        15 - ((facts >> COUNT_SHIFT) & 31),
        bar,
        home_made,
        prime,
        prime_top,
        max(occupied.bit_length() - 1, 0),
        (facts >> BACK_SHIFT) & 31,
        anchors,
    )


def side_info(side: tuple[int, ...]) -> SideInfo:
    """The `SideInfo` of one side's 25 counts."""
    return info_from_facts(sum(map(_getitem, FACT_TABLE, side)), side[24])


def global_key(info: SideInfo) -> tuple[int, int, int, int, int, bool, int]:
    """Everything `global_features` depends on (for caching its weighted sums)."""
    return (info.off, info.home_made, info.prime, info.prime_top, info.rearmost, info.bar >= 2,
            min(info.anchors, 2))


GLOBAL_FEATURES: tuple[str, ...] = (
    "some_off",
    "off",
    "home_made_sq",
    "home_5plus",
    "prime_3",
    "prime_4",
    "prime_5",
    "prime_6",
    "prime_top",
    "rearmost",
    "bar_2plus",
    "anchor",
    "two_anchors",
)


def global_features(info: SideInfo) -> list[float]:
    """Nonlinear one-sided features (GLOBAL_FEATURES order); a function of `global_key` only."""
    off, home_made, prime, prime_top, rearmost, bar2, anchors = global_key(info)
    return [
        1.0 if off else 0.0,
        off / 15.0,
        home_made * home_made / 36.0,
        1.0 if home_made >= 5 else 0.0,
        1.0 if prime >= 3 else 0.0,
        1.0 if prime >= 4 else 0.0,
        1.0 if prime >= 5 else 0.0,
        1.0 if prime >= 6 else 0.0,
        prime_top / 24.0 if prime >= 4 else 0.0,
        rearmost / 25.0,
        1.0 if bar2 else 0.0,
        1.0 if anchors >= 1 else 0.0,
        1.0 if anchors >= 2 else 0.0,
    ]


# ------------------------------------------------------------------------ cross features

CROSS_FEATURES: tuple[str, ...] = (
    "shots",
    "shots_x_board",
    "shots_double",
    "pip_loss",
    "return_shots",
    "trap_other",
    "trap_other_sq",
    "trap_me",
    "trap_me_sq",
    "enter_fail_me",
    "enter_fail_other",
    "other_back_x_board",
    "my_back_x_board",
    "race_lead",
    "race_lead_sq",
    "my_free",
    "other_free",
)


def shot_masks(shooter: SideInfo, target: SideInfo) -> tuple[int, int, float]:
    """Rolls with which ``shooter`` (on roll) hits a blot of ``target``.

    Returns (36-bit set of hitting rolls, the rolls that can hit two different blots, and the
    expected pip loss Σ P(blot hit) · pips it has travelled, ÷ 25). A shooter with chequers on
    the bar may only hit from the bar (the other die's hits after entering are ignored).
    """
    blots = target.blots
    if not blots:
        return 0, 0, 0.0
    blocks = target.made
    shooters = 1 << 25 if shooter.bar else shooter.occupied
    cache_get = _HIT_CACHE.get
    union = 0
    double = 0
    loss = 0.0
    while blots:
        low = blots & -blots
        blots ^= low
        # The target's blot on its point t is on the shooter's point 25 - t.
        blot_point = 26 - low.bit_length()
        rolls = 0
        base = blot_point + 1
        candidates = (shooters >> base) & 0xFFFFFF  # shooters at most 24 pips away
        while candidates:
            bit = candidates & -candidates
            candidates ^= bit
            distance = bit.bit_length()  # the shooter is on point blot_point + distance
            mask = (blocks >> (26 - blot_point - distance)) & ((1 << (distance - 1)) - 1)
            key = (distance << 24) | mask
            found = cache_get(key)
            if found is None:
                found = hit_rolls(distance, mask)
            rolls |= found
        if rolls:
            double |= union & rolls
            union |= rolls
            loss += rolls.bit_count() * blot_point
    return union, double, loss / (36.0 * 25.0)


def escape_rearmost(runner: SideInfo, blocker: SideInfo) -> int:
    """Escape count of ``runner``'s rearmost chequer against ``blocker``'s made points."""
    q = runner.rearmost
    if q == 0:
        return 36
    if q >= 26:
        return 36
    return ESCAPES[(blocker.made >> (26 - q)) & 0xFFF] if q >= 2 else 36


def _enter_fail(bar: int, closed: int) -> float:
    if bar == 0:
        return 0.0
    if bar == 1:
        return closed * closed / 36.0
    return 1.0 - (6 - closed) * (6 - closed) / 36.0


def cross_features(me: SideInfo, other: SideInfo) -> list[float]:
    """Features of both sides together; ``me`` is on roll (see CROSS_FEATURES for the order)."""
    union, double, loss = shot_masks(me, other)
    shots = union.bit_count() / 36.0
    back_union, _, _ = shot_masks(other, me)
    trap_other = 1.0 - escape_rearmost(other, me) / 36.0
    trap_me = 1.0 - escape_rearmost(me, other) / 36.0
    lead = (other.pips - me.pips) / 100.0
    # Chequers already past every chequer of the other side (no longer engaged).
    other_rear = other.rearmost
    my_rear = me.rearmost
    my_free = (me.occupied & ((1 << (25 - other_rear)) - 1)).bit_count() if other_rear else 0
    other_free = (other.occupied & ((1 << (25 - my_rear)) - 1)).bit_count() if my_rear else 0
    return [
        shots,
        shots * me.home_made / 6.0,
        double.bit_count() / 36.0,
        loss,
        back_union.bit_count() / 36.0,
        trap_other,
        trap_other * trap_other,
        trap_me,
        trap_me * trap_me,
        _enter_fail(me.bar, other.home_made),
        _enter_fail(other.bar, me.home_made),
        other.back * me.home_made / 30.0,
        me.back * other.home_made / 30.0,
        lead,
        lead * abs(lead),
        my_free / 15.0,
        other_free / 15.0,
    ]


FEATURE_NAMES: tuple[str, ...] = (
    *(f"me.{n}" for n in POINT_FEATURES),
    *(f"me.{n}" for n in GLOBAL_FEATURES),
    *(f"other.{n}" for n in POINT_FEATURES),
    *(f"other.{n}" for n in GLOBAL_FEATURES),
    *CROSS_FEATURES,
    "bias",
)
"""Names of the full contact feature vector, in order ("me" = the player on roll)."""


def feature_vector(mover: tuple[int, ...], opponent: tuple[int, ...]) -> list[float]:
    """The full feature vector (FEATURE_NAMES order) of a position: ``mover`` is on roll.

    Slow and plain, for training and tests; the evaluator computes the same dot products with
    per-point lookup tables and per-side caches.
    """
    me, other = side_info(mover), side_info(opponent)
    return [
        *point_feature_sums(mover),
        *global_features(me),
        *point_feature_sums(opponent),
        *global_features(other),
        *cross_features(me, other),
        1.0,
    ]


# ------------------------------------------------------------------ network-only features

NET_FEATURES: tuple[str, ...] = (
    "contain_other",
    "contain_other_sq",
    "acontain_other",
    "acontain_other_sq",
    "contain_me",
    "contain_me_sq",
    "acontain_me",
    "acontain_me_sq",
    "mobility_me",
    "mobility_other",
    "backgame_me",
    "backgame_other",
    "contact_depth_me",
    "contact_depth_other",
    "free_pips_me",
    "free_pips_other",
    "timing_me",
    "timing_other",
    "moment2_me",
    "moment2_other",
    "gap_me",
    "gap_other",
    "support_me",
    "support_other",
    "make_me",
    "make_other",
    "trapped_me",
    "trapped_other",
    "return_loss",
    "return_double",
)
"""Features only the network reads (after its board encoding), both sides seen from the player
on roll ("me"): the blockades each side holds against the other's chequers, how freely each
side's outfield chequers move, back-game shape, and how much of each side is still engaged
(heuristic-player.md §2.3–2.6, gnubg's contain, mobility, back-game, break-contact and
free-pip inputs in our own definitions); then each side's timing, the spread of its chequers
behind their mean, the widest gap in its chain of occupied points, and how many of its
outfield chequers have a safe landing point one die ahead; then how many rolls would make
each side a new point in its home board or on its bar point, each side's chequers trapped
behind the other's prime, and the pips and double shots the side on roll risks from the
other's return hits. The linear player's `FEATURE_NAMES` stay as they were."""

CONTAIN_FROM = 16
"""The runner's own point where containment is first measured (the blocker's 9-point)."""


def _escape_at(point: int, blocker_made: int) -> int:
    """Escape count of a chequer on its own ``point`` (2..25) against ``blocker_made``."""
    return ESCAPES[(blocker_made >> (26 - point)) & 0xFFF]


def _containment(runner: SideInfo, blocker: SideInfo) -> tuple[float, float]:
    """(contain, acontain): 1 − the least escape count / 36 of a runner's chequer on any of
    its points 16..24 (whether or not one is there), and over its points 16 up to its rearmost
    chequer (0 when nothing of it is that far back)."""
    made = blocker.made
    least = 36
    for point in range(CONTAIN_FROM, 25):
        least = min(least, _escape_at(point, made))
    actual = 36
    for point in range(CONTAIN_FROM, runner.rearmost + 1):
        actual = min(actual, _escape_at(point, made))
    return 1.0 - least / 36.0, 1.0 - actual / 36.0


def _mobility(side: tuple[int, ...], blocker: SideInfo) -> float:
    """Σ over the side's chequers outside its home board of escape count × pips to home,
    ÷ 3600."""
    made = blocker.made
    total = 0
    for index in range(6, 25):
        count = side[index]
        if count:
            total += count * _escape_at(index + 1, made) * (index - 5)
    return total / 3600.0


def _backgame(side: tuple[int, ...], info: SideInfo) -> float:
    """With two or more anchors in the other's home board, (chequers there − 3) / 4; with
    one, chequers there / 8; else 0."""
    there = sum(side[18:24])
    if info.anchors >= 2:
        return (there - 3) / 4.0
    if info.anchors == 1:
        return there / 8.0
    return 0.0


def _engagement(side: tuple[int, ...], other: SideInfo) -> tuple[float, float]:
    """(contact depth, free pips): the pips by which the side's chequers lie behind the
    other's rearmost chequer, ÷ 167, and the pips of those already past it, ÷ 100."""
    rear = other.rearmost
    edge = 25 - rear if rear else 25  # own points above the edge are still engaged
    depth = 0
    free = 0
    for index in range(25):
        count = side[index]
        if count:
            point = index + 1
            if rear and point > edge:
                depth += count * (point - edge)
            elif point < edge or not rear:
                free += count * point
    return depth / 167.0, free / 100.0


def _timing(side: tuple[int, ...], other: SideInfo) -> float:
    """Pips the side can play before it must break a point the other side still has to pass
    (own points above 25 − the other's rearmost): Σ over its spare chequers (all but two on
    such a point, every chequer elsewhere) of the pips down to its 1-point, ÷ 100."""
    edge = 25 - other.rearmost if other.rearmost else 25
    total = 0
    for index in range(25):
        count = side[index]
        if count:
            spare = count - 2 if index < 24 and count >= 2 and index + 1 > edge else count
            total += spare * index
    return total / 100.0


def _moment2(side: tuple[int, ...], info: SideInfo) -> float:
    """Σ over the chequers behind the side's mean point of the squared distance to it,
    ÷ (chequers on the board × 100): a straggler far behind the rest scores high."""
    on_board = 15 - info.off
    if not on_board:
        return 0.0
    mean = info.pips / on_board
    total = 0.0
    for index in range(25):
        count = side[index]
        if count and index + 1 > mean:
            total += count * (index + 1 - mean) ** 2
    return total / (on_board * 100.0)


def _gap(info: SideInfo) -> float:
    """The widest distance between two neighbouring occupied points of the side (from its
    rearmost chequer down to the 0-point) beyond 6 pips, ÷ 18: a chequer that no single die
    brings to a point the side holds."""
    widest = 0
    above = info.rearmost
    occupied = info.occupied
    for point in range(info.rearmost - 1, -1, -1):
        if point == 0 or (occupied >> point) & 1:
            widest = max(widest, above - point)
            above = point
    return max(widest - 6, 0) / 18.0


def _support(side: tuple[int, ...], info: SideInfo) -> float:
    """Chequers outside the side's home board (the bar included) with one of its own made
    points 1–6 pips ahead, ÷ 15."""
    made = info.made
    total = 0
    for index in range(6, 25):
        count = side[index]
        if count and (made >> (index - 5)) & 0x3F:
            total += count
    return total / 15.0


MAKE_POINTS = 7
"""`_make_rolls` counts new points on the side's own points 1..7 (home board and bar point)."""


def _movable(side: tuple[int, ...], point: int) -> int:
    """Chequers a side can bring to a point from its own ``point`` without breaking one: a
    blot, or the spares above two on a made point (none from the bar or beyond the 24)."""
    if point > 24:
        return 0
    n = side[point - 1]
    return 1 if n == 1 else max(n - 2, 0)


def _make_rolls(side: tuple[int, ...], other: SideInfo) -> float:
    """The share of the 36 rolls with which the side, were it on roll, could make a new point
    on its own points 1..`MAKE_POINTS` that the other side has not made: two movable chequers
    (`_movable`) a die's distance away, or one onto its own blot there; a double moves up to
    four steps of its number among at most two chequers. Blocked points on the way, the bar
    and the other's hits are ignored: a count of builders aimed at the points that matter."""
    rolls = 0
    blocks = other.made
    for target in range(1, MAKE_POINTS + 1):
        here = side[target - 1]
        if here >= 2 or (blocks >> (25 - target)) & 1:
            continue
        blot = here == 1
        for a in range(1, 7):
            for b in range(a, 7):
                if a != b:
                    near, far = _movable(side, target + a), _movable(side, target + b)
                    made = (near or far) if blot else (near and far)
                else:
                    steps = [0] + [_movable(side, target + k * a) for k in range(1, 5)]
                    if blot:
                        made = any(steps[1:])
                    else:
                        made = (steps[1] >= 2 or steps[2] >= 2
                                or (steps[1] >= 1 and (steps[2] >= 1 or steps[3] >= 1)))
                if made:
                    rolls |= _roll_bit(a, b)
    return rolls.bit_count() / 36.0


def _trapped(side: tuple[int, ...], other: SideInfo) -> float:
    """The side's chequers behind the other's longest prime when it is four points or more
    (on its points farther from home than the prime's last point, the bar included), ÷ 15."""
    if other.prime < 4:
        return 0.0
    # the other's points top - prime + 1 .. top are the side's 25 - top .. 24 - top + prime
    behind = 24 - other.prime_top + other.prime  # the index of the side's first point behind
    return sum(side[behind:25]) / 15.0


def net_features(mover: tuple[int, ...], opponent: tuple[int, ...]) -> list[float]:
    """The `NET_FEATURES` of a position, ``mover`` on roll."""
    me, other = side_info(mover), side_info(opponent)
    contain_other, acontain_other = _containment(other, me)
    contain_me, acontain_me = _containment(me, other)
    depth_me, free_me = _engagement(mover, other)
    depth_other, free_other = _engagement(opponent, me)
    _, return_double, return_loss = shot_masks(other, me)
    return [
        contain_other,
        contain_other * contain_other,
        acontain_other,
        acontain_other * acontain_other,
        contain_me,
        contain_me * contain_me,
        acontain_me,
        acontain_me * acontain_me,
        _mobility(mover, other),
        _mobility(opponent, me),
        _backgame(mover, me),
        _backgame(opponent, other),
        depth_me,
        depth_other,
        free_me,
        free_other,
        _timing(mover, other),
        _timing(opponent, me),
        _moment2(mover, me),
        _moment2(opponent, other),
        _gap(me),
        _gap(other),
        _support(mover, me),
        _support(opponent, other),
        _make_rolls(mover, other),
        _make_rolls(opponent, me),
        _trapped(mover, other),
        _trapped(opponent, me),
        return_loss,
        return_double.bit_count() / 36.0,
    ]
