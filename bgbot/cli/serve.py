"""`bgbot serve`: run the daemon (ZeroMQ control protocol, hosted matches, frontends)."""

from __future__ import annotations

import argparse

_EPILOG = """\
examples:
  bgbot serve                              defaults (or $BGBOT_CONFIG / ~/.config/bgbot/bgbot.toml)
  bgbot serve --config /etc/bgbot/bgbot.toml
  BGBOT_LOGGING__LEVEL=debug bgbot serve   log wire traffic too

Requests go to ipc://<runtime dir>/control (a ROUTER; use `bgbot ctl`), events come out of
ipc://<runtime dir>/events (a PUB, one topic per match). Every hosted match is journalled in
<state dir>/state.db and resumes after a restart; its .mat file is rewritten at each game end.
SIGTERM stops cleanly (exit 0), SIGHUP reloads the configuration. Under systemd use
systemd/bgbot.service (Type=notify, watchdog). The protocol: protocol/SPEC.md.
"""


def register(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    p = sub.add_parser(
        "serve",
        help="run the daemon: control protocol, hosted matches, gnubg frontends",
        description="Run the bgbot daemon in the foreground until SIGTERM or a shutdown "
        "request.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--config", metavar="FILE", default=None,
                   help="configuration file (default: $BGBOT_CONFIG, else the standard place; "
                   "a missing default file means all defaults)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..daemon.config import load_config
    from ..daemon.server import serve

    config = load_config(args.config)
    return serve(config, config_file=args.config if args.config else config.source)
