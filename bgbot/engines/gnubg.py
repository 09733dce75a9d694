"""GNU Backgammon as an engine bgbot asks: gnubg's ``external`` server mode (reference §3).

`GnubgEngine` is an `Agent` (an `EngineAgent`); its `GnubgProcess`, the gnubg dialect of
`bgbot.engines.process.EngineProcess`, starts and owns one headless gnubg (``gnubg -t -q -r -s
<private prefs dir>``, no rc files), sends it the evaluation settings on stdin, then the command
``external <socket>``, which makes gnubg serve FIBS ``board:`` lines on a Unix-domain socket in
a private temporary directory (gnubg 1.07 treats an argument without ``:`` as a socket path; no
port to race for). The engine asks for plays, double / no double, take / drop / beaver,
resignation answers and evaluations, one request at a time.

The board lines are written by `bgbot.formats.fibsboard` in gnubg's own dialect (we sit in
gnubg's seat 1): gnubg's server reads its own external-player lines correctly, scores included
(reference §3.5), while a FIBS-dialect line gets the scores swapped.

Guards for gnubg 1.07's quirks (reference §3):

* a request line longer than 254 characters makes gnubg abort (buffer overflow): every line is
  measured before it is sent; names are two letters;
* no pipelining: a lock keeps exactly one request in flight;
* missing trailing integers silently keep the previous request's values: all 50 are written;
* ``jacobyrule`` defaults to *on* in server mode: it is sent with every money board;
  ``crawfordrule off`` is sent when the match has no Crawford rule;
* the per-request ``beavers`` option is ignored by 1.07 (only the global ``set beavers``
  counts), so a ``beaver`` answer where beavers are not allowed is read as a take;
* the server does not check cube access and reads may-double flags 0:0 as a pending double:
  cube questions are asked only when the rules allow the action, and the flags always name
  one owner at most;
* ``plies -1`` never returns: plies are checked to be 0..`MAX_PLIES`; an integer ``noise``
  is read as 1/10000ths, so noise is always written with a decimal point;
* gnubg prints numbers with the C library, so it runs with ``LC_ALL=C`` (a comma decimal
  separator would make every evaluation unreadable).

Every answer is checked against the rules core before it is used: a play must name a legal
play of the position and dice (`parse_play`); a cube or resignation answer must be one of the
words gnubg is documented to send. An unusable answer is logged, counted in `EngineStats` and
replaced by a safe legal answer (the first legal play, no double, take, reject). Every request
has a timeout; a gnubg that died, hung or closed the connection is killed (its whole process
group), started again with the same settings, and the request is sent again, so a match goes on.

gnubg exits by itself when its connection closes: the socket lives in a directory that is
removed once connected, so gnubg's attempt to listen again fails and it reads end-of-file on
stdin. A crashed bgbot therefore leaves no gnubg behind.
"""

from __future__ import annotations

import asyncio
import logging
import math
import os
import shutil
import socket
import subprocess
import tempfile
import weakref
from typing import Any, NamedTuple, Sequence

from ..agents.base import Agent
from ..agents.spec import AgentSpec, Options, register_agent
from ..core.context import Context, CubeOwner
from ..core.errors import FormatError, IllegalAction
from ..core.notation import parse_play
from ..core.position import Play, Position
from ..formats.fibsboard import Dialect, FibsBoard, Request, Side, format_board
from ..players.base import Probabilities, TakeDecision
from .process import (
    EngineAgent,
    EngineError,
    EngineErrorReply,
    EngineNotFound,
    EngineProcess,
    EngineStats,
    EngineTerminated,
    Launch,
    LineChannel,
)

__all__ = [
    "DEFAULT_BINARY",
    "MAX_LINE",
    "MAX_PLIES",
    "GnubgEngine",
    "GnubgEvaluation",
    "GnubgProcess",
    "create",
    "find_gnubg",
    "gnubg_command",
    "gnubg_environment",
]

log = logging.getLogger("bgbot.engines.gnubg")

DEFAULT_BINARY = "/usr/games/gnubg"
MAX_LINE = 254
"""gnubg 1.07 aborts on a request line of 255 characters or more (without the newline)."""
MAX_PLIES = 4
"""Deepest look-ahead accepted; 4-ply cubeful takes about 20 s a position on a small machine."""
DEFAULT_TIMEOUTS = {0: 10.0, 1: 15.0, 2: 30.0, 3: 120.0, 4: 900.0}
"""Seconds a request may take at each ply depth before gnubg is deemed hung."""
START_TIMEOUT = 15.0
RETRIES = 2
"""How often a request is sent again (to a restarted gnubg) after a crash or a time-out."""
_MY_SEAT = 1
"""We write every board from gnubg's seat 1 (positive chequers, colour 1)."""
_NAMES = ("me", "op")
_CUBE_SIDE = {CubeOwner.CENTRE: None, CubeOwner.ME: Side.ME, CubeOwner.OPPONENT: Side.OPPONENT}


def find_gnubg(binary: str | None = None) -> str | None:
    """The gnubg executable to run: ``binary``, else $BGBOT_GNUBG, else `DEFAULT_BINARY` or PATH."""
    candidates = [binary] if binary else [os.environ.get("BGBOT_GNUBG"), DEFAULT_BINARY, "gnubg"]
    for candidate in candidates:
        if not candidate:
            continue
        found = shutil.which(candidate)
        if found:
            return found
    return None


def gnubg_environment(home: str) -> dict[str, str]:
    """The environment gnubg runs in: the C locale (``.`` decimal point) and a private home."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("LC_")}
    env.update(LC_ALL="C", LANG="C", LANGUAGE="C", HOME=home)
    env.pop("DISPLAY", None)
    return env


def private_directory(prefix: str) -> str:
    """A fresh directory only we can use, short enough to hold a Unix socket path (< 108 bytes)."""
    directory = tempfile.mkdtemp(prefix=prefix)
    if len(directory) > 80:  # a long $TMPDIR: fall back to /tmp for the socket's sake
        shutil.rmtree(directory, ignore_errors=True)
        directory = tempfile.mkdtemp(prefix=prefix, dir="/tmp")
    return directory


def gnubg_command(binary: str, prefs: str) -> list[str]:
    """gnubg without GUI, sound or rc files, with its preferences in ``prefs``."""
    return [binary, "-t", "-q", "-r", "-s", prefs]


# --------------------------------------------------------------------------- evaluations


class GnubgEvaluation(NamedTuple):
    """gnubg's answer to ``evaluation fibsboard``: chances and equity for the side on roll.

    ``equity`` is the match-winning chance (0..1) in match play; in money play the money
    equity for a 1-cube, cubeful or cubeless as asked.
    """

    probabilities: Probabilities
    equity: float
    cubeful: bool
    plies: int
    match_play: bool


# --------------------------------------------------------------------------- the process


def _check_line(line: str) -> None:
    """Refuse a line gnubg would crash on or misread."""
    if "\n" in line or "\r" in line or "\x00" in line:
        raise FormatError("gnubg request", line, "one line without line breaks or NUL bytes")
    if len(line) > MAX_LINE:
        raise FormatError("gnubg request", line,
                          f"{len(line)} characters; gnubg 1.07 aborts above {MAX_LINE}")
    if not line.strip() or not line.isascii():
        raise FormatError("gnubg request", line, "a non-empty line of ASCII text")


def _text(raw: bytes) -> str:
    return raw.decode("ascii", errors="replace").replace("\x00", "").strip("\r\n")


class GnubgProcess(EngineProcess):
    """One headless gnubg in ``external`` server mode, on a Unix socket (the gnubg dialect).

    ``setup`` are the gnubg commands sent on stdin before ``external`` (at every start, so a
    restarted gnubg has the same settings); gnubg's stdout and stderr are only logged. `ask`
    sends one line and returns gnubg's one-line reply.
    """

    label = "gnubg"
    log = log
    stderr_level = logging.WARNING
    line_limit = 65536

    def __init__(
        self,
        setup: Sequence[str] = (),
        *,
        binary: str | None = None,
        start_timeout: float = START_TIMEOUT,
        retries: int = RETRIES,
        stats: EngineStats | None = None,
    ) -> None:
        super().__init__(start_timeout=start_timeout, retries=retries, stats=stats)
        self.setup = tuple(setup)
        self.binary = binary
        self.version: str | None = None
        self._directory: str | None = None
        self._remove_directory: weakref.finalize[..., Any] | None = None
        self._generation = 0
        self._socket_dir = ""

    @property
    def title(self) -> str:
        return f"gnubg {self.version}" if self.version else "gnubg"

    async def ask(self, line: str, timeout: float) -> str:
        """Send ``line``, return gnubg's reply without its line end (`EngineProcess.request`:
        restarts and sends again after a crash or time-out). An ``Error`` reply raises
        `EngineErrorReply` at once."""
        _check_line(line)

        async def exchange(channel: LineChannel) -> str:
            channel.discard()
            await channel.write(line.encode("ascii") + b"\n")
            reply = _text(await channel.readline())
            if reply.startswith("Error"):
                raise EngineErrorReply(line, reply, engine="gnubg")
            return reply

        return await self.request(exchange, timeout, line)

    def _launch_spec(self) -> Launch:
        binary = find_gnubg(self.binary)
        if binary is None:
            raise EngineNotFound(f"GNU Backgammon not found (looked for {self.binary or DEFAULT_BINARY}"
                                 "; set BGBOT_GNUBG or install gnubg)")
        if self._directory is None:
            self._directory = private_directory("bgbot-gnubg-")
            # removed on close, or at the latest when the engine is collected or Python exits
            self._remove_directory = weakref.finalize(self, shutil.rmtree, self._directory, True)
        self._generation += 1
        prefs = os.path.join(self._directory, "prefs")
        os.makedirs(prefs, exist_ok=True)
        self._socket_dir = os.path.join(self._directory, f"socket-{self._generation}")
        os.makedirs(self._socket_dir, exist_ok=True)
        return Launch(gnubg_command(binary, prefs), env=gnubg_environment(self._directory),
                      cwd=self._directory)

    async def _open(self, process: subprocess.Popen[bytes]) -> LineChannel:
        """Send the settings and ``external <socket>`` on stdin, then connect to the socket."""
        assert process.stdin is not None and process.stdout is not None
        path = os.path.join(self._socket_dir, "gnubg.sock")
        self._drain(process.stdout, "stdout", lambda: logging.DEBUG)
        try:
            # Small enough for the pipe buffer, so this never blocks; gnubg reads end-of-file
            # only once `external` returns, and then exits.
            process.stdin.write(("\n".join([*self.setup, f"external {path}"]) + "\n").encode())
            process.stdin.close()
        except OSError:
            pass  # it died at once: the connection below fails and says so
        loop = asyncio.get_running_loop()
        while True:
            if process.poll() is not None:
                raise EngineTerminated(f"gnubg exited with status {process.returncode} "
                                       "before listening")
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.setblocking(False)
            try:
                await loop.sock_connect(sock, path)
            except (FileNotFoundError, ConnectionRefusedError):
                sock.close()
                await asyncio.sleep(0.02)
                continue
            except BaseException:
                sock.close()
                raise
            break
        # The socket file is not needed once connected; with its directory gone gnubg cannot
        # listen again after the connection closes, so it exits instead of lingering.
        shutil.rmtree(self._socket_dir, ignore_errors=True)
        return LineChannel(sock.fileno(), sock.fileno(), limit=self.line_limit, close=sock.close)

    async def _handshake(self, channel: LineChannel) -> None:
        """Ask ``version`` (a four-line reply) and keep the ``Software:`` value."""
        await channel.write(b"version\n")
        lines: list[str] = []
        while len(lines) < 8:
            text = _text(await channel.readline()).strip()
            lines.append(text)
            if text.startswith("Software:"):
                self.version = text.partition(":")[2].strip()
                return
        raise EngineTerminated(f"unexpected reply to 'version': {lines}")

    async def _goodbye(self, channel: LineChannel) -> None:
        """Close the connection: gnubg then exits by itself."""
        channel.close()

    def _closed(self) -> None:
        if self._remove_directory is not None:
            self._remove_directory()  # a finalizer runs once: not again at exit
            self._remove_directory = None
        self._directory = None


# --------------------------------------------------------------------------- the engine


def _timeout_for(plies: int) -> float:
    return DEFAULT_TIMEOUTS.get(plies, DEFAULT_TIMEOUTS[MAX_PLIES])


def _check_plies(plies: int) -> int:
    if isinstance(plies, bool) or not isinstance(plies, int) or not 0 <= plies <= MAX_PLIES:
        raise FormatError("plies", plies, f"gnubg look-ahead is 0..{MAX_PLIES} (plies -1 hangs "
                                          "gnubg 1.07)")
    return plies


def _check_noise(noise: float) -> float:
    if not isinstance(noise, (int, float)) or not math.isfinite(noise) or not 0 <= noise <= 1:
        raise FormatError("noise", noise, "gnubg's evaluation noise is 0..1 (a standard deviation)")
    return float(noise)


class GnubgEngine(EngineAgent):
    """GNU Backgammon as an `Agent`: gnubg decides, bgbot checks every answer (module docstring).

    ``plies`` is gnubg's look-ahead for plays and cube decisions (0 = its neural net alone);
    ``noise`` its evaluation noise (a standard deviation; gnubg's deterministic noise, a
    function of the position, so the same position always gets the same noise); ``seed`` is
    given to gnubg's random generator (``set seed``). gnubg's deterministic noise does not depend
    on that seed (gnubg 1.07 derives it from the board alone), so two engines with the same
    noise play alike whatever their seeds; runs are reproducible either way.
    ``timeout`` overrides the per-request time limit (seconds).
    """

    def __init__(
        self,
        *,
        plies: int = 0,
        noise: float = 0.0,
        seed: int = 0,
        timeout: float | None = None,
        binary: str | None = None,
        retries: int = RETRIES,
        start_timeout: float = START_TIMEOUT,
        name: str = "gnubg",
    ) -> None:
        self.plies = _check_plies(plies)
        self.noise = _check_noise(noise)
        self.seed = int(seed)
        if timeout is not None and not timeout > 0:
            raise FormatError("timeout", timeout, "a positive number of seconds")
        self.timeout = timeout
        self.name = name
        self.stats = EngineStats()
        self.process: GnubgProcess = GnubgProcess(self._setup(), binary=binary, retries=retries,
                                                  start_timeout=start_timeout, stats=self.stats)

    def __repr__(self) -> str:
        return f"GnubgEngine(plies={self.plies}, noise={self.noise}, seed={self.seed})"

    def _setup(self) -> list[str]:
        """gnubg commands that make every restart behave the same."""
        commands = ["set rng mersenne", f"set seed {self.seed}", "set jacoby off"]
        for kind in ("chequerplay", "cubedecision"):
            prefix = f"set evaluation {kind} evaluation"
            commands += [
                f"{prefix} plies {self.plies}",
                f"{prefix} cubeful on",
                f"{prefix} noise {self.noise:.6f}",
                f"{prefix} deterministic on",
            ]
        return commands

    # ----------------------------------------------------------------- requests

    async def _ask(self, line: str, plies: int) -> str | None:
        """gnubg's reply, or None (logged, counted) when gnubg could not give one."""
        try:
            return await self.process.ask(line, self.timeout or _timeout_for(plies))
        except EngineNotFound:
            raise
        except (EngineError, FormatError) as exc:
            log.error("%s: %s", self.name, exc)
            return None

    def _unusable(self, what: str, reply: str | None, fallback: object, detail: str = "") -> None:
        self.stats.unusable += 1
        log.warning("%s: unusable answer %r to a %s request%s; using %s instead", self.name,
                    reply, what, f" ({detail})" if detail else "", fallback)

    async def choose_play(self, position: Position, dice: Sequence[int], context: Context) -> Play:
        plays = position.legal_plays(dice)
        if len(plays) <= 1:
            return plays[0] if plays else Play()
        roll = (int(dice[0]), int(dice[1]))
        try:
            line = _board_line(position, context, Request.MOVE, dice=roll)
        except FormatError as exc:
            self._unusable("move", None, plays[0], f"cannot write the board: {exc}")
            return plays[0]
        reply = await self._ask(line, self.plies)
        if reply is None:
            self._unusable("move", reply, plays[0])
            return plays[0]
        try:
            return parse_play(reply.strip(), position, roll)
        except (FormatError, IllegalAction) as exc:
            self._unusable("move", reply, plays[0], str(exc))
            return plays[0]

    async def should_double(self, position: Position, context: Context) -> bool:
        if not context.may_double():
            return False  # the server does not check cube access: never ask without it
        try:
            line = _board_line(position, context, Request.ROLL_OR_DOUBLE)
        except FormatError as exc:
            self._unusable("double", None, "no double", f"cannot write the board: {exc}")
            return False
        reply = await self._ask(line, self.plies)
        word = (reply or "").strip().lower()
        if word in ("double", "roll"):
            return word == "double"
        self._unusable("double", reply, "no double")
        return False

    async def take_decision(self, position: Position, context: Context) -> TakeDecision:
        try:
            line = _board_line(position, context, Request.TAKE)
        except FormatError as exc:
            self._unusable("take", None, "take", f"cannot write the board: {exc}")
            return TakeDecision.TAKE
        reply = await self._ask(line, self.plies)
        word = (reply or "").strip().lower()
        if word == "take":
            return TakeDecision.TAKE
        if word == "drop":
            return TakeDecision.DROP
        if word == "beaver":
            rules = context.rules
            if context.is_money and rules.cube and rules.beavers:
                return TakeDecision.BEAVER
            return TakeDecision.TAKE  # 1.07 ignores `beavers off`: a beaver says "take" here
        self._unusable("take", reply, "take")
        return TakeDecision.TAKE

    async def accept_resignation(self, position: Position, context: Context, value: int) -> bool:
        if value not in (1, 2, 3):
            return False
        try:
            # The resigner is on roll; the board is written from its side.
            line = _board_line(position, context.swapped(), Request.ROLL_OR_DOUBLE)
        except FormatError as exc:
            self._unusable("resignation", None, "reject", f"cannot write the board: {exc}")
            return False
        reply = await self._ask(f"{line} resignation {value}", self.plies)
        word = (reply or "").strip().lower()
        if word in ("accept", "reject"):
            return word == "accept"
        self._unusable("resignation", reply, "reject")
        return False

    async def offer_resignation(self, position: Position, context: Context) -> int:
        """Resign only a lost race: gnubg sees no winning chance left (cubeless, as printed).

        Offers the level that costs nothing against playing on: single, or gammon /
        backgammon when gnubg sees it as certain (gammons count single under Jacoby with a
        centred cube). With contact the nets are never proof, so never.
        """
        if position.is_contact():
            return 0
        mine, theirs = position.pip_counts()
        if mine <= theirs:
            return 0  # cheap pre-check: the side ahead in a race can still win
        try:
            evaluation = await self.evaluate(position, context)
        except EngineError as exc:
            log.warning("%s: no evaluation for a resignation (%s); playing on", self.name, exc)
            return 0
        chances = evaluation.probabilities
        if chances.win > 0.0:
            return 0
        rules = context.rules
        if context.is_money and rules.jacoby and rules.cube and context.cube_owner is CubeOwner.CENTRE:
            return 1
        expected_loss = 1.0 + chances.lose_gammon + chances.lose_backgammon
        return max(1, min(3, int(expected_loss + 1e-6)))

    async def evaluate(
        self,
        position: Position,
        context: Context | None = None,
        *,
        plies: int | None = None,
        cubeful: bool = False,
    ) -> GnubgEvaluation:
        """gnubg's evaluation of ``position`` for the side on roll, before rolling (noiseless).

        ``context`` (seen from the side on roll; default: money, centred cube, no Jacoby) sets
        the score, cube and rules; ``plies`` defaults to the engine's. Raises `EngineError`
        when gnubg cannot answer or answers something that is not six numbers.
        """
        ctx = context if context is not None else Context()
        depth = self.plies if plies is None else _check_plies(plies)
        line = "evaluation fibsboard " + _board_line(position, ctx, Request.ROLL_OR_DOUBLE)
        if depth:
            line += f" plies {depth}"
        if cubeful:
            line += " cubeful"
        reply = await self.process.ask(line, self.timeout or _timeout_for(depth))
        numbers = _six_numbers(reply)
        if numbers is None:
            self.stats.unusable += 1
            raise EngineError(f"gnubg's evaluation is not six numbers: {reply!r}")
        return GnubgEvaluation(Probabilities(*numbers[:5]), numbers[5], cubeful, depth,
                               not ctx.is_money)


def _six_numbers(reply: str) -> tuple[float, ...] | None:
    """Six finite floats, the first five probabilities in 0..1 (gnubg's %f), else None."""
    words = reply.split()
    if len(words) != 6:
        return None
    try:
        numbers = tuple(float(word) for word in words)
    except ValueError:
        return None
    if not all(math.isfinite(x) for x in numbers):
        return None
    if not all(-1e-6 <= x <= 1 + 1e-6 for x in numbers[:5]):
        return None
    return numbers


def _board_line(position: Position, context: Context, kind: Request,
                dice: tuple[int, int] | None = None) -> str:
    """The ``board:`` line (plus rule options) asking ``kind`` about ``position``.

    For MOVE and ROLL_OR_DOUBLE ``position`` and ``context`` are the side on roll's; for TAKE
    ``position`` is the doubler's (on roll) and ``context`` the taker's. Raises `FormatError`
    when the context does not fit a board (e.g. a score at or above the match length).
    """
    board = FibsBoard(
        position=position,
        kind=kind,
        on_roll=Side.OPPONENT if kind is Request.TAKE else Side.ME,
        dice=dice,
        dialect=Dialect.GNUBG,
        my_name=_NAMES[0],
        opponent_name=_NAMES[1],
        match_length=context.match_length,
        my_score=context.my_score,
        opponent_score=context.opponent_score,
        cube_value=context.cube_value,
        cube_owner=_CUBE_SIDE[context.cube_owner],
        crawford=context.crawford,
        post_crawford=context.post_crawford,
        my_seat=_MY_SEAT,
    )
    line = format_board(board)
    rules = context.rules
    if context.is_money:
        line += f" jacobyrule {'on' if rules.jacoby and rules.cube else 'off'}"
    elif not rules.crawford:
        line += " crawfordrule off"
    return line


# --------------------------------------------------------------------------- agent spec


SUMMARY = "GNU Backgammon's engine, run headless (plies=N, noise=X, seed=S, timeout=SEC)"


def create(spec: AgentSpec, seed: int) -> Agent:
    """Build a `GnubgEngine` from ``gnubg[:plies=N,noise=X,seed=S,timeout=SEC]``."""
    opts = Options(spec, {
        "plies": f"gnubg look-ahead 0..{MAX_PLIES} (default 0)",
        "noise": "gnubg evaluation noise, a standard deviation, e.g. 0.02 (default 0)",
        "seed": "seed for gnubg's random generator",
        "timeout": "seconds a request may take before gnubg is restarted",
    })
    timeout = opts.number("timeout", 0.0, 0.0, 86400.0)
    return GnubgEngine(
        plies=opts.integer("plies", 0, 0, MAX_PLIES),
        noise=opts.number("noise", 0.0, 0.0, 1.0),
        seed=opts.integer("seed", seed),
        timeout=timeout or None,
    )


register_agent("gnubg", create, SUMMARY)
