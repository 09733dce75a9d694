"""What the online-server commands share: accounts from the configuration file, running
clients until SIGINT / SIGTERM, and ``bgbot KIND --config FILE`` for a registered server kind
that brings no command module of its own (`register_kind`)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

from ..core.errors import FormatError
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
or SIGTERM. Every match is logged as .mat under <logs dir>/{kind}/<frontend name>.
Passwords: $BGBOT_{upper}_PASSWORD_<USER>, $BGBOT_{upper}_PASSWORD, password_file, then the
systemd credentials {kind}-<user>, {kind}-password, {kind}.
"""


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


def run_clients(clients: Sequence[ServerClient]) -> None:
    """Run ``clients`` until SIGINT or SIGTERM (or until they all end by themselves); the
    players' caches are warmed first, announced on stderr."""
    from ..players.bearoff import warm_default_database

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
    """``bgbot KIND --config FILE [--user NAME] [--agent SPEC]``."""
    p = sub.add_parser(
        kind, help=description or f"keep the configured {kind} accounts logged in",
        description=f"Log in the [[{kind}.accounts]] of a configuration file and play until "
        "stopped, reconnecting with backoff.",
        epilog=_EPILOG.format(kind=kind, upper=kind.upper()),
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--config", metavar="FILE", required=True,
                   help=f"TOML file with [[{kind}.accounts]]")
    p.add_argument("--user", default=None, help="only this account")
    p.add_argument("--agent", default=None, metavar="SPEC", help="play with this agent spec")
    p.set_defaults(func=_run_kind, server_kind=kind)


def _run_kind(args: argparse.Namespace) -> int:
    from ..frontends.kinds import server_kind, with_overrides

    kind = server_kind(args.server_kind)
    accounts = [with_overrides(a, agent=args.agent)
                for a in configured_accounts(kind.name, args.config, user=args.user)]
    clients = [kind.client_class()(account) for account in accounts]
    run_clients(clients)
    failed = [c for c in clients if c.fatal]
    for client in failed:
        print(f"bgbot {kind.name}: {client.account.frontend_name}: {client.fatal}",
              file=sys.stderr)
    return 1 if failed else 0
