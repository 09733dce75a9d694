"""What the online-server commands share (``bgbot fibs``, ``bgbot bgammon``, ``bgbot
gnubg-player`` and ``bgbot KIND`` for a registered server kind that brings no command module
of its own, `register_kind`): one set of options (`add_server_options`: ``--config``,
``--agent``, ``--logs``, ``-v``), one default place for logs (`default_logs`: the daemon's logs
directory), accounts from the configuration file, and running clients until SIGINT / SIGTERM
while saying on stderr what happens to the connection (`ConsoleReport`): a server that cannot
be reached is said at the default log level, with the reason."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

from ..agents.players import SERVING_AGENT
from ..core.errors import BgbotError, FormatError
from ._args import match_length

if TYPE_CHECKING:
    from ..frontends.invitations import InvitationPolicy
    from ..frontends.server import ServerAccount, ServerClient

_EPILOG = """\
examples:
  bgbot {kind} --config ~/.config/bgbot/bgbot.toml          every [[{kind}.accounts]] entry
  bgbot {kind} --config bgbot.toml --user NAME              one of them

Reads the [[{kind}.accounts]] tables of bgbot's configuration file (the daemon's: `bgbot config
check FILE` checks it) and keeps those accounts logged in, as `bgbot serve` does, until Ctrl-C
or SIGTERM. Every match is logged as .mat under <logs dir>/{kind}/<frontend name> (--logs DIR:
under DIR). What happens to each connection is said on stderr.
Passwords: $BGBOT_{upper}_PASSWORD_<USER>, $BGBOT_{upper}_PASSWORD, password_file, then the
systemd credentials {kind}-<user>, {kind}-password, {kind}.
"""


def default_logs(command: str) -> Path:
    """Where a server command writes its logs unless told: ``<logs dir>/COMMAND``, the logs
    directory the daemon uses (`bgbot.daemon.paths`: ``~/.local/state/bgbot/logs`` for a
    user, ``/var/log/bgbot`` as root, ``$LOGS_DIRECTORY`` under systemd)."""
    from ..daemon.paths import default_paths

    return default_paths().logs_dir / command


def add_server_options(parser: argparse.ArgumentParser, command: str, section: str, *,
                       logs_what: str = ".mat files and the JSON-lines event log") -> None:
    """The options every server command has, spelled the same everywhere: ``--config FILE``
    (the daemon's configuration, whose ``[[SECTION]]`` tables it runs), ``--agent SPEC``
    (``--player`` is an old spelling), ``--logs DIR`` (``--log-dir`` is an old spelling) and
    ``-v``."""
    parser.add_argument("--config", metavar="FILE", default=None,
                        help=f"bgbot's configuration file (the daemon's, see config/bgbot.toml): "
                        f"run its [[{section}]] tables")
    parser.add_argument("--agent", metavar="SPEC", default=None,
                        help=f"the agent that plays (default {SERVING_AGENT})")
    parser.add_argument("--player", dest="agent", metavar="SPEC", help=argparse.SUPPRESS)
    parser.add_argument("--logs", type=Path, metavar="DIR", default=None,
                        help=f"where {logs_what} go (default <logs dir>/{command}, here "
                        f"{default_logs(command)})")
    parser.add_argument("--log-dir", dest="logs", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("-v", "--verbose", action="count", default=0,
                        help="-v: what it decides, -vv: every line on the wire (never a password)")


def add_policy_options(group: argparse._ArgumentGroup, *, unlimited: bool = False,
                       experience: bool = False) -> None:
    """The invitation policy's options (`bgbot.frontends.invitations.InvitationPolicy`), the
    same for every server command; ``unlimited`` and ``experience`` where the server has
    money matches and experience figures."""
    group.add_argument("--min-length", type=match_length, default=1, metavar="N",
                       help="decline matches shorter than N points (default 1)")
    group.add_argument("--max-length", type=match_length, default=25, metavar="N",
                       help="decline matches longer than N points (default 25)")
    if unlimited:
        group.add_argument("--unlimited", action="store_true",
                           help="accept unlimited (money) matches")
    group.add_argument("--min-rating", type=float, default=None, metavar="R",
                       help="decline opponents rated below R (or whose rating is not known)")
    group.add_argument("--max-rating", type=float, default=None, metavar="R",
                       help="decline opponents rated above R (or whose rating is not known)")
    if experience:
        group.add_argument("--min-experience", type=int, default=None, metavar="N",
                           help="decline opponents with fewer than N points of experience")
        group.add_argument("--max-experience", type=int, default=None, metavar="N",
                           help="decline opponents with more than N points of experience")
    group.add_argument("--allow", action="append", default=[], metavar="NAME",
                       help="play only these opponents (repeatable)")
    group.add_argument("--block", action="append", default=[], metavar="NAME",
                       help="never play these opponents (repeatable)")
    group.add_argument("--no-bots", action="store_true",
                       help="decline opponents that look like bots")
    group.add_argument("--cooldown", type=float, default=0.0, metavar="SECONDS",
                       help="pause before playing the same opponent again (default 0)")


def policy_from_args(args: argparse.Namespace) -> InvitationPolicy:
    """The `InvitationPolicy` of the options `add_policy_options` added."""
    from ..frontends.invitations import InvitationPolicy

    return InvitationPolicy(
        min_length=args.min_length, max_length=args.max_length,
        allow_unlimited=getattr(args, "unlimited", False),
        min_rating=args.min_rating, max_rating=args.max_rating,
        min_experience=getattr(args, "min_experience", None),
        max_experience=getattr(args, "max_experience", None),
        allow=tuple(args.allow), block=tuple(args.block), allow_bots=not args.no_bots,
        cooldown_seconds=args.cooldown)


def configured_accounts(kind: str, config_file: str, *, user: str | None = None,
                        logs: Path | None = None, state: Path | None = None
                        ) -> list[ServerAccount]:
    """The accounts of ``[[KIND.accounts]]`` in ``config_file`` (only ``user``'s when given),
    logging under ``logs`` (default ``<logs dir>/KIND/<frontend name>``, as the daemon does)
    with their invitation state in ``state`` (default ``<state dir>/<name>.policy.json``)."""
    from ..daemon.config import load_config
    from ..frontends.kinds import account_for, frontend_name

    config = load_config(config_file)
    entries = list(config.accounts(kind))
    if not entries:
        raise FormatError(f"{kind}.accounts", None, f"{config_file} has no [[{kind}.accounts]]")
    if user:
        entries = [e for e in entries if e.user.lower() == user.lower()]
        if not entries:
            raise FormatError("--user", user, f"not in {config_file}")
    accounts = []
    for entry in entries:
        name = frontend_name(kind, entry)
        accounts.append(account_for(
            kind, entry, logs_dir=logs or config.logs_dir / kind / name,
            state_path=state or config.state_dir / f"{name}.policy.json"))
    return accounts


class ConsoleReport:
    """What a person running a server command wants to see of one client's events, one line
    each on stderr: connected, logged in, why a connection failed or ended and when the next
    try is, a refusal for good, invitations accepted or declined, matches begun and over.
    Everything else stays in the JSON-lines log (``-v``/``-vv`` add the log lines)."""

    def __init__(self, command: str, client: ServerClient, out: Any = None) -> None:
        self.prefix = f"bgbot {command}: {client.account.frontend_name}"
        self.address = f"{client.account.host}:{client.account.port}"
        self.out = out
        self.connected = False

    def say(self, text: str) -> None:
        print(f"{self.prefix}: {text}", file=self.out if self.out is not None else sys.stderr,
              flush=True)

    def __call__(self, record: dict[str, Any]) -> None:
        event = record.get("event")
        if event == "connect":
            self.connected = True
            self.say(f"connected to {self.address}")
        elif event == "login":
            self.say(f"logged in as {record.get('user') or record.get('name')}")
        elif event == "login_failed":
            self.say(f"login refused: {record.get('reason')}")
        elif event == "disconnect":
            reason = record.get("reason")
            if reason == "stopped":
                self.say("stopped")
            elif self.connected:
                self.say(f"disconnected ({reason})")
            else:
                self.say(f"cannot connect to {self.address} ({reason})")
            self.connected = False
        elif event == "reconnect_wait":
            self.say(f"trying again in {float(record.get('seconds') or 0):.0f} s")
        elif event == "fatal":
            self.say(f"giving up: {record.get('reason')}")
        elif event == "invitation":
            what = f"{record.get('opponent')} ({_length(record.get('length'))})"
            self.say(f"accepting {what}" if record.get("accept") else
                     f"declining {what}: {record.get('reason')}")
        elif event in ("match_start", "match_resumed"):
            verb = "begins" if event == "match_start" else "resumes"
            self.say(f"the match with {record.get('opponent')} {verb}")
        elif event == "match_end":
            self.say(f"the match with {record.get('opponent')} is over" +
                     (f"; logged in {record['mat']}" if record.get("mat") else ""))


def _length(length: Any) -> str:
    if not length:
        return "unlimited"
    return f"{length} point{'s' if length != 1 else ''}"


def announce(command: str, account: ServerAccount) -> None:
    """The line a server command starts with: who, where, with what, and where it logs."""
    where = f"logs in {account.logs_dir}" if account.logs_dir is not None else "no logs"
    print(f"bgbot {command}: {account.frontend_name} on {account.host}:{account.port} with "
          f"{account.agent}; password: {account.password_source}; {where}", file=sys.stderr,
          flush=True)


def run_clients(clients: Sequence[ServerClient], command: str = "") -> None:
    """Run ``clients`` until SIGINT or SIGTERM (or until they all end by themselves), each
    announced and reported on stderr (`ConsoleReport`) unless it has its own ``on_event``;
    the players' caches are warmed first, announced on stderr."""
    from ..players.bearoff import warm_default_database

    for client in clients:
        kind = command or client.account.KIND
        announce(kind, client.account)
        if client.on_event is None:
            client.on_event = ConsoleReport(kind, client)
    warm_default_database(lambda text: print(f"bgbot: {text}", file=sys.stderr, flush=True))

    async def main() -> None:
        loop = asyncio.get_running_loop()
        stopping = asyncio.Event()
        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(sig, stopping.set)
        tasks = [asyncio.create_task(c.run()) for c in clients]
        waiter = asyncio.create_task(stopping.wait())
        running = set(tasks)
        while running and not stopping.is_set():
            done, _ = await asyncio.wait([waiter, *running], return_when=asyncio.FIRST_COMPLETED)
            running -= done
        for client in clients:
            await client.stop()
        await asyncio.gather(*tasks, return_exceptions=True)
        waiter.cancel()

    asyncio.run(main())


def register_kind(sub: "argparse._SubParsersAction[argparse.ArgumentParser]", kind: str,
                  description: str) -> None:
    """``bgbot KIND --config FILE [--user NAME] [--agent SPEC] [--logs DIR]``."""
    p = sub.add_parser(
        kind, help=description or f"keep the configured {kind} accounts logged in",
        description=f"Log in the [[{kind}.accounts]] of a configuration file and play until "
        "stopped, reconnecting with backoff.",
        epilog=_EPILOG.format(kind=kind, upper=kind.upper()),
        formatter_class=argparse.RawDescriptionHelpFormatter)
    add_server_options(p, kind, f"{kind}.accounts")
    p.add_argument("--user", default=None, help="only this account")
    p.set_defaults(func=_run_kind, server_kind=kind)


def _run_kind(args: argparse.Namespace) -> int:
    from ..frontends.kinds import server_kind, with_overrides

    kind = server_kind(args.server_kind)
    if not args.config:
        raise BgbotError(f"--config: give the configuration file with the "
                         f"[[{kind.name}.accounts]] to run")
    accounts = [with_overrides(a, agent=args.agent)
                for a in configured_accounts(kind.name, args.config, user=args.user,
                                             logs=args.logs)]
    clients = [kind.client_class()(account) for account in accounts]
    run_clients(clients, kind.name)
    return report_fatal(kind.name, clients)


def report_fatal(command: str, clients: Sequence[ServerClient]) -> int:
    """Say why each client that was refused for good stopped; 1 if any was, else 0."""
    failed = [c for c in clients if c.fatal]
    for client in failed:
        print(f"bgbot {command}: {client.account.frontend_name}: {client.fatal}",
              file=sys.stderr)
    return 1 if failed else 0
