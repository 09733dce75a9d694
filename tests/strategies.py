"""Hypothesis strategies for legal backgammon positions, shared by the tests."""

from __future__ import annotations

from hypothesis import strategies as st

from bgbot.core.position import Position

LOCATION = st.integers(0, 25)
"""A chequer's own index: 0..23 = points 1..24, 24 = bar, 25 = borne off."""


@st.composite
def legal_positions(draw: st.DrawFn) -> Position:
    """15 chequers a side (bar and off included), clumped so that points get made; no point is
    held by both sides (the mover's own point i + 1 is the opponent's point 24 - i)."""
    mover = [0] * 26
    for location in draw(st.lists(st.sampled_from(draw(st.lists(LOCATION, min_size=1,
                                                                    max_size=9))),
                                  min_size=15, max_size=15)):
        mover[location] += 1
    free = [i for i in range(26) if i >= 24 or not mover[23 - i]]
    spots = draw(st.lists(st.sampled_from(free), min_size=1, max_size=9))
    opponent = [0] * 26
    for location in draw(st.lists(st.sampled_from(spots), min_size=15, max_size=15)):
        opponent[location] += 1
    return Position(opponent[:25], mover[:25])


@st.composite
def bear_off_positions(draw: st.DrawFn) -> Position:
    """The mover has every chequer home or off (sometimes one back on the bar); the opponent
    anywhere it fits (so that its chequers can block and be hit in our home board)."""
    mover = [0] * 25
    for location in draw(st.lists(st.sampled_from([0, 1, 2, 3, 4, 5, 25]), min_size=15,
                                  max_size=15)):
        if location < 25:
            mover[location] += 1
    if draw(st.booleans()) and any(mover[:6]):
        source = next(i for i in range(6) if mover[i])
        mover[source] -= 1
        mover[24] += 1
    free = [i for i in range(25) if i == 24 or not mover[23 - i]]
    opponent = [0] * 25
    for location in draw(st.lists(st.sampled_from(free), min_size=1, max_size=15)):
        opponent[location] += 1
    return Position(opponent, mover)


@st.composite
def entering_positions(draw: st.DrawFn) -> Position:
    """The mover has 1..4 chequers on the bar against a home board of 0..6 made points
    (entries blocked), with blots to hit and chequers elsewhere."""
    made = draw(st.sets(st.integers(0, 5), max_size=6))
    opponent = [0] * 25
    for i in made:
        opponent[i] = 2
    left = 15 - 2 * len(made)
    blots = draw(st.sets(st.sampled_from([i for i in range(12) if i not in made]),
                         max_size=min(left, 4)))
    for i in blots:
        opponent[i] = 1
    opponent[12] += 15 - sum(opponent)  # the rest on its 13-point (our 12)
    mover = [0] * 25
    mover[24] = draw(st.integers(1, 4))
    spots = [i for i in range(24) if not opponent[23 - i]]
    for location in draw(st.lists(st.sampled_from(spots), min_size=15 - mover[24],
                                  max_size=15 - mover[24])):
        mover[location] += 1
    return Position(opponent, mover)
