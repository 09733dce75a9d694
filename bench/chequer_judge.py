"""Chequer-play error on a fixed set of positions judged once by gnubg at 2-ply (paired figures).

`bgbot analyze` over 16 matches measures what the issue asks for, but two settings play
different matches, and a few big errors decide the figure: its spread between runs is
+-1 mEMG and more. This study fixes the positions instead. ``build`` plays cubeless money
games (``--player`` against ``gnubg:plies=0``, logged as .mat), has gnubg analyse every move
at 2-ply in its embedded Python (``gnubg -t -q -p``) and keeps each decision with an equity
for every legal play (gnubg evaluates each one; those outside its move filter at a lower
depth). ``score`` asks each agent for its play in every position and prints its mean error
(gnubg's best equity minus the equity of the play chosen), by contact and race, and the paired
difference from the first agent with a 95 % interval: the same positions, so the interval is
a fraction of the unpaired one. Any agent spec works, gnubg's own 0-ply included (the yardstick
in the same run). Cubeless money equities, so the figures are not the match analysis's mEMG.

    python bench/chequer_judge.py build --games 100 --seed 99 --out judged.json
    python bench/chequer_judge.py score judged.json heuristic:plies=1 \
        heuristic:plies=1,weights=training/RUN/average.bgw gnubg:plies=0
    python bench/chequer_judge.py score judged.json heuristic gnubg:plies=0 --by-plan
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bgbot.referee.matlog import GAMES_PER_FILE  # noqa: E402  (bgbot play's part files)

from agent_plays import agent_plays, mean_ci  # noqa: E402  (shared with rollout_benchmark.py)

# Money sessions are played at most GAMES_PER_FILE games at a time: a longer one is logged in
# part files, and gnubg's match() refuses a part that does not start at game 1.

GNUBG_SCRIPT = r'''
import gnubg, json, os
gnubg.command("set cube use off")
gnubg.command("set analysis chequerplay evaluation plies 2")
gnubg.command("set analysis cubedecision evaluation plies 0")
gnubg.command("import mat " + os.environ["JUDGE_MAT"])
gnubg.command("analyse match")
rows = []
for game in gnubg.match(analysis=1, boards=1)["games"]:
    for action in game["game"]:
        moves = action.get("analysis", {}).get("moves", [])
        if action.get("action") == "move" and len(moves) > 1:
            rows.append({"board": action["board"], "dice": list(action["dice"]),
                         "plays": [[m["move"], m["score"]] for m in moves]})
with open(os.environ["JUDGE_OUT"], "w") as out:
    json.dump(rows, out)
'''


def build(args: argparse.Namespace) -> None:
    """Play the games, have gnubg judge every decision, write the set."""
    from bgbot.engines.gnubg import find_gnubg, gnubg_command, gnubg_environment

    gnubg = find_gnubg(None)
    if gnubg is None:
        sys.exit("gnubg is not installed (apt-get install -y gnubg): it is the judge")
    work = Path(tempfile.mkdtemp(prefix="judge-"))
    try:
        script = work / "dump.py"
        script.write_text(GNUBG_SCRIPT)
        # at least one session per gnubg process, each within one .mat file
        per_file = min(GAMES_PER_FILE, max(1, -(-args.games // args.jobs)))
        files = -(-args.games // per_file)
        jobs: list[tuple[Path, Path]] = []
        for k in range(files):
            games = min(per_file, args.games - k * per_file)
            out = work / f"session{k}"
            subprocess.run([sys.executable, "-m", "bgbot.cli", "play", args.player, "gnubg:plies=0",
                            "--money", "--cubeless", "--games", str(games),
                            "--seed", str(args.seed + k), "--out", str(out), "--quiet"], check=True)
            (mat,) = out.glob("*.mat")
            plain = work / f"session{k}.mat"  # a plain name for gnubg's command parser
            mat.rename(plain)
            jobs.append((plain, work / f"session{k}.json"))
            print(f"played {games} games ({plain.name})", file=sys.stderr)
        running: list[subprocess.Popen[bytes]] = []
        for k, (mat, rows) in enumerate(jobs):  # gnubg is single-threaded: one per core
            # as bgbot runs gnubg everywhere: no rc files, C locale, a private home and prefs
            env = {**gnubg_environment(str(work)), "JUDGE_MAT": str(mat), "JUDGE_OUT": str(rows)}
            running.append(subprocess.Popen([*gnubg_command(gnubg, str(work)), "-p", str(script)],
                                            env=env,
                                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE))
            if len(running) == args.jobs or k == len(jobs) - 1:
                for process in running:
                    _, err = process.communicate()
                    if process.returncode:
                        sys.exit(f"gnubg failed to analyse: {err.decode()[-500:]}")
                running = []
                print(f"judged {k + 1} of {len(jobs)} sessions at 2-ply", file=sys.stderr)
        decisions = [row for _, rows in jobs for row in json.loads(rows.read_text())]
        judged = {"player": args.player, "games": args.games, "seed": args.seed,
                  "judge": "gnubg 2-ply, cubeless money", "decisions": decisions}
        args.out.write_text(json.dumps(judged))
    finally:
        shutil.rmtree(work, ignore_errors=True)  # the played sessions and gnubg's rows
    print(f"{len(decisions)} decisions with a choice -> {args.out}")


def _chosen_errors(spec: str, decisions: list[dict[str, Any]]) -> list[tuple[float, bool]]:
    """(error, contact?) of the agent's play in each decision."""
    from bgbot.core.position import Position

    positions = [Position.from_position_id(row["board"]) for row in decisions]
    reached = agent_plays(spec, [(position, (row["dice"][0], row["dice"][1]))
                                 for position, row in zip(positions, decisions)])
    out = []
    for position, row, after in zip(positions, decisions, reached):
        equities: dict[Position, float] = {}
        for steps, equity in row["plays"]:
            equities.setdefault(position.apply([tuple(s) for s in steps]), equity)
        chosen = equities.get(after)
        if chosen is None:
            raise SystemExit(f"{spec} played to {after.position_id()} in {row['board']} "
                             f"{row['dice']}: not a play gnubg listed")
        out.append((max(equities.values()) - chosen, position.is_contact()))
    return out


def score(args: argparse.Namespace) -> None:
    """Each agent's error on the set, and its paired difference from the first agent's."""
    judged = json.loads(args.set.read_text())
    decisions = judged["decisions"]
    print(f"{len(decisions)} decisions from {judged['games']} games of {judged['player']} vs "
          f"gnubg:plies=0 (seed {judged['seed']}), judged by {judged['judge']}; "
          "error in milli-points per decision")
    print(f"{'agent':58} {'error':>14} {'contact':>8} {'race':>6} {'vs first':>15}")
    first: list[float] | None = None
    by_agent: dict[str, list[float]] = {}
    for spec in args.agents:
        rows = _chosen_errors(spec, decisions)
        errors = [e for e, _ in rows]
        by_agent[spec] = errors
        mean, ci = mean_ci(errors)
        contact = [e for e, c in rows if c]
        race = [e for e, c in rows if not c]
        paired = ""
        if first is None:
            first = errors
        else:
            d_mean, d_ci = mean_ci([e - f for e, f in zip(errors, first)])
            paired = f"{1000 * d_mean:+.2f} ± {1000 * d_ci:.2f}"
        print(f"{spec:58} {1000 * mean:6.2f} ± {1000 * ci:4.2f} "
              f"{1000 * sum(contact) / max(1, len(contact)):8.2f} "
              f"{1000 * sum(race) / max(1, len(race)):6.2f} {paired:>15}", flush=True)
    if args.by_plan:
        _print_by_plan(decisions, by_agent)


def _print_by_plan(decisions: list[dict[str, Any]], by_agent: dict[str, list[float]]) -> None:
    """Each agent's error by the game plan of the position (`position_class.game_plan`): the
    mean over the plan's decisions and, in brackets, its share of the mean over all of them
    (the shares add up to the agent's error), so where an agent loses to another shows."""
    from bgbot.core.position import Position
    from bgbot.players.position_class import game_plan

    plans = [game_plan(Position.from_position_id(row["board"])) for row in decisions]
    print("\nby game plan: mean error (its share of the total), milli-points per decision")
    print(f"{'plan':20} {'decisions':>9} " + " ".join(f"{spec[:24]:>24}" for spec in by_agent))
    for plan in sorted(set(plans), key=lambda p: -plans.count(p)):
        n = plans.count(plan)
        cells = []
        for errors in by_agent.values():
            total = sum(e for e, p in zip(errors, plans) if p == plan)
            cells.append(f"{1000 * total / n:.2f} ({1000 * total / len(plans):.2f})")
        print(f"{plan:20} {n:9d} " + " ".join(f"{c:>24}" for c in cells), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build", help="play the games and have gnubg judge every decision")
    b.add_argument("--games", type=int, default=100)
    b.add_argument("--seed", type=int, default=99)
    b.add_argument("--player", default="heuristic:plies=1",
                   help="who plays against gnubg:plies=0 to make the positions")
    b.add_argument("--jobs", type=int, default=2, help="gnubg processes at once")
    b.add_argument("--out", type=Path, required=True)
    s = sub.add_parser("score", help="each agent's error on a built set")
    s.add_argument("set", type=Path)
    s.add_argument("agents", nargs="+", help="agent specs; the first is the paired baseline")
    s.add_argument("--by-plan", action="store_true",
                   help="also each agent's error by the position's game plan (middle game "
                        "with blots, blitz, race, ...): where the errors are")
    args = parser.parse_args()
    build(args) if args.command == "build" else score(args)


if __name__ == "__main__":
    main()
