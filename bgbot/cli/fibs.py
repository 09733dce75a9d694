"""`bgbot fibs`: keep bgbot logged in on FIBS (or another CLIP server) and play by policy."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, cast

from ..agents.players import SERVING_AGENT
from ._servers import add_policy_options

if TYPE_CHECKING:
    from ..frontends.fibs.client import FibsAccount

_EPILOG = """\
examples:
  BGBOT_FIBS_PASSWORD=... bgbot fibs --user MyBot
  bgbot fibs --host 127.0.0.1 --port 4321 --user MyBot --max-length 7 --cooldown 600
  bgbot fibs --user MyBot --invite SomeFriend:5 --greeting 'Hi {opponent}, good luck!'
  bgbot fibs --config ~/.config/bgbot/bgbot.toml          every [[fibs.accounts]] entry
  bgbot fibs --config bgbot.toml --user MyBot             one of them

The password comes from $BGBOT_FIBS_PASSWORD_<USER>, then $BGBOT_FIBS_PASSWORD, then the
account's password_file (--config), then the systemd credentials fibs-<user>, fibs-password,
fibs ($CREDENTIALS_DIRECTORY); it is never logged. Accounts are created on FIBS with
its telnet guest login first. Every match is written as a .mat file (and every event as JSON
lines) under --logs; the invitation state (cool-downs) survives restarts in --state.
Stop with Ctrl-C or SIGTERM: the bot logs out and FIBS saves a match in progress, which the
bot resumes when it comes back.

--config reads the [[fibs.accounts]] tables of bgbot's configuration file (the daemon's:
config/bgbot.toml documents every key; `bgbot config check FILE` checks it), the same tables
`bgbot serve` keeps logged in.
"""


def register(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    p = sub.add_parser(
        "fibs",
        help="play on FIBS (CLIP): accept invitations by policy, log every match",
        description="Log in to a FIBS-compatible server and play until stopped, reconnecting "
        "with backoff and resuming interrupted matches.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--config", metavar="FILE", help="TOML file with [[fibs.accounts]]")
    p.add_argument("--host", default=None, help="server (default fibs.com)")
    p.add_argument("--port", type=int, default=None, help="port (default 4321)")
    p.add_argument("--user", default=None, help="account name (with --config: pick this one)")
    p.add_argument("--agent", default=None, metavar="SPEC",
                   help=f"the brain, an agent spec (default {SERVING_AGENT})")
    p.add_argument("--logs", metavar="DIR", default=None,
                   help="where .mat files and event logs go (default <state>/fibs)")
    p.add_argument("--state", metavar="FILE", default=None,
                   help="invitation state file (default <state dir>/fibs-<user>.json)")
    p.add_argument("--invite", action="append", default=[], metavar="NAME[:LEN]",
                   help="invite this opponent when free (repeatable; LEN or 'unlimited')")
    p.add_argument("--greeting", default="", help="told to each new opponent ({opponent})")
    p.add_argument("--farewell", default="", help="told after each match ({opponent})")
    add_policy_options(p.add_argument_group("invitation policy"), unlimited=True,
                       experience=True)
    p.add_argument("-v", "--verbose", action="count", default=0,
                   help="-v: decisions, -vv: every line on the wire (never the password)")
    p.set_defaults(func=run)


def _accounts(args: argparse.Namespace) -> list[FibsAccount]:
    from pathlib import Path

    from ..util import resolve_secret
    from ..core.errors import FormatError
    from ..daemon.paths import default_paths
    from ..frontends.fibs.client import FibsAccount, parse_invite
    from ..frontends.kinds import with_overrides
    from ._servers import configured_accounts, policy_from_args

    if args.config:
        accounts = configured_accounts("fibs", args.config, user=args.user,
                                       logs=Path(args.logs) if args.logs else None,
                                       state=Path(args.state) if args.state else None)
        return [cast(FibsAccount, with_overrides(a, host=args.host, port=args.port,
                                                 agent=args.agent)) for a in accounts]
    if not args.user:
        raise FormatError("--user", None, "give --user (or --config with [[fibs.accounts]])")
    password, source = resolve_secret("fibs", args.user)
    if not password:
        raise FormatError("password", None, "set $BGBOT_FIBS_PASSWORD (or use --config or the "
                                            "systemd credential fibs-password)")
    policy = policy_from_args(args)
    paths = default_paths()
    logs = Path(args.logs) if args.logs else paths.logs_dir / "fibs"
    state = Path(args.state) if args.state else paths.state_dir / f"fibs-{args.user}.json"
    return [FibsAccount(
        user=args.user, password=password, password_source=source,
        host=args.host or "fibs.com", port=args.port or 4321, agent=args.agent or SERVING_AGENT,
        policy=policy, invite=tuple(parse_invite(i, "--invite") for i in args.invite),
        greeting=args.greeting, farewell=args.farewell, logs_dir=logs, state_path=state)]


def run(args: argparse.Namespace) -> int:
    from ..frontends.fibs.client import FibsClient
    from ._servers import run_clients

    run_clients([FibsClient(account) for account in _accounts(args)])
    return 0
