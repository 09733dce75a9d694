"""GNU Backgammon's own rollouts: have the real gnubg roll out a position and read its result.

This is the reference bgbot's rollouts are checked against (issue 29 §3): a headless gnubg
(``gnubg -t -q -r -s <private dir>``, no rc files, in a private directory, killed with us)
reads a short command script on stdin and rolls out one position (one fresh gnubg per
rollout: only the first rollout in a gnubg process reproduces from its seed).

Why a pseudo-terminal: gnubg 1.07 prints a rollout's figures only through its progress
display, and shows progress only when its standard output is a terminal (``fShowProgress =
isatty(stdout)``). So gnubg's stdout and stderr are the slave side of a pty (its stdin stays a
pipe, so it does not turn interactive) and we read the master side, stamping each line with
the time it arrived. The embedded Python (``-p``) gives no better access: ``gnubg.command``
prints the same text, and 1.07 has no Python call that returns a position's rollout.

The command sequence for one position (`rollout_commands`; every setting is written, none is
left to gnubg's defaults, which differ from what a comparison needs)::

    set threads 1                       one calculation thread: one process, one core
    set output digits 4                 4 decimals (more would overflow gnubg's 9-byte buffers)
    set output winpc off                chances as probabilities 0..1
    set output mwc on                   match play: equities as match-winning chances 0..1
    set output matchpc off
    set player 0 human                  nobody moves by itself after `set gnubgid`
    set player 1 human
    set beavers 3 | 0                   money: the context's beaver rule
    set jacoby on | off                 money: the context's Jacoby rule
    set rollout trials N
    set rollout cubeful on | off
    set rollout varredn on | off
    set rollout quasirandom on | off    rotated (stratified) dice for the first rolls
    set rollout initial off             a position, not an opening
    set rollout rng mersenne
    set rollout later enable off        the same evaluations for every ply
    set rollout limit enable off        no early stop
    set rollout jsd stop off
    set rollout bearofftruncation exact off | on
    set rollout bearofftruncation onesided off | on
    set rollout truncation enable on | off
    set rollout truncation plies T      (truncated rollouts only)
    set rollout chequerplay plies P     both players; also cubeful on (see `RolloutSettings.
    set rollout cubedecision plies P     chequer_cubeful`), prune on, noise 0.0, deterministic on
    set rollout truncation chequerplay plies P
    set rollout truncation cubedecision plies P    the evaluation at the truncation point
    set gnubgid POSITIONID:MATCHID      the position, the side on roll in seat 0, no dice
    set rollout seed S                  last: its reply "Rollout seed set to S." starts the clock
    rollout

What gnubg computes (read in gnubg's rollout.c): every trial plays the position out (or to the
truncation depth, then evaluates there at ``P`` plies) with ``P``-ply chequer play; variance
reduction adds, at every ply, the mean of the 0-ply-chosen replies' evaluations over all 21
rolls minus the evaluation for the roll that came; a cubeful rollout makes cube decisions at
``P`` plies from the second ply on, so its cubeful equity is that of the side on roll *not
doubling now*. A cubeless rollout keeps gnubg's default *cubeful* 0-ply chequer evaluation
(as `bgbot.engines.gnubg.GnubgEngine` plays), under the position's real cube.

What the parser assumes of the output (`parse_rollout_output`): after the line ``Rollout done.
Printing final results.`` come a title line ending in ``:``, the figures line ``W WG WBG - L LG
LBG CL E [CF E]`` (chances of the side on roll, its equity), the standard-error line in
brackets (optionally followed by a rank such as ``1r``), a line naming the rollout (``Full |
Truncated (depth T) cubeful | cubeless rollout ... with | without var.redn.`` -- 1.07 spells it
``variance reduction``), a line ``N games, ... seed S[ and quasi-random dice]``, then before
``Time elapsed`` the lines ``Play: [level name] P-ply ...`` and ``Cube: ... P-ply ...``. Every
number is checked (chances in 0..1, lose = 1 - win, gammons within wins, errors >= 0) and the
descriptive lines are checked against the settings asked for, so a gnubg that quietly used
other settings is caught. Anything else raises `GnubgRolloutError` naming what was unexpected.

Equities: money play gives points per unit of cube (gnubg normalises to the cube value); match
play gives match-winning chances (0..1), cubeless and cubeful alike. gnubg's standard errors
are the sample standard deviation of the trials' results divided by the square root of the
number of trials (per output).
"""

from __future__ import annotations

import math
import os
import re
import select
import shutil
import signal
import subprocess
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Iterable, NamedTuple, Sequence

from ..core.context import Context, CubeOwner
from ..core.errors import FormatError
from ..core.notation import format_play
from ..core.position import Play, Position
from ..core.rules import Rules
from ..formats.gnubgid import encode_match_id
from ..players.base import Probabilities
from ..util import die_with_parent
from .gnubg import (
    DEFAULT_BINARY,
    MAX_PLIES,
    find_gnubg,
    gnubg_command,
    gnubg_environment,
    private_directory,
)
from .process import EngineError
from .ubgi_protocol import match_state_for

__all__ = [
    "DEFAULT_TIMEOUT",
    "Estimate",
    "GnubgRollout",
    "GnubgRolloutError",
    "ParsedRollout",
    "PlayRollout",
    "RolloutSettings",
    "context_from_json",
    "context_to_json",
    "parse_rollout_output",
    "rollout_commands",
    "rollout_play_candidates",
    "rollout_position",
    "rollout_positions",
    "rollout_speed",
    "rollout_transcript",
    "settings_commands",
]

DEFAULT_TIMEOUT = 3600.0
"""Seconds one rollout (one gnubg run) may take before gnubg is killed."""
OUTPUT_DIGITS = 4
"""Decimals gnubg prints (``set output digits``); 5 would overflow its 9-byte number buffers."""
_DONE = "Rollout done. Printing final results."
_SEED_SET = re.compile(r"^Rollout seed set to (\d+)\.$")
_NUMBER = r"[+-]?\d+\.\d+"
_FIGURES = re.compile(
    rf"^\s*(?P<win>{_NUMBER})\s+(?P<wg>{_NUMBER})\s+(?P<wbg>{_NUMBER})\s+-\s+(?P<lose>{_NUMBER})"
    rf"\s+(?P<lg>{_NUMBER})\s+(?P<lbg>{_NUMBER})\s+CL\s+(?P<cl>{_NUMBER})"
    rf"(?:\s+CF\s+(?P<cf>{_NUMBER}))?\s*$")
_ERRORS = re.compile(
    rf"^\s*\[\s*(?P<win>{_NUMBER})\s+(?P<wg>{_NUMBER})\s+(?P<wbg>{_NUMBER})\s+-\s+(?P<lose>{_NUMBER})"
    rf"\s+(?P<lg>{_NUMBER})\s+(?P<lbg>{_NUMBER})\s+CL\s+(?P<cl>{_NUMBER})"
    rf"(?:\s+CF\s+(?P<cf>{_NUMBER}))?\s*\](?:\s+\d+[rs])?\s*$")
_KIND = re.compile(
    r"^(?P<full>Full|Truncated) (?P<cube>cubeful|cubeless) rollout"
    r"(?: \(depth (?P<depth>\d+)\))?(?P<bearoff> \((?:trunc\.|truncated) at [^)]*\))?"
    r" (?P<vr>with|without) (?:var\.redn\.|variance reduction)$")
_GAMES = re.compile(r"^(?P<games>\d+) games, .*seed (?P<seed>\d+)(?P<rotate> and quasi-random dice)?$")
_EVALUATION = re.compile(r"^(?P<what>Play|Cube):\s.*?\b(?P<plies>\d+)-ply\b")
_GNUBG_COMPLAINT = re.compile(
    r"(Unknown keyword|Illegal|[Ii]nvalid|not a valid|must specify|No game in progress|"
    r"No position specified|takes no arguments|You must|is not a legal|cannot)")
_TOLERANCE = 1.5e-4
"""Slack for sums of printed 4-decimal figures."""


class GnubgRolloutError(EngineError):
    """gnubg could not roll out (missing, refused a command, died, timed out) or printed a
    result that is not what the parser expects (the message names what)."""


# --------------------------------------------------------------------------- settings


@dataclass(frozen=True)
class RolloutSettings:
    """How gnubg rolls out: every field is written to gnubg (module docstring).

    ``plies`` is the chequer-play look-ahead (0 = gnubg's net alone); cube decisions and the
    evaluation at a truncation point use the same depth. ``truncate`` is the number of plies
    after which a trial stops and is evaluated (None: play every game to its end).
    ``bearoff_truncation`` lets gnubg stop at its bear-off databases (its default; off here, so
    every trial is played to the end, as a rollout by any other player can be).
    """

    trials: int = 1296
    seed: int = 1
    plies: int = 0
    cubeful: bool = False
    truncate: int | None = None
    variance_reduction: bool = True
    quasi_random: bool = True
    bearoff_truncation: bool = False
    prune: bool = True
    """gnubg's pruning nets in its move filters (its default; it changes nothing at 0 plies)."""
    chequer_cubeful: bool = True
    """Chequer play by gnubg's cubeful evaluation under the position's cube (gnubg's default,
    and how `bgbot.engines.gnubg.GnubgEngine` plays), even in a cubeless rollout; False plays by
    cubeless evaluation. With the Jacoby rule on, cubeful play values gammons differently, so
    the rule changes a cubeless rollout too."""

    def __post_init__(self) -> None:
        _whole("trials", self.trials, 1, 10_000_000)
        _whole("seed", self.seed, 0, 2**31 - 1)
        _whole("plies", self.plies, 0, MAX_PLIES)
        if self.truncate is not None:
            _whole("truncate", self.truncate, 1, 1000)
        for name in ("cubeful", "variance_reduction", "quasi_random", "bearoff_truncation",
                     "prune", "chequer_cubeful"):
            if not isinstance(getattr(self, name), bool):
                raise FormatError(name, getattr(self, name), "true or false")

    def describe(self) -> str:
        """One line for humans: what the figures mean."""
        depth = f"truncated at {self.truncate} plies" if self.truncate else "full games"
        play = "cubeful" if self.chequer_cubeful else "cubeless"
        return (f"{self.trials} trials, {'cubeful' if self.cubeful else 'cubeless'}, "
                f"{self.plies}-ply {play} chequer play, {depth}, variance reduction "
                f"{'on' if self.variance_reduction else 'off'}, quasi-random dice "
                f"{'on' if self.quasi_random else 'off'}, bear-off truncation "
                f"{'on' if self.bearoff_truncation else 'off'}, seed {self.seed}")

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RolloutSettings:
        known = {name for name in cls.__dataclass_fields__}
        unknown = set(data) - known
        if unknown:
            raise FormatError("rollout settings", sorted(unknown),
                              f"unknown keys (known: {sorted(known)})")
        return cls(**data)


def _whole(name: str, value: object, low: int, high: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise FormatError(name, value, f"a whole number {low}..{high}")


def settings_commands(settings: RolloutSettings) -> list[str]:
    """The gnubg commands that set up ``settings`` (all but the seed, which comes last)."""
    def on(flag: bool) -> str:
        return "on" if flag else "off"

    commands = [
        f"set rollout trials {settings.trials}",
        f"set rollout cubeful {on(settings.cubeful)}",
        f"set rollout varredn {on(settings.variance_reduction)}",
        f"set rollout quasirandom {on(settings.quasi_random)}",
        "set rollout initial off",
        "set rollout rng mersenne",
        "set rollout later enable off",
        "set rollout limit enable off",
        "set rollout jsd stop off",
        f"set rollout bearofftruncation exact {on(settings.bearoff_truncation)}",
        f"set rollout bearofftruncation onesided {on(settings.bearoff_truncation)}",
        f"set rollout truncation enable {on(settings.truncate is not None)}",
    ]
    if settings.truncate is not None:
        commands.append(f"set rollout truncation plies {settings.truncate}")
    for kind in ("chequerplay", "cubedecision", "truncation chequerplay", "truncation cubedecision"):
        prefix = f"set rollout {kind}"
        cubeful = settings.chequer_cubeful or kind != "chequerplay"
        commands += [
            f"{prefix} plies {settings.plies}",
            f"{prefix} cubeful {on(cubeful)}",
            f"{prefix} prune {on(settings.prune)}",
            f"{prefix} noise 0.0",
            f"{prefix} deterministic on",
        ]
    return commands


_PREAMBLE = [
    "set threads 1",
    f"set output digits {OUTPUT_DIGITS}",
    "set output winpc off",
    "set output mwc on",
    "set output matchpc off",
    "set player 0 human",
    "set player 1 human",
]


def _check_context(context: Context, settings: RolloutSettings) -> None:
    """Refuse what gnubg's rollout cannot be told (it would silently roll out something else)."""
    rules = context.rules
    if context.match_length and not rules.crawford:
        raise GnubgRolloutError("gnubg's rollouts assume the Crawford rule in match play; "
                                "this context has it off")
    if settings.cubeful and not rules.cube:
        raise GnubgRolloutError("a cubeful rollout of a cubeless game: ask for a cubeless "
                                "rollout (cubeful=False)")
    if rules.cube_limit or rules.backgammon_value != 3 or rules.automatic_doubles:
        raise GnubgRolloutError("gnubg's rollouts know no cube limit, no 2-point backgammons and "
                                "no automatic doubles")
    if context.match_length and max(context.my_score, context.opponent_score) >= context.match_length:
        raise GnubgRolloutError(f"score {context.my_score}-{context.opponent_score} is not below "
                                f"the match length {context.match_length}")


def _gnubgid(position: Position, context: Context) -> str:
    """``PositionID:MatchID`` with the side on roll in seat 0 and no dice rolled."""
    try:
        state = match_state_for(context)
    except FormatError as exc:
        raise GnubgRolloutError(f"cannot write the context as a gnubg Match ID: {exc}") from None
    return f"{position.position_id()}:{encode_match_id(state)}"


def rollout_commands(position: Position, context: Context, settings: RolloutSettings) -> list[str]:
    """The whole gnubg script that rolls out ``position`` in ``context`` (module docstring)."""
    if position.is_game_over():
        raise GnubgRolloutError(f"position {position.position_id()} is over: nothing to roll out")
    _check_context(context, settings)
    commands = list(_PREAMBLE) + settings_commands(settings)
    if context.is_money:
        rules = context.rules
        commands.append(f"set beavers {rules.beaver_limit if rules.beavers and rules.cube else 0}")
        commands.append(f"set jacoby {'on' if rules.jacoby and rules.cube else 'off'}")
    return commands + [
        f"set gnubgid {_gnubgid(position, context)}",
        f"set rollout seed {settings.seed}",
        "rollout",
    ]


# --------------------------------------------------------------------------- results


class Estimate(NamedTuple):
    """A rolled-out figure and gnubg's standard error of it."""

    value: float
    se: float


@dataclass(frozen=True)
class ParsedRollout:
    """The figures of one final rollout block, as printed (see `parse_rollout_output`)."""

    chances: Probabilities
    chances_se: Probabilities
    equity: Estimate
    cubeful_equity: Estimate | None
    trials: int
    seed: int
    cubeful: bool
    truncate: int | None
    variance_reduction: bool
    quasi_random: bool
    chequer_plies: int
    cube_plies: int


@dataclass(frozen=True)
class GnubgRollout:
    """gnubg's rollout of one position, for the side on roll, before it rolls.

    ``chances`` are gnubg's five outputs (gammons include backgammons) and ``chances_se``
    their standard errors in the same order. ``equity`` is the cubeless equity: money points
    per unit of cube, or in match play the cubeless match-winning chance (0..1);
    ``cubeful_equity`` likewise (None for a cubeless rollout), the side on roll not doubling
    now. ``seconds`` is the wall time gnubg spent on this rollout alone (from the reply to its
    last setting to ``Rollout done``), for `trials_per_second`.
    """

    position_id: str
    context: Context
    settings: RolloutSettings
    chances: Probabilities
    chances_se: Probabilities
    equity: Estimate
    cubeful_equity: Estimate | None
    trials: int
    seconds: float
    gnubg_version: str = ""

    @property
    def match_play(self) -> bool:
        """The equities are match-winning chances (else money points per unit cube)."""
        return not self.context.is_money

    @property
    def lose(self) -> float:
        return 1.0 - self.chances.win

    @property
    def trials_per_second(self) -> float:
        return self.trials / self.seconds if self.seconds > 0 else math.inf

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict (rounded as gnubg printed; the context as bgbot's wire shape)."""
        out: dict[str, Any] = {
            "position_id": self.position_id,
            "context": context_to_json(self.context),
            "settings": self.settings.to_json(),
            "chances": [round(x, 6) for x in self.chances],
            "chances_se": [round(x, 6) for x in self.chances_se],
            "equity": [round(x, 6) for x in self.equity],
            "cubeful_equity": (None if self.cubeful_equity is None
                               else [round(x, 6) for x in self.cubeful_equity]),
            "equity_unit": "mwc" if self.match_play else "points",
            "trials": self.trials,
            "seconds": round(self.seconds, 3),
        }
        if self.gnubg_version:
            out["gnubg"] = self.gnubg_version
        return out


def context_to_json(context: Context) -> dict[str, Any]:
    """The match context as a small dict (side on roll's view; only what gnubg is told)."""
    rules = context.rules
    data: dict[str, Any] = {
        "match_length": context.match_length,
        "my_score": context.my_score,
        "opponent_score": context.opponent_score,
        "cube_value": context.cube_value,
        "cube_owner": context.cube_owner.name.lower(),
        "crawford": context.crawford,
    }
    if context.is_money:
        data["jacoby"] = rules.jacoby
        data["beavers"] = rules.beavers
    return data


def context_from_json(data: dict[str, Any]) -> Context:
    """`context_to_json` read back; raises `FormatError` for a malformed dict."""
    known = {"match_length", "my_score", "opponent_score", "cube_value", "cube_owner", "crawford",
             "jacoby", "beavers"}
    if not isinstance(data, dict) or set(data) - known:
        raise FormatError("context", data, f"a dict with keys among {sorted(known)}")
    try:
        owner = CubeOwner[str(data.get("cube_owner", "centre")).upper()]
    except KeyError:
        raise FormatError("context.cube_owner", data.get("cube_owner"),
                          "centre, me or opponent") from None
    length = int(data.get("match_length", 0))
    crawford = bool(data.get("crawford", False))
    mine, theirs = int(data.get("my_score", 0)), int(data.get("opponent_score", 0))
    rules = Rules(jacoby=bool(data.get("jacoby", False)), beavers=bool(data.get("beavers", False)))
    return Context(
        cube_value=int(data.get("cube_value", 1)),
        cube_owner=owner,
        match_length=length,
        my_score=mine,
        opponent_score=theirs,
        crawford=crawford,
        post_crawford=bool(length and not crawford and length - 1 in (mine, theirs)),
        rules=rules.for_match(length),
    )


# --------------------------------------------------------------------------- parsing


def _floats(match: re.Match[str]) -> tuple[list[float], float, float | None]:
    chances = [float(match.group(name)) for name in ("win", "wg", "wbg", "lose", "lg", "lbg")]
    cubeful = match.group("cf")
    return chances, float(match.group("cl")), None if cubeful is None else float(cubeful)


def _check_figures(chances: Sequence[float], errors: Sequence[float], where: str) -> None:
    win, wg, wbg, lose, lg, lbg = chances
    bad = [x for x in (*chances, *errors) if not math.isfinite(x) or x < 0 or x > 1 + _TOLERANCE]
    if bad:
        raise GnubgRolloutError(f"{where}: a chance or error outside 0..1 ({bad[0]})")
    if abs(win + lose - 1.0) > _TOLERANCE:
        raise GnubgRolloutError(f"{where}: win {win} and lose {lose} do not add up to 1")
    if any(part > whole + _TOLERANCE for part, whole in ((wbg, wg), (wg, win), (lbg, lg), (lg, lose))):
        raise GnubgRolloutError(f"{where}: backgammons above gammons or gammons above games "
                                f"({win} {wg} {wbg} - {lose} {lg} {lbg})")


def _parse_block(lines: Sequence[str], start: int) -> ParsedRollout:
    """The final block whose ``Rollout done`` line is ``lines[start]``."""
    body = [line.strip("\r") for line in lines[start + 1:start + 40]]
    body = [line for line in body if line.strip()]
    where = "gnubg's rollout result"
    if len(body) < 5:
        raise GnubgRolloutError(f"{where}: output ends {len(body)} lines after '{_DONE}'")
    title, figures_line, errors_line, kind_line, games_line = body[:5]
    if not title.rstrip().endswith(":"):
        raise GnubgRolloutError(f"{where}: expected a title line ending in ':', got {title!r}")
    figures = _FIGURES.match(figures_line)
    if figures is None:
        raise GnubgRolloutError(f"{where}: expected 'W WG WBG - L LG LBG CL E [CF E]' "
                                f"(probabilities, not percentages), got {figures_line!r}")
    errors = _ERRORS.match(errors_line)
    if errors is None:
        raise GnubgRolloutError(f"{where}: expected the standard errors in brackets, "
                                f"got {errors_line!r}")
    kind = _KIND.match(kind_line.strip())
    if kind is None:
        raise GnubgRolloutError(f"{where}: expected '<Full|Truncated> <cubeful|cubeless> rollout "
                                f"... with[out] variance reduction', got {kind_line!r}")
    games = _GAMES.match(games_line.strip())
    if games is None:
        raise GnubgRolloutError(f"{where}: expected 'N games, ... seed S ...', got {games_line!r}")
    plies: dict[str, int] = {}
    for line in body[5:]:
        found = _EVALUATION.match(line.strip())
        if found:
            plies.setdefault(found.group("what"), int(found.group("plies")))
        if line.startswith("Time elapsed") or _DONE in line:
            break
    if set(plies) != {"Play", "Cube"}:
        raise GnubgRolloutError(f"{where}: expected 'Play: N-ply ...' and 'Cube: N-ply ...' lines "
                                f"after {games_line!r}")
    chances, equity, cubeful = _floats(figures)
    chance_errors, equity_se, cubeful_se = _floats(errors)
    _check_figures(chances, chance_errors, where)
    if (cubeful is None) != (cubeful_se is None):
        raise GnubgRolloutError(f"{where}: a cubeful equity without its error, or the reverse")
    is_cubeful = kind.group("cube") == "cubeful"
    if is_cubeful != (cubeful is not None):
        raise GnubgRolloutError(f"{where}: a {kind.group('cube')} rollout "
                                f"{'without' if is_cubeful else 'with'} a CF equity")
    if equity_se < 0 or (cubeful_se is not None and cubeful_se < 0):
        raise GnubgRolloutError(f"{where}: a negative standard error")
    depth = kind.group("depth")
    truncated = kind.group("full") == "Truncated"
    if truncated != (depth is not None):
        raise GnubgRolloutError(f"{where}: truncation without a depth, or the reverse: {kind_line!r}")
    return ParsedRollout(
        chances=Probabilities(chances[0], chances[1], chances[2], chances[4], chances[5]),
        chances_se=Probabilities(chance_errors[0], chance_errors[1], chance_errors[2],
                                 chance_errors[4], chance_errors[5]),
        equity=Estimate(equity, equity_se),
        cubeful_equity=None if cubeful is None or cubeful_se is None else Estimate(cubeful, cubeful_se),
        trials=int(games.group("games")),
        seed=int(games.group("seed")),
        cubeful=is_cubeful,
        truncate=int(depth) if depth is not None else None,
        variance_reduction=kind.group("vr") == "with",
        quasi_random=games.group("rotate") is not None,
        chequer_plies=plies["Play"],
        cube_plies=plies["Cube"],
    )


def parse_rollout_output(text: str) -> list[ParsedRollout]:
    """Every final rollout result in gnubg's terminal output, in order (module docstring).

    Raises `GnubgRolloutError` naming the line that is not what gnubg 1.07 prints.
    """
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    return [_parse_block(lines, i) for i, line in enumerate(lines) if line.strip() == _DONE]


def _check_settings(parsed: ParsedRollout, settings: RolloutSettings) -> None:
    """The settings gnubg says it used must be the ones asked for."""
    asked = (settings.trials, settings.seed, settings.cubeful, settings.truncate,
             settings.variance_reduction, settings.quasi_random, settings.plies, settings.plies)
    got = (parsed.trials, parsed.seed, parsed.cubeful, parsed.truncate,
           parsed.variance_reduction, parsed.quasi_random, parsed.chequer_plies, parsed.cube_plies)
    names = ("trials", "seed", "cubeful", "truncate", "variance_reduction", "quasi_random",
             "chequer play plies", "cube decision plies")
    for name, want, have in zip(names, asked, got):
        if want != have:
            raise GnubgRolloutError(f"gnubg's rollout reports {name} {have}, "
                                    f"but {want} was asked for")


# --------------------------------------------------------------------------- running gnubg


@dataclass
class _Run:
    """The lines gnubg printed, each with the monotonic time it arrived."""

    lines: list[tuple[float, str]] = field(default_factory=list)
    returncode: int | None = None

    @property
    def text(self) -> str:
        return "\n".join(line for _, line in self.lines)


def _run_gnubg(commands: Sequence[str], *, binary: str | None, timeout: float) -> _Run:
    """Run gnubg on ``commands`` with its output on a pty; return what it printed."""
    executable = find_gnubg(binary)
    if executable is None:
        raise GnubgRolloutError(f"GNU Backgammon not found (looked for {binary or DEFAULT_BINARY}; "
                                "set BGBOT_GNUBG or install gnubg)")
    directory = private_directory("bgbot-gnubg-rollout-")
    prefs = os.path.join(directory, "prefs")
    os.makedirs(prefs, exist_ok=True)
    script = os.path.join(directory, "commands.txt")
    with open(script, "w", encoding="ascii") as handle:
        handle.write("\n".join(commands) + "\n")
    master, slave = os.openpty()
    run = _Run()
    process: subprocess.Popen[bytes] | None = None
    try:
        with open(script, "rb") as stdin:
            try:
                process = subprocess.Popen(
                    gnubg_command(executable, prefs), stdin=stdin, stdout=slave, stderr=slave,
                    cwd=directory, env=gnubg_environment(directory), start_new_session=True,
                    preexec_fn=die_with_parent)
            except OSError as exc:
                raise GnubgRolloutError(f"cannot run {executable}: {exc}") from exc
        os.close(slave)
        slave = -1
        deadline = time.monotonic() + timeout
        pending = b""
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise GnubgRolloutError(f"gnubg took longer than {timeout:g} s; killed")
            ready, _, _ = select.select([master], [], [], min(left, 1.0))
            if not ready:
                continue
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: every holder of the slave side has closed it
                chunk = b""
            if not chunk:
                break
            now = time.monotonic()
            pending += chunk
            *complete, pending = re.split(rb"\r?\n|\r", pending)
            for raw in complete:
                line = raw.decode("ascii", errors="replace")
                run.lines.append((now, line))
        if pending:
            run.lines.append((time.monotonic(), pending.decode("ascii", errors="replace")))
        run.returncode = process.wait(timeout=10)
        return run
    finally:
        if slave >= 0:
            os.close(slave)
        os.close(master)
        if process is not None and process.poll() is None:
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            process.wait()
        shutil.rmtree(directory, ignore_errors=True)


def _complaints(run: _Run) -> list[str]:
    return [line.strip() for _, line in run.lines if _GNUBG_COMPLAINT.search(line)
            and not line.startswith(" ")]


def _version(run: _Run) -> str:
    for _, line in run.lines[:5]:
        if line.startswith("GNU Backgammon "):
            return line.split()[2]
    return ""


def rollout_transcript(
    position: Position,
    context: Context | None = None,
    settings: RolloutSettings = RolloutSettings(),
    *,
    binary: str | None = None,
    timeout: float = DEFAULT_TIMEOUT,
) -> str:
    """What gnubg prints while rolling out ``position`` (for a look at its output, and tests)."""
    commands = rollout_commands(position, context or Context(), settings)
    return _run_gnubg(commands, binary=binary, timeout=timeout).text


def rollout_position(
    position: Position,
    context: Context | None = None,
    settings: RolloutSettings = RolloutSettings(),
    *,
    binary: str | None = None,
    timeout: float = DEFAULT_TIMEOUT,
) -> GnubgRollout:
    """gnubg's rollout of ``position`` (the side on roll to roll) in ``context`` (module docs).

    A context of None is money with a centred cube and no Jacoby. One fresh gnubg process per
    rollout: gnubg 1.07 rolls a position out differently the second time in one process with
    the same seed (its dice state outlives the rollout), so only a first rollout reproduces.
    Raises `GnubgRolloutError` when gnubg is missing, refuses a command, dies, runs past
    ``timeout`` seconds or prints what the parser does not expect.

    Example: ``rollout_position(Position.from_position_id("4HPwATDgc/ABMA"),
    settings=RolloutSettings(trials=144, seed=7)).chances.win``.
    """
    ctx = context if context is not None else Context()
    run = _run_gnubg(rollout_commands(position, ctx, settings), binary=binary, timeout=timeout)
    setup = next((i for i, (_, line) in enumerate(run.lines) if _SEED_SET.match(line.strip())),
                 len(run.lines))
    refused = _complaints(_Run(run.lines[:setup]))
    if refused:
        raise GnubgRolloutError(f"gnubg refused a setting: {' | '.join(refused[:3])}")
    parsed = parse_rollout_output(run.text)
    if len(parsed) != 1:
        complaints = _complaints(run)
        detail = f"; gnubg said: {' | '.join(complaints[:3])}" if complaints else (
            f"; its output ended: {' | '.join(line for _, line in run.lines[-4:])}")
        raise GnubgRolloutError(f"gnubg finished {len(parsed)} of 1 rollouts "
                                f"(exit status {run.returncode}){detail}")
    figures = parsed[0]
    _check_settings(figures, settings)
    if setup == len(run.lines):
        raise GnubgRolloutError("gnubg never replied 'Rollout seed set to ...' before rolling out")
    started = run.lines[setup][0]
    ended = next(t for t, line in run.lines if line.strip() == _DONE)
    return GnubgRollout(
        position_id=position.position_id(),
        context=ctx,
        settings=settings,
        chances=figures.chances,
        chances_se=figures.chances_se,
        equity=figures.equity,
        cubeful_equity=figures.cubeful_equity,
        trials=figures.trials,
        seconds=max(0.0, ended - started),
        gnubg_version=_version(run),
    )


def rollout_positions(
    jobs: Sequence[tuple[Position, Context | None]],
    settings: RolloutSettings = RolloutSettings(),
    *,
    binary: str | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    progress: Callable[[int], None] | None = None,
) -> list[GnubgRollout]:
    """`rollout_position` of each (position, context) of ``jobs``, one after the other (one
    gnubg process at a time); ``progress(done)`` is called as each finishes."""
    results = []
    for position, context in jobs:
        results.append(rollout_position(position, context, settings, binary=binary, timeout=timeout))
        if progress is not None:
            progress(len(results))
    return results


def rollout_speed(
    position: Position,
    context: Context | None = None,
    settings: RolloutSettings = RolloutSettings(),
    *,
    binary: str | None = None,
    timeout: float = DEFAULT_TIMEOUT,
) -> tuple[float, GnubgRollout]:
    """gnubg's own rollout speed at ``settings``: (trials per second, the rollout).

    One gnubg process with one calculation thread, timed from the moment gnubg has taken its
    last setting to the end of the rollout (start-up and set-up excluded), so a bench can set
    it against its own rollout of the same position in the same run.
    """
    result = rollout_position(position, context, settings, binary=binary, timeout=timeout)
    return result.trials_per_second, result


# --------------------------------------------------------------------------- candidate plays


@dataclass(frozen=True)
class PlayRollout:
    """A candidate play's rollout, turned back to the side that plays it.

    ``rollout`` is gnubg's rollout of the position after the play (the opponent on roll, its
    chances and equities); ``chances`` and ``equity`` here are the mover's: chances flipped,
    money equity negated, match-winning chance 1 - p. The standard errors are the same.
    """

    play: Play
    notation: str
    rollout: GnubgRollout

    @property
    def chances(self) -> Probabilities:
        return self.rollout.chances.flipped()

    @property
    def equity(self) -> Estimate:
        return _turned(self.rollout.equity, self.rollout.match_play)

    @property
    def cubeful_equity(self) -> Estimate | None:
        cubeful = self.rollout.cubeful_equity
        return None if cubeful is None else _turned(cubeful, self.rollout.match_play)


def _turned(estimate: Estimate, match_play: bool) -> Estimate:
    return Estimate(1.0 - estimate.value if match_play else -estimate.value, estimate.se)


def rollout_play_candidates(
    position: Position,
    dice: Sequence[int],
    context: Context | None = None,
    settings: RolloutSettings = RolloutSettings(),
    *,
    plays: Iterable[Play] | None = None,
    binary: str | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    progress: Callable[[int], None] | None = None,
) -> list[PlayRollout]:
    """Roll out each candidate play of ``dice`` (default: every legal play), best first.

    gnubg 1.07's ``rollout`` takes no candidate list (``rollout =1 =2`` is refused), so each
    play's resulting position is rolled out with the opponent on roll, in one gnubg process,
    and turned back to the mover (`PlayRollout`). Sorted by the mover's cubeful equity when
    cubeful, else cubeless.
    """
    ctx = context if context is not None else Context()
    candidates = list(plays) if plays is not None else position.legal_plays(dice)
    if not candidates:
        raise GnubgRolloutError(f"no legal play of {dice[0]}{dice[1]} in {position.position_id()}")
    after = [position.apply(play).swapped() for play in candidates]
    for play, result in zip(candidates, after):
        if result.is_game_over():
            raise GnubgRolloutError(f"{format_play(play)} ends the game: nothing to roll out")
    rollouts = rollout_positions([(result, ctx.swapped()) for result in after], settings,
                                 binary=binary, timeout=timeout, progress=progress)
    ranked = [PlayRollout(play, format_play(play), rollout)
              for play, rollout in zip(candidates, rollouts)]

    def key(item: PlayRollout) -> float:
        figure = item.cubeful_equity if item.cubeful_equity is not None else item.equity
        return -figure.value

    return sorted(ranked, key=key)

