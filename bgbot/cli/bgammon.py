"""`bgbot bgammon`: play on bgammon.org (or any bgammon server) as a bot account."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from ..agents.players import SERVING_AGENT
from ..deciders import known_agents
from ._args import match_length
from ._servers import add_policy_options, add_server_options

if TYPE_CHECKING:
    from ..frontends.bgammon.client import BgammonAccount

_EPILOG = """\
how it works:
  bgammon.org admits bots only under names starting with BOT_ (log in as bot_NAME), and a bot
  may not join a human's table: bgbot opens a public table of --length points and waits.
  Whoever sits down is judged by the invitation policy (--min-length/--max-length, --block,
  --allow, --no-bots, --min-rating/--max-rating, --cooldown); a declined opponent is told why
  (unless --quiet-declines), the reason is logged, and bgbot opens a new table. A dropped
  connection is retried with jittered exponential backoff; the server puts bgbot back into
  its unfinished match. Every match is written to --logs as a .mat file, every event as
  JSON lines (bgammon-USER.jsonl); what happens to the connection is said on stderr.

  The password is never taken from the command line (other users could read it in `ps`):
  BGBOT_BGAMMON_PASSWORD_<USER> or BGBOT_BGAMMON_PASSWORD in the environment, --password-file,
  or the systemd credential bgammon-<user> / bgammon-password / bgammon. Without one bgbot
  logs in as a guest.

  Note: bgammon scores a declined double like a resignation (the cube times 1, 2 or 3 by the
  position), so bgbot takes a double when declining would cost more than the cube
  (--drop-as-agent turns that off).

--config FILE runs the [[bgammon.accounts]] tables of bgbot's configuration file (the
daemon's: config/bgbot.toml documents every key), as `bgbot serve` does.

agents (--agent NAME[:key=value,...]):
{agents}

examples:
  bgbot bgammon --user bot_mybot
  BGBOT_BGAMMON_PASSWORD=... bgbot bgammon --user bot_mybot --length 7 --agent heuristic:plies=1
  bgbot bgammon --host 127.0.0.1 --port 1337 --user bot_test --block Guest_troll --cooldown 600
  bgbot bgammon --config ~/.config/bgbot/bgbot.toml       every [[bgammon.accounts]] entry
"""


def register(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    """Add the ``bgammon`` sub-command to bgbot's command line."""
    parser = sub.add_parser(
        "bgammon",
        help="play on bgammon.org as a bot account (hosts tables, plays, logs .mat files)",
        description="Log in to a bgammon server as a bot, host matches and play them with a "
        "bgbot agent. Runs until interrupted (Ctrl-C).",
        epilog=_epilog(), formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_arguments(parser)
    parser.set_defaults(func=run)


def _epilog() -> str:
    return _EPILOG.format(agents="\n".join(f"  {name:<11}{summary}" for name, summary in known_agents().items()))


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_server_options(parser, "bgammon", "bgammon.accounts")
    parser.add_argument("--host", default=None, help="server (default bgammon.org)")
    parser.add_argument("--port", type=int, default=None, help="TCP port (default 1337)")
    parser.add_argument("--user", default=None, metavar="bot_NAME",
                        help="login name; bgammon requires bot_ (shown as BOT_); with --config: "
                        "pick this account")
    parser.add_argument("--password-file", type=Path, metavar="FILE",
                        help="read the password from FILE (first line)")
    parser.add_argument("--length", type=match_length, default=5, metavar="N",
                        help="length of the matches bgbot hosts (default 5)")
    parser.add_argument("--match-name", default="", metavar="TEXT", help="table name")
    parser.add_argument("--greeting", default="", metavar="TEXT",
                        help="said when a match starts; {opponent} is replaced")
    parser.add_argument("--farewell", default="", metavar="TEXT",
                        help="said when a match ends; {opponent} is replaced")
    add_policy_options(parser.add_argument_group("invitation policy"))
    parser.add_argument("--quiet-declines", action="store_true",
                        help="leave a declined table without saying why")
    parser.add_argument("--join-bot-tables", action="store_true",
                        help="also join open tables other bots host")
    parser.add_argument("--drop-as-agent", action="store_true",
                        help="drop whenever the agent says so, whatever bgammon charges")
    parser.add_argument("--state", type=Path, default=None, metavar="FILE",
                        help="JSON file remembering when each opponent last played (cool-down)")
    parser.add_argument("--keepalive", type=float, default=25.0, metavar="SECONDS",
                        help="write at least this often (bgammon drops clients silent for 40 s)")
    parser.add_argument("--seed", type=int, default=0, metavar="S", help="seed for agents with noise")


def accounts_from_args(args: argparse.Namespace) -> list[BgammonAccount]:
    """The accounts to run: the [[bgammon.accounts]] of --config (with --host, --port,
    --agent, --logs and --state over them), else the one the options describe."""
    from typing import cast

    from ..core.errors import BgbotError
    from ..frontends.bgammon.client import BgammonAccount
    from ..frontends.kinds import with_overrides
    from ._servers import configured_accounts, default_logs, policy_from_args
    from ..util import resolve_secret

    if args.config:
        return [cast(BgammonAccount, with_overrides(a, host=args.host, port=args.port,
                                                    agent=args.agent))
                for a in configured_accounts("bgammon", args.config, user=args.user,
                                             logs=args.logs, state=args.state)]
    if not args.user:
        raise BgbotError("--user: give the account, bot_NAME (or --config with "
                         "[[bgammon.accounts]])")
    password, source = resolve_secret(
        "bgammon", args.user,
        file=str(args.password_file) if args.password_file is not None else None)
    policy = policy_from_args(args)
    return [BgammonAccount(
        user=args.user, host=args.host or "bgammon.org", port=args.port or 1337,
        password=password, password_source=source if password else "none (guest login)",
        agent=args.agent or SERVING_AGENT, match_length=args.length, match_name=args.match_name,
        policy=policy, greeting=args.greeting, farewell=args.farewell,
        explain_declines=not args.quiet_declines, join_bot_matches=args.join_bot_tables,
        take_when_drop_costs_more=not args.drop_as_agent,
        logs_dir=args.logs or default_logs("bgammon"), state_path=args.state,
        keepalive_seconds=args.keepalive, seed=args.seed)]


def run(args: argparse.Namespace) -> int:
    """Play until interrupted; 1 when the server refused a login for good."""
    from ..frontends.bgammon.client import BgammonClient
    from ._servers import report_fatal, run_clients

    clients = [BgammonClient(account) for account in accounts_from_args(args)]
    run_clients(clients, "bgammon")
    return report_fatal("bgammon", clients)
