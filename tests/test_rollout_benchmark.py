"""bench/rollout_benchmark.py and its set format (bench/rollout_set.py): the format reads what
it writes and names what is wrong in a bad line, the scorer's arithmetic on a hand-made set,
a real (tiny) generation run that resumes to the same file as an unbroken one, labels equal to
`bgbot rollout`'s, and the committed set reads."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from bgbot.core.position import Play, Position
from bgbot.players.heuristic import HeuristicPlayer
from bgbot.players.position_class import position_class
from bgbot.rollout import RolloutSettings
from bgbot.rollout import rollout_candidates as bgbot_rollout_candidates

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "bench"
SCRIPT = BENCH / "rollout_benchmark.py"
COMMITTED = BENCH / "data" / "rollout-benchmark.jsonl"
sys.path.insert(0, str(BENCH))

import rollout_benchmark  # noqa: E402
import rollout_set  # noqa: E402
from agent_plays import CUBELESS_MONEY, agent_plays  # noqa: E402
from rollout_set import Candidate, Decision, Header  # noqa: E402

SHA = "ab" * 32
HEADER = Header(made="2026-12-03", network=SHA, race_network=None)
OPENING = Position.initial()


def _decision(dice: tuple[int, int], plays: list[tuple[str, float]], *, source: str = "selfplay",
              turn: int = 0, position: Position = OPENING) -> Decision:
    """A hand-made decision: ``plays`` (move, equity) best first."""
    return Decision(position.position_id(), dice, position_class(position).value, "opening",
                    source, 0, turn, tuple(Candidate(move, equity, 0.004, 0.0 if k == 0 else 0.005)
                                           for k, (move, equity) in enumerate(plays)))


def _lines(*decisions: Decision, header: Header = HEADER) -> list[str]:
    return [rollout_set.format_header(header)] + [rollout_set.format_decision(d)
                                                  for d in decisions]


def _run(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True,
                          timeout=timeout)


# ---------------------------------------------------------------------- the format


def test_a_set_reads_back_what_was_written() -> None:
    header = replace(HEADER, race_network="cd" * 32, candidate_agents=("heuristic:plies=1",),
                     note="hand-made")
    decision = _decision((3, 1), [("8/5 6/5", 0.21234), ("24/21 6/5", 0.1), ("13/10 24/23", -0.05)])
    read_header, decisions = rollout_set.read_lines(_lines(decision, header=header))
    assert read_header == header
    assert decisions == [decision]
    assert decisions[0].afters[0] == OPENING.apply(Play.parse("6/5 8/5", OPENING, (3, 1)))
    assert decisions[0].losses() == pytest.approx([0.0, 0.11234, 0.26234])


GOOD = json.loads(rollout_set.format_decision(
    _decision((3, 1), [("8/5 6/5", 0.2), ("24/21 6/5", 0.1)])))


def _changed(**changes: Any) -> str:
    data = {**GOOD, **changes}
    return json.dumps({k: v for k, v in data.items() if v is not None})


@pytest.mark.parametrize("line, field", [
    ("{not json", "decision"),
    ("[1, 2]", "decision"),
    (_changed(id="AAAA"), "position id"),
    (_changed(dice=None), "dice"),
    (_changed(dice=[7, 1]), "dice"),
    (_changed(dice=[3, True]), "dice"),
    (_changed(**{"class": "middle"}), "class"),
    (_changed(plan="Middle Game"), "plan"),
    (_changed(source="gnubg"), "source"),
    (_changed(game=-1), "game"),
    (_changed(turn="3"), "turn"),
    (_changed(candidates=[["8/5 6/5", 0.2, 0.0, 0.0]]), "candidates"),
    (_changed(candidates=[["8/5 6/5", 0.2, 0.0, 0.0], ["24/18", 0.1, 0.0, 0.0]]),
     "candidates[2] move"),
    (_changed(candidates=[["8/5 6/5", 0.2, 0.0, 0.0], ["6/5 8/5", 0.1, 0.0, 0.0]]),
     "candidates[2] move"),
    (_changed(candidates=[["8/5 6/5", 0.1, 0.0, 0.0], ["24/21 6/5", 0.2, 0.0, 0.0]]),
     "candidates[2] equity"),
    (_changed(candidates=[["8/5 6/5", 0.2, 0.0, 0.01], ["24/21 6/5", 0.1, 0.0, 0.0]]),
     "candidates[1] diff_se"),
    (_changed(candidates=[["8/5 6/5", 4.0, 0.0, 0.0], ["24/21 6/5", 0.1, 0.0, 0.0]]),
     "candidates[1] equity"),
    (_changed(candidates=[["8/5 6/5", 0.2, -0.1, 0.0], ["24/21 6/5", 0.1, 0.0, 0.0]]),
     "candidates[1] se"),
    (_changed(candidates=[["8/5 6/5", 0.2, 0.0], ["24/21 6/5", 0.1, 0.0, 0.0]]),
     "candidates[1]"),
    (json.dumps(GOOD), "game/turn"),  # the good line twice
    (_changed(turn=5), "id"),  # the same position and dice again, elsewhere
    ("", "line 3"),
])
def test_a_malformed_line_gets_an_error_naming_the_line_and_the_field(line: str,
                                                                      field: str) -> None:
    lines = _lines() + [json.dumps(GOOD), line]
    with pytest.raises(rollout_set.FormatError) as error:
        rollout_set.read_lines(lines, "set.jsonl")
    assert error.value.field.startswith(f"set.jsonl line 3: {field}") or field == "line 3"
    assert "set.jsonl line 3" in str(error.value)


@pytest.mark.parametrize("change, field", [
    ({"format": "bgbot-rollout-benchmark-0"}, "format"),
    ({"network": {"contact": "xyz", "race": None}}, "network.contact"),
    ({"rollout": {"player": "heuristic", "trials": 0, "truncate": 7, "seed": 1, "vr": True}},
     "rollout.trials"),
    ({"rollout": {"player": "heuristic", "trials": 144, "truncate": 7, "seed": 1, "vr": True,
                  "cubeful": True}}, "rollout"),
    ({"sampling": {"seed": 1, "selfplay": 1.5, "disagree": 1.0, "back_game": 1.0}},
     "sampling.selfplay"),
    ({"candidates": {"top": 3, "threshold": 0.08, "agents": "heuristic"}}, "candidates.agents"),
])
def test_a_malformed_header_is_named(change: dict[str, Any], field: str) -> None:
    header = {**json.loads(rollout_set.format_header(HEADER)), **change}
    with pytest.raises(rollout_set.FormatError) as error:
        rollout_set.read_lines([json.dumps(header)], "set.jsonl")
    assert error.value.field == f"set.jsonl line 1: {field}"


# ---------------------------------------------------------------------- the scorer


def test_the_scorer_gives_the_exact_error_rate_of_a_hand_made_set(tmp_path: Path) -> None:
    """Three decisions built around the 0-ply player's own choices: in the first it plays the
    best candidate (loses 0), in the second the runner-up (0.05 below), in the third a play
    outside the candidates (the worst candidate's loss, 0.1): ER = 1000 x 0.15 / 3 = 50."""
    player = HeuristicPlayer(plies=0)
    made = []
    for turn, (dice, placed, losses) in enumerate([((3, 1), 0, (0.0, 0.02, 0.07)),
                                                   ((6, 4), 1, (0.0, 0.05, 0.2)),
                                                   ((5, 2), None, (0.0, 0.1))]):
        chosen = OPENING.apply(player.choose_play(OPENING, dice, CUBELESS_MONEY))
        others = [p for p in OPENING.legal_plays(dice) if OPENING.apply(p) != chosen]
        moves = [str(p) for p in others[:len(losses)]]
        if placed is not None:
            moves[placed] = str(player.choose_play(OPENING, dice, CUBELESS_MONEY))
        made.append(_decision(dice, [(m, 0.3 - loss) for m, loss in zip(moves, losses)],
                              turn=turn, source=("selfplay", "disagree", "disagree")[turn]))
    path = tmp_path / "hand.jsonl"
    path.write_text("\n".join(_lines(*made)) + "\n")
    _, decisions = rollout_set.read_set(path)
    reached = agent_plays("heuristic", [(d.position, d.dice) for d in decisions])
    rows = rollout_benchmark.decision_errors(decisions, reached)
    assert [outside for _, outside in rows] == [False, False, True]
    assert [error for error, _ in rows] == pytest.approx([0.0, 0.05, 0.1], abs=1e-12)
    scored = _run("score", str(path), "heuristic", "heuristic:plies=0")
    assert scored.returncode == 0, scored.stderr
    row = next(line.split() for line in scored.stdout.splitlines()
               if line.startswith("heuristic "))
    # agent, ER, ±, CI, contact, selfplay, disagree, outside: the set's class is contact
    assert row[1] == "50.00" and row[4] == "50.00" and row[5] == "0.00" and row[6] == "75.00"
    assert row[7] == "33.3%"
    paired = next(line for line in scored.stdout.splitlines()
                  if line.startswith("heuristic:plies=0"))
    assert "+0.00 ± 0.00" in paired  # the same player: no difference, no spread


# ---------------------------------------------------------------------- generation


TINY = ["--trials", "36", "--truncate", "1", "--candidate-agents",
        "heuristic:plies=1,heuristic:plies=2", "--selfplay-rate", "0.3"]


@pytest.fixture(scope="module")
def tiny_set(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real generation run: 5 decisions."""
    path = tmp_path_factory.mktemp("made") / "tiny.jsonl"
    made = _run("make", str(path), "--decisions", "5", *TINY)
    assert made.returncode == 0, made.stderr
    return path


def test_a_tiny_generation_run_makes_a_well_formed_set(tiny_set: Path) -> None:
    header, decisions = rollout_set.read_set(tiny_set)
    assert (header.trials, header.truncate) == (36, 1)
    assert header.candidate_agents == ("heuristic:plies=1", "heuristic:plies=2")
    assert len(decisions) == 5
    player1, player2 = HeuristicPlayer(plies=1), HeuristicPlayer(plies=2)
    for decision in decisions:
        position = decision.position
        assert decision.position_class == position_class(position).value
        # the 1-ply and 2-ply choices are among the candidates
        for player in (player1, player2):
            chosen = position.apply(player.choose_play(position, decision.dice, CUBELESS_MONEY))
            assert chosen in decision.afters
        if decision.source == "disagree":
            zero = HeuristicPlayer(plies=0).choose_play(position, decision.dice, CUBELESS_MONEY)
            two = player2.choose_play(position, decision.dice, CUBELESS_MONEY)
            assert position.apply(zero) != position.apply(two)


def test_the_labels_are_bgbot_rollouts_figures(tiny_set: Path) -> None:
    header, decisions = rollout_set.read_set(tiny_set)
    settings = RolloutSettings(trials=header.trials, truncate=header.truncate,
                               seed=header.rollout_seed, cubeful=False)
    decision = decisions[0]
    theirs = {c.move: c.result.equity for c in bgbot_rollout_candidates(
        decision.position, decision.dice, CUBELESS_MONEY, settings)}
    common = [c for c in decision.candidates if c.move in theirs]
    assert common
    for candidate in common:
        assert candidate.equity == pytest.approx(theirs[candidate.move].mean, abs=6e-6)
        assert candidate.se == pytest.approx(theirs[candidate.move].se, abs=6e-6)


def test_a_killed_run_resumes_to_the_same_file(tiny_set: Path, tmp_path: Path) -> None:
    """Cut the tiny set in the middle of its 4th decision (as a killed run leaves it) and
    resume: the repaired file is line for line what one unbroken run made; then it grows."""
    whole = tiny_set.read_text().splitlines(keepends=True)
    cut = tmp_path / "cut.jsonl"
    cut.write_text("".join(whole[:4]) + whole[4][:40])
    resumed = _run("make", str(cut), "--decisions", "5")
    assert resumed.returncode == 0, resumed.stderr
    assert "unfinished last line" in resumed.stderr
    assert cut.read_text().splitlines(keepends=True) == whole
    grown = _run("make", str(cut), "--decisions", "6")
    assert grown.returncode == 0, grown.stderr
    lines = cut.read_text().splitlines(keepends=True)
    assert len(lines) == 7 and lines[:6] == whole
    clash = _run("make", str(cut), "--decisions", "7", "--trials", "72")
    assert clash.returncode != 0 and "--trials" in clash.stderr


def test_a_set_made_elsewhere_scores_on_the_command_line(tiny_set: Path) -> None:
    scored = _run("score", str(tiny_set), "heuristic:plies=1", "random:seed=1", "--jobs", "2")
    assert scored.returncode == 0, scored.stderr
    rows = {line.split()[0]: line.split() for line in scored.stdout.splitlines()[4:]}
    assert float(rows["heuristic:plies=1"][1]) == 0.0 or \
        float(rows["heuristic:plies=1"][1]) < float(rows["random:seed=1"][1])
    assert "5 decisions" in scored.stdout


def test_other_rollout_settings_are_compared_with_a_reference(tiny_set: Path) -> None:
    compared = _run("settings", str(tiny_set), "--limit", "2", "--settings", "36x1,36x2",
                    "--reference", "72x2")
    assert compared.returncode == 0, compared.stderr
    rows = {line.split()[0]: line.split() for line in compared.stdout.splitlines()[2:]}
    assert set(rows) == {"36x1", "36x2", "reference"}
    assert rows["36x1"][2] == "0.0000"  # one ply with VR: each trial is the exact 1-ply value
    assert float(rows["reference"][-1]) == 0.0 and float(rows["36x2"][-1]) >= 0.0


# ---------------------------------------------------------------------- the committed set


def test_the_committed_set_is_well_formed() -> None:
    header, decisions = rollout_set.read_set(COMMITTED)
    assert len(decisions) >= 1000
    assert header.vr and header.trials % 36 == 0 and header.truncate > 0
    classes = {d.position_class for d in decisions}
    assert {"contact", "crashed", "race"} <= classes
    assert {d.source for d in decisions} == set(rollout_set.SOURCES)
    assert {"back_game"} <= {d.plan for d in decisions}
