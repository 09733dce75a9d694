"""gnubg's analysis of a match file (``bgbot analyze``), read back as per-player figures.

gnubg does the work (reference §7.3): a headless ``gnubg -t -q -r -s <private dir>`` reads
``import mat``, ``analyse match`` and ``show statistics match`` on stdin, and this module
parses the fixed-width statistics table it prints. For each player it reports the chequer,
cube and overall error totals (EMG) and error rates (mEMG per decision, gnubg's "error rate",
with the MWC percentage in match play or the points figure in money play), the Snowie error
rate, the luck, and gnubg's rating bands ("World class", "Expert", ...). Numbers keep gnubg's
signs: errors and bad luck are negative.

The file is read with bgbot's own `.mat` reader first (`bgbot.formats.mat`): a file it cannot
replay -- an illegal move, a truncated game -- is refused with the reader's error (game, move,
column), where gnubg would analyse what it could and say nothing. The reader also gives the
rules gnubg cannot know from the games: a cubeless file (``CubeLimit "1"``, as bgbot writes
it) is analysed with ``set cube use off``, a money file's ``Jacoby`` tag sets ``set jacoby``;
both can be forced (``cubeless``, ``jacoby``). The player names are the file's.

The match file is copied into the private directory under a plain name first, so paths with
spaces or quotes cannot confuse gnubg's command parser.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from ..util import die_with_parent
from ..core.game import Moved
from ..formats.mat import MatchRecord, parse_match, record_names
from .gnubg import DEFAULT_BINARY, MAX_PLIES, find_gnubg, gnubg_command, gnubg_environment
from .process import EngineError

__all__ = [
    "AnalysisError",
    "MatchAnalysis",
    "PlayerStatistics",
    "analysis_settings",
    "analyze_match",
    "format_analysis",
    "parse_statistics",
]

DEFAULT_TIMEOUT = 1800.0
"""Seconds gnubg may spend on one analysis (a long match at 2-ply takes minutes)."""

_LABEL_WIDTH = 41
_COLUMN_WIDTH = 24
_SECTIONS = {
    "Chequerplay statistics": "chequerplay",
    "Luck statistics": "luck",
    "Cube statistics": "cube",
    "Overall statistics": "overall",
}
# (section, label prefix) -> (key, kind). Kinds: int, pair (EMG + MWC%/points), text, number.
_ROWS: dict[tuple[str, str], tuple[str, str]] = {
    ("chequerplay", "Total moves"): ("moves", "int"),
    ("chequerplay", "Unforced moves"): ("unforced_moves", "int"),
    ("chequerplay", "Moves marked doubtful"): ("doubtful", "int"),
    ("chequerplay", "Moves marked bad"): ("bad", "int"),
    ("chequerplay", "Moves marked very bad"): ("very_bad", "int"),
    ("chequerplay", "Error total EMG"): ("error_total", "pair"),
    ("chequerplay", "Error rate mEMG"): ("error_rate", "pair"),
    ("chequerplay", "Chequerplay rating"): ("rating", "text"),
    ("luck", "Rolls marked very lucky"): ("very_lucky", "int"),
    ("luck", "Rolls marked lucky"): ("lucky", "int"),
    ("luck", "Rolls marked unlucky"): ("unlucky", "int"),
    ("luck", "Rolls marked very unlucky"): ("very_unlucky", "int"),
    ("luck", "Luck total EMG"): ("total", "pair"),
    ("luck", "Luck rate mEMG"): ("rate", "pair"),
    ("luck", "Luck rating"): ("rating", "text"),
    ("cube", "Total cube decisions"): ("decisions", "int"),
    ("cube", "Close or actual cube decisions"): ("close_decisions", "int"),
    ("cube", "Doubles"): ("doubles", "int"),
    ("cube", "Takes"): ("takes", "int"),
    ("cube", "Passes"): ("passes", "int"),
    ("cube", "Error total EMG"): ("error_total", "pair"),
    ("cube", "Error rate mEMG"): ("error_rate", "pair"),
    ("cube", "Cube decision rating"): ("rating", "text"),
    ("overall", "Error total EMG"): ("error_total", "pair"),
    ("overall", "Error rate mEMG"): ("error_rate", "pair"),
    ("overall", "Snowie error rate"): ("snowie_error_rate", "pair"),
    ("overall", "Overall rating"): ("rating", "text"),
    ("overall", "Actual result"): ("actual_result", "number"),
    ("overall", "Luck adjusted result"): ("luck_adjusted_result", "number"),
    ("overall", "Error based abs. FIBS rating"): ("fibs_rating", "number"),
    ("overall", "Chequerplay errors rating loss"): ("chequerplay_rating_loss", "number"),
    ("overall", "Cube errors rating loss"): ("cube_rating_loss", "number"),
}
_PAIR = re.compile(r"([+-]?\d+(?:\.\d+)?)\s*\(\s*([+-]?\d+(?:\.\d+)?)%?\s*\)")
_NUMBER = re.compile(r"[+-]?\d+(?:\.\d+)?|n/a")
_UNIT = re.compile(r"\((MWC|Points)\)")
_BOARD_NAME = re.compile(r"^ [ +|v^].*\s([OX]): (.*?)(?:\s+\(Cube: \d+\))?\s*$")
"""A player's name beside gnubg's board (``O: name``), without the ``(Cube: N)`` of the cube's
owner."""
_FATAL = (
    re.compile(r"No such file or directory"),
    re.compile(r"not a valid \.mat file"),
    re.compile(r"^No game in progress", re.MULTILINE),
)
_WARNING = re.compile(r"^(?:WARNING.*|Unrecognised move.*|.*[Ii]nvalid move.*)$", re.MULTILINE)


class AnalysisError(EngineError):
    """gnubg could not analyse the file (missing, unreadable, or gnubg failed)."""


@dataclass
class PlayerStatistics:
    """One player's figures, section by section, as gnubg printed them.

    Each section maps a key (see `_ROWS`) to a number, a rating text, or for "pair" rows a
    dict ``{"emg": x, "mwc_percent": y}`` (match play) or ``{"emg": x, "points": y}`` (money).
    """

    name: str
    chequerplay: dict[str, Any] = field(default_factory=dict)
    cube: dict[str, Any] = field(default_factory=dict)
    luck: dict[str, Any] = field(default_factory=dict)
    overall: dict[str, Any] = field(default_factory=dict)

    def section(self, name: str) -> dict[str, Any]:
        section: dict[str, Any] = getattr(self, name)
        return section

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "chequerplay": self.chequerplay, "cube": self.cube,
                "luck": self.luck, "overall": self.overall}


@dataclass
class MatchAnalysis:
    """gnubg's statistics for a whole match, player 0 (the .mat's left column) first."""

    players: tuple[PlayerStatistics, PlayerStatistics]
    unit: str
    """"MWC" (match play: the second figure is a match-winning-chance percentage) or "Points"."""
    file: str = ""
    plies: int = 0
    warnings: list[str] = field(default_factory=list)
    settings: list[str] = field(default_factory=list)
    """The gnubg settings the analysis ran with (`analysis_settings`)."""

    def to_json(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "plies": self.plies,
            "settings": self.settings,
            "unit": self.unit,
            "players": [player.to_json() for player in self.players],
            "warnings": self.warnings,
        }


# --------------------------------------------------------------------------- parsing


def _number(text: str) -> float | None:
    return None if text == "n/a" else float(text)


def _columns(rest: str) -> tuple[str, str]:
    """The two players' text cells of a fixed-width row (after the label)."""
    return rest[:_COLUMN_WIDTH].strip(), rest[_COLUMN_WIDTH:].strip()


def _names_from_board(text: str) -> tuple[str, str] | None:
    """Player names from gnubg's drawn board: ``O:`` is player 0, ``X:`` player 1."""
    found: dict[str, str] = {}
    for line in text.splitlines():
        match = _BOARD_NAME.match(line)
        if match:
            found[match.group(1)] = match.group(2)
    if "O" in found and "X" in found:
        return found["O"], found["X"]
    return None


def _row(section: str, label: str) -> tuple[str, str] | None:
    """The (key, kind) of a table row, by its section and label; None for rows we skip."""
    label = label.rstrip()
    for (row_section, prefix), entry in _ROWS.items():
        if row_section == section and (label == prefix or label.startswith(prefix + " ")):
            return entry
    return None


def parse_statistics(text: str, names: tuple[str, str] | None = None) -> MatchAnalysis:
    """Read gnubg's ``show statistics match|game|session`` table.

    ``names`` (player 0, player 1) are needed only when the header cannot be split (names
    that overflow gnubg's 23-character columns); by default they come from a board gnubg drew
    before the table, else from the header's columns. Raises `AnalysisError` when there is no
    table or no figures in it.
    """
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith("Player ")), None)
    if start is None:
        raise AnalysisError("gnubg printed no statistics table")
    header = lines[start][_LABEL_WIDTH:]
    if names is None:
        names = _names_from_board("\n".join(lines[:start]))
    if names is None or not header.strip().startswith(names[0][:20]):
        names = _columns(header)
    players = (PlayerStatistics(names[0]), PlayerStatistics(names[1]))
    unit = ""
    section = ""
    rows = 0
    for line in lines[start + 1:]:
        stripped = line.strip()
        if stripped in _SECTIONS:
            section = _SECTIONS[stripped]
            continue
        if not stripped or not section:
            continue
        label, rest = line[:_LABEL_WIDTH], line[_LABEL_WIDTH:]
        unit_match = _UNIT.search(label)
        if unit_match and not unit:
            unit = unit_match.group(1)
        entry = _row(section, label)
        if entry is None:
            continue
        key, kind = entry
        secondary = "mwc_percent" if unit != "Points" else "points"
        if kind == "text":
            values: list[Any] = list(_columns(rest))
        elif kind == "pair":
            pairs = _PAIR.findall(rest)
            if len(pairs) != 2:
                continue
            values = [{"emg": float(a), secondary: float(b)} for a, b in pairs]
        else:
            numbers = _NUMBER.findall(rest)
            if len(numbers) != 2:
                continue
            values = [int(n) if kind == "int" else _number(n) for n in numbers]
        for player, value in zip(players, values):
            player.section(section)[key] = value
        rows += 1
    if not rows:
        raise AnalysisError("gnubg's statistics table holds no figures (was a match loaded?)")
    return MatchAnalysis(players, unit or "MWC")


# --------------------------------------------------------------------------- running gnubg


def analyze_match(
    path: str | Path,
    *,
    plies: int = 0,
    binary: str | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    cubeless: bool | None = None,
    jacoby: bool | None = None,
    unfinished: bool = False,
) -> MatchAnalysis:
    """Have gnubg analyse the match file ``path`` at ``plies`` and return its statistics.

    A last game without a result (a file cut short, or a match still in play) is refused
    unless ``unfinished``; a player that is gnubg itself at ``plies`` or deeper gets a warning
    (gnubg finds no error in its own play at its own depth).

    ``cubeless`` and ``jacoby`` override what the file says (None: the file's tags; a money
    file without a ``Jacoby`` tag keeps gnubg's default, on). Raises `AnalysisError` for a
    missing or unreadable file, a file bgbot's reader refuses (its message says where), a
    missing gnubg, or a gnubg that fails or runs past ``timeout`` seconds.
    """
    source = Path(path)
    if not 0 <= plies <= MAX_PLIES:
        raise AnalysisError(f"--plies must be 0..{MAX_PLIES}, got {plies}")
    if not source.is_file():
        raise AnalysisError(f"{source}: no such file")
    try:
        content = source.read_bytes()
    except OSError as exc:
        raise AnalysisError(f"{source}: cannot read it ({exc.strerror or exc})") from exc
    try:
        record = parse_match(content)
    except ValueError as exc:  # FormatError: the reader names game, move, column and text
        raise AnalysisError(f"{source} is not a match gnubg should analyse: {exc}") from None
    if not record.games:
        raise AnalysisError(f"{source}: the file holds no game")
    last = record.games[-1]
    if last.outcome is None and not unfinished:
        moves = sum(isinstance(action, Moved) for action in last.actions)
        raise AnalysisError(
            f"{source}: game {len(record.games)} ends after {moves} moves without a result, so "
            "the file is cut short (or the match is still in play); --unfinished analyses "
            "what is there")
    settings = analysis_settings(record, cubeless=cubeless, jacoby=jacoby)
    executable = find_gnubg(binary)
    if executable is None:
        raise AnalysisError(f"GNU Backgammon not found (looked for {binary or DEFAULT_BINARY}; "
                            "set BGBOT_GNUBG or install gnubg)")
    directory = tempfile.mkdtemp(prefix="bgbot-analyze-")
    try:
        match_file = Path(directory) / "match.mat"
        match_file.write_bytes(content)
        prefs = Path(directory) / "prefs"
        prefs.mkdir()
        script = [
            *settings,
            f"set analysis chequerplay evaluation plies {plies}",
            f"set analysis cubedecision evaluation plies {plies}",
            f"import mat {match_file.name}",
            "analyse match",
            "show statistics match",
        ]
        try:
            completed = subprocess.run(
                gnubg_command(executable, str(prefs)),
                input="\n".join(script) + "\n",
                capture_output=True,
                text=True,
                errors="replace",
                timeout=timeout,
                cwd=directory,
                env=gnubg_environment(directory),
                start_new_session=True,
                preexec_fn=die_with_parent,
            )
        except subprocess.TimeoutExpired as exc:
            raise AnalysisError(f"gnubg took longer than {timeout:g} s to analyse {source}") from exc
        except OSError as exc:
            raise AnalysisError(f"cannot run {executable}: {exc}") from exc
    finally:
        shutil.rmtree(directory, ignore_errors=True)
    output = completed.stdout
    messages = completed.stderr + "\n" + output  # gnubg reports import errors on stderr
    if completed.returncode != 0:
        tail = "\n".join(messages.strip().splitlines()[-5:])
        raise AnalysisError(f"gnubg failed on {source} (exit status {completed.returncode}): "
                            f"{tail}")
    for pattern in _FATAL:
        found = pattern.search(messages)
        if found:
            line_end = messages.find("\n", found.start())
            line_start = messages.rfind("\n", 0, found.start()) + 1
            message = messages[line_start:line_end if line_end >= 0 else None].strip()
            message = message.replace(f"{match_file.name}: ", "").replace(match_file.name,
                                                                           str(source))
            raise AnalysisError(f"gnubg could not import {source}: {message}")
    analysis = parse_statistics(output, record_names(record))
    analysis.file = str(source)
    analysis.settings = settings
    analysis.plies = plies
    analysis.warnings = sorted(set(w.strip() for w in _WARNING.findall(messages)))
    analysis.warnings += self_judged(record_names(record), plies)
    return analysis


_GNUBG_NAME = re.compile(r"gnubg(?:[:_](?:.*?plies[=_](?P<plies>\d+))?.*)?", re.IGNORECASE)


_NOISY = re.compile(r"noise[=_](?!0*\.?0*(?:[,_]|$))")


def self_judged(names: Sequence[str], plies: int) -> list[str]:
    """A warning for each player named as bgbot names gnubg's engine (``gnubg:plies=N``, in a
    .mat ``gnubg_plies=N``) whose look-ahead the analysis does not exceed: gnubg judging its
    own play at its own depth finds no error, whatever the play is worth."""
    found = []
    for name in names:
        match = _GNUBG_NAME.fullmatch(name.strip())
        if match is None or _NOISY.search(name):
            continue
        own = int(match.group("plies") or 0)
        if plies <= own:
            found.append(f"{name} is gnubg at {own}-ply, judged by gnubg at {plies}-ply: it "
                         "finds no error in its own play at its own depth, so its error rate "
                         f"and rating say nothing; judge it with --plies {own + 1} or more "
                         "(gnubg's default is 2)")
    return found


def analysis_settings(record: MatchRecord, *, cubeless: bool | None = None,
                      jacoby: bool | None = None) -> list[str]:
    """The gnubg commands, given before ``import mat``, that make its analysis judge the
    games by their rules: ``set cube use off`` for cubeless play (the file's ``CubeLimit "1"``,
    or ``cubeless``), ``set jacoby on|off`` for money play (the file's ``Jacoby`` tag, or
    ``jacoby``)."""
    rules = record.rules
    no_cube = cubeless if cubeless is not None else (not rules.cube or rules.cube_limit == 1)
    commands = ["set cube use off"] if no_cube else []
    if record.length == 0:
        if jacoby is None and "Jacoby" in record.tags:
            jacoby = rules.jacoby
        if jacoby is not None:
            commands.append(f"set jacoby {'on' if jacoby and not no_cube else 'off'}")
    return commands


# --------------------------------------------------------------------------- display


def _pair(section: dict[str, Any], key: str) -> tuple[float, float] | None:
    value = section.get(key)
    if not isinstance(value, dict):
        return None
    emg = value.get("emg")
    other = value.get("mwc_percent", value.get("points"))
    return (float(emg), float(other)) if emg is not None and other is not None else None


def format_analysis(analysis: MatchAnalysis) -> str:
    """A readable table of the figures that matter, one column per player."""
    p0, p1 = analysis.players
    secondary = "MWC %" if analysis.unit == "MWC" else "points"
    rows: list[tuple[str, str, str]] = []

    def add_pair(label: str, section: str, key: str, scale: str, second: bool = True) -> None:
        cells = []
        for player in analysis.players:
            pair = _pair(player.section(section), key)
            text = "-" if pair is None else f"{pair[0]:+.{scale}f}"
            if pair is not None and second:
                text += f" ({pair[1]:+.3f})"
            cells.append(text)
        rows.append((label, cells[0], cells[1]))

    def add_text(label: str, section: str, key: str) -> None:
        cells = [str(player.section(section).get(key, "-")) for player in analysis.players]
        rows.append((label, cells[0], cells[1]))

    add_pair(f"Chequer error rate mEMG ({secondary})", "chequerplay", "error_rate", "1")
    add_pair(f"Cube error rate mEMG ({secondary})", "cube", "error_rate", "1")
    add_pair(f"Overall error rate mEMG ({secondary})", "overall", "error_rate", "1")
    add_pair(f"Error total EMG ({secondary})", "overall", "error_total", "3")
    add_pair("Snowie error rate", "overall", "snowie_error_rate", "1", second=False)
    add_pair(f"Luck rate mEMG ({secondary})", "luck", "rate", "1")
    add_pair(f"Luck total EMG ({secondary})", "luck", "total", "3")
    add_text("Chequerplay rating", "chequerplay", "rating")
    add_text("Cube decision rating", "cube", "rating")
    add_text("Overall rating", "overall", "rating")
    add_text("Luck rating", "luck", "rating")
    label_width = max(len(label) for label, _, _ in rows) + 2
    width = max(len(p0.name), *(len(left) for _, left, _ in rows)) + 3
    judged = ""
    if "set cube use off" in analysis.settings:
        judged += ", cubeless"
    for setting in analysis.settings:
        if setting.startswith("set jacoby "):
            judged += f", Jacoby {setting.rsplit(' ', 1)[1]}"
    out = [f"gnubg analysis of {analysis.file or 'the match'} at {analysis.plies}-ply{judged} "
           "(errors and bad luck are negative)", ""]
    out.append(" " * label_width + p0.name.ljust(width) + p1.name)
    for label, left, right in rows:
        out.append(label.ljust(label_width) + left.ljust(width) + right)
    for warning in analysis.warnings:
        out.append(f"warning: {warning}")
    return "\n".join(out)
