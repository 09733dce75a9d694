"""End-to-end runs of the `bgbot` command line, as a user would type them."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest


def bgbot(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        [sys.executable, "-m", "bgbot.cli", *args], capture_output=True, text=True, timeout=300
    )
    if check and result.returncode != 0:
        raise AssertionError(f"bgbot {' '.join(args)} failed:\n{result.stderr}")
    return result


def test_help_lists_every_command_with_examples() -> None:
    out = bgbot("--help").stdout
    for command in ("show", "plays", "play"):
        assert command in out
    assert "examples:" in out
    for command in ("show", "plays", "play"):
        assert "example" in bgbot(command, "--help").stdout


def test_plays_of_the_opening_31_are_gnubgs_sixteen(legal_move_records: list[dict[str, Any]]) -> None:
    out = bgbot("plays", "4HPwATDgc/ABMA", "31").stdout.splitlines()
    record = legal_move_records[0]
    assert record["position_id"] == "4HPwATDgc/ABMA" and record["dice"] == [3, 1]
    assert sorted(out) == sorted(record["move_strings"])


def test_plays_json_gives_the_position_after_each_play(legal_move_records: list[dict[str, Any]]) -> None:
    record = next(r for r in legal_move_records if r["dice"][0] == r["dice"][1] and r["n_plays"] > 5)
    dice = f"{record['dice'][0]} {record['dice'][1]}".split()
    data = json.loads(bgbot("plays", record["position_id"], *dice, "--json").stdout)
    by_id = {p["position_id"]: p["move"] for p in data["plays"]}
    assert sorted(by_id) == record["moves"]
    assert [by_id[i] for i in record["moves"]] == record["move_strings"]


def test_plays_reports_no_legal_play() -> None:
    result = bgbot("plays", "27YdAADgA/4BYA", "66")
    assert result.stdout == ""
    assert "no legal play" in result.stderr


@pytest.mark.parametrize(
    "text, expect",
    [
        ("4HPwATDgc/ABMA", "Position ID 4HPwATDgc/ABMA"),
        ("4HPwATDgc/ABMA:QYkqASAAIAAA", "9-point match"),
        ("XGID=-b----E-C---eE---c-e----AA:0:0:1:00:6:3:1:7:10", "Crawford game"),
        ("board:You:someplayer:3:0:0:0:-2:0:0:0:0:5:0:3:0:0:0:-5:5:0:0:0:-3:0:-5:0:0:0:0:2:0:1:6:2:"
         "0:0:1:1:1:0:1:-1:0:25:0:0:0:0:2:0:0:0", "You on roll, to play 62"),
    ],
)
def test_show_reads_every_kind_of_id(text: str, expect: str) -> None:
    out = bgbot("show", text).stdout
    assert expect in out
    assert "pips 167" in out


@pytest.mark.parametrize(
    "args, message",
    [
        (("plays", "4HPwATDgc/ABMA", "71"), "dice must be 1..6"),
        (("plays", "4HPwATDgc/ABMA", "3"), "two digits"),
        (("show", "nonsense"), "position text"),
        (("show", "4HPwATDgc/ABM!"), "position id"),
        (("show", "XGID=abc"), "XGID"),
        (("show", "board:You:x:3"), "53"),
        (("play", "nosuch", "pubeval"), "unknown agent"),
    ],
)
def test_bad_input_exits_2_with_a_message_naming_the_fault(args: tuple[str, ...], message: str) -> None:
    result = bgbot(*args, check=False)
    assert result.returncode == 2, result.stderr
    assert message.lower() in result.stderr.lower()
    assert "Traceback" not in result.stderr


def test_play_logs_a_match_that_reads_back_with_the_same_score(tmp_path: Any) -> None:
    from bgbot.formats.mat import read_match

    out = tmp_path / "logs"
    result = bgbot("play", "heuristic", "pubeval", "--length", "3", "--seed", "4",
                   "--out", str(out), "--json")
    summary = json.loads(result.stdout.strip().splitlines()[-1])
    assert summary["matches"] == 1 and summary["games"] >= 1
    assert len(summary["ppg_ci"]) == 2
    (path,) = out.glob("*.mat")
    with path.open() as handle:
        record = read_match(handle)
    a_points = summary["points"]
    score = record.final_score
    assert score[0] - score[1] == a_points
    assert max(score) >= 3


def test_play_money_mirrored_reports_pairs(tmp_path: Any) -> None:
    result = bgbot("play", "pubeval", "random", "--money", "--games", "6", "--mirror",
                   "--cubeless", "--out", str(tmp_path), "--json")
    summary = json.loads(result.stdout.strip().splitlines()[-1])
    assert summary["games"] == 6 and summary["mirror"] is True
    assert len(list(tmp_path.glob("*.mat"))) == 2


def test_every_option_and_argument_of_every_command_says_what_it_is() -> None:
    import argparse

    from bgbot.cli import build_parser

    missing: list[str] = []

    def walk(parser: argparse.ArgumentParser, path: list[str]) -> None:
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    walk(sub, [*path, name])
            elif not action.help and action.dest != "help":
                missing.append(f"{' '.join(path)} {'/'.join(action.option_strings) or action.dest}")

    walk(build_parser(), ["bgbot"])
    assert missing == []


def test_config_show_says_where_every_value_came_from(tmp_path: Any) -> None:
    config = tmp_path / "bgbot.toml"
    config.write_text("[limits]\nmax_matches = 5\n")
    shown = bgbot("config", "show", "--config", str(config)).stdout
    values = [line for line in shown.splitlines() if " = " in line and not line.startswith("#")]
    assert values and all(line.endswith(("# default", "# set in the file")) or "# set by BGBOT_"
                          in line for line in values)
    assert "max_matches = 5  # set in the file" in shown


def test_dice_out_of_range_in_an_id_are_said_in_words() -> None:
    result = bgbot("show", "XGID=-b----E-C---eE---c-e----AA:0:0:1:99:6:3:1:7:10", check=False)
    assert result.returncode == 2 and "each die must be 1..6" in result.stderr
    assert "(0, 0) or" not in result.stderr
