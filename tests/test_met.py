"""Match equity tables: our generated MET, gnubg's XML reader, and their agreement."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bgbot.core.errors import FormatError
from bgbot.players.met import (
    GNUBG_MET_DIR,
    KXG2_TOLERANCE,
    MatchEquityTable,
    MetModel,
    default_met,
    generate_met,
    parse_met_xml,
    read_met_xml,
)

KXG2 = GNUBG_MET_DIR / "Kazaross-XG2.xml"
needs_gnubg_met = pytest.mark.skipif(not KXG2.exists(), reason="gnubg's MET files are not installed")

# Kazaross-XG2 values quoted by the reference (heuristic-player.md §6.2).
CRAWFORD_LEADER = {2: 0.67736, 3: 0.75076, 4: 0.81436, 5: 0.84179}
PRE_CRAWFORD = {(2, 3): 0.59947, (3, 4): 0.57150, (4, 5): 0.57732}
POST_CRAWFORD_TRAILER = {2: 0.48803, 3: 0.32264, 4: 0.31002, 5: 0.19012}


@pytest.fixture(scope="module")
def ours() -> MatchEquityTable:
    return generate_met()


@pytest.fixture(scope="module")
def kxg2() -> MatchEquityTable:
    if not KXG2.exists():
        pytest.skip("gnubg's MET files are not installed")
    return read_met_xml(KXG2)


# ---------------------------------------------------------------------- our model


@settings(deadline=None)
@given(st.integers(1, 30), st.integers(1, 30))
def test_our_met_is_a_zero_sum_table(a: int, b: int) -> None:
    met = generate_met()
    assert met.win_probability(a, b) + met.win_probability(b, a) == pytest.approx(1.0, abs=1e-12)
    post = met.win_probability(a, b, post_crawford=True)
    assert post + met.win_probability(b, a, post_crawford=True) == pytest.approx(1.0, abs=1e-12)
    assert 0.0 < met.win_probability(a, b) < 1.0


def test_our_met_is_monotonic(ours: MatchEquityTable) -> None:
    for a in range(1, 25):
        for b in range(1, 25):
            assert ours.win_probability(a, b) > ours.win_probability(a + 1, b)
            assert ours.win_probability(a, b) < ours.win_probability(a, b + 1)
    assert all(ours.win_probability(a, a) == pytest.approx(0.5, abs=1e-12) for a in range(1, 26))


def test_finished_matches(ours: MatchEquityTable) -> None:
    assert ours.win_probability(0, 3) == 1.0
    assert ours.win_probability(-2, 3) == 1.0
    assert ours.win_probability(3, 0) == 0.0


def test_post_crawford_model(ours: MatchEquityTable) -> None:
    """The trailer at 1-away is 50 %; the free drop costs him a little at 2- and 4-away."""
    assert ours.win_probability(1, 1, post_crawford=True) == 0.5
    assert ours.win_probability(2, 1, post_crawford=True) < 0.5
    # Odd away scores lose more than the following even one gains: 3-away ~ 4-away.
    assert ours.win_probability(3, 1, post_crawford=True) > ours.win_probability(4, 1, post_crawford=True)
    assert ours.win_probability(4, 1, post_crawford=True) > ours.win_probability(5, 1, post_crawford=True)


@pytest.mark.parametrize(("trailer", "leader_mwc"), sorted(CRAWFORD_LEADER.items()))
def test_crawford_leader_near_kazaross(ours: MatchEquityTable, trailer: int, leader_mwc: float) -> None:
    assert ours.win_probability(1, trailer) == pytest.approx(leader_mwc, abs=KXG2_TOLERANCE)


@pytest.mark.parametrize(("score", "mwc"), sorted(PRE_CRAWFORD.items()))
def test_pre_crawford_near_kazaross(ours: MatchEquityTable, score: tuple[int, int], mwc: float) -> None:
    assert ours.win_probability(*score) == pytest.approx(mwc, abs=KXG2_TOLERANCE)


@pytest.mark.parametrize(("trailer", "mwc"), sorted(POST_CRAWFORD_TRAILER.items()))
def test_post_crawford_near_kazaross(ours: MatchEquityTable, trailer: int, mwc: float) -> None:
    assert ours.win_probability(trailer, 1, post_crawford=True) == pytest.approx(mwc, abs=KXG2_TOLERANCE)


def test_a_different_model_gives_a_different_table() -> None:
    woolsey_like = generate_met(MetModel(gammon_rate=0.20), 9)
    assert woolsey_like.win_probability(2, 5) != generate_met().win_probability(2, 5)
    assert woolsey_like.length == 9
    assert 0 < woolsey_like.win_probability(12, 20) < 1  # beyond its length: the extended table


def test_long_matches_use_the_extended_table(ours: MatchEquityTable) -> None:
    assert ours.length == 25
    assert ours.win_probability(30, 40) > 0.5 > ours.win_probability(40, 30)
    assert ours.win_probability(64, 64) == 0.5


def test_after_game_moves_to_crawford_then_post_crawford(ours: MatchEquityTable) -> None:
    # 2-away vs 3-away: winning a single leads to the Crawford game.
    assert ours.after_game(2, 3, 1) == ours.win_probability(1, 3)
    # Losing the Crawford game at 1-away vs 3-away leads to post-Crawford.
    assert ours.after_game(1, 3, -1, crawford=True) == ours.win_probability(1, 2, post_crawford=True)
    # Without the Crawford rule a 1-away score is always played like post-Crawford.
    assert ours.after_game(2, 3, 1, crawford_rule=False) == ours.win_probability(1, 3, post_crawford=True)
    assert ours.after_game(2, 3, 2) == 1.0
    assert ours.after_game(2, 3, -4) == 0.0


def test_default_met_can_name_a_gnubg_file(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("BGBOT_MET", raising=False)
    assert default_met() is generate_met()
    if KXG2.exists():
        monkeypatch.setenv("BGBOT_MET", "Kazaross-XG2")
        assert default_met().name.startswith("Kazaross")


# ---------------------------------------------------------------------- the XML reader

TINY = """<?xml version="1.0"?>
<met>
  <info><name>tiny</name><description>made up</description><length>2</length></info>
  <pre-crawford-table type="explicit">
    <row><me>0.5</me><me>0.7</me></row>
    <row><me>0.3</me><me>0.5</me></row>
  </pre-crawford-table>
  <post-crawford-table type="explicit" player="both">
    <row><me>0.5</me><me>0.45</me></row>
  </post-crawford-table>
</met>"""


def test_reads_an_explicit_table() -> None:
    met = parse_met_xml(TINY)
    assert met.name == "tiny" and met.length == 2
    assert met.win_probability(1, 2) == 0.7
    assert met.win_probability(2, 1) == 0.3
    assert met.win_probability(2, 1, post_crawford=True) == 0.45
    assert met.win_probability(1, 2, post_crawford=True) == pytest.approx(0.55)
    assert 0 < met.win_probability(3, 5) < 1  # beyond the file: our model


@pytest.mark.parametrize(
    ("text", "field"),
    [
        ("<met><oops></met>", "met xml"),
        ("<table/>", "met root"),
        (TINY.replace('type="explicit">\n    <row><me>0.5', 'type="mec">\n    <row><me>0.5'), "pre-crawford-table type"),
        (TINY.replace("<me>0.7</me>", "<me>seven</me>"), "pre-crawford-table row 1"),
        (TINY.replace("<me>0.7</me>", "<me>1.7</me>"), "pre-crawford-table row 1"),
        (TINY.replace("<me>0.3</me><me>0.5</me>", "<me>0.3</me>"), "pre-crawford-table row 2"),
        (TINY.replace('player="both"', 'player="1"'), "post-crawford-table"),
    ],
)
def test_bad_tables_raise_format_errors(text: str, field: str) -> None:
    with pytest.raises(FormatError) as error:
        parse_met_xml(text)
    assert error.value.field == field


def test_unreadable_file(tmp_path: Path) -> None:
    with pytest.raises(FormatError, match="met file"):
        read_met_xml(tmp_path / "missing.xml")


@pytest.mark.gnubg
@needs_gnubg_met
def test_every_gnubg_table_reads_or_is_refused_by_name() -> None:
    for path in sorted(GNUBG_MET_DIR.glob("*.xml")):
        if path.name == "catalog.xml":  # an XML catalog, not a table
            continue
        if path.name in ("mec.xml", "zadeh.xml"):  # parametric: gnubg computes them
            with pytest.raises(FormatError, match="explicit"):
                read_met_xml(path)
            continue
        met = read_met_xml(path)
        assert met.length >= 15, path.name
        assert 0.4 < met.win_probability(5, 5) < 0.6, path.name


@pytest.mark.gnubg
def test_kazaross_values_read_from_gnubg(kxg2: MatchEquityTable) -> None:
    for trailer, mwc in CRAWFORD_LEADER.items():
        assert kxg2.win_probability(1, trailer) == pytest.approx(mwc, abs=1e-9)
    for score, mwc in PRE_CRAWFORD.items():
        assert kxg2.win_probability(*score) == pytest.approx(mwc, abs=1e-9)
    for trailer, mwc in POST_CRAWFORD_TRAILER.items():
        assert kxg2.win_probability(trailer, 1, post_crawford=True) == pytest.approx(mwc, abs=1e-9)


@pytest.mark.gnubg
def test_our_met_within_tolerance_of_kazaross_xg2(ours: MatchEquityTable, kxg2: MatchEquityTable) -> None:
    worst = 0.0
    for a in range(1, 26):
        for b in range(1, 26):
            worst = max(worst, abs(ours.win_probability(a, b) - kxg2.win_probability(a, b)))
        for post in (True,):
            worst = max(
                worst,
                abs(ours.win_probability(a, 1, post) - kxg2.win_probability(a, 1, post)),
            )
    assert worst <= KXG2_TOLERANCE  # measured 0.0045
