"""The `bgbot` command line: one entry point, one sub-command per job."""

from __future__ import annotations

import argparse
import json
import logging
import sys
from typing import Callable, Sequence

from . import __version__
from .core.errors import BgbotError
from .core.position import Position, check_dice

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
  bgbot serve                               run the daemon (ZeroMQ control protocol)
  bgbot ctl status                          ask a running daemon

Every sub-command has its own --help with examples.
"""


def _parse_dice(words: Sequence[str]) -> tuple[int, int]:
    """Dice as ``31``, ``3 1``, ``3-1`` or ``3,1``."""
    text = "".join(words).replace("-", "").replace(",", "").replace(" ", "")
    if len(text) != 2 or not text.isdigit():
        raise BgbotError(
            f"dice: expected two digits 1-6 such as '31' or '3 1', got {' '.join(words)!r}"
        )
    return check_dice((int(text[0]), int(text[1])))


def _cmd_show(args: argparse.Namespace) -> int:
    from .display import draw_board
    from .formats.anyid import read_any

    shown = read_any(args.id, gnubg_dialect=args.gnubg, my_seat=args.seat)
    print(draw_board(shown.position, mover_name=shown.mover_name,
                     opponent_name=shown.opponent_name, notes=shown.notes))
    return 0


def _cmd_plays(args: argparse.Namespace) -> int:
    from .formats.anyid import read_any

    shown = read_any(args.id)
    position = shown.position
    dice = _parse_dice(args.dice)
    plays = position.legal_plays(dice)
    if args.json:
        out = {
            "position_id": position.position_id(),
            "dice": list(dice),
            "plays": [
                {"move": str(play), "position_id": position.apply(play).position_id()}
                for play in plays
            ],
        }
        print(json.dumps(out))
        return 0
    if not plays:
        print(f"no legal play with {dice[0]}{dice[1]}", file=sys.stderr)
        return 0
    for play in plays:
        print(play)
    return 0


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

    show = sub.add_parser(
        "show",
        help="draw a position from a Position ID, gnubg id, XGID or FIBS board line",
        description="Draw a position in ASCII with pip counts and match information.",
        epilog="examples:\n  bgbot show 4HPwATDgc/ABMA\n  bgbot show 4HPwATDgc/ABMA:cAkAAAAAAAAA\n"
        "  bgbot show 'XGID=-b----E-C---eE---c-e----AA:0:0:1:00:6:3:1:7:10'\n"
        "  bgbot show 'board:You:someplayer:3:0:0:0:-2:0:0:0:0:5:0:3:0:0:0:-5:5:0:0:0:-3:0:-5:"
        "0:0:0:0:2:0:1:6:2:0:0:1:1:1:0:1:-1:0:25:0:0:0:0:2:0:0:0'",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    show.add_argument("id", metavar="ID", help="Position ID, PosID:MatchID, XGID=... or board:...")
    show.add_argument("--gnubg", action="store_true",
                      help="read a board: line as gnubg writes it for external players "
                      "(default: as a FIBS server writes it)")
    show.add_argument("--seat", type=int, choices=(0, 1), default=None,
                      help="with --gnubg: our gnubg seat when one line cannot tell")
    show.set_defaults(func=_cmd_show)

    plays = sub.add_parser(
        "plays",
        help="list every legal play for a position and a roll, in gnubg notation",
        description="List every legal play, one per distinct resulting position, like gnubg's "
        "hint without equities.",
        epilog="examples:\n  bgbot plays 4HPwATDgc/ABMA 31\n  bgbot plays 4HPwATDgc/ABMA 6 6 --json",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    plays.add_argument("id", metavar="ID", help="Position ID, PosID:MatchID, XGID=... or board:...")
    plays.add_argument("dice", metavar="DICE", nargs="+", help="the roll: 31 or 3 1")
    plays.add_argument("--json", action="store_true",
                       help='print {"plays": [{"move": ..., "position_id": ...}]}; '
                       "position_id is the board after the play, still from the mover's side")
    plays.set_defaults(func=_cmd_plays)

    for register in _extra_commands():
        register(sub)
    return parser


def _extra_commands() -> list[Callable[[argparse._SubParsersAction[argparse.ArgumentParser]], None]]:
    from . import (cli_analyze, cli_bgammon, cli_chouette, cli_config, cli_ctl, cli_duel,
                   cli_fibs, cli_gnubg_player, cli_play, cli_serve, cli_ubgi)

    return [
        cli_play.register,
        cli_duel.register,
        cli_gnubg_player.register,
        cli_analyze.register,
        cli_serve.register,
        cli_ctl.register,
        cli_config.register,
        cli_chouette.register,
        cli_ubgi.register,
        cli_fibs.register,
        cli_bgammon.register,
    ]


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


if __name__ == "__main__":
    sys.exit(main())
