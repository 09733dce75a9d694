"""The rollout benchmark's file format: decisions with every candidate play rolled out by bgbot.

JSON lines, UTF-8 (bench/README.md, "A benchmark of our own", documents it for users). Line 1
is the `Header`: the format (`FORMAT`), when it was made, the checksums of the networks that
played the rollouts, the rollout settings, how candidates were chosen and how decisions were
sampled. Every other line is one `Decision`: a position (gnubg Position ID, the side on roll
to move), the dice, its class and game plan (`bgbot.players.position_class`), why it was
sampled (`SOURCES`), where in the self-play it came from (game, turn), and its candidate
plays best first, each ``[move, equity, se, diff_se]``: gnubg's move notation, the rolled-out
cubeless money equity of the side that moves (after the play), its standard error, and the
standard error of the best candidate's equity minus this one's (from the paired trials: every
candidate of a decision is rolled out with the same dice; 0 for the best itself).

`read_set` / `parse_header` / `parse_decision` refuse anything malformed with a `FormatError`
naming the line and the field; `format_header` / `format_decision` write what they read.
"""

from __future__ import annotations

import json
import math
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bgbot.core.errors import BgbotError, FormatError  # noqa: E402
from bgbot.core.position import Play, Position, check_dice  # noqa: E402

__all__ = ["CLASSES", "FORMAT", "SOURCES", "Candidate", "Decision", "Header", "format_decision",
           "format_header", "parse_decision", "parse_header", "read_set"]

FORMAT = "bgbot-rollout-benchmark-1"
CLASSES = ("contact", "crashed", "race", "bearoff")
"""`position_class` values a decision can have (a finished game has no decision)."""
SOURCES = ("selfplay", "disagree", "back_game")
"""Why a decision is in the set: a uniform sample of the self-play's decisions; one where
bgbot's 0-ply and 2-ply players choose different plays; a back game (rare in self-play, so
every one met is taken)."""
EQUITY_LIMIT = 3.0
"""No cubeless money equity lies outside +-3 (a backgammon)."""
_PLAN = re.compile(r"^[a-z][a-z_]*$")
_SHA256 = re.compile(r"^[0-9a-f]{64}$")


@dataclass(frozen=True)
class Header:
    """How a set was made (line 1)."""

    made: str
    """When the set was started (ISO date)."""
    network: str
    """SHA-256 of the contact network that played the rollouts."""
    race_network: str | None
    """SHA-256 of the race network, None when races used the race formula."""
    player: str = "heuristic"
    """The agent spec that rolled out (and played the self-play games)."""
    trials: int = 108
    truncate: int = 7
    """Plies per trial before the player's 0-ply evaluation is taken (0: played to the end)."""
    rollout_seed: int = 1
    """The dice seed of every rollout: the same dice for every candidate of every decision."""
    vr: bool = True
    top: int = 3
    """Candidates: the best `top` plays by the 0-ply ranking (at least two) ..."""
    threshold: float = 0.08
    """... within this equity of the 0-ply best, ..."""
    candidate_agents: tuple[str, ...] = ("heuristic:plies=1", "heuristic:plies=2",
                                         "gnubg:plies=0")
    """... and the play each of these agents chooses."""
    sampling_seed: int = 1
    """Self-play game k has dice seed ``sampling_seed * 1_000_003 + k``."""
    selfplay_rate: float = 0.12
    disagree_rate: float = 1.0
    back_game_rate: float = 1.0
    """The chance that a decision of each source is taken (`SOURCES`)."""
    note: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT, "made": self.made,
            "network": {"contact": self.network, "race": self.race_network},
            "rollout": {"player": self.player, "trials": self.trials, "truncate": self.truncate,
                        "seed": self.rollout_seed, "vr": self.vr, "quasi_random": True,
                        "cubeful": False, "rules": "money"},
            "candidates": {"top": self.top, "threshold": self.threshold,
                           "agents": list(self.candidate_agents)},
            "sampling": {"seed": self.sampling_seed, "selfplay": self.selfplay_rate,
                         "disagree": self.disagree_rate, "back_game": self.back_game_rate},
            "equity": "cubeless money equity of the side that moves, after its play",
            "note": self.note,
        }


@dataclass(frozen=True)
class Candidate:
    """One rolled-out play of a decision."""

    move: str
    equity: float
    se: float
    diff_se: float
    """SE of (the best candidate's equity - this one's), from the paired trials."""


@dataclass(frozen=True)
class Decision:
    """A position, the dice, and its candidates rolled out (best first)."""

    position_id: str
    dice: tuple[int, int]
    position_class: str
    plan: str
    source: str
    game: int
    turn: int
    candidates: tuple[Candidate, ...]
    afters: tuple[Position, ...] = field(default=(), compare=False, repr=False)
    """Each candidate's resulting position (mover's view), filled by `parse_decision`."""

    @property
    def key(self) -> tuple[int, int]:
        """Where the decision was met: (self-play game, turn)."""
        return self.game, self.turn

    @property
    def position(self) -> Position:
        return Position.from_position_id(self.position_id)

    def losses(self) -> list[float]:
        """Each candidate's equity below the best."""
        best = self.candidates[0].equity
        return [best - c.equity for c in self.candidates]


def format_header(header: Header) -> str:
    return json.dumps(header.to_json(), separators=(",", ":"))


def format_decision(decision: Decision) -> str:
    """One line (no newline); equities and SEs to 1e-5 (far below any SE a rollout gives)."""
    return json.dumps({
        "id": decision.position_id, "dice": list(decision.dice),
        "class": decision.position_class, "plan": decision.plan, "source": decision.source,
        "game": decision.game, "turn": decision.turn,
        "candidates": [[c.move, round(c.equity, 5), round(c.se, 5), round(c.diff_se, 5)]
                       for c in decision.candidates],
    }, separators=(",", ":"))


def _object(line: str, what: str) -> dict[str, Any]:
    try:
        data = json.loads(line)
    except json.JSONDecodeError as error:
        raise FormatError(what, line, f"is not JSON ({error.msg})") from None
    if not isinstance(data, dict):
        raise FormatError(what, line, "must be a JSON object")
    return data


def _get(data: Mapping[str, Any], key: str, kind: type | tuple[type, ...], where: str = "") -> Any:
    name = f"{where}{key}"
    if key not in data:
        raise FormatError(name, None, "is missing")
    value = data[key]
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
        names = " or ".join({int: "a whole number", float: "a number", str: "a string",
                             bool: "true or false", list: "a list", dict: "an object"}[k]
                            for k in kinds)
        raise FormatError(name, value, f"must be {names}")
    return value


def _count(data: Mapping[str, Any], key: str, where: str = "", low: int = 0) -> int:
    value: int = _get(data, key, int, where)
    if value < low:
        raise FormatError(f"{where}{key}", value, f"must be at least {low}")
    return value


def _rate(data: Mapping[str, Any], key: str) -> float:
    value = float(_get(data, key, (int, float), "sampling."))
    if not 0.0 <= value <= 1.0:
        raise FormatError(f"sampling.{key}", value, "must be a chance 0..1")
    return value


def parse_header(line: str) -> Header:
    """Line 1 of a set; FormatError names the field at fault."""
    data = _object(line, "header")
    found = data.get("format")
    if found != FORMAT:
        raise FormatError("format", found, f"expected {FORMAT!r}: not a rollout benchmark set "
                          "(or one of another version)")
    network = _get(data, "network", dict)
    contact = _get(network, "contact", str, "network.")
    race = network.get("race")
    for name, value in (("network.contact", contact), ("network.race", race)):
        if value is not None and (not isinstance(value, str) or not _SHA256.match(value)):
            raise FormatError(name, value, "must be a SHA-256 in hex")
    rollout = _get(data, "rollout", dict)
    if rollout.get("cubeful", False) or rollout.get("rules", "money") != "money":
        raise FormatError("rollout", rollout, "only cubeless money rollouts are defined")
    candidates = _get(data, "candidates", dict)
    agents = _get(candidates, "agents", list, "candidates.")
    if not all(isinstance(a, str) and a for a in agents):
        raise FormatError("candidates.agents", agents, "must be agent specs")
    threshold = float(_get(candidates, "threshold", (int, float), "candidates."))
    if not threshold >= 0:
        raise FormatError("candidates.threshold", threshold, "must be >= 0")
    sampling = _get(data, "sampling", dict)
    trials = _count(rollout, "trials", "rollout.", 1)
    return Header(
        made=_get(data, "made", str), network=contact, race_network=race,
        player=_get(rollout, "player", str, "rollout."), trials=trials,
        truncate=_count(rollout, "truncate", "rollout."),
        rollout_seed=_count(rollout, "seed", "rollout."), vr=_get(rollout, "vr", bool, "rollout."),
        top=_count(candidates, "top", "candidates.", 1), threshold=threshold,
        candidate_agents=tuple(agents), sampling_seed=_count(sampling, "seed", "sampling."),
        selfplay_rate=_rate(sampling, "selfplay"), disagree_rate=_rate(sampling, "disagree"),
        back_game_rate=_rate(sampling, "back_game"), note=str(data.get("note", "")))


def _finite(value: Any, name: str, low: float, high: float) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise FormatError(name, value, "must be a number")
    number = float(value)
    if not (math.isfinite(number) and low <= number <= high):
        raise FormatError(name, value, f"must be a number in {low:g} .. {high:g}")
    return number


def parse_decision(line: str) -> Decision:
    """One decision line; FormatError names the field at fault. The moves are checked against
    the legal plays of the position and dice, and must lead to different positions."""
    data = _object(line, "decision")
    position_id = _get(data, "id", str)
    position = Position.from_position_id(position_id)
    if position.is_game_over():
        raise FormatError("id", position_id, "the game is over: there is no decision")
    raw_dice = _get(data, "dice", list)
    try:
        if not all(isinstance(d, int) and not isinstance(d, bool) for d in raw_dice):
            raise ValueError("dice must be whole numbers")
        dice = check_dice(raw_dice)
    except (BgbotError, ValueError) as error:
        raise FormatError("dice", raw_dice, str(error)) from None
    kind = _get(data, "class", str)
    if kind not in CLASSES:
        raise FormatError("class", kind, f"expected one of {', '.join(CLASSES)}")
    plan = _get(data, "plan", str)
    if not _PLAN.match(plan):
        raise FormatError("plan", plan, "expected a game plan name such as middle_game")
    source = _get(data, "source", str)
    if source not in SOURCES:
        raise FormatError("source", source, f"expected one of {', '.join(SOURCES)}")
    rows = _get(data, "candidates", list)
    if len(rows) < 2:
        raise FormatError("candidates", rows, "a decision needs at least two candidate plays")
    candidates: list[Candidate] = []
    afters: list[Position] = []
    for k, row in enumerate(rows, start=1):
        name = f"candidates[{k}]"
        if not isinstance(row, list) or len(row) != 4 or not isinstance(row[0], str):
            raise FormatError(name, row, "expected [move, equity, se, diff_se]")
        try:
            play = Play.parse(row[0], position, dice)
        except (BgbotError, ValueError) as error:
            raise FormatError(f"{name} move", row[0], f"not a legal play of {dice[0]}{dice[1]} "
                              f"here ({error})") from None
        after = position.apply(play)
        if after in afters:
            raise FormatError(f"{name} move", row[0], "leads where an earlier candidate does")
        equity = _finite(row[1], f"{name} equity", -EQUITY_LIMIT, EQUITY_LIMIT)
        se = _finite(row[2], f"{name} se", 0.0, EQUITY_LIMIT)
        diff_se = _finite(row[3], f"{name} diff_se", 0.0, 2 * EQUITY_LIMIT)
        if candidates and equity > candidates[-1].equity:
            raise FormatError(f"{name} equity", row[1], "candidates must be best first")
        candidates.append(Candidate(row[0], equity, se, diff_se))
        afters.append(after)
    if candidates[0].diff_se != 0.0:
        raise FormatError("candidates[1] diff_se", rows[0][3], "must be 0 for the best")
    return Decision(position_id, dice, kind, plan, source, _count(data, "game"),
                    _count(data, "turn"), tuple(candidates), tuple(afters))


def read_lines(lines: Iterable[str], name: str = "set") -> tuple[Header, list[Decision]]:
    """A set's header and decisions; FormatError names ``name``, the line and the field. Two
    decisions from the same game and turn, or of the same position and dice, are refused."""
    header: Header | None = None
    decisions: list[Decision] = []
    keys: set[tuple[int, int]] = set()
    seen: set[tuple[str, tuple[int, int]]] = set()
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            raise FormatError(f"{name} line {number}", line, "is empty")
        try:
            if header is None:
                header = parse_header(line)
                continue
            decision = parse_decision(line)
            if decision.key in keys:
                raise FormatError("game/turn", list(decision.key), "a second decision there")
            if (decision.position_id, decision.dice) in seen:
                raise FormatError("id", decision.position_id,
                                  f"the same position and dice {decision.dice} again")
        except FormatError as error:
            raise FormatError(f"{name} line {number}: {error.field}", error.value,
                              error.reason) from None
        keys.add(decision.key)
        seen.add((decision.position_id, decision.dice))
        decisions.append(decision)
    if header is None:
        raise FormatError(name, "", "is empty: expected a header line")
    return header, decisions


def read_set(path: Path) -> tuple[Header, list[Decision]]:
    """`read_lines` of a file (a last line cut short by a killed run is an error here:
    ``rollout_benchmark.py make`` repairs it when it resumes)."""
    with path.open(encoding="utf-8") as lines:
        return read_lines((line.rstrip("\n") for line in lines), str(path))
