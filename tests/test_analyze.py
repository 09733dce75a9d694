"""`bgbot analyze`: gnubg's analysis of a .mat file, read back per player."""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

import pytest

from bgbot.engines.analysis import AnalysisError, analyze_match, parse_statistics
from bgbot.cli.analyze import register

from .conftest import TESTDATA

MATCHES = TESTDATA / "matches"


def reference(name: str) -> Path:
    """A match file of the reference data (the test is skipped without them)."""
    path = MATCHES / name
    if not path.exists():
        pytest.skip(f"reference data {path} not found (set BGBOT_SHARED)")
    return path

# gnubg's own statistics table, as printed by `show statistics match` (reference §7.3).
GNUBG_TABLE = """\
Player                                   Alice                   Bob                    

Chequerplay statistics

Error total EMG (MWC)                         -0.387 ( -6.435%)       -0.341 ( -5.813%) 
Error rate mEMG (MWC)                         -4.4   ( -0.072%)       -3.7   ( -0.063%) 
Chequerplay rating                       World class             World class            

Overall statistics

Error total EMG (MWC)                         -0.395 ( -6.494%)       -0.341 ( -5.813%) 
Error rate mEMG (MWC)                         -4.1   ( -0.068%)       -3.2   ( -0.055%) 
Snowie error rate                             -2.0   ( +0.000%)       -1.7   ( +0.000%) 
Overall rating                           World class             World class            
Actual result                             -50.00%                 +50.00%               
Luck adjusted result                       +7.84%                  -7.84%               
Luck based FIBS rating diff.             +122.90                                        
Error based abs. FIBS rating             1988.6                  1999.0                 
"""


def cli(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="bgbot")
    register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(argv)
    result: int = args.func(args)
    return result


def test_the_statistics_table_is_read_by_section() -> None:
    analysis = parse_statistics(GNUBG_TABLE)
    alice, bob = analysis.players
    assert (alice.name, bob.name) == ("Alice", "Bob")
    assert analysis.unit == "MWC"
    assert alice.chequerplay["error_rate"] == {"emg": -4.4, "mwc_percent": -0.072}
    assert alice.overall["error_rate"] == {"emg": -4.1, "mwc_percent": -0.068}
    assert bob.overall["snowie_error_rate"]["emg"] == -1.7
    assert alice.overall["rating"] == "World class"
    assert bob.overall["fibs_rating"] == 1999.0
    assert alice.overall["actual_result"] == -50.0


def test_a_table_without_figures_is_an_error() -> None:
    with pytest.raises(AnalysisError):
        parse_statistics("No game in progress.\n")
    with pytest.raises(AnalysisError):
        parse_statistics("Player                                   gnubg                   root\n"
                         "\nOverall statistics\n\n")


@pytest.mark.gnubg
def test_analyze_prints_error_rates_for_both_players(
    gnubg_binary: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli(["analyze", str(reference("m03-3pt.mat"))]) == 0
    out = capsys.readouterr().out
    assert "gnubgA" in out and "gnubgB" in out
    for row in ("Chequer error rate mEMG", "Cube error rate mEMG", "Overall error rate mEMG",
                "Luck rate mEMG", "Overall rating"):
        line = next(line for line in out.splitlines() if line.startswith(row))
        assert len(line.split()) >= 4, line


@pytest.mark.gnubg
def test_analyze_json_is_one_object_per_match(
    gnubg_binary: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli(["analyze", str(reference("m03-3pt.mat")), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["unit"] == "MWC" and data["plies"] == 0
    names = [player["name"] for player in data["players"]]
    assert names == ["gnubgA", "gnubgB"]
    index = json.loads((reference("INDEX.json")).read_text())
    entry = next(e for e in (index if isinstance(index, list) else index.values())
                 if isinstance(e, dict) and e.get("mat") == "m03-3pt.mat")
    for player in data["players"]:
        assert isinstance(player["chequerplay"]["error_rate"]["emg"], float)
        assert isinstance(player["cube"]["error_rate"]["emg"], float)
        assert isinstance(player["luck"]["rate"]["emg"], float)
        assert player["overall"]["rating"]
        assert player["chequerplay"]["moves"] > 0
    # Both players were gnubg at 0 ply, analysed at 0 ply: no errors at all.
    assert all(p["overall"]["error_total"]["emg"] == 0.0 for p in data["players"])
    winner = entry["winner"]
    results = {p["name"]: p["overall"]["actual_result"] for p in data["players"]}
    assert results[winner] > 0


@pytest.mark.gnubg
def test_the_noisy_player_makes_the_errors(gnubg_binary: str) -> None:
    """In the -noisy files only player 1 (gnubgB) plays with evaluation noise."""
    analysis = analyze_match(reference("m04-3pt-noisy.mat"))
    clean, noisy = analysis.players
    assert noisy.chequerplay["error_rate"]["emg"] < clean.chequerplay["error_rate"]["emg"] - 10
    assert noisy.overall["rating"] != "Supernatural"


@pytest.mark.gnubg
def test_money_sessions_report_points(gnubg_binary: str) -> None:
    analysis = analyze_match(reference("m11-money-jacoby.mat"))
    assert analysis.unit == "Points"
    assert set(analysis.players[0].overall["error_rate"]) == {"emg", "points"}


@pytest.mark.gnubg
def test_names_with_spaces_survive(gnubg_binary: str, tmp_path: Path) -> None:
    text = (reference("m03-3pt.mat")).read_text()
    long_name = "Alice Cooper of the Long Names"  # wider than gnubg's column; gnubg keeps 31
    renamed = tmp_path / "my match 'one'.mat"
    renamed.write_text(text.replace("gnubgA", long_name).replace("gnubgB", "Bob M"))
    analysis = analyze_match(renamed)
    assert [p.name for p in analysis.players] == [long_name, "Bob M"]
    assert analysis.players[1].overall["error_rate"]["emg"] is not None


@pytest.mark.gnubg
def test_missing_and_unreadable_files_give_clear_errors(gnubg_binary: str,
                                                        tmp_path: Path) -> None:
    with pytest.raises(AnalysisError, match="no such file"):
        analyze_match(tmp_path / "absent.mat")
    garbage = tmp_path / "garbage.mat"
    garbage.write_text("this is not a match file\n")
    with pytest.raises(AnalysisError, match="is not a match gnubg should analyse"):
        analyze_match(garbage)
    with pytest.raises(AnalysisError):
        analyze_match(tmp_path)  # a directory
    with pytest.raises(AnalysisError, match="plies"):
        analyze_match(reference("m03-3pt.mat"), plies=-1)


def test_a_missing_gnubg_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(AnalysisError, match="not found"):
        analyze_match(reference("m03-3pt.mat"), binary=str(tmp_path / "no-gnubg"))


# ============================================================== the file's own rules and faults


def session_file(tmp_path: Path, *, cube: bool, games: int = 3) -> Path:
    from bgbot import Rules
    from bgbot.referee.matlog import MatLogger
    from bgbot.referee.series import SeriesConfig, run_series_sync

    config = SeriesConfig("heuristic", "pubeval", length=0, games=games, seed=9,
                          rules=Rules(cube=cube))
    logger = MatLogger(tmp_path, config)
    run_series_sync(config, listeners=logger.listeners)
    (path,) = logger.paths
    return path


@pytest.mark.gnubg
def test_a_cubeless_session_is_judged_without_the_cube(gnubg_binary: str,
                                                       tmp_path: Path) -> None:
    path = session_file(tmp_path, cube=False)
    assert '; [CubeLimit "1"]' in path.read_text() and '; [Jacoby "Off"]' in path.read_text()
    analysis = analyze_match(path)
    assert analysis.settings == ["set cube use off", "set jacoby off"]
    assert [p.cube["decisions"] for p in analysis.players] == [0, 0]
    assert [p.cube.get("error_total", {"emg": 0.0})["emg"] for p in analysis.players] == [0, 0]
    # the same games without the tags: gnubg would judge cube decisions, unless told
    bare = tmp_path / "bare.mat"
    bare.write_text("".join(line for line in path.read_text().splitlines(keepends=True)
                            if not line.startswith("; [")))
    assert sum(p.cube["decisions"] for p in analyze_match(bare).players) > 0
    assert [p.cube["decisions"] for p in analyze_match(bare, cubeless=True).players] == [0, 0]


@pytest.mark.gnubg
def test_files_our_reader_refuses_are_named_not_analysed(gnubg_binary: str,
                                                         tmp_path: Path) -> None:
    text = (reference("m03-3pt.mat")).read_text()
    first_move = re.search(r"  1\) (\d\d): (\S+ \S+)", text)
    assert first_move is not None
    illegal = tmp_path / "illegal.mat"
    illegal.write_text(text.replace(first_move.group(0), f"  1) {first_move.group(1)}: 8/1 6/5",
                                    1))
    with pytest.raises(AnalysisError, match=r"game 1, move 1"):
        analyze_match(illegal)
    truncated = tmp_path / "truncated.mat"
    truncated.write_bytes((reference("m03-3pt.mat")).read_bytes()[:3000])
    with pytest.raises(AnalysisError, match=r"game \d+"):
        analyze_match(truncated)


@pytest.mark.gnubg
def test_player_names_are_the_files_without_gnubgs_cube_label(gnubg_binary: str,
                                                              tmp_path: Path) -> None:
    from bgbot.formats.mat import MatchRecord, format_match

    from .test_mat import run_script

    record = MatchRecord.create(0, ("Alice", "Bob"))
    script = "open 3 1;move 8/5 6/5;double;take;resign 1;accept"
    record.add_game(run_script(script, record.rules))
    path = tmp_path / "owned.mat"
    path.write_text(format_match(record))
    assert [p.name for p in analyze_match(path).players] == ["Alice", "Bob"]


def test_a_board_name_drops_the_cube_owners_label() -> None:
    from bgbot.engines.analysis import _names_from_board

    board = (" +13-14-15-16-17-18------19-20-21-22-23-24-+     O: gnubg\n"
             " +12-11-10--9--8--7-------6--5--4--3--2--1-+     X: pubeval (Cube: 2)\n")
    assert _names_from_board(board) == ("gnubg", "pubeval")


@pytest.mark.gnubg
def test_the_snowie_rate_has_no_empty_second_figure(gnubg_binary: str) -> None:
    from bgbot.engines.analysis import format_analysis

    text = format_analysis(analyze_match(reference("m03-3pt.mat")))
    line = next(line for line in text.splitlines() if line.startswith("Snowie error rate"))
    assert "(" not in line


@pytest.mark.gnubg
def test_a_file_cut_at_a_line_end_is_named_not_analysed(gnubg_binary: str,
                                                        tmp_path: Path) -> None:
    """Cut between two lines, the reader sees a game without a result: it was analysed."""
    lines = session_file(tmp_path, cube=True, games=1).read_text().splitlines(keepends=True)
    cut = tmp_path / "cut.mat"
    cut.write_text("".join(lines[:len(lines) // 2]))
    with pytest.raises(AnalysisError, match=r"cut.mat: game 1 ends after \d+ moves without a "
                       r"result.*--unfinished"):
        analyze_match(cut)
    analysis = analyze_match(cut, unfinished=True)  # asked for: what is there
    assert analysis.players[0].chequerplay["moves"] > 0


@pytest.mark.gnubg
def test_gnubg_judging_its_own_depth_is_said(gnubg_binary: str, tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    """A player bgbot names gnubg:plies=0, analysed at 0-ply, scores no error by that judge:
    the table says why (it said "Supernatural" without a word)."""
    path = session_file(tmp_path, cube=True, games=2)
    renamed = tmp_path / "vs-gnubg.mat"
    renamed.write_text(path.read_text().replace("pubeval", "gnubg_plies=0"))
    assert cli(["analyze", str(renamed)]) == 0
    out = capsys.readouterr().out
    assert "warning: gnubg_plies=0 is gnubg at 0-ply, judged by gnubg at 0-ply" in out
    assert "--plies 1 or more" in out
    assert not [w for w in analyze_match(renamed, plies=1).warnings if "gnubg at" in w]
