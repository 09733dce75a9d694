"""bench/chequer_judge.py end to end with the real gnubg: two games judged at 2-ply, then
scored. The figures themselves are the bench's business; here: every decision has a legal
play for each candidate, and the judge tells a good player from a random one."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from bgbot.engines.gnubg import find_gnubg

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "bench" / "chequer_judge.py"

pytestmark = pytest.mark.skipif(find_gnubg(None) is None, reason="GNU Backgammon is not installed")


def test_a_judged_set_scores_the_players_it_should(tmp_path: Path) -> None:
    judged = tmp_path / "judged.json"
    built = subprocess.run([sys.executable, str(BENCH), "build", "--games", "2", "--seed", "3",
                            "--player", "heuristic", "--out", str(judged)],
                           capture_output=True, text=True, timeout=600)
    assert built.returncode == 0, built.stderr
    data = json.loads(judged.read_text())
    assert data["games"] == 2 and len(data["decisions"]) > 20
    for row in data["decisions"]:
        assert len(row["dice"]) == 2 and len(row["plays"]) > 1
    scored = subprocess.run([sys.executable, str(BENCH), "score", str(judged),
                             "heuristic", "random:seed=1", "gnubg:plies=0", "--by-plan"],
                            capture_output=True, text=True, timeout=600)
    assert scored.returncode == 0, scored.stderr
    table, plans = scored.stdout.split("\nby game plan")
    rows = {line.split()[0]: line.split() for line in table.splitlines()[2:]}
    heuristic, random_player = float(rows["heuristic"][1]), float(rows["random:seed=1"][1])
    assert 0.0 <= heuristic < random_player  # an error is never negative; random is worst
    assert float(rows["random:seed=1"][6]) > 0  # the paired difference from the first agent
    # By game plan: the plans' decisions add up to the set, their shares to each agent's error.
    plan_rows = [line.split() for line in plans.splitlines()[2:]]
    assert sum(int(r[1]) for r in plan_rows) == len(data["decisions"])
    for column, spec in enumerate(("heuristic", "random:seed=1", "gnubg:plies=0")):
        shares = sum(float(r[3 + 2 * column].strip("()")) for r in plan_rows)
        assert shares == pytest.approx(float(rows[spec][1]), abs=0.01 * len(plan_rows) + 0.01)
