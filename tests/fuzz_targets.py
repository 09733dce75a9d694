"""Fuzz targets: every parser reachable from outside, its documented error type, its formatter.

One `Target` per parser: ``parse`` takes text (the form the outside sends), raises only
``errors`` for bad input, and returns a value; where the parser has a formatter, ``format``
writes a value back to text and ``parse(format(parse(x))) == parse(x)`` must hold (``same``
compares the two readings). ``seeds`` are valid inputs taken from the test data; `mutate` turns
a seed into a hostile variant (a seeded mutation generator: the same seed, the same text).

Used twice: ``tests/test_fuzz.py`` runs a bounded number of hypothesis examples per target in
CI, and ``bench/fuzz.py`` runs a large campaign and prints a table per parser. A crasher that
either finds goes into that target's ``regressions`` for good.
"""

from __future__ import annotations

import ast
import asyncio
import dataclasses
import functools
import json
import logging
import math
import os
import random
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

import msgpack

from bgbot.core.errors import FormatError, IllegalAction
from bgbot.core.position import Play, Position
from bgbot.formats.anyid import read_any
from bgbot.formats.fibsboard import Dialect, format_board, parse_board
from bgbot.formats.gnubgid import (
    decode_gnubgid,
    decode_match_id,
    encode_gnubgid,
    encode_match_id,
)
from bgbot.formats.mat import format_match, parse_match
from bgbot.formats.notation import format_fibs_move, parse_fibs_move
from bgbot.formats.xgid import decode_xgid, encode_xgid, gnubg_to_xgid

HERE = Path(__file__).resolve().parent
SHARED = Path(os.environ.get("BGBOT_SHARED", HERE.parents[1] / "shared"))
TESTDATA = SHARED / "testdata"
REPO = HERE.parent

logging.getLogger("bgbot").setLevel(logging.CRITICAL)  # bad input is logged: millions of lines

ACCEPTED, REJECTED, OTHER, ROUND_TRIP = "accepted", "rejected", "other exception", "round-trip"


class Bug(AssertionError):
    """The target misbehaved: an undocumented exception, a round-trip failure, or (for a
    session) an answer that admits an internal failure."""


@dataclass
class Target:
    """One parser under fuzz."""

    name: str
    group: str
    """id | notation | board | mat | clip | bgammon | session | protocol | config (campaign
    sizes)."""
    parse: Callable[[str], Any]
    seeds: Callable[[], list[str]]
    errors: tuple[type[BaseException], ...] = (FormatError,)
    format: Callable[[Any], str] | None = None
    same: Callable[[Any, Any], bool] = staticmethod(lambda a, b: bool(a == b))  # type: ignore[assignment]
    regressions: Sequence[str] = ()
    """Inputs that broke this parser before issue 17 (each a permanent example; every one
    fails on the code before the fixes)."""
    alphabet: str = ""
    """Characters this input is made of, for mutations (the seeds' own are always used)."""
    notes: dict[str, Any] = field(default_factory=dict)

    def check(self, text: str) -> str:
        """ACCEPTED or REJECTED; raises `Bug` for anything else."""
        try:
            value = self.parse(text)
        except self.errors:
            return REJECTED
        except Exception as exc:
            raise Bug(f"{self.name}: {type(exc).__name__}: {str(exc)[:300]} on {text[:300]!r}") \
                from exc
        if self.format is not None:
            try:
                written = self.format(value)
                again = self.parse(written)
            except Exception as exc:
                raise Bug(f"{self.name}: round trip failed ({type(exc).__name__}: "
                          f"{str(exc)[:200]}) on {text[:300]!r}") from exc
            if not self.same(value, again):
                raise Bug(f"{self.name}: parse(format(parse(x))) != parse(x) for {text[:300]!r}"
                          f" (written {written[:300]!r})")
        return ACCEPTED


# ----------------------------------------------------------------------------- mutations

_HOSTILE = [
    "", " ", "\x00", "\n", "\r\n", "\t", "-", "+", ":", "/", "*", "(", ")", "=", ",", ";",
    "0", "00", "1", "-1", "65", "64", "99", "255", "256", "32768", "4294967296",
    "18446744073709551617", "9" * 30, "9" * 5000, "0" * 40 + "7", "1e308", "nan", "inf",
    "\u00b2", "\u0663", "\uff11", "\u00e9", "\U0001f600", "\ufeff", "\udc80", "'", '"', "\\",
    "[" * 2000, "{" * 50, "true", "null", "bar", "off", "XGID=", "board:", "gnubgid ",
    "\x91" * 1100 + "\xc0", "\x81\xa1k" * 1000 + "\xc0", "{a = " * 3000, "\x00\n",
]


def mutate(seed: str, rng: random.Random, alphabet: str = "", others: Sequence[str] = ()) -> str:
    """A hostile variant of ``seed``: 1..4 random edits (flip, insert, delete, duplicate,
    splice from ``others``, hostile tokens, digit runs grown huge), as ``rng`` decides."""
    text = seed
    chars = alphabet + (seed if seed else "ab")
    for _ in range(rng.choice((1, 1, 1, 2, 2, 3, 4))):
        n = len(text)
        at = rng.randrange(n + 1)
        kind = rng.randrange(10)
        if kind == 0 and n:  # replace one character
            i = rng.randrange(n)
            text = text[:i] + rng.choice(chars) + text[i + 1:]
        elif kind == 1:  # insert a character of the input's own kind
            text = text[:at] + rng.choice(chars) + text[at:]
        elif kind == 2 and n:  # delete a span
            end = min(n, at + rng.choice((1, 1, 2, 5, 20, n)))
            text = text[:at] + text[end:]
        elif kind == 3 and n:  # duplicate a span
            end = min(n, at + rng.choice((1, 3, 10, 40)))
            text = text[:end] + text[at:end] + text[end:]
        elif kind == 4:  # a hostile token
            token = rng.choice(_HOSTILE)
            if rng.random() < 0.5 and n:
                end = min(n, at + rng.randrange(1, 4))
                text = text[:at] + token + text[end:]
            else:
                text = text[:at] + token + text[at:]
        elif kind == 5:  # a digit run made huge or changed
            runs = [i for i in range(n) if text[i].isdigit() and (i == 0 or not text[i - 1].isdigit())]
            if runs:
                i = rng.choice(runs)
                j = i
                while j < n and text[j].isdigit():
                    j += 1
                text = text[:i] + rng.choice(("9" * rng.randrange(5, 6000), str(rng.randrange(-3, 300)),
                                              str(rng.getrandbits(70)), "0" * 20 + text[i:j])) + text[j:]
        elif kind == 6 and others:  # splice with another seed
            other = rng.choice(others)
            cut = rng.randrange(len(other) + 1)
            text = text[:at] + other[cut:]
        elif kind == 7 and n:  # swap two characters
            i, j = rng.randrange(n), rng.randrange(n)
            chars_list = list(text)
            chars_list[i], chars_list[j] = chars_list[j], chars_list[i]
            text = "".join(chars_list)
        elif kind == 8 and n:  # truncate
            text = text[:at]
        elif kind == 9 and n:  # a random byte-ish character
            i = rng.randrange(n)
            text = text[:i] + chr(rng.choice((rng.randrange(0, 128), rng.randrange(128, 0x3000)))) + text[i + 1:]
    return text


# ----------------------------------------------------------------------------- seeds


def _jsonl(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    with path.open() as handle:
        return [json.loads(line) for line in handle]


@functools.cache
def _id_records() -> list[dict[str, Any]]:
    return _jsonl(TESTDATA / "ids.jsonl")


@functools.cache
def _move_records() -> list[tuple[str, tuple[int, int], list[str]]]:
    """(position id, dice, the legal plays in gnubg notation) of the gnubg move records."""
    found = []
    for record in _jsonl(TESTDATA / "legal-moves.jsonl")[:400]:
        position = Position.from_position_id(record["position_id"])
        dice = (int(record["dice"][0]), int(record["dice"][1]))
        found.append((record["position_id"], dice, [str(p) for p in position.legal_plays(dice)]))
    return found


def _string_constants(*names: str) -> list[str]:
    """Every string constant in the named test modules (their example lines)."""
    found: list[str] = []
    for name in names:
        tree = ast.parse((HERE / name).read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes)):
                value = node.value.decode("latin-1") if isinstance(node.value, bytes) else node.value
                found.append(value)
            elif isinstance(node, ast.JoinedStr):
                continue
    return found


@functools.cache
def _board_lines(dialect: Dialect) -> list[str]:
    if dialect is Dialect.GNUBG:
        lines = [r["line"] for r in _jsonl(HERE / "data" / "gnubg_player_requests.jsonl")]
    else:
        lines = [s.strip().strip("\x00").strip() for s in
                 _string_constants("test_fibsboard.py", "test_fibs_clip.py", "fibs_standin.py")
                 if s.startswith("board:")]
    good = []
    for line in dict.fromkeys(lines):
        try:
            parse_board(line, dialect)
        except FormatError:
            continue
        good.append(line)
    return good[:300]


def _ids(key: str) -> Callable[[], list[str]]:
    return lambda: [r[key] for r in _id_records()]


def _xgids() -> list[str]:
    found = []
    for record in _id_records():
        position, state = decode_gnubgid(record["gnubgid"])
        try:
            found.append(encode_xgid(gnubg_to_xgid(position, state)))
        except FormatError:
            continue
    return found


def _move_seeds() -> list[str]:
    return [f"{pid} {d1}{d2} {text}" for pid, (d1, d2), plays in _move_records() for text in plays[:3]]


def _fibs_move_seeds() -> list[str]:
    found = []
    for pid, dice, _ in _move_records()[:200]:
        position = Position.from_position_id(pid)
        for play in position.legal_plays(dice)[:2]:
            direction = random.Random(pid).choice((1, -1))
            found.append(f"{pid} {dice[0]}{dice[1]} {direction} {format_fibs_move(play, direction)}")
    return found


@functools.cache
def _mat_seeds() -> list[str]:
    """Short match files: the header and first games of each gnubg record."""
    found = []
    for path in sorted((TESTDATA / "matches").glob("*.mat")):
        text = path.read_text(encoding="utf-8", errors="replace")
        games = text.split("\n Game ")
        lines = "\n Game ".join(games[:2]).split("\n")
        found.append("\n".join(lines[:14]) + "\n")  # short: a campaign reads 200,000 of them
        found.append("\n".join(lines[:30]) + "\n")
    return found


def _clip_seeds() -> list[str]:
    found = []
    for s in _string_constants("test_fibs_clip.py", "fibs_standin.py"):
        try:
            _clip_parse(s)
        except FormatError:
            continue
        found.append(s)
    return list(dict.fromkeys(found))[:400]


def _bgammon_seeds() -> list[str]:
    found = [s for s in _string_constants("test_bgammon_protocol.py", "bgammon_standin.py")
             if s.startswith(("{", "hello"))]
    found += [s for s in _string_constants("test_bgammon_frontend.py") if s.startswith("{")]
    good = []
    for s in dict.fromkeys(found):
        try:
            _bgammon_parse(s)
        except FormatError:
            continue
        good.append(s)
    return good[:400]


# ----------------------------------------------------------------------------- parsers


def _parse_move(text: str) -> tuple[Position, tuple[int, int], Play]:
    pid, dice_text, move = (text.split(" ", 2) + ["", ""])[:3]
    position = Position.from_position_id(pid)
    if len(dice_text) != 2 or not dice_text.isascii() or not dice_text.isdigit():
        raise FormatError("dice", dice_text, "two digits")
    dice = (int(dice_text[0]), int(dice_text[1]))
    return position, dice, Play.parse(move, position, dice)


def _format_move(value: tuple[Position, tuple[int, int], Play]) -> str:
    position, dice, play = value
    return f"{position.position_id()} {dice[0]}{dice[1]} {play}"


def _parse_fibs(text: str) -> tuple[Position, tuple[int, int], int, Play]:
    pid, dice_text, direction_text, move = (text.split(" ", 3) + ["", "", ""])[:4]
    position = Position.from_position_id(pid)
    if len(dice_text) != 2 or not dice_text.isascii() or not dice_text.isdigit():
        raise FormatError("dice", dice_text, "two digits")
    if direction_text not in ("1", "-1"):
        raise FormatError("direction", direction_text, "1 or -1")
    dice = (int(dice_text[0]), int(dice_text[1]))
    direction = int(direction_text)
    return position, dice, direction, parse_fibs_move(move, position, dice, direction)


def _format_fibs(value: tuple[Position, tuple[int, int], int, Play]) -> str:
    position, dice, direction, play = value
    return f"{position.position_id()} {dice[0]}{dice[1]} {direction} {format_fibs_move(play, direction)}"


def _mat_same(a: Any, b: Any) -> bool:
    """Two readings of a match agree on its rules and what was played (names are the writer's
    business)."""
    def action(a: Any) -> Any:  # the writer puts the higher die first, as gnubg does
        dice = getattr(a, "dice", None)
        fields = [f.name for f in dataclasses.fields(a)]
        return (type(a).__name__, tuple(sorted(dice)) if dice else None,
                *(getattr(a, k) for k in fields if k != "dice"))

    def plays(record: Any) -> list[Any]:
        return [(g.number, g.score, g.crawford, [action(a) for a in g.actions], g.outcome)
                for g in record.games]
    return bool(a.length == b.length and a.rules == b.rules and plays(a) == plays(b))


def _clip_parse(text: str) -> Any:
    from bgbot.frontends.fibs import clip

    event = clip.parse_line(text)  # never raises, by contract: Unknown stands for "rejected"
    if isinstance(event, clip.Unknown):
        raise FormatError("CLIP line", text[:80], "not a line bgbot understands")
    return event


def _bgammon_parse(text: str) -> Any:
    from bgbot.frontends.bgammon.protocol import parse_event

    return parse_event(text)


# ------------------------------------------------------------------ the sessions (stateful)

_LOOP: asyncio.AbstractEventLoop | None = None


def _loop() -> asyncio.AbstractEventLoop:
    global _LOOP
    if _LOOP is None:
        _LOOP = asyncio.new_event_loop()
    return _LOOP


@functools.cache
def _ubgi_session() -> Any:
    from bgbot.frontends.ubgi import UbgiSession

    _heuristic()  # the shared tables, built once
    return UbgiSession("heuristic")


def _ubgi_script(text: str) -> list[str]:
    """Each line of ``text`` sent to one UBGI engine session (a `Bug` if an answer admits an
    internal failure; REJECTED if any answer is an error line)."""
    session = _ubgi_session()
    answers: list[str] = []
    for line in text.split("\n")[:20]:
        if line.strip() == "quit":
            continue
        replies = _loop().run_until_complete(session.handle(line))
        for reply in replies:
            if "engine failure" in reply or "failed to start" in reply:
                raise Bug(f"ubgi: {reply!r} after {line[:200]!r}")
            if "\n" in reply:
                raise Bug(f"ubgi: a reply with a newline: {reply[:200]!r}")
        answers.extend(replies)
    session.finished = False
    if any(a.startswith("error ") for a in answers):
        raise FormatError("ubgi", text[:80], "an error line was answered")
    return answers


def _ubgi_seeds() -> list[str]:
    scripts: list[str] = []
    current: list[str] = []
    for line in (HERE / "ubgi_conformance" / "exchanges.txt").read_text().splitlines():
        if line.startswith("=="):
            if current:
                scripts.append("\n".join(current))
            current = []
        elif line.startswith("> "):
            current.append(line[2:])
    if current:
        scripts.append("\n".join(current))
    positions = [r["gnubgid"] for r in _id_records()[:60]]
    for gid in positions:
        scripts.append(f"newgame\nposition gnubgid {gid}\ndice 3 1\ngo\ngo cube\ngo take")
    return scripts


@functools.cache
def _heuristic() -> Any:
    """The heuristic agent, warmed up: its 64-point match equity table is built on the first
    long match (seconds, once per process), which is not the parser's time."""
    from bgbot.core.context import Context
    from bgbot.deciders import create_agent

    agent = create_agent("heuristic")
    _loop().run_until_complete(agent.take_decision(
        Position.initial(), Context(cube_value=2, match_length=64, my_score=3, opponent_score=1)))
    return agent


def _gnubg_line(text: str) -> Any:
    """One request line to a fresh gnubg external-player session (our seat comes from it)."""
    from bgbot.frontends.gnubg_session import PlayerSession

    reply = _loop().run_until_complete(PlayerSession(_heuristic()).respond(text))
    if reply.is_error:
        if "failed" in reply.text and "agent" in reply.text:
            raise Bug(f"gnubg session: {reply.text!r}")
        raise FormatError("gnubg request", text[:80], reply.text)
    return reply


# ------------------------------------------------------------------ the daemon's protocol


def _frames_text(frames: Sequence[bytes]) -> str:
    return "\x1e".join(bytes(f).decode("latin-1") for f in frames)


def _protocol_seeds() -> list[str]:
    found = []
    for path in sorted((REPO / "protocol" / "fixtures").glob("*_request.msgpack")):
        frames = msgpack.unpackb(path.read_bytes())
        found.append(_frames_text(frames))
    return found


def _protocol_parse(text: str) -> Any:
    """The frames after the routing identities (\\x1e between frames, latin-1) as the daemon
    reads them: envelope, schema, and a decision or rollout request's contents."""
    from bgbot.daemon.protocol import Signer
    from bgbot.daemon.wire import decision_request, rollout_request

    frames = [part.encode("latin-1", "replace") for part in text.split("\x1e")]
    message = Signer(None, replay_window=math.inf).deserialize(frames)
    if message.msg_type in ("choose_play_request", "cube_decision_request",
                            "take_decision_request", "resign_decision_request",
                            "evaluate_request"):
        return message, decision_request(message.msg_type, message.content)
    if message.msg_type == "rollout_request":
        return message, rollout_request(message.content)
    return message, None


def _protocol_format(value: Any) -> str:
    """The message written again as a correct writer writes it (unsigned)."""
    from bgbot.daemon.protocol import Signer

    return _frames_text(Signer(None).serialize(value[0]))


def _nested_requests() -> list[str]:
    """Every request type with each of its fields nested 1,010 deep (a list, and a map):
    the daemon used to answer nothing to these (a RecursionError naming the value)."""
    from bgbot.daemon.protocol import REQUEST_TYPES, Message, Signer, _schema

    found = []
    for msg_type in sorted(REQUEST_TYPES):
        for name in list(_schema().messages[msg_type].get("properties", {})) or ["extra"]:
            for as_map in (False, True):
                value: Any = "x"
                for _ in range(1010):
                    value = {"k": value} if as_map else [value]
                message = Message(msg_type, {name: value}, "0" * 32, None, 1767225600.25, "1.3")
                try:
                    found.append(_frames_text(Signer(None).serialize(message)))
                except Exception:  # msgpack will not write it: nothing to send
                    continue
    return found


# ------------------------------------------------------------------ decisions on positions

_LONG_IDS = [
    "4HPwATDgc/ABMA:cAkgCDAACAAA", "4HPwATDgc/ABMA:cAlgDAAAAAAA", "4HPwATDgc/ABMA:cAng/68AGAAA",
    "4HPwATDgc/ABMA:cIk2CBAAEAAA", "4HPwATDgc/ABMA:cIl2DBAAEAAA",
    "XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0:65:10",
    "XGID=-b----E-C---eE---c-e----B-:0:0:1:52:3:1:0:99:10",
    "XGID=-b----E-C---eE---c-e----B-:0:0:1:D:3:1:0:99:10",
    "4HPwATDgc/ABMA:cAmgAFAAEAAA", "4HPwATDgc/ABMA:cAngACAAOAAA",
    "XGID=-b----E-C---eE---c-e----B-:0:0:1:00:5:0:0:5:10",
]
"""Matches longer than 64 points in every id kind (gnubg id, XGID; rolled, doubled), and
scores at the match length: decisions on them used to fail inside the match equity table."""
_LONG_BOARDS = [
    "board:You:carol:99:0:0:0:-2:0:0:0:0:5:0:3:0:0:0:-5:5:0:0:0:-3:0:-5:0:0:0:0:2:0:1:3:1:"
    "0:0:1:1:1:0:1:-1:0:25:0:0:0:0:2:0:0:0",
    "board:You:carol:65:3:1:0:-2:0:0:0:0:5:0:3:0:0:0:-5:5:0:0:0:-3:0:-5:0:0:0:0:2:0:1:0:0:"
    "0:0:1:1:1:0:1:-1:0:25:0:0:0:0:2:0:0:0",
]


def _decisions_parse(text: str) -> Any:
    """Every decision the daemon answers on a position text, by the heuristic player at
    0-ply in this process (`bgbot.daemon.decisions.answer`): a refusal must be the client's
    fault (``bad_value``), never ``internal`` nor ``unsupported`` (the agent ranks and
    evaluates everything)."""
    from bgbot.daemon.decisions import answer
    from bgbot.daemon.protocol import ErrorCode, ProtocolError

    agents = _decision_agents()
    answers = []
    asks: list[tuple[str, dict[str, Any]]] = [
        ("evaluate_request", {}), ("cube_decision_request", {}), ("take_decision_request", {}),
        ("resign_decision_request", {}), ("resign_decision_request", {"offered": 2}),
        ("choose_play_request", {"candidates": 4})]
    for msg_type, extra in asks:
        content = {"position": text, **extra}
        try:
            answers.append(_loop().run_until_complete(answer(
                msg_type, content, agents, default_agent="heuristic")))
        except ProtocolError as exc:
            if exc.code in (ErrorCode.INTERNAL, ErrorCode.UNSUPPORTED):
                raise Bug(f"{msg_type}: {exc.code.value}: {exc.message}") from exc
            answers.append(exc.code.value)
    if all(isinstance(a, str) for a in answers):
        raise ProtocolError(ErrorCode.BAD_VALUE, f"every decision refused: {answers[0]}")
    return answers


@functools.cache
def _decision_agents() -> Any:
    from bgbot.daemon.decisions import AgentCache

    _heuristic()  # the tables, built once
    return AgentCache()


def _decision_seeds() -> list[str]:
    return (_ids("gnubgid")()[:150] + _xgids()[:100] + _ids("position_id")()[:30])


def _hint_parse(text: str) -> Any:
    """What `bgbot hint` does with a position text: read it with its context, then the
    heuristic player's cube advice and, when dice were rolled, its ranking of the plays."""
    from bgbot.cli._position import read_situation, ranked_plays

    situation = read_situation(text)
    agent = _heuristic()
    player = agent.player
    advice = player.should_double(situation.position, situation.context) \
        if situation.context.may_double() else None
    ranked = ranked_plays(player, situation, situation.dice) if situation.dice else []
    return advice, [str(r.play) for r in ranked]


# ------------------------------------------------------------------ readers of streams


def _clip_stream(text: str) -> Any:
    """Text as a FIBS server sends it, read 64 KiB at a time through `clip.LineSplitter`
    (linear, lines above 16 KiB dropped) and parsed line by line (`parse_line` never
    raises: a stream is always read)."""
    from bgbot.frontends.fibs import clip

    splitter = clip.LineSplitter()
    data = text.encode("utf-8", "surrogateescape")
    lines = []
    for start in range(0, len(data), 65536):
        lines += splitter.feed(data[start:start + 65536])
    lines += splitter.flush()
    if any(len(line.encode("utf-8", "surrogateescape")) > clip.MAX_LINE for line in lines):
        raise Bug("a line above the cap came out of the splitter")
    return [clip.parse_line(line) for line in lines]


def _stream_seeds() -> list[str]:
    return ["\r\n".join(_clip_seeds()[i:i + 20]) + "\r\n" for i in range(0, 400, 20)]


# ------------------------------------------------------------------ the daemon's configuration


def _config_parse(text: str) -> Any:
    from bgbot.daemon.config import parse_config

    return parse_config(text, file="bgbot.toml", environ={})


def _config_seeds() -> list[str]:
    template = (REPO / "config" / "bgbot.toml").read_text()
    switched_on = re.sub(r"^# ([a-z_]+ = .*)$", r"\1", template, flags=re.M)
    examples = re.sub(r"^#(\[\[|[a-z_]+ = )", r"\1", template, flags=re.M)
    candidates = [template, switched_on, examples]
    candidates += [s for s in _string_constants("test_daemon_config.py")
                   if "=" in s and "\n" in s and len(s) < 2000]
    found = []
    for text in dict.fromkeys(candidates):
        try:
            _config_parse(text)
        except Exception:
            continue
        found.append(text)
    return found


# ----------------------------------------------------------------------------- the targets

_B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/="
_DIGITS = "0123456789-:"


def targets() -> list[Target]:
    """Every fuzz target, in the table's order."""
    from bgbot.daemon.protocol import ProtocolError

    big = "9" * 5000
    from bgbot.daemon.config import ConfigError
    from bgbot.core.errors import BgbotError

    long_line = "x" * (4 << 20)
    return [
        Target("position id", "id", Position.from_position_id, _ids("position_id"),
               format=lambda p: p.position_id(), alphabet=_B64),
        Target("match id", "id", decode_match_id, _ids("match_id"), format=encode_match_id,
               alphabet=_B64),
        Target("gnubg id", "id", decode_gnubgid, _ids("gnubgid"),
               format=lambda v: encode_gnubgid(*v), alphabet=_B64 + ": "),
        Target("xgid", "id", decode_xgid, _xgids, format=encode_xgid,
               alphabet="-abcdefghijklmnoABCDEFGHIJKLMNO0123456789:XGID=",
               regressions=[f"XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0:{big}:10"]),
        Target("any id", "id", read_any,
               lambda: _ids("gnubgid")()[:100] + _ids("position_id")()[:100] + _xgids()[:100]
               + _board_lines(Dialect.FIBS)[:50],
               alphabet=_B64 + ":-XGID=board"),
        Target("gnubg move text", "notation", _parse_move, _move_seeds, format=_format_move,
               errors=(FormatError, IllegalAction), alphabet="0123456789/*() bar off,-",
               regressions=[f"4HPwATDgc/ABMA 31 {big}/5 6/5", f"4HPwATDgc/ABMA 31 8/5({big})"]),
        Target("fibs move text", "notation", _parse_fibs, _fibs_move_seeds, format=_format_fibs,
               errors=(FormatError, IllegalAction), alphabet="0123456789- barof"),
        Target("board line (gnubg)", "board", lambda t: parse_board(t, Dialect.GNUBG),
               lambda: _board_lines(Dialect.GNUBG), format=format_board, alphabet=_DIGITS,
               regressions=["board:gnubg:bgbot:" + big + ":0:0" + ":0" * 47]),
        Target("board line (fibs)", "board", lambda t: parse_board(t, Dialect.FIBS),
               lambda: _board_lines(Dialect.FIBS), format=format_board, alphabet=_DIGITS),
        Target(".mat", "mat", parse_match, _mat_seeds, format=format_match, same=_mat_same,
               alphabet="0123456789:/ ()*\nGame point match Doubles Takes Drops Wins",
               regressions=[f"{big} point match\n", f"5 point match\n\n Game {big}\n",
                            f"5 point match\n\n Game 1\n a : {big}   b : 0\n",
                            f"5 point match\n\n Game 1\n a : 0   b : 0\n  {big}) 31: 8/5 6/5\n",
                            '; [CubeLimit "\u00b2"]\n5 point match\n']),
        Target("CLIP line", "clip", _clip_parse, _clip_seeds,
               alphabet="0123456789 abcdefghijklmnopqrstuvwxyz.:*",
               regressions=["12 alice " + long_line[:1 << 20]]),
        Target("CLIP stream", "clip", _clip_stream, _stream_seeds, errors=(),
               alphabet="0123456789 abcdefghijklmnopqrstuvwxyz.:*\r\n\xff\xfb",
               regressions=[long_line, long_line + "\r\nlogin: ", "\r\n" * 100_000,
                            "board:" + ":0" * 200_000]),
        Target("bgammon event", "bgammon", _bgammon_parse, _bgammon_seeds,
               alphabet='{}[]":,0123456789-.truefalsnl',
               regressions=["[" * 1000, '{"a":' * 5000, '{"type":"say","message":"'
                            + long_line[:1 << 20] + '"}']),
        Target("UBGI engine", "session", _ubgi_script, _ubgi_seeds,
               alphabet="0123456789 abcdefghijklmnopqrstuvwxyz./:\n",
               regressions=["set engine.seed 18446744073709551617\nisready",
                            f"position xgid XGID=-b----E-C---eE---c-e----B-:0:0:1:31:0:0:0:{big}:10",
                            "position xgid XGID=-b----E-C---eE---c-e----B-:0:0:1:31:0:0:0:100:10\ngo"]),
        Target("gnubg external player", "session", _gnubg_line,
               lambda: _board_lines(Dialect.GNUBG), alphabet=_DIGITS,
               regressions=["board:gnubg:bgbot:100:0:0:0:-1:-1:0:0:0:5:0:3:0:0:0:-4:5:0:0:-1:-3:0:"
                            "-5:0:0:0:0:2:0:1:4:2:4:2:2:0:1:0:1:-1:0:25:0:0:0:0:0:0:0:1",
                            "board:gnubg:bgbot:65:0:0:0:-1:-1:0:0:0:5:0:3:0:0:0:-4:5:0:0:-1:-3:0:"
                            "-5:0:0:0:0:2:0:1:4:2:4:2:2:0:1:0:1:-1:0:25:0:0:0:0:0:0:0:1",
                            "board:gnubg:bgbot:" + "9" * 5000 + long_line[:100_000]]),
        Target("protocol message", "protocol", _protocol_parse, _protocol_seeds,
               errors=(ProtocolError,), format=_protocol_format,
               same=lambda a, b: bool(a[0] == b[0]), alphabet="\x00\x01\x7f\x80\x90\xa0\xc0\xc2\xc3\xcb"
               "\xcc\xd0\xd9\xdc\xde\xff0123456789abcdef_\x91\x81",
               regressions=_nested_requests()),
        Target("decisions", "session", _decisions_parse, _decision_seeds,
               errors=(ProtocolError,), alphabet=_B64 + ":-XGID=0123456789D",
               regressions=_LONG_IDS),
        Target("hint", "session", _hint_parse,
               lambda: _decision_seeds()[:120] + _board_lines(Dialect.FIBS)[:40],
               errors=(BgbotError,), alphabet=_B64 + ":-XGID=board0123456789",
               regressions=_LONG_IDS + _LONG_BOARDS),
        Target("config file", "config", _config_parse, _config_seeds, errors=(ConfigError,),
               alphabet='[]{}=".,# \nabcdefghijklmnopqrstuvwxyz_0123456789',
               regressions=["x = " + "{a = " * 5000 + "1" + "}" * 5000,
                            "x = " + "[" * 5000 + "]" * 5000,
                            '[daemon]\nstate_dir = "/tmp/a\\u0000b"\n',
                            "[limits]\nmatch_workers = 100000\n",
                            "[limits]\nmax_matches = 100000000000000000000000\n",
                            "[limits]\ndecision_timeout = nan\n",
                            "[limits]\nmax_matches = " + "9" * 5000 + "\n",
                            "[[agents.named]]\nname = \"x\"\nspec = \"human\"\n"]),
    ]


def target(name: str) -> Target:
    """The target called ``name``."""
    for t in targets():
        if t.name == name:
            return t
    raise KeyError(name)


def timed_check(t: Target, text: str) -> tuple[str, float]:
    """`Target.check` (a `Bug` becomes OTHER or ROUND_TRIP) and the seconds it took."""
    started = time.perf_counter()
    try:
        outcome = t.check(text)
    except Bug as bug:
        outcome = ROUND_TRIP if "round trip" in str(bug) or "parse(format" in str(bug) else OTHER
        t.notes.setdefault(outcome, []).append(str(bug))
    return outcome, time.perf_counter() - started
