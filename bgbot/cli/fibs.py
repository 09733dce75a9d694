"""`bgbot fibs`: keep bgbot logged in on FIBS (or another CLIP server) and play by policy."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, cast

from ..agents.players import SERVING_AGENT
from ._servers import add_policy_options, add_server_options

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
lines) under --logs; the invitation state (cool-downs) survives restarts in --state. What
happens to the connection (connected, logged in, why it failed and when it tries again) is
said on stderr; -v and -vv add the log.
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
    add_server_options(p, "fibs", "fibs.accounts")
    p.add_argument("--host", default=None, help="server (default fibs.com)")
    p.add_argument("--port", type=int, default=None, help="port (default 4321)")
    p.add_argument("--user", default=None, help="account name (with --config: pick this one)")
    p.add_argument("--state", metavar="FILE", default=None,
                   help="invitation state file (default <state dir>/fibs-<user>.json)")
    p.add_argument("--invite", action="append", default=[], metavar="NAME[:LEN]",
                   help="invite this opponent when free (repeatable; LEN or 'unlimited')")
    p.add_argument("--greeting", default="", help="told to each new opponent ({opponent})")
    p.add_argument("--farewell", default="", help="told after each match ({opponent})")
    add_policy_options(p.add_argument_group("invitation policy"), unlimited=True,
                       experience=True)
    p.set_defaults(func=run)


def _accounts(args: argparse.Namespace) -> list[FibsAccount]:
    from pathlib import Path

    from ..util import resolve_secret
    from ..core.errors import BgbotError
    from ..daemon.paths import default_paths
    from ..frontends.fibs.client import FibsAccount, parse_invite
    from ..frontends.kinds import with_overrides
    from ._servers import configured_accounts, default_logs, policy_from_args

    if args.config:
        accounts = configured_accounts("fibs", args.config, user=args.user, logs=args.logs,
                                       state=Path(args.state) if args.state else None)
        return [cast(FibsAccount, with_overrides(a, host=args.host, port=args.port,
                                                 agent=args.agent)) for a in accounts]
    if not args.user:
        raise BgbotError("--user: give the account (or --config with [[fibs.accounts]])")
    password, source = resolve_secret("fibs", args.user)
    if not password:
        raise BgbotError(f"no password for {args.user}: set $BGBOT_FIBS_PASSWORD (or use "
                         "--config, or the systemd credential fibs-password)")
    policy = policy_from_args(args)
    paths = default_paths()
    logs = args.logs or default_logs("fibs")
    state = Path(args.state) if args.state else paths.state_dir / f"fibs-{args.user}.json"
    return [FibsAccount(
        user=args.user, password=password, password_source=source,
        host=args.host or "fibs.com", port=args.port or 4321, agent=args.agent or SERVING_AGENT,
        policy=policy, invite=tuple(parse_invite(i, "--invite") for i in args.invite),
        greeting=args.greeting, farewell=args.farewell, logs_dir=logs, state_path=state)]


def run(args: argparse.Namespace) -> int:
    from ..frontends.fibs.client import FibsClient
    from ._servers import report_fatal, run_clients

    clients = [FibsClient(account) for account in _accounts(args)]
    run_clients(clients, "fibs")
    return report_fatal("fibs", clients)
