"""The `bgbot` command line: one entry point, one module per sub-command.

Every module of this package whose name does not start with ``_`` is a command: it has
``register(sub)``, which adds its sub-parser (with ``func`` to run) to ``bgbot``'s. The
commands are found by listing the package, so a new command is one new module here. A
registered server kind (`bgbot.frontends.kinds`) without a module of its name gets
``bgbot KIND --config FILE`` (`bgbot.cli._servers`).
``python -m bgbot.cli COMMAND ...`` is the same as ``bgbot COMMAND ...``.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import pkgutil
import sys
from typing import Sequence

from .. import __version__
from ..core.errors import BgbotError

_EPILOG = """\
examples:
  bgbot play                                heuristic vs pubeval, a 7-point match logged as .mat
  bgbot show 4HPwATDgc/ABMA                 draw the starting position
  bgbot show 'XGID=-b----E-C---eE---c-e----AA:0:0:1:00:6:3:1:7:10'
  bgbot plays 4HPwATDgc/ABMA 31             every legal play of an opening 3-1
  bgbot plays 4HPwATDgc/ABMA 3 1 --json     the same as JSON with resulting position ids
  bgbot play heuristic gnubg:plies=0        our player against GNU Backgammon's engine
  bgbot gnubg-player --listen 127.0.0.1:4321   be gnubg's external player
  bgbot analyze matches/some.mat            gnubg's error rates and luck for a match file
  bgbot rollout 4HPwATDgc/ABMA --dice 31    rank the plays of an opening 3-1 by rollouts
  bgbot serve                               run the daemon (ZeroMQ control protocol)
  bgbot ctl status                          ask a running daemon

Every sub-command has its own --help with examples.
"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="bgbot",
        description="bgbot: a GNU Backgammon-compatible backgammon bot. "
        "Play headless matches, answer gnubg and servers, log games as .mat.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"bgbot {__version__}")
    parser.add_argument("-v", "--verbose", action="count", default=0,
                        help="more log output on stderr (-v: what bgbot does, -vv: wire traffic)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    commands = command_modules()
    for name in commands:
        importlib.import_module(f"{__name__}.{name}").register(sub)
    from ..frontends.kinds import server_kinds
    from ._servers import register_kind

    for kind in server_kinds().values():
        if kind.name not in commands:
            register_kind(sub, kind.name, kind.description)
    return parser


def command_modules() -> list[str]:
    """The modules of this package that are commands (all but the ``_private`` ones)."""
    return sorted(info.name for info in pkgutil.iter_modules(__path__)
                  if not info.name.startswith("_"))


def _configure_logging(verbosity: int) -> None:
    """Readable log lines on stderr: warnings by default, more with -v / -vv.

    The one-time build of the bear-off database is always announced, since it makes the first
    run of a player pause for a few seconds.
    """
    level = logging.WARNING if verbosity == 0 else logging.INFO if verbosity == 1 else logging.DEBUG
    logging.basicConfig(level=level, format="%(asctime)s %(levelname)s %(name)s: %(message)s",
                        datefmt="%H:%M:%S")
    if verbosity == 0:
        logging.getLogger("bgbot.players.bearoff").setLevel(logging.INFO)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    _configure_logging(args.verbose)
    if not getattr(args, "func", None):
        parser.print_help()
        return 0
    try:
        result: int = args.func(args)
        return result
    except BgbotError as exc:
        print(f"bgbot {args.command}: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"bgbot {args.command}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # stdout's reader went away (`bgbot ... | head`): no traceback
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141

