"""bgbot's own chequer-play benchmark: decisions whose candidate plays bgbot rolled out.

``make`` plays cubeless money games of bgbot's 0-ply player against itself and samples its
decisions (position + dice with a choice): a uniform sample (source ``selfplay``), every one
where the 0-ply and 2-ply players choose differently (``disagree``: where deeper search
changes the play), every back game (``back_game``: rare in self-play). Each decision's
candidates are the best few plays by the 0-ply ranking and the plays the candidate agents
(default heuristic:plies=1, heuristic:plies=2 and gnubg:plies=0) choose; every candidate is
rolled out by bgbot's 0-ply player (cubeless money, variance reduction, quasi-random dice,
truncated, the same dice for every candidate: common random numbers). The set is written as
JSON lines (`rollout_set`; bench/README.md documents it), a game at a time: a killed run
loses at most the game in hand, and ``make`` on an existing file resumes it (its header's
settings win) until it holds ``--decisions``.

``score`` asks each agent spec for its play in every decision and prints its error rate (ER,
as gnubg's benchmark: the mean equity lost against the best rolled-out candidate, x 1000),
overall, by position class and by source, with a 95 % interval, and the paired difference from
the first agent (the same decisions: no games, no dice luck). A play outside the rolled-out
candidates counts the worst candidate's loss (as gnubg's benchmark does); how often that
happens is printed.

    python bench/rollout_benchmark.py make bench/data/rollout-benchmark.jsonl --decisions 3000
    python bench/rollout_benchmark.py score bench/data/rollout-benchmark.jsonl \\
        heuristic heuristic:plies=1 heuristic:plies=2 gnubg:plies=0 pubeval
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import multiprocessing
import multiprocessing.util
import os
import random
import statistics
import sys
import time
from collections import Counter, deque
from concurrent.futures import Executor, Future, ProcessPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from agent_plays import CUBELESS_MONEY, agent_plays, mean_ci  # noqa: E402
from rollout_set import (CLASSES, SOURCES, Candidate, Decision, Header,  # noqa: E402
                         format_decision, format_header, parse_decision,
                         parse_header, read_set)

from bgbot.core.errors import FormatError  # noqa: E402
from bgbot.core.position import Play, Position  # noqa: E402

DISAGREE_AGENT = "heuristic:plies=2"
"""The player whose choice, against the 0-ply player's, marks a ``disagree`` decision."""
GAME_SEED_STRIDE = 1_000_003


# ---------------------------------------------------------------------- labelling


def current_networks(player: str = Header.player) -> tuple[str, str | None]:
    """SHA-256 of the contact and race networks the labelling ``player`` (bgbot's 0-ply
    player: since the twenty-first sitting its own network, `network.SHIPPED_ZERO_PLY_FILE`)
    uses here."""
    from bgbot.deciders import create_agent

    agent: Any = create_agent(player)
    evaluator = agent.player.evaluator
    if evaluator.network is None:
        sys.exit("bgbot's player has no network here (the linear evaluation): the benchmark "
                 "is labelled by the shipped network")
    race = evaluator.race_network
    return evaluator.network.sha256, None if race is None else race.sha256


def label_plays(plays: Sequence[tuple[Play, Position]], header: Header
                ) -> tuple[Candidate, ...]:
    """Roll out each play (with the position after it, mover's view) at ``header``'s settings,
    every one with the same dice; best first, with each one's SE of its difference from the
    best (from the paired trials). The same figures as `bgbot.rollout.rollout_candidates`
    (tests)."""
    from bgbot.rollout import RolloutSettings
    from bgbot.rollout.runner import run_chunk
    from bgbot.rollout.settings import RolloutJob
    from bgbot.rollout.stats import Column
    from bgbot.rollout.values import ValueMap

    settings = RolloutSettings(player=header.player, trials=header.trials,
                               truncate=header.truncate, seed=header.rollout_seed,
                               vr=header.vr, cubeful=False)
    mover = ValueMap(CUBELESS_MONEY)
    rows: list[list[tuple[float, float]]] = []
    for _, after in plays:
        if after.is_game_over():
            kind = after.win_kind()
            value = mover.cubeless((1.0, float(kind >= 2), float(kind >= 3), 0.0, 0.0))
            rows.append([(value, 0.0)] * settings.trials)
            continue
        job = RolloutJob.of(after.swapped(), CUBELESS_MONEY.swapped(), settings,
                            for_roller=False)
        values = ValueMap(job.viewer_context)
        rows.append([(values.cubeless(t.outcome), values.luck(t.luck))
                     for t in run_chunk(job, 0, settings.trials)])

    def column(pairs: Sequence[tuple[float, float]]) -> Column:
        out = Column()
        for value, luck in pairs:
            out.add(value, luck)
        return out

    estimates = [column(row).estimate(header.vr) for row in rows]
    best = max(range(len(rows)), key=lambda k: estimates[k].mean)
    out = []
    for k, ((play, _), estimate) in enumerate(zip(plays, estimates)):
        difference = column([(vb - v, lb - lk) for (vb, lb), (v, lk) in zip(rows[best], rows[k])])
        out.append(Candidate(str(play), estimate.mean, estimate.se,
                             0.0 if k == best else difference.estimate(header.vr).se))
    out.sort(key=lambda c: (c.diff_se != 0.0, -c.equity))  # the best first, then by equity
    return tuple(out)


class _Recorder:
    """A `tools.gameloop` chooser that keeps every decision its player is asked."""

    def __init__(self, player: Any) -> None:
        self.player = player
        self.seen: list[tuple[Position, tuple[int, int], Play]] = []

    def choose_play(self, position: Position, dice: Sequence[int], context: Any) -> Play:
        play: Play = self.player.choose_play(position, dice, context)
        self.seen.append((position, (dice[0], dice[1]), play))
        return play


class Labeller:
    """Plays self-play games and labels their sampled decisions (one per process)."""

    def __init__(self, header: Header) -> None:
        from bgbot.deciders import create_agent
        from bgbot.players.heuristic import HeuristicPlayer

        self.header = header
        self.player = HeuristicPlayer(plies=0)
        self.loop = asyncio.new_event_loop()
        specs = dict.fromkeys((DISAGREE_AGENT, *header.candidate_agents))
        self.agents = {spec: create_agent(spec) for spec in specs}
        for agent in self.agents.values():
            self.loop.run_until_complete(agent.start())
        multiprocessing.util.Finalize(self, self.close, exitpriority=10)

    def close(self) -> None:
        if self.loop.is_closed():
            return
        for agent in self.agents.values():
            self.loop.run_until_complete(agent.close())
        self.loop.close()

    def _choice(self, spec: str, position: Position, dice: tuple[int, int]) -> Position:
        play = self.loop.run_until_complete(
            self.agents[spec].choose_play(position, dice, CUBELESS_MONEY))
        return position.apply(play)

    def game(self, number: int, known: frozenset[tuple[str, tuple[int, int]]] = frozenset(),
             done: frozenset[int] = frozenset()) -> list[Decision]:
        """The sampled decisions of self-play game ``number``, labelled, but for those of a
        position and dice in ``known`` and the turns in ``done`` (already in the set)."""
        from bgbot.players.position_class import game_plan, position_class
        from tools.gameloop import play_game

        header = self.header
        recorder = _Recorder(self.player)
        play_game([recorder, recorder], header.sampling_seed * GAME_SEED_STRIDE + number, 0)
        rng = random.Random(f"{header.sampling_seed}:{number}")
        out = []
        for turn, (position, dice, played) in enumerate(recorder.seen):
            ranked = self.player.rank_plays(position, dice, CUBELESS_MONEY)
            if len({r.after for r in ranked}) < 2:
                continue  # forced: no decision
            draws = rng.random(), rng.random(), rng.random()  # three per decision, always
            plan = game_plan(position)
            uniform = draws[0] < header.selfplay_rate
            maybe_disagree = draws[1] < header.disagree_rate
            back_game = plan == "back_game" and draws[2] < header.back_game_rate
            if not (uniform or maybe_disagree or back_game):
                continue  # not sampled whatever 2-ply plays: spare its search
            if turn in done or (position.position_id(), dice) in known:
                continue
            deeper = self._choice(DISAGREE_AGENT, position, dice)
            if uniform:
                source = "selfplay"
            elif maybe_disagree and deeper != position.apply(played):
                source = "disagree"
            elif back_game:
                source = "back_game"
            else:
                continue
            plays = {r.after: r.play for r in ranked}
            best = ranked[0].value
            chosen = [r.after for k, r in enumerate(ranked[:header.top])
                      if k < 2 or r.value >= best - header.threshold]
            for spec in header.candidate_agents:
                after = deeper if spec == DISAGREE_AGENT else self._choice(spec, position, dice)
                if after not in chosen:
                    chosen.append(after)
            labelled = label_plays([(plays[a], a) for a in chosen], header)
            out.append(Decision(position.position_id(), dice, position_class(position).value,
                                plan, source, number, turn, labelled))
        return out


_LABELLERS: dict[Header, Labeller] = {}


def label_game(header: Header, number: int,
               known: frozenset[tuple[str, tuple[int, int]]] = frozenset(),
               done: frozenset[int] = frozenset()) -> list[str]:
    """The lines of game ``number``'s sampled decisions (`Labeller.game`; a pool task: plain
    strings)."""
    labeller = _LABELLERS.get(header)
    if labeller is None:
        labeller = _LABELLERS[header] = Labeller(header)
    return [format_decision(decision) for decision in labeller.game(number, known, done)]


# ---------------------------------------------------------------------- make


def _repair_tail(path: Path) -> None:
    """Drop a last line a killed run left unfinished (no newline)."""
    data = path.read_bytes()
    if data and not data.endswith(b"\n"):
        cut = data.rfind(b"\n") + 1
        print(f"{path}: dropping an unfinished last line ({len(data) - cut} bytes)",
              file=sys.stderr)
        with path.open("r+b") as out:
            out.truncate(cut)


def _header_from(args: argparse.Namespace, networks: tuple[str, str | None]) -> Header:
    """The header of a new set: the defaults, the options given, today's date; checked as
    a reader would (FormatError names a bad option)."""
    from bgbot.rollout import RolloutSettings

    base = Header(made=datetime.date.today().isoformat(), network=networks[0],
                  race_network=networks[1])
    given = {name: getattr(args, name) for name in _SETTINGS if getattr(args, name) is not None}
    if "candidate_agents" in given:
        given["candidate_agents"] = tuple(a.strip() for a in given["candidate_agents"].split(",")
                                          if a.strip())
    header = replace(base, **given)
    RolloutSettings(player=header.player, trials=header.trials, truncate=header.truncate,
                    seed=header.rollout_seed, cubeful=False)
    return parse_header(format_header(header))


_SETTINGS = ("trials", "truncate", "rollout_seed", "top", "threshold", "candidate_agents",
             "sampling_seed", "selfplay_rate", "disagree_rate", "back_game_rate")


def _games(start: int, header: Header, executor: Executor | None, window: int,
           known: set[tuple[str, tuple[int, int]]], keys: set[tuple[int, int]]
           ) -> Iterator[tuple[int, list[str]]]:
    """(game number, its decision lines) from game ``start`` on, in order; what ``known``
    (positions and dice) and ``keys`` (game, turn) hold when a game is handed out is not
    labelled again."""

    def task(number: int) -> tuple[Any, ...]:
        return (header, number, frozenset(known),
                frozenset(turn for game, turn in keys if game == number))

    number = start
    if executor is None:
        while True:
            yield number, label_game(*task(number))
            number += 1
    pending: deque[tuple[int, Future[list[str]]]] = deque()
    try:
        while True:
            while len(pending) < window:
                pending.append((number, executor.submit(label_game, *task(number))))
                number += 1
            done, future = pending.popleft()
            yield done, future.result()
    finally:
        for _, future in pending:
            future.cancel()


class _Bar:
    """A rich bar on a terminal, else a line per game on stderr."""

    def __init__(self, total: int, done: int) -> None:
        self.total = total
        self.started = time.perf_counter()
        self.first = done
        self.bar: Any = None
        if sys.stderr.isatty():
            from rich.console import Console
            from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn,
                                       TimeElapsedColumn, TimeRemainingColumn)

            self.bar = Progress(TextColumn("[bold]decisions"), BarColumn(), MofNCompleteColumn(),
                                TextColumn("game {task.fields[game]}"), TimeElapsedColumn(),
                                TimeRemainingColumn(), console=Console(file=sys.stderr))
            self.task = self.bar.add_task("decisions", total=total, completed=done, game="")
            self.bar.start()

    def update(self, done: int, game: int) -> None:
        if self.bar is not None:
            self.bar.update(self.task, completed=done, game=game)
            return
        made = done - self.first
        rate = (time.perf_counter() - self.started) / made if made else 0.0
        print(f"game {game}: {done} of {self.total} decisions ({rate:.1f} s a decision)",
              file=sys.stderr, flush=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()


def make(args: argparse.Namespace) -> None:
    """Make or resume a set (module docstring)."""
    path: Path = args.file
    networks = current_networks()
    if path.exists() and path.stat().st_size:
        _repair_tail(path)
        header, done = read_set(path)
        asked = _header_from(args, networks)
        clash = [f"--{name.replace('_', '-')}" for name in _SETTINGS
                 if getattr(args, name) is not None and getattr(asked, name) != getattr(header, name)]
        if clash:
            sys.exit(f"{path} was made with other settings ({', '.join(clash)} differ): resume "
                     "it without those options, or make a new file")
        if (header.network, header.race_network) != networks:
            sys.exit(f"{path} was labelled by network {header.network[:16]}..., bgbot plays "
                     f"with {networks[0][:16]}... here: its labels would mix two players; "
                     "make a new file")
    else:
        header, done = _header_from(args, networks), []
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(format_header(header) + "\n", encoding="utf-8")
    target = args.decisions
    if len(done) >= target:
        print(f"{path} already holds {len(done)} decisions (>= {target})")
        return
    keys = {d.key for d in done}
    seen = {(d.position_id, d.dice) for d in done}
    count = len(done)
    executor: Executor | None = None
    if args.workers > 1:
        executor = ProcessPoolExecutor(args.workers,
                                       mp_context=multiprocessing.get_context("forkserver"))
    bar = _Bar(target, count)
    cpu = time.process_time()
    started = time.perf_counter()
    try:
        with path.open("a", encoding="utf-8") as out:
            # the last game written may be incomplete: it is played again, its decisions
            # already in the file skipped
            for number, lines in _games(done[-1].game if done else 0, header, executor,
                                        2 * args.workers, seen, keys):
                for line in lines:
                    decision = parse_decision(line)  # what is written reads back
                    if decision.key in keys or (decision.position_id, decision.dice) in seen:
                        continue
                    out.write(line + "\n")
                    keys.add(decision.key)
                    seen.add((decision.position_id, decision.dice))
                    count += 1
                    if count >= target:
                        break
                out.flush()
                os.fsync(out.fileno())
                bar.update(count, number)
                if count >= target:
                    break
    finally:
        bar.close()
        if executor is not None:
            executor.shutdown(wait=False, cancel_futures=True)
        for labeller in _LABELLERS.values():
            labeller.close()
    added = count - len(done)
    wall = time.perf_counter() - started
    print(f"{path}: {count} decisions ({added} added in {wall:.0f} s, "
          f"{wall / max(1, added):.2f} s wall and {(time.process_time() - cpu) / max(1, added):.2f}"
          " s CPU of this process a decision)")


# ---------------------------------------------------------------------- score


def decision_errors(decisions: Sequence[Decision], reached: Sequence[Position]
                    ) -> list[tuple[float, bool]]:
    """(equity lost against the best candidate, whether the play was outside the candidates)
    of each decision whose agent's play led to ``reached``: a play outside the rolled-out
    list counts the worst candidate's loss."""
    out = []
    for decision, after in zip(decisions, reached, strict=True):
        losses = decision.losses()
        try:
            out.append((losses[decision.afters.index(after)], False))
        except ValueError:
            out.append((max(losses), True))
    return out


def _plays_slice(spec: str, rows: Sequence[tuple[str, tuple[int, int]]]) -> list[str]:
    """A pool task: the positions (ids) ``spec`` reaches in the decisions ``rows``."""
    positions = [(Position.from_position_id(pid), dice) for pid, dice in rows]
    return [after.position_id() for after in agent_plays(spec, positions)]


def plays_of(spec: str, decisions: Sequence[Decision], jobs: int) -> list[Position]:
    """`agent_plays` of ``spec`` in ``decisions``, split over ``jobs`` processes."""
    if jobs <= 1:
        return agent_plays(spec, [(d.position, d.dice) for d in decisions])
    rows = [(d.position_id, d.dice) for d in decisions]
    size = -(-len(rows) // jobs)
    with ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("forkserver")) as pool:
        parts = pool.map(_plays_slice, [spec] * jobs,
                         [rows[k:k + size] for k in range(0, len(rows), size)])
        return [Position.from_position_id(pid) for part in parts for pid in part]


def _by(decisions: Sequence[Decision], errors: Sequence[float], key: Callable[[Decision], str],
        name: str) -> str:
    chosen = [e for d, e in zip(decisions, errors) if key(d) == name]
    return f"{1000 * sum(chosen) / len(chosen):9.2f}" if chosen else f"{'-':>9}"


def describe(header: Header, decisions: Sequence[Decision]) -> str:
    """What the set holds and how it was labelled."""
    classes = Counter(d.position_class for d in decisions)
    sources = Counter(d.source for d in decisions)
    diff_ses = [c.diff_se for d in decisions for c in d.candidates[1:]]
    sizes = [len(d.candidates) for d in decisions]
    truncate = f"truncated at {header.truncate} plies" if header.truncate else "played out"
    return (f"{len(decisions)} decisions ("
            + ", ".join(f"{classes[c]} {c}" for c in CLASSES) + "; "
            + ", ".join(f"{sources[s]} {s}" for s in SOURCES) + ")\n"
            f"candidates rolled out by {header.player}: {header.trials} trials {truncate}, "
            f"VR {'on' if header.vr else 'off'}, seed {header.rollout_seed}; "
            f"{statistics.mean(sizes):.2f} candidates a decision, median SE of a difference "
            f"from the best {statistics.median(diff_ses) if diff_ses else 0.0:.4f}\n"
            "ER = equity lost a decision against the best rolled-out candidate x 1000 "
            "(cubeless money), +- 95 % interval")


def score(args: argparse.Namespace) -> None:
    """Each agent's ER on the set, by class and source, and paired against the first."""
    header, decisions = read_set(args.file)
    if args.limit:
        decisions = decisions[:args.limit]
    if not decisions:
        sys.exit(f"{args.file} holds no decisions")
    print(describe(header, decisions))
    try:
        here = current_networks(header.player)
    except SystemExit:
        here = ("", None)
    if (header.network, header.race_network) != here:
        print(f"note: the set was labelled by network {header.network[:16]}..., bgbot plays "
              f"with {here[0][:16] or 'no network'} here")
    columns = [c for c in CLASSES if any(d.position_class == c for d in decisions)]
    sources = [s for s in SOURCES if any(d.source == s for d in decisions)]
    print(f"{'agent':34} {'ER':>14} " + " ".join(f"{c:>9}" for c in columns + sources)
          + f" {'outside':>7} {'vs first':>15} {'seconds':>8}")
    first: list[float] | None = None
    for spec in args.agents:
        started = time.perf_counter()
        reached = plays_of(spec, decisions, args.jobs)
        seconds = time.perf_counter() - started
        rows = decision_errors(decisions, reached)
        errors = [e for e, _ in rows]
        mean, ci = mean_ci(errors)
        paired = ""
        if first is None:
            first = errors
        else:
            d_mean, d_ci = mean_ci([e - f for e, f in zip(errors, first)])
            paired = f"{1000 * d_mean:+.2f} ± {1000 * d_ci:.2f}"
        parts = [_by(decisions, errors, lambda d: d.position_class, c) for c in columns]
        parts += [_by(decisions, errors, lambda d: d.source, s) for s in sources]
        outside = 100 * sum(o for _, o in rows) / len(rows)
        print(f"{spec:34} {1000 * mean:6.2f} ± {1000 * ci:5.2f} " + " ".join(parts)
              + f" {outside:6.1f}% {paired:>15} {seconds:8.1f}", flush=True)


# ---------------------------------------------------------------------- settings


def _setting(text: str) -> tuple[int, int]:
    """``TRIALSxPLIES`` (plies 0: played to the end)."""
    trials, x, plies = text.partition("x")
    if not x or not trials.isdigit() or not plies.isdigit():
        raise argparse.ArgumentTypeError(f"expected TRIALSxPLIES such as 108x7, got {text!r}")
    return int(trials), int(plies)


def compare_settings(args: argparse.Namespace) -> None:
    """Roll the candidates of a set's first decisions out again at each setting and at a
    reference one (another dice seed), and print what a label costs, the SE of its
    differences, and how far its losses are from the reference's."""
    header, decisions = read_set(args.file)
    decisions = decisions[:args.limit]
    reference = replace(header, trials=args.reference[0], truncate=args.reference[1],
                        rollout_seed=header.rollout_seed + 1)
    settings = {f"{t}x{p}": replace(header, trials=t, truncate=p) for t, p in args.settings}
    labels: dict[str, list[dict[str, float]]] = {name: [] for name in (*settings, "reference")}
    diff_ses: dict[str, list[float]] = {name: [] for name in labels}
    cpu = dict.fromkeys(labels, 0.0)
    candidates = sum(len(d.candidates) for d in decisions)
    for number, decision in enumerate(decisions, start=1):
        position = decision.position
        plays = [(Play.parse(c.move, position, decision.dice), after)
                 for c, after in zip(decision.candidates, decision.afters)]
        for name, chosen in (*settings.items(), ("reference", reference)):
            started = time.process_time()
            labelled = label_plays(plays, chosen)
            cpu[name] += time.process_time() - started
            labels[name].append({c.move: c.equity for c in labelled})
            diff_ses[name] += [c.diff_se for c in labelled[1:]]
        print(f"decision {number} of {len(decisions)} done", file=sys.stderr, flush=True)
    print(f"{len(decisions)} decisions of {args.file}, {candidates} candidates; reference "
          f"{reference.trials} trials "
          + (f"truncated at {reference.truncate} plies" if reference.truncate else "played out")
          + f", seed {reference.rollout_seed}")
    print(f"{'setting':10} {'CPU s/candidate':>15} {'median diff SE':>15} {'same best':>10} "
          f"{'mean |loss - reference loss|':>29}")
    for name in labels:
        same = deviation = 0.0
        for mine, theirs in zip(labels[name], labels["reference"]):
            best, their_best = max(mine, key=mine.__getitem__), max(theirs, key=theirs.__getitem__)
            same += best == their_best
            deviation += statistics.mean(abs((mine[best] - mine[m]) - (theirs[their_best] - theirs[m]))
                                         for m in mine)
        print(f"{name:10} {cpu[name] / candidates:15.2f} {statistics.median(diff_ses[name]):15.4f} "
              f"{int(same):>4} of {len(decisions):<3} {deviation / len(decisions):29.4f}")


# ---------------------------------------------------------------------- CLI


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    m = sub.add_parser("make", help="make a set, or add to one (resumes where it stopped)",
                       description="Make a set, or resume one: the file's header settings win "
                       "(options that differ are refused).",
                       epilog="example: nice -n 19 python bench/rollout_benchmark.py make "
                       "big.jsonl --decisions 20000 --workers 2")
    m.add_argument("file", type=Path, help="the set (JSON lines), made or resumed")
    m.add_argument("--decisions", type=int, required=True,
                   help="how many decisions the file should hold in the end")
    m.add_argument("--workers", type=int, default=1,
                   help="processes labelling games at once (default 1)")
    defaults = Header(made="", network="", race_network=None)
    m.add_argument("--trials", type=int, help=f"rollout trials, a multiple of 36 "
                   f"(default {defaults.trials})")
    m.add_argument("--truncate", type=int, help="plies a trial plays before the evaluation "
                   f"is taken, 0 = to the end (default {defaults.truncate})")
    m.add_argument("--rollout-seed", type=int, help=f"default {defaults.rollout_seed}")
    m.add_argument("--top", type=int, help="candidates: the best N by the 0-ply ranking "
                   f"(at least 2; default {defaults.top}) ...")
    m.add_argument("--threshold", type=float, help="... within this equity of the best "
                   f"(default {defaults.threshold}) ...")
    m.add_argument("--candidate-agents", help="... and the plays of these agent specs, "
                   f"comma-separated (default {','.join(defaults.candidate_agents)})")
    m.add_argument("--sampling-seed", type=int, help="self-play game k's dice seed is this "
                   f"x {GAME_SEED_STRIDE} + k (default {defaults.sampling_seed})")
    m.add_argument("--selfplay-rate", type=float, help="chance a decision is sampled "
                   f"uniformly (default {defaults.selfplay_rate})")
    m.add_argument("--disagree-rate", type=float, help="chance a decision where 0-ply and "
                   f"2-ply differ is taken (default {defaults.disagree_rate})")
    m.add_argument("--back-game-rate", type=float, help="chance a back-game decision is "
                   f"taken (default {defaults.back_game_rate})")
    s = sub.add_parser("score", help="each agent's error rate on a set",
                       epilog="example: python bench/rollout_benchmark.py score "
                       "bench/data/rollout-benchmark.jsonl heuristic:plies=1 gnubg:plies=0")
    s.add_argument("file", type=Path, help="a set made by make")
    s.add_argument("agents", nargs="+", help="agent specs; the first is the paired baseline")
    s.add_argument("--jobs", type=int, default=1,
                   help="processes asking an agent at once (a slow agent: heuristic:plies=2)")
    s.add_argument("--limit", type=int, default=0, help="score the first N decisions only")
    c = sub.add_parser("settings", help="what a label costs at other rollout settings, and "
                       "how far it is from a reference rollout",
                       epilog="example: nice -n 19 python bench/rollout_benchmark.py settings "
                       "bench/data/rollout-benchmark.jsonl --limit 14")
    c.add_argument("file", type=Path, help="a set: its first decisions' candidates are used")
    c.add_argument("--limit", type=int, default=14, help="decisions (default 14)")
    c.add_argument("--settings", type=lambda text: [_setting(t) for t in text.split(",")],
                   default=[(144, 5), (144, 7), (108, 7), (144, 9), (72, 7)],
                   help="TRIALSxPLIES,... (default 144x5,144x7,108x7,144x9,72x7)")
    c.add_argument("--reference", type=_setting, default=(288, 0),
                   help="TRIALSxPLIES of the reference, 0 plies = played out (default 288x0), "
                   "rolled with the next dice seed")
    args = parser.parse_args(argv)
    commands = {"make": make, "score": score, "settings": compare_settings}
    try:
        commands[args.command](args)
    except FormatError as error:
        sys.exit(f"error: {error}")
    except OSError as error:
        sys.exit(f"error: {error.filename}: {error.strerror}")


if __name__ == "__main__":
    main()
