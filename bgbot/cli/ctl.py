"""`bgbot ctl COMMAND`: talk to a running daemon over its control protocol (protocol/SPEC.md).

Human-readable output by default, ``--json`` for scripts (the reply's content as one JSON
object; ``watch`` prints one object per event). Exit status: 0 success, 1 the daemon answered
with an error, 2 a usage or local error, 3 the daemon could not be reached.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from functools import partial
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from ._args import match_length
from ._rollouts import add_rollout_options

_EPILOG = """\
examples:
  bgbot ctl status                              is the daemon up, how busy is it
  bgbot ctl match start heuristic pubeval --length 5 --seed 7 --watch
  bgbot ctl match start heuristic random --money --games 20
  bgbot ctl matches --state active              matches being played
  bgbot ctl match get 0f3c9a1e77b2 --mat        a match, with its .mat text so far
  bgbot ctl match abort 0f3c9a1e77b2
  bgbot ctl evaluate 4HPwATDgc/ABMA             chances of the player on roll
  bgbot ctl play 4HPwATDgc/ABMA 31 --candidates 5
  bgbot ctl play 'XGID=-b----E-C---eE---c-e----AA:0:0:1:52:0:0:0:0:10'
  bgbot ctl rollout 4HPwATDgc/ABMA --dice 31 --trials 1296 --truncate 10
                                                roll out the plays of a 3-1 on the daemon
  bgbot ctl watch                               every event of every match, live
  bgbot ctl frontends                           gnubg external-player listeners and their state
  bgbot ctl keygen ~/.config/bgbot/control.key  make a signing key (mode 0600)

The daemon is found at its default control socket (ipc://$XDG_RUNTIME_DIR/bgbot/control, else
ipc:///run/bgbot/control) and the key in control.key of bgbot's configuration directory.
--config FILE (or $BGBOT_CONFIG) reads them from the daemon's own bgbot.toml instead:
  bgbot ctl --config /etc/bgbot/bgbot.toml status
--endpoint, --events-endpoint and --key-file override either; the events socket defaults to the
one next to the control socket. Exit status: 0 ok, 1 error reply, 2 usage, 3 unreachable.
"""

EXIT_ERROR_REPLY = 1
EXIT_UNREACHABLE = 3
DEFAULT_CTL_TIMEOUT = 5.0



# --------------------------------------------------------------------------- argument parsing


def _add_common(parser: argparse.ArgumentParser, *, top: bool) -> None:
    """Connection and output options; accepted before and after the command name."""
    default: Any = None if top else argparse.SUPPRESS
    group = parser.add_argument_group("connection and output")
    group.add_argument("--config", metavar="FILE", default=default,
                       help="the daemon's bgbot.toml: its endpoints and key file "
                       "(default: $BGBOT_CONFIG if set); the options below override it")
    group.add_argument("--endpoint", metavar="URL", default=default,
                       help="control endpoint (default: ipc://$XDG_RUNTIME_DIR/bgbot/control, "
                       "or ipc:///run/bgbot/control for the system daemon)")
    group.add_argument("--events-endpoint", metavar="URL", default=default,
                       help="events endpoint for watch (default: next to the control socket)")
    group.add_argument("--key-file", metavar="FILE", default=default,
                       help="signing key file (default: control.key in bgbot's config directory; "
                       "none found = unsigned)")
    group.add_argument("--server-key", metavar="FILE", default=default,
                       help="the daemon's CURVE public key (Z85) for tcp:// endpoints")
    group.add_argument("--timeout", metavar="SEC", type=float,
                       default=DEFAULT_CTL_TIMEOUT if top else argparse.SUPPRESS,
                       help=f"seconds to wait for a reply (default {DEFAULT_CTL_TIMEOUT:g})")
    group.add_argument("--json", action="store_true",
                       default=False if top else argparse.SUPPRESS,
                       help="print the reply as JSON (watch: one JSON object per line)")


def _context_options(parser: argparse.ArgumentParser, *, agent: bool = True) -> None:
    if agent:
        parser.add_argument("--agent", metavar="SPEC", help="agent to ask (default: the daemon's)")
    group = parser.add_argument_group(
        "context (only with a bare Position ID; a GNU BG ID or XGID carries its own)")
    group.add_argument("--match-length", type=match_length, metavar="N", help="match length (default money)")
    group.add_argument("--score", metavar="MINE-THEIRS", help="score, e.g. 2-4 (asked player first)")
    group.add_argument("--cube", type=int, metavar="N", help="cube value (default 1)")
    group.add_argument("--owner", choices=("centre", "me", "opponent"), help="cube owner")
    group.add_argument("--crawford", action="store_true", help="this is the Crawford game")
    group.add_argument("--rule", action="append", default=[], metavar="KEY=VALUE",
                       help="a rule option, e.g. jacoby=on, beavers=on (repeatable)")


def _sub(sub: Any, name: str, help_text: str, epilog: str, handler: Callable[..., int],
         description: str | None = None) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = sub.add_parser(
        name, help=help_text, description=description or help_text, epilog=epilog,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    _add_common(parser, top=False)
    parser.set_defaults(ctl=handler)
    return parser


def register(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    """Add the ``ctl`` sub-command (and its own sub-commands) to the bgbot command line."""
    ctl = sub.add_parser(
        "ctl",
        help="control a running daemon: status, matches, evaluations, live events",
        description="Talk to a running bgbot daemon (bgbot serve) over its control socket.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _add_common(ctl, top=True)
    ctl.set_defaults(func=_run, ctl=None, ctl_parser=ctl)
    commands = ctl.add_subparsers(dest="ctl_command", metavar="COMMAND")

    _sub(commands, "status", "uptime, matches, frontends and load of the daemon",
         "example:\n  bgbot ctl status --json", _cmd_status)
    _sub(commands, "hello", "protocol version, capabilities, agents and limits of the daemon",
         "example:\n  bgbot ctl hello", _cmd_hello)

    matches = _sub(commands, "matches", "list hosted matches, newest first",
                   "examples:\n  bgbot ctl matches\n  bgbot ctl matches --state active --json",
                   _cmd_matches)
    matches.add_argument("--state", choices=("active", "finished", "all"), default="all",
                         help="which matches (default all; finished includes aborted and failed)")
    matches.add_argument("--limit", type=int, default=100, metavar="N", help="at most N (default 100)")

    match = commands.add_parser(
        "match", help="start, inspect or abort one hosted match",
        description="Start, inspect or abort one hosted match.",
        epilog="examples:\n  bgbot ctl match start heuristic pubeval --length 5 --seed 7\n"
        "  bgbot ctl match get 0f3c9a1e77b2 --mat > match.mat\n"
        "  bgbot ctl match abort 0f3c9a1e77b2 --reason 'wrong agents'",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    _add_common(match, top=False)
    match.set_defaults(ctl=None, ctl_parser=match)
    match_commands = match.add_subparsers(dest="match_command", metavar="ACTION")

    start = _sub(match_commands, "start", "host a match between two agents",
                 "examples:\n  bgbot ctl match start heuristic pubeval\n"
                 "  bgbot ctl match start heuristic:plies=1 gnubg:plies=0 --length 7 --seed 3 --watch\n"
                 "  bgbot ctl match start heuristic random --money --games 50 --rule jacoby=on",
                 _cmd_match_start)
    start.add_argument("players", nargs=2, metavar="AGENT", help="agent specs, seat 0 first")
    kind = start.add_mutually_exclusive_group()
    kind.add_argument("--length", type=match_length, default=7, metavar="N",
                      help="match length in points (default 7)")
    kind.add_argument("--money", action="store_true", help="a money session instead of a match")
    start.add_argument("--games", type=int, default=None, metavar="N",
                       help="with --money: games to play (default 1)")
    start.add_argument("--seed", type=int, default=None, metavar="S",
                       help="dice seed (default: the daemon picks one and prints it)")
    start.add_argument("--names", nargs=2, metavar="NAME", help="player names for the .mat file")
    start.add_argument("--rule", action="append", default=[], metavar="KEY=VALUE",
                       help="a rule option, e.g. crawford=off, jacoby=on (repeatable)")
    start.add_argument("--watch", action="store_true", help="then print its events until it ends")

    get = _sub(match_commands, "get", "show one match: state, score, position, .mat text",
               "examples:\n  bgbot ctl match get 0f3c9a1e77b2\n  bgbot ctl match get 0f3c9a1e77b2 --mat",
               _cmd_match_get)
    get.add_argument("match_id", metavar="ID", help="the match id (bgbot ctl match list)")
    get.add_argument("--mat", action="store_true", help="print the .mat text so far")

    abort = _sub(match_commands, "abort", "stop a match for good",
                 "example:\n  bgbot ctl match abort 0f3c9a1e77b2 --reason testing", _cmd_match_abort)
    abort.add_argument("match_id", metavar="ID", help="the match id (bgbot ctl match list)")
    abort.add_argument("--reason", metavar="TEXT", help="why (logged and published)")

    frontends = _sub(commands, "frontends", "list, start or stop frontends (gnubg listeners...)",
                     "examples:\n  bgbot ctl frontends\n  bgbot ctl frontends start gnubg\n"
                     "  bgbot ctl frontends start gnubg2 --kind gnubg_external "
                     "--option listen=127.0.0.1:4322\n  bgbot ctl frontends stop gnubg2",
                     _cmd_frontends)
    frontends.add_argument("action", nargs="?", choices=("list", "start", "stop"), default="list",
                           help="list them (the default), or start or stop one")
    frontends.add_argument("name", nargs="?", metavar="NAME", help="the frontend (start, stop)")
    frontends.add_argument("--kind", metavar="KIND", help="start: kind of a frontend not in the config")
    frontends.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                           help="start: an option of a new frontend (repeatable)")

    evaluate = _sub(commands, "evaluate", "cubeless chances and equity of the player on roll",
                    "examples:\n  bgbot ctl evaluate 4HPwATDgc/ABMA\n"
                    "  bgbot ctl evaluate 4HPwATDgc/ABMA --match-length 7 --score 2-4 --cube 2 --owner me\n"
                    "  bgbot ctl evaluate 4HPwATDgc/ABMA:cAkAAAAAAAAA --agent heuristic:plies=1",
                    _cmd_evaluate)
    evaluate.add_argument("position", metavar="ID", help="Position ID, GNU BG ID or XGID")
    _context_options(evaluate)

    play = _sub(commands, "play", "the play the daemon's agent makes with a roll",
                "examples:\n  bgbot ctl play 4HPwATDgc/ABMA 31\n"
                "  bgbot ctl play 4HPwATDgc/ABMA 6 6 --candidates 5\n"
                "  bgbot ctl play 4HPwATDgc/ABMA:cIkWAAAAAAAA    (the GNU BG ID has the dice)",
                _cmd_play)
    play.add_argument("position", metavar="ID", help="Position ID, GNU BG ID or XGID")
    play.add_argument("dice", nargs="*", metavar="DICE",
                      help="the roll: 31 or 3 1 (not needed when the id has the dice)")
    play.add_argument("--candidates", type=int, default=0, metavar="N",
                      help="also show the N best plays with their equities")
    _context_options(play)

    rollout = _sub(commands, "rollout", "roll out a position, or the plays of a roll, on the "
                   "daemon (the table of bgbot rollout)", _ROLLOUT_EPILOG, _cmd_rollout,
                   description="Roll a position out on the daemon's rollout workers, with a "
                   "player on both sides, and print the chances and equity with their standard "
                   "errors; with dice, roll out and rank the candidate plays. The same settings "
                   "and seed give the same figures as bgbot rollout.")
    rollout.add_argument("position", metavar="ID", help="Position ID, GNU BG ID or XGID")
    rollout.add_argument("--dice", default=None, metavar="D1D2",
                         help="roll out the candidate plays of this roll (e.g. 31)")
    add_rollout_options(rollout, where=False)
    rollout.add_argument("--watch", action="store_true",
                         help="print its progress events as they come (with --json: one "
                         "object per event, then the reply)")
    _context_options(rollout, agent=False)

    watch = _sub(commands, "watch", "print match events live",
                 "examples:\n  bgbot ctl watch                  every match, until interrupted\n"
                 "  bgbot ctl watch 0f3c9a1e77b2     one match, until it ends\n"
                 "  bgbot ctl watch --json | jq .    one JSON object per event",
                 _cmd_watch)
    watch.add_argument("match_id", nargs="?", metavar="MATCH_ID", help="only this match")
    watch.add_argument("--idle", type=float, default=None, metavar="SEC",
                       help="stop after SEC seconds without events")

    _sub(commands, "reload", "make the daemon read its configuration again (as SIGHUP)",
         "example:\n  bgbot ctl reload", _cmd_reload)
    shutdown = _sub(commands, "shutdown", "stop the daemon (hosted matches resume at its next start)",
                    "example:\n  bgbot ctl shutdown --reason upgrade", _cmd_shutdown)
    shutdown.add_argument("--reason", metavar="TEXT", help="why (logged)")

    keygen = _sub(commands, "keygen", "create a new signing key file (mode 0600)",
                  "examples:\n  bgbot ctl keygen                       the default key file\n"
                  "  bgbot ctl keygen /etc/bgbot/control.key", _cmd_keygen,
                  description="Create a random signing key for the control protocol. The daemon "
                  "and its clients must use the same key file (or copies of it).")
    keygen.add_argument("file", nargs="?", metavar="FILE", help="where (default: the default key file)")
    keygen.add_argument("--force", action="store_true", help="overwrite an existing file")


# --------------------------------------------------------------------------- running


def _run(args: argparse.Namespace) -> int:
    from ..daemon.client import DaemonError, DaemonUnreachable

    handler: Callable[..., int] | None = args.ctl
    if handler is None:
        args.ctl_parser.print_help()
        return 0
    if handler is _cmd_keygen:
        return _cmd_keygen(args)
    try:
        with _client(args) as client:
            return handler(args, client)
    except DaemonError as exc:
        if args.json:  # machines read the error too, as the protocol's error content
            _print_json({"error": {"code": exc.code.value, "message": exc.message,
                                   "details": exc.details}})
        if isinstance(exc, DaemonUnreachable):
            print(f"bgbot ctl: {exc.message}", file=sys.stderr)
            return EXIT_UNREACHABLE
        print(f"bgbot ctl: error {exc.code.value}: {exc.message}", file=sys.stderr)
        field = exc.details.get("field")
        if field:
            print(f"  (field: {field})", file=sys.stderr)
        return EXIT_ERROR_REPLY


def _connection(args: argparse.Namespace) -> dict[str, Any]:
    """The endpoints, key and CURVE server key to use: the options, else the daemon's
    configuration (--config, else $BGBOT_CONFIG), else the client defaults; the events
    endpoint defaults to the one next to the control socket."""
    import os

    from ..core.errors import BgbotError
    from ..daemon.paths import events_next_to

    found: dict[str, Any] = {"endpoint": None, "events_endpoint": None, "key": None,
                             "key_file": None, "server_public_key": None}
    config_file = args.config or os.environ.get("BGBOT_CONFIG") or None
    if config_file:
        from ..daemon.config import ConfigError, load_config, load_control_key

        try:
            config = load_config(config_file)
            found["endpoint"] = config.request_endpoint
            found["events_endpoint"] = config.events_endpoint
            if config.control.allow_unsigned:
                found["key"] = b""
            elif not args.key_file:
                found["key"] = load_control_key(config)[0].reveal()
            curve = config.control.curve.secret_key_file
            if curve and not args.server_key and config.request_endpoint.startswith("tcp://"):
                found["server_public_key"] = _public_key_of(curve)
        except ConfigError as exc:
            raise BgbotError(f"--config: {exc}") from None
    if args.endpoint:
        found["endpoint"] = args.endpoint
        found["events_endpoint"] = events_next_to(args.endpoint)
    if args.events_endpoint:
        found["events_endpoint"] = args.events_endpoint
    if args.key_file:
        found["key"], found["key_file"] = None, args.key_file
    if args.server_key:
        found["server_public_key"] = Path(args.server_key).read_bytes().strip()
    args.events_unknown = bool(found["endpoint"] and not found["events_endpoint"])
    return found


def _check_events(args: argparse.Namespace) -> None:
    """Before a watch: the events endpoint of a tcp:// daemon cannot be guessed."""
    from ..core.errors import BgbotError

    if getattr(args, "events_unknown", False):
        raise BgbotError("the events endpoint of a tcp:// daemon cannot be guessed: give "
                         "--events-endpoint, or --config with the daemon's bgbot.toml")


def _public_key_of(secret_file: str) -> bytes:
    """The daemon's CURVE public key, read from its certificate (when this user may)."""
    import zmq.auth

    from ..core.errors import BgbotError

    try:
        public, _ = zmq.auth.load_certificate(secret_file)
    except (OSError, ValueError) as exc:
        raise BgbotError(f"--config: cannot read the daemon's CURVE certificate {secret_file} "
                         f"({exc}); give its public key with --server-key") from None
    return bytes(public)


def _client(args: argparse.Namespace) -> Any:
    from ..daemon.client import Client, DaemonUnreachable

    found = _connection(args)
    client = Client(found["endpoint"], found["events_endpoint"], key=found["key"],
                    key_file=found["key_file"], timeout=args.timeout,
                    server_public_key=found["server_public_key"])
    if client.endpoint.startswith("ipc://"):
        socket = Path(client.endpoint[len("ipc://"):])
        if not socket.exists():
            client.close()
            raise DaemonUnreachable(
                f"no daemon at {client.endpoint}: the socket {socket} does not exist - is the "
                "daemon running (bgbot serve, or: systemctl status bgbot)? --endpoint picks another")
    return client


def _print_json(content: Any) -> None:
    print(json.dumps(content))


def _options(pairs: Sequence[str], what: str) -> dict[str, Any]:
    """``KEY=VALUE`` words -> a map with on/off/true/false as booleans and numbers as numbers."""
    from ..agents.spec import option_value
    from ..core.errors import BgbotError

    out: dict[str, Any] = {}
    for pair in pairs:
        key, eq, raw = pair.partition("=")
        key = key.strip().replace("-", "_")
        if not eq or not key:
            raise BgbotError(f"{what}: expected KEY=VALUE, got {pair!r}")
        out[key] = option_value(raw.strip())
    return out




def _decision_args(args: argparse.Namespace) -> dict[str, Any]:
    from ..core.errors import BgbotError

    context: dict[str, Any] = {}
    if args.match_length is not None:
        context["match_length"] = args.match_length
    if args.score:
        mine, _, theirs = args.score.replace(",", "-").partition("-")
        try:
            context["my_score"], context["opponent_score"] = int(mine), int(theirs)
        except ValueError:
            raise BgbotError(f"--score: expected MINE-THEIRS such as 2-4, got {args.score!r}") from None
    if args.cube is not None:
        context["cube_value"] = args.cube
    if args.owner:
        context["cube_owner"] = args.owner
    if args.crawford:
        context["crawford"] = True
    return {"context": context or None, "rules": _options(args.rule, "--rule") or None,
            "agent": getattr(args, "agent", None)}


# --------------------------------------------------------------------------- commands


def _cmd_status(args: argparse.Namespace, client: Any) -> int:
    reply = client.status()
    if args.json:
        _print_json(reply)
        return 0
    m, f, load = reply["matches"], reply["frontends"], reply["load"]
    limit = f" (limit {m['limit']})" if m["limit"] else ""
    print(f"bgbot {reply['version']} (pid {reply['pid']}), {reply['state']}, "
          f"up {_duration(reply['uptime'])}")
    print(f"matches:   {m['active']} playing, {m['finished']} finished{limit}")
    print(f"frontends: {f['running']} of {f['total']} running")
    rollouts = f", {load['rollouts']} rollouts" if "rollouts" in load else ""  # 1.3
    print(f"load:      {load['requests']} requests, {load['queued']} queued{rollouts}, "
          "loadavg " + " ".join(f"{x:.2f}" for x in load["loadavg"]))
    return 0


def _cmd_hello(args: argparse.Namespace, client: Any) -> int:
    reply = client.hello()
    if args.json:
        _print_json(reply)
        return 0
    limits = reply["limits"]
    print(f"{reply['server']}, protocol {reply['protocol_version']}"
          f" ({'signed' if limits['signed'] else 'unsigned'} requests, "
          f"max {limits['max_message_bytes']} bytes, {limits['replay_window']:g} s window)")
    print("capabilities: " + (", ".join(reply["capabilities"]) or "none"))
    print("agents:")
    for name, summary in reply["agents"].items():
        print(f"  {name:12} {summary}")
    return 0


def _score_text(match: Mapping[str, Any]) -> str:
    return f"{match['score'][0]}-{match['score'][1]}"


def _length_text(match: Mapping[str, Any]) -> str:
    return f"money x{match['games']}" if match["length"] == 0 else f"{match['length']} pt"


def _cmd_matches(args: argparse.Namespace, client: Any) -> int:
    reply = client.match_list(state=args.state, limit=args.limit)
    if args.json:
        _print_json(reply)
        return 0
    rows = reply["matches"]
    if not rows:
        print("no matches")
        return 0
    print(f"{'MATCH':14} {'STATE':9} {'LENGTH':10} {'GAME':>4} {'SCORE':>7}  PLAYERS")
    for m in rows:
        print(f"{m['match_id']:14} {m['state']:9} {_length_text(m):10} {m['game']:>4} "
              f"{_score_text(m):>7}  {m['names'][0]} vs {m['names'][1]}")
    return 0


def _cmd_match_start(args: argparse.Namespace, client: Any) -> int:
    from ..core.errors import BgbotError

    if args.games is not None and not args.money:
        raise BgbotError("--games: only with --money (a match ends at its length)")
    def start() -> str:
        reply = client.match_start(
            args.players, length=0 if args.money else args.length,
            games=args.games if args.money else None,
            rules=_options(args.rule, "--rule") or None, seed=args.seed, names=args.names)
        match = reply["match"]
        if args.json:
            _print_json(reply)
        else:
            print(f"started match {match['match_id']}: {match['names'][0]} vs "
                  f"{match['names'][1]}, {_length_text(match)}, seed {reply['seed']}")
        sys.stdout.flush()
        names.remember(match["match_id"], match["names"])
        return str(match["match_id"])

    names = _Names(client)
    if not args.watch:
        start()
        return 0
    _check_events(args)
    try:  # every event from the match's start, whenever our subscription takes effect
        for msg_type, content in client.follow(start):
            if args.json:
                _print_json({"msg_type": msg_type, "content": content})
            elif msg_type != "match_started":  # the line above said it
                match_id = str(content.get("match_id", ""))
                print(describe_event(msg_type, content, partial(names.of, match_id)))
            sys.stdout.flush()
    except KeyboardInterrupt:
        return 0
    return 0


def _cmd_match_get(args: argparse.Namespace, client: Any) -> int:
    reply = client.match_get(args.match_id, mat=args.mat)
    if args.json:
        _print_json(reply)
        return 0
    if args.mat:
        sys.stdout.write(reply.get("mat", ""))
        return 0
    m = reply["match"]
    print(f"match {m['match_id']}: {m['names'][0]} ({m['players'][0]}) vs "
          f"{m['names'][1]} ({m['players'][1]})")
    print(f"  {_length_text(m)}, seed {reply['seed']}, {m['state']}"
          + (f", seat {m['winner']} won" if m["winner"] is not None else ""))
    crawford = " (Crawford game)" if reply["crawford"] else ""
    print(f"  game {m['game']}{crawford}, score {_score_text(m)}")
    if reply.get("position"):
        print(f"  position {reply['position']}")
    if reply.get("error"):
        print(f"  error: {reply['error']}")
    print(f"  started {_clock(m['started'])}" + (f", ended {_clock(m['ended'])}" if m["ended"] else ""))
    return 0


def _cmd_match_abort(args: argparse.Namespace, client: Any) -> int:
    reply = client.match_abort(args.match_id, args.reason)
    if args.json:
        _print_json(reply)
    else:
        m = reply["match"]
        print(f"match {m['match_id']} {m['state']} at {_score_text(m)} (game {m['game']})")
    return 0


def _cmd_frontends(args: argparse.Namespace, client: Any) -> int:
    from ..core.errors import BgbotError

    if args.action != "list" and not args.name:
        raise BgbotError(f"frontends {args.action}: which frontend? (NAME)")
    if args.action == "start":
        reply = client.frontend_start(args.name, kind=args.kind,
                                      options=_options(args.option, "--option") or None)
        rows = [reply["frontend"]]
    elif args.action == "stop":
        reply = client.frontend_stop(args.name)
        rows = [reply["frontend"]]
    else:
        reply = client.frontends()
        rows = reply["frontends"]
    if args.json:
        _print_json(reply)
        return 0
    if not rows:
        print("no frontends")
        return 0
    print(f"{'NAME':16} {'KIND':16} {'STATE':9} {'LISTEN':22} AGENT")
    for f in rows:
        print(f"{f['name']:16} {f['kind']:16} {f['state']:9} {f['listen'] or '-':22} {f['agent'] or '-'}"
              + (f"  ({f['error']})" if f.get("error") else ""))
    return 0


def _cmd_evaluate(args: argparse.Namespace, client: Any) -> int:
    reply = client.evaluate(args.position, **_decision_args(args))
    if args.json:
        _print_json(reply)
        return 0
    p = reply["probabilities"]
    print(f"win {p['win']:.1%}  gammon {p['win_gammon']:.1%}  backgammon {p['win_backgammon']:.1%}")
    print(f"lose {1 - p['win']:.1%}  gammon {p['lose_gammon']:.1%}  backgammon {p['lose_backgammon']:.1%}")
    print(f"equity {reply['equity']:+.3f} (cubeless money, player on roll; {reply['agent']})")
    return 0


def _cmd_play(args: argparse.Namespace, client: Any) -> int:
    from .plays import parse_dice

    dice = parse_dice(args.dice) if args.dice else None
    reply = client.choose_play(args.position, dice, candidates=args.candidates,
                               **_decision_args(args))
    if args.json:
        _print_json(reply)
        return 0
    print(reply["play"] or "(no legal play)")
    for rank, candidate in enumerate(reply.get("candidates", []), 1):
        equity = candidate["equity"]
        shown = "   n/a" if equity is None else f"{equity:+.3f}"
        print(f"  {rank:2}. {candidate['play'] or '(none)':28} {shown}")
    return 0


def _cmd_rollout(args: argparse.Namespace, client: Any) -> int:
    from ._rollouts import reported_progress, reported_table, rollout_progress
    from .plays import parse_dice

    dice = parse_dice([args.dice]) if args.dice else None
    show_bar, bar = rollout_progress(not args.json and not args.watch)
    best = "best equity" if dice else "equity"

    def progress(event: dict[str, Any]) -> None:
        if args.watch and args.json:
            _print_json({"msg_type": "rollout_progress", "content": event})
        elif args.watch:
            line = f"{event['trials']}/{event['total']} trials"
            if event["equity"] is not None:
                line += f", {best} {event['equity']:+.4f}"
                if event["se"] is not None:
                    line += f" ± {event['se']:.4f}"
            line += f" ({event['seconds']:.1f} s)"
            print(line + (f"; stopped: {event['stopped']}" if event["stopped"] else ""))
        else:
            show_bar(reported_progress(event))
        sys.stdout.flush()

    if args.watch:
        _check_events(args)
    wanted = args.watch or (not args.json and sys.stderr.isatty()
                            and not getattr(args, "events_unknown", False))
    decision = _decision_args(args)
    with bar:
        reply = client.rollout(
            args.position, dice, context=decision["context"], rules=decision["rules"],
            progress=progress if wanted else None, player=args.player, trials=args.trials,
            truncate=args.truncate, seed=args.seed, vr=args.vr, cubeful=args.cubeful,
            se_target=args.se_target, candidates=args.candidates if dice else None)
    if args.json:
        _print_json(reply)
    else:
        print(reported_table(reply))
    return 0


_ROLLOUT_EPILOG = """\
examples:
  bgbot ctl rollout 4HPwATDgc/ABMA --trials 1296 --truncate 10
                                         the position, for the player on roll
  bgbot ctl rollout 4HPwATDgc/ABMA --dice 31 --cubeless --watch
                                         the plays of a 3-1, with progress lines
  bgbot ctl rollout 'XGID=-b----E-C---eE---c-e----AA:0:0:1:00:6:3:1:7:10' --json
  bgbot ctl rollout 4HPwATDgc/ABMA --player gnubg:plies=0 --trials 144

The daemon plays the trials on its rollout workers (limits.rollout_workers; at most
limits.max_rollout_trials trials a rollout, limits.max_rollouts at once) and answers when
the rollout ends; the same settings and seed give the figures of bgbot rollout bit for bit.
Ctrl-C cancels it and prints what it had; a second Ctrl-C leaves at once. The player is an
agent a request may name: a kind without file or program options, or a named agent of the
daemon's bgbot.toml.
"""


def _cmd_watch(args: argparse.Namespace, client: Any) -> int:
    return _watch(args, client, args.match_id, args.idle)


def _cmd_reload(args: argparse.Namespace, client: Any) -> int:
    reply = client.reload()
    if args.json:
        _print_json(reply)
        return 0
    print(f"reloaded {reply['config']}")
    print("changed: " + (", ".join(reply["changed"]) or "nothing"))
    if reply["restart_needed"]:
        print("take effect after a restart: " + ", ".join(reply["restart_needed"]))
    return 0


def _cmd_shutdown(args: argparse.Namespace, client: Any) -> int:
    reply = client.shutdown(args.reason)
    if args.json:
        _print_json(reply)
    else:
        print(f"daemon {reply['state']}")
    return 0


def _cmd_keygen(args: argparse.Namespace) -> int:
    from ..daemon.paths import default_paths
    from ..daemon.protocol import write_key

    target = Path(args.file) if args.file else default_paths().key_file
    write_key(target, overwrite=args.force)
    print(f"wrote a new key to {target} (mode 0600); give the daemon and its clients the same file")
    return 0


# --------------------------------------------------------------------------- watching


class _Names:
    """Player names per match, asked for once (``seat N`` when the daemon does not know)."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self.known: dict[str, tuple[str, str]] = {}

    def remember(self, match_id: str, names: Sequence[str]) -> None:
        self.known[match_id] = (str(names[0]), str(names[1]))

    def of(self, match_id: str, seat: int) -> str:
        from ..daemon.client import DaemonError

        if match_id not in self.known:
            try:
                self.remember(match_id, self.client.match_get(match_id)["match"]["names"])
            except DaemonError:
                self.known[match_id] = ("seat 0", "seat 1")
        return self.known[match_id][seat]


_RESIGN = {1: "a single game", 2: "a gammon", 3: "a backgammon"}


def _dice_text(dice: Sequence[int]) -> str:
    """A roll as the .mat writes it: the higher die first (``31``, never ``13``)."""
    high, low = sorted((int(dice[0]), int(dice[1])), reverse=True)
    return f"{high}{low}"
_KIND = {1: "single", 2: "gammon", 3: "backgammon"}


def describe_event(msg_type: str, c: Mapping[str, Any], name: Callable[[int], str]) -> str:
    """One line for people about an event's content."""
    game = f"game {c['game']}: " if "game" in c else ""
    if msg_type == "match_started":
        length = "money" if c["length"] == 0 else f"{c['length']} points"
        return f"match started: {c['names'][0]} vs {c['names'][1]}, {length}, seed {c['seed']}"
    if msg_type == "game_started":
        flag = " (Crawford)" if c["crawford"] else " (post-Crawford)" if c["post_crawford"] else ""
        return f"game {c['game']} starts at {c['score'][0]}-{c['score'][1]}{flag}"
    if msg_type == "rolled":
        dice = _dice_text(c["dice"])
        if c["opening"]:
            return game + (f"opening roll {dice}, tie" if c["seat"] < 0
                           else f"opening roll {dice}, {name(c['seat'])} starts")
        return game + f"{name(c['seat'])} rolls {dice}"
    if msg_type == "played":
        dice = _dice_text(c["dice"])
        return game + f"{name(c['seat'])} plays {dice}: {c['play'] or '(cannot move)'}"
    if msg_type == "doubled":
        return game + f"{name(c['seat'])} doubles to {c['cube']}"
    if msg_type == "taken":
        return game + f"{name(c['seat'])} takes, cube {c['cube']}"
    if msg_type == "dropped":
        return game + f"{name(c['seat'])} drops"
    if msg_type == "beavered":
        return game + f"{name(c['seat'])} {'raccoons' if c['raccoon'] else 'beavers'} to {c['cube']}"
    if msg_type == "resigned":
        answer = "accepted" if c["accepted"] else "rejected"
        return game + f"{name(c['seat'])} resigns {_RESIGN.get(c['value'], c['value'])}, {answer}"
    if msg_type == "game_ended":
        how = {"normal": _KIND.get(c["kind"], str(c["kind"])), "drop": "drop",
               "resign": "resignation"}[c["ending"]]
        return (game + f"{name(c['winner'])} wins {c['points']} point"
                f"{'s' if c['points'] != 1 else ''} ({how}); score {c['score'][0]}-{c['score'][1]}")
    if msg_type == "match_ended":
        score = f"{c['score'][0]}-{c['score'][1]} after {c['games']} game{'s' if c['games'] != 1 else ''}"
        if c["winner"] is None:
            return f"session over: {score}"
        return f"match over: {name(c['winner'])} wins {score}"
    if msg_type == "match_aborted":
        return f"match {c['state']}: {c['reason']}"
    return f"{msg_type} {json.dumps(dict(c))}"


def _watch(args: argparse.Namespace, client: Any, match_id: str | None, idle: float | None) -> int:
    _check_events(args)
    names = _Names(client)
    if not match_id:
        client.status()  # the daemon answers (and trusts our key) before we wait for events
    if match_id:
        reply = client.match_get(match_id)
        names.remember(match_id, reply["match"]["names"])
        if reply["match"]["state"] != "playing":
            if not args.json:
                print(f"match {match_id} is {reply['match']['state']}: nothing to watch")
            return 0
    try:
        for event in client.watch(match_id, timeout=idle):
            content = event.content
            if args.json:
                _print_json({"msg_type": event.msg_type, "time": event.time, "content": content})
            else:
                event_match = str(content.get("match_id", ""))
                if event.msg_type == "match_started":
                    names.remember(event_match, content["names"])
                line = describe_event(event.msg_type, content, partial(names.of, event_match))
                print(line if match_id else f"[{event_match}] {line}")
            sys.stdout.flush()
            if match_id and event.msg_type in ("match_ended", "match_aborted"):
                return 0
    except KeyboardInterrupt:
        return 0
    return 0


# --------------------------------------------------------------------------- small helpers


def _duration(seconds: float) -> str:
    whole = int(seconds)
    days, rest = divmod(whole, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    text = f"{hours}h {minutes:02d}m {secs:02d}s" if hours or days else f"{minutes}m {secs:02d}s"
    return f"{days}d {text}" if days else text


def _clock(stamp: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(stamp))
