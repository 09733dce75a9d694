"""bgbot as a UBGI engine: the engine side of the Universal Backgammon Interface v0.2.

A controller (bgci, a GUI, bgbot's own `bgbot.engines.ubgi` client) writes one command per line;
`UbgiSession.handle` answers each with zero or more lines (spec: ``bungogood/bgci:
docs/ubgi-v0.2-spec.md``). Commands that only change state (``set``, ``newgame``, ``position``,
``dice``) answer nothing when they succeed, as the spec's engines do; ``isready`` confirms them.

* handshake ``ubgi`` -> ``id name``, ``id author``, ``id version``, ``proto 0.2``, one ``key``
  line per option, ``ubgiok``; ``isready`` -> ``readyok`` (once the player is built);
* ``set <key> <value>`` / ``get <key>`` (``value <key> <value>``) / ``keys``; v0.1's
  ``setoption name <key> value <value>`` is read too (spec §8). Keys: ``game.variant``
  (backgammon), ``game.jacoby`` and ``game.beavers`` (money rules for positions whose id does not
  carry them), and, when the player has them, ``engine.ply`` (root-inclusive: UBGI 1-ply is
  our ``plies=0``, as the spec maps gnubg), ``engine.noise``, ``engine.seed``;
* ``position gnubgid <PositionID>`` (the spec's form: money, centred cube),
  ``position gnubgid <PositionID:MatchID>`` (gnubg's full id: cube, score, Crawford, Jacoby,
  dice, a pending double) and ``position xgid <XGID>``; the position is the player on roll's;
* ``dice <d1> <d2>``;
* ``go`` / ``go chequer`` -> ``bestmove <from/to ...|pass>``; ``go cube`` ->
  ``bestcube double|nodouble`` (``nodouble`` whenever the cube is not ours to turn);
  ``go turn`` -> ``bestturn cube=<double|nodouble> move=<payload>`` (the move as played after a
  take when doubling); bgbot's extensions ``go take`` -> ``besttake take|drop|beaver`` (the
  player on roll has doubled us), ``go resign`` -> ``bestresign none|single|gammon|backgammon``,
  ``go accept <single|gammon|backgammon>`` -> ``bestaccept accept|reject`` (the player on roll
  offers to resign); an ``info time_ms N`` line comes before each answer;
* ``quit`` or end of input ends the session; ``stop`` is accepted (nothing runs in the
  background). Everything else gets one of the spec's four error codes and the session goes on:
  ``bad_command`` (unknown or malformed), ``bad_value`` (an invalid id, die or option value),
  ``bad_state`` (``go`` without a position or dice, a finished game, a pending double),
  ``unsupported`` (an unknown key or position format).

Decisions come from any agent spec (``--player``, default ``heuristic``) through the `Agent`
interface with a `Context` built from the match state; each answer is checked with the rules
core before it is written.
"""

from __future__ import annotations

import asyncio
import io
import logging
import sys
import time
from typing import Awaitable, Callable, TextIO

from .. import __version__ as _bgbot_version
from ..agents.base import Agent
from ..agents.spec import AgentSpec, parse_agent_spec
from ..core.context import Context, CubeOwner
from ..core.errors import BgbotError, FormatError
from ..core.position import Play, Position, check_dice
from ..core.rules import Rules
from ..deciders import create_agent
from ..engines.ubgi_protocol import (
    PROTOCOL_VERSION,
    RESIGN_WORDS,
    ErrorCode,
    KeySpec,
    format_ubgi_play,
)
from ..formats.gnubgid import GameState, MatchState, check_match_length, decode_gnubgid
from ..formats.xgid import decode_xgid, xgid_to_gnubg
from ..players.base import TakeDecision

__all__ = ["UbgiSession", "context_from_state", "run_stdio", "serve_streams"]

log = logging.getLogger("bgbot.frontends.ubgi")

AUTHOR = "bgbot contributors"
_MAX_PLIES_PROBED = 6


class _Reply(Exception):
    """An ``error`` line to answer; raised inside a handler."""

    def __init__(self, code: ErrorCode, detail: str) -> None:
        super().__init__(detail)
        self.code = code
        self.detail = detail

    def line(self) -> str:
        return f"error {self.code.value} {self.detail}".rstrip()


def context_from_state(state: MatchState, seat: int, *, beavers: bool = False) -> Context:
    """The `Context` of gnubg seat ``seat`` in ``state`` (a Match ID's content), seen from it.

    The Match ID has no post-Crawford flag: a match game that is not the Crawford game while a
    player is 1-away (in a match longer than one point) is post-Crawford. ``beavers`` is the
    money rule a Match ID cannot carry.
    """
    owner = state.cube_owner
    cube_owner = (CubeOwner.CENTRE if owner < 0
                  else CubeOwner.ME if owner == seat else CubeOwner.OPPONENT)
    length = state.match_length
    one_away = length > 1 and length - 1 in state.score
    rules = Rules(jacoby=state.jacoby, beavers=beavers).for_match(length)
    return Context(
        cube_value=state.cube,
        cube_owner=cube_owner,
        match_length=length,
        my_score=state.score[seat],
        opponent_score=state.score[1 - seat],
        crawford=state.crawford,
        post_crawford=one_away and not state.crawford,
        rules=rules,
    )


def _usage(text: str) -> _Reply:
    return _Reply(ErrorCode.BAD_COMMAND, f"expected: {text}")


class UbgiSession:
    """One UBGI conversation: feed it lines with `handle`, write back what it returns.

    ``player`` is an agent spec (``heuristic:plies=1``, ``pubeval``, ``gnubg:plies=0`` ...);
    ``seed`` seeds its noise unless ``engine.seed`` is set. Testable in-process: no I/O here
    besides what `serve` does with the streams it is given.
    """

    def __init__(self, player: str = "heuristic", *, seed: int = 0) -> None:
        self.spec = parse_agent_spec(player)
        create_agent(self.spec, seed=seed)  # fail now (FormatError) on a bad player spec
        self.seed = seed
        self.finished = False
        self.keys: dict[str, KeySpec] = {}
        self.values: dict[str, str] = {}
        self._agent: Agent | None = None
        self.position: Position | None = None
        self.state: MatchState | None = None
        self.dice: tuple[int, int] | None = None
        self._xgid_beavers: bool | None = None
        self._discover_keys()

    # ----------------------------------------------------------------- options

    def _accepts(self, option: str, value: str) -> bool:
        options = dict(self.spec.options)
        options[option] = value
        try:
            create_agent(AgentSpec(self.spec.name, options), seed=self.seed)
        except (ValueError, BgbotError):
            return False
        return True

    def _discover_keys(self) -> None:
        """The keys this player supports: probe its agent spec for plies, noise and seed."""
        keys = [
            KeySpec("game.variant", "enum", "backgammon", choices=("backgammon",),
                    description="rules variant"),
            KeySpec("game.jacoby", "bool", "false",
                    description="money: Jacoby rule for positions whose id does not say"),
            KeySpec("game.beavers", "bool", "false",
                    description="money: beavers allowed (a Match ID cannot say)"),
        ]
        plies = [p for p in range(_MAX_PLIES_PROBED) if self._accepts("plies", str(p))]
        if plies and plies == list(range(len(plies))):
            current = self.spec.options.get("plies", "0")
            default = int(current) + 1 if current.isdigit() else 1
            keys.append(KeySpec("engine.ply", "int", str(default), 1, len(plies),
                                description="root-inclusive checker-play depth (1 = static)"))
        if self._accepts("noise", "0"):
            keys.append(KeySpec("engine.noise", "string", self.spec.options.get("noise", "0"),
                                description="evaluation noise, a standard deviation in equity"))
        if self._accepts("seed", "0"):
            keys.append(KeySpec("engine.seed", "int", self.spec.options.get("seed", str(self.seed)),
                                minor=True, description="noise seed"))
        self.keys = {key.name: key for key in keys}
        self.values = {key.name: key.default for key in keys}

    def _player_spec(self, values: dict[str, str] | None = None) -> AgentSpec:
        """The agent spec the engine keys ``values`` (default: the current ones) make."""
        values = self.values if values is None else values
        options = dict(self.spec.options)
        if "engine.ply" in values:
            options["plies"] = str(int(values["engine.ply"]) - 1)
        if "engine.noise" in values:
            options["noise"] = values["engine.noise"]
        if "engine.seed" in values:
            options["seed"] = values["engine.seed"]
        return AgentSpec(self.spec.name, options)

    async def _set(self, key: str, value: str) -> None:
        spec = self.keys.get(key)
        if spec is None:
            raise _Reply(ErrorCode.UNSUPPORTED, key)
        try:
            canonical = spec.parse(value)
        except FormatError as exc:
            raise _Reply(ErrorCode.BAD_VALUE, f"{key} {exc.reason}") from None
        if key == "engine.noise":
            try:
                noise = float(canonical)
            except ValueError:
                noise = -1.0
            if not noise >= 0 or not self._accepts("noise", canonical):
                raise _Reply(ErrorCode.BAD_VALUE, f"{key} must_be a number >= 0")
        if key.startswith("engine."):
            # The player judges its own options' ranges (a seed the key line cannot bound):
            # refuse here what would make every later go or isready fail.
            try:
                create_agent(self._player_spec({**self.values, key: canonical}), seed=self.seed)
            except FormatError as exc:
                raise _Reply(ErrorCode.BAD_VALUE, f"{key} {exc.reason}") from None
        if key.startswith("engine.") and canonical != self.values.get(key):
            await self._drop_agent()
        self.values[key] = canonical

    async def _drop_agent(self) -> None:
        agent, self._agent = self._agent, None
        if agent is not None:
            await agent.close()

    async def agent(self) -> Agent:
        """The player, built (and started) on first use and after an option change."""
        if self._agent is None:
            agent = create_agent(self._player_spec(), seed=self.seed)
            await agent.start()
            self._agent = agent
        return self._agent

    async def close(self) -> None:
        """Release the player (e.g. stop a gnubg it runs)."""
        await self._drop_agent()

    # ----------------------------------------------------------------- dispatch

    async def handle(self, line: str) -> list[str]:
        """The reply lines to one command line (possibly none). Never raises for bad input."""
        words = line.strip().split()
        if not words:
            return []
        handler = self._handlers().get(words[0])
        try:
            if handler is None:
                raise _Reply(ErrorCode.BAD_COMMAND, f"unknown command {words[0][:40]}")
            return await handler(words[1:])
        except _Reply as reply:
            return [reply.line()]
        except Exception as exc:  # a failing player must not end the session
            log.exception("UBGI command %r failed", line)
            return [f"error {ErrorCode.BAD_STATE.value} engine failure: {exc}".replace("\n", " ")]

    def _handlers(self) -> dict[str, Callable[[list[str]], Awaitable[list[str]]]]:
        return {
            "ubgi": self._cmd_ubgi, "isready": self._cmd_isready, "quit": self._cmd_quit,
            "newgame": self._cmd_newgame, "stop": self._cmd_stop, "set": self._cmd_set,
            "get": self._cmd_get, "keys": self._cmd_keys, "setoption": self._cmd_setoption,
            "position": self._cmd_position, "dice": self._cmd_dice, "go": self._cmd_go,
        }

    @staticmethod
    def _no_args(command: str, args: list[str]) -> None:
        if args:
            raise _usage(command)

    async def _cmd_ubgi(self, args: list[str]) -> list[str]:
        self._no_args("ubgi", args)
        return [f"id name bgbot {self.spec}", f"id author {AUTHOR}", f"id version {_bgbot_version}",
                f"proto {PROTOCOL_VERSION}", *(key.line() for key in self.keys.values()), "ubgiok"]

    async def _cmd_isready(self, args: list[str]) -> list[str]:
        self._no_args("isready", args)
        try:
            await self.agent()
        except Exception as exc:
            raise _Reply(ErrorCode.BAD_STATE, f"isready player failed to start: {exc}") from None
        return ["readyok"]

    async def _cmd_quit(self, args: list[str]) -> list[str]:
        self.finished = True
        return []

    async def _cmd_stop(self, args: list[str]) -> list[str]:
        return []  # nothing runs in the background: every go has been answered already

    async def _cmd_newgame(self, args: list[str]) -> list[str]:
        self._no_args("newgame", args)
        self.position = self.state = self.dice = None
        self._xgid_beavers = None
        return []

    async def _cmd_set(self, args: list[str]) -> list[str]:
        if len(args) < 2:
            raise _usage("set <key> <value>")
        await self._set(args[0], " ".join(args[1:]))
        return []

    async def _cmd_setoption(self, args: list[str]) -> list[str]:
        if len(args) < 4 or args[0] != "name" or "value" not in args[2:]:
            raise _usage("setoption name <Name> value <Value>")
        split = args.index("value", 2)
        name, value = " ".join(args[1:split]), " ".join(args[split + 1:])
        if not value:
            raise _usage("setoption name <Name> value <Value>")
        aliases = {"seed": "engine.seed", "ply": "engine.ply", "plies": "engine.ply",
                   "noise": "engine.noise", "variant": "game.variant"}
        await self._set(aliases.get(name.lower(), name), value)
        return []

    async def _cmd_get(self, args: list[str]) -> list[str]:
        if len(args) != 1:
            raise _usage("get <key>")
        if args[0] not in self.values:
            raise _Reply(ErrorCode.UNSUPPORTED, args[0])
        return [f"value {args[0]} {self.values[args[0]]}"]

    async def _cmd_keys(self, args: list[str]) -> list[str]:
        self._no_args("keys", args)
        return [key.line() for key in self.keys.values()]

    async def _cmd_position(self, args: list[str]) -> list[str]:
        usage = "position gnubgid <GNU_POSITION_ID> | position xgid <XGID>"
        if len(args) != 2:
            if args and args[0] not in ("gnubgid", "xgid"):
                raise _Reply(ErrorCode.UNSUPPORTED, f"position {args[0][:40]}")
            raise _usage(usage)
        form, text = args
        self.position = self.state = None  # never answer for a stale position, whatever fails
        try:
            if form == "gnubgid":
                self._set_gnubgid(text)
            elif form == "xgid":
                self._set_xgid(text)
            else:
                raise _Reply(ErrorCode.UNSUPPORTED, f"position {form[:40]}")
        except FormatError as exc:
            raise _Reply(ErrorCode.BAD_VALUE, f"{form} {exc}") from None
        return []

    def _set_gnubgid(self, text: str) -> None:
        if ":" in text:
            position, state = decode_gnubgid(text)
            self._install(position, state, None)
        else:
            self.position = Position.from_position_id(text)
            self.state = None
            self._xgid_beavers = None

    def _set_xgid(self, text: str) -> None:
        xgid = decode_xgid(text)
        position, state = xgid_to_gnubg(xgid)
        self._install(position, state, xgid.beavers)

    def _install(self, position: Position, state: MatchState, beavers: bool | None) -> None:
        check_match_length("match_length", state.match_length)
        self.position, self.state, self._xgid_beavers = position, state, beavers
        self.dice = state.dice if state.rolled else None

    async def _cmd_dice(self, args: list[str]) -> list[str]:
        if len(args) != 2:
            raise _usage("dice <d1> <d2>")
        try:
            d1, d2 = check_dice((int(args[0]), int(args[1])))
        except (ValueError, BgbotError):
            raise _Reply(ErrorCode.BAD_VALUE, f"dice {args[0][:10]} {args[1][:10]} must_be 1..6") from None
        self.dice = (d1, d2)
        return []

    # ----------------------------------------------------------------- decisions

    def _beavers(self) -> bool:
        if self._xgid_beavers is not None:
            return self._xgid_beavers
        return self.values.get("game.beavers") == "true"

    def _context(self, roller: bool) -> Context:
        """The context of the player on roll (``roller``) or of the other one."""
        if self.state is None:
            rules = Rules(jacoby=self.values.get("game.jacoby") == "true", beavers=self._beavers())
            context = Context(rules=rules)
            return context if roller else context.swapped()
        seat = self.state.on_roll if roller else 1 - self.state.on_roll
        return context_from_state(self.state, seat, beavers=self._beavers())

    def _need_position(self, *, pending_ok: bool = False) -> Position:
        if self.position is None:
            raise _Reply(ErrorCode.BAD_STATE, "missing position")
        state = self.state
        if state is not None and state.game_state not in (GameState.NONE, GameState.PLAYING):
            raise _Reply(ErrorCode.BAD_STATE, "game over")
        if self.position.is_game_over():
            raise _Reply(ErrorCode.BAD_STATE, "game over")
        if not pending_ok and state is not None and (state.doubled or state.resigned):
            what = "double" if state.doubled else "resignation"
            raise _Reply(ErrorCode.BAD_STATE, f"{what} pending")
        return self.position

    def _need_dice(self) -> tuple[int, int]:
        if self.dice is None:
            raise _Reply(ErrorCode.BAD_STATE, "missing dice")
        return self.dice

    async def _cmd_go(self, args: list[str]) -> list[str]:
        if args[:1] == ["role"]:  # v0.1's "go role <chequer|cube|turn> [limits...]" (spec §8)
            args = args[1:2]
        mode = args[0] if args else "chequer"
        modes = {"chequer": self._go_chequer, "checker": self._go_chequer, "cube": self._go_cube,
                 "turn": self._go_turn, "take": self._go_take, "resign": self._go_resign,
                 "accept": self._go_accept}
        go = modes.get(mode)
        if go is None:
            raise _usage("go [chequer|cube|turn]")
        if mode != "accept" and len(args) > 1:
            raise _usage(f"go {mode}")
        started = time.monotonic()
        answer = await go(args[1:])
        return [f"info time_ms {int((time.monotonic() - started) * 1000)}", answer]

    async def _play(self, position: Position, dice: tuple[int, int], context: Context) -> Play:
        """The player's play, checked against the legal plays."""
        results = position.play_results(dice)
        if len(results) <= 1:
            return results[0][0] if results else Play()
        agent = await self.agent()
        chosen = await agent.choose_play(position, dice, context)
        try:
            reached = position.apply(chosen)
        except (ValueError, BgbotError):
            reached = None
        for play, after in results:
            if after == reached:
                return play
        log.warning("player %s chose an illegal play %s; playing %s", self.spec, chosen, results[0][0])
        return results[0][0]

    async def _go_chequer(self, args: list[str]) -> str:
        position = self._need_position()
        dice = self._need_dice()
        play = await self._play(position, dice, self._context(True))
        return f"bestmove {format_ubgi_play(play)}"

    async def _double(self, position: Position, context: Context) -> bool:
        if not context.may_double():
            return False
        return await (await self.agent()).should_double(position, context)

    async def _go_cube(self, args: list[str]) -> str:
        position = self._need_position()
        if self.state is not None and self.state.rolled:
            raise _Reply(ErrorCode.BAD_STATE, "dice already rolled")
        doubles = await self._double(position, self._context(True))
        return f"bestcube {'double' if doubles else 'nodouble'}"

    async def _go_turn(self, args: list[str]) -> str:
        position = self._need_position()
        dice = self._need_dice()
        context = self._context(True)
        doubles = await self._double(position, context)
        if doubles:  # the move is the one played after the opponent takes
            context = Context(context.cube_value * 2, CubeOwner.OPPONENT, context.match_length,
                              context.my_score, context.opponent_score, context.crawford,
                              context.post_crawford, context.rules)
        play = await self._play(position, dice, context)
        cube = "double" if doubles else "nodouble"
        return f"bestturn cube={cube} move={format_ubgi_play(play)}"

    async def _go_take(self, args: list[str]) -> str:
        position = self._need_position(pending_ok=True)
        context = self._context(False)
        decision = await (await self.agent()).take_decision(position, context)
        if decision is TakeDecision.BEAVER and not (
            context.is_money and context.rules.cube and context.rules.beavers
        ):
            decision = TakeDecision.TAKE
        return f"besttake {decision.value}"

    async def _go_resign(self, args: list[str]) -> str:
        position = self._need_position()
        value = await (await self.agent()).offer_resignation(position, self._context(True))
        return f"bestresign {RESIGN_WORDS[value] if value in (1, 2, 3) else 'none'}"

    async def _go_accept(self, args: list[str]) -> str:
        if len(args) != 1:
            raise _usage("go accept <single|gammon|backgammon>")
        if args[0] not in RESIGN_WORDS[1:]:
            raise _Reply(ErrorCode.BAD_VALUE, f"go accept {args[0][:20]} must_be single|gammon|backgammon")
        position = self._need_position(pending_ok=True)
        value = RESIGN_WORDS.index(args[0])
        accepted = await (await self.agent()).accept_resignation(position, self._context(False), value)
        return f"bestaccept {'accept' if accepted else 'reject'}"

    # ----------------------------------------------------------------- streams

    async def serve(self, reader: TextIO, writer: TextIO) -> int:
        """Answer ``reader``'s lines on ``writer`` (flushed per line) until ``quit`` or end of
        input; then release the player. Returns the exit status (0)."""
        loop = asyncio.get_running_loop()
        try:
            while not self.finished:
                line = await loop.run_in_executor(None, reader.readline)
                if not line:
                    break
                log.debug("ubgi engine << %s", line.rstrip())
                for out in await self.handle(line):
                    writer.write(out + "\n")
                    writer.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass  # the controller went away: nothing left to answer
        finally:
            await self.close()
        return 0


def serve_streams(reader: TextIO, writer: TextIO, player: str = "heuristic", *, seed: int = 0) -> int:
    """Run one session over ``reader``/``writer`` (e.g. `io.StringIO`) to its end."""
    return asyncio.run(UbgiSession(player, seed=seed).serve(reader, writer))


def run_stdio(player: str = "heuristic", *, seed: int = 0) -> int:
    """Be a UBGI engine on stdin/stdout (UTF-8; undecodable bytes replaced, not fatal)."""
    reader = io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="replace")
    writer = io.TextIOWrapper(sys.stdout.buffer, encoding="utf-8", errors="replace",
                              line_buffering=True)
    try:
        return serve_streams(reader, writer, player, seed=seed)
    except KeyboardInterrupt:
        return 130
