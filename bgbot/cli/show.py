"""`bgbot show ID` or `bgbot show FILE.mat --game N --move M`: draw a position, as gnubg does.

The drawing is `bgbot.formats.display.draw_board`. An argument that names an existing file is
a match file, read with bgbot's `.mat` reader: the position is the one before the M-th move
(play) of game N, with the dice rolled for it, and its ids (Position ID, gnubg id, XGID) to
paste into gnubg or `bgbot hint`. Anything else is a position text (`bgbot.formats.anyid`).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from ..core.errors import BgbotError
from ..formats.display import draw_board


def register(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    show = sub.add_parser(
        "show",
        help="draw a position from a Position ID, gnubg id, XGID or FIBS board line",
        description="Draw a position in ASCII with pip counts and match information.",
        epilog="examples:\n  bgbot show 4HPwATDgc/ABMA\n  bgbot show 4HPwATDgc/ABMA:cAkAAAAAAAAA\n"
        "  bgbot show 'XGID=-b----E-C---eE---c-e----AA:0:0:1:00:6:3:1:7:10'\n"
        "  bgbot show 'board:You:someplayer:3:0:0:0:-2:0:0:0:0:5:0:3:0:0:0:-5:5:0:0:0:-3:0:-5:"
        "0:0:0:0:2:0:1:6:2:0:0:1:1:1:0:1:-1:0:25:0:0:0:0:2:0:0:0'\n"
        "  bgbot show matches/some.mat --game 2 --move 7     a position of a match file",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    show.add_argument("id", metavar="ID",
                      help="Position ID, PosID:MatchID, XGID=... or board:..., or a .mat file")
    show.add_argument("--game", type=int, default=None, metavar="N",
                      help="with a match file: game N (default 1)")
    show.add_argument("--move", type=int, default=None, metavar="M",
                      help="with a match file: before the M-th move of the game, both "
                      "players' counted (default 1)")
    show.add_argument("--gnubg", action="store_true",
                      help="read a board: line as gnubg writes it for external players "
                      "(default: as a FIBS server writes it)")
    show.add_argument("--seat", type=int, choices=(0, 1), default=None,
                      help="with --gnubg: our gnubg seat when one line cannot tell")
    show.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..formats.anyid import read_any

    if Path(args.id).is_file():
        print(match_file_position(Path(args.id), args.game or 1, args.move or 1))
        return 0
    if args.game is not None or args.move is not None:
        raise BgbotError(f"--game and --move are for a match file, and {args.id} is no file")
    try:
        shown = read_any(args.id, gnubg_dialect=args.gnubg, my_seat=args.seat)
    except BgbotError:
        if _looks_like_a_path(args.id):
            raise BgbotError(f"{args.id}: no such file (and not a position text either: a "
                             "Position ID, PosID:MatchID, XGID=... or board:... line)") from None
        raise
    print(draw_board(shown.position, mover_name=shown.mover_name,
                     opponent_name=shown.opponent_name, notes=shown.notes))
    return 0


def _looks_like_a_path(text: str) -> bool:
    """A name no position text has: a dot (``.mat``), or a start like a path's."""
    stripped = text.strip()
    return "." in stripped or stripped.startswith(("/", "~")) or stripped.count("/") > 1


def match_file_position(path: Path, game_number: int, move: int) -> str:
    """The drawing of the position before move ``move`` of game ``game_number`` of the match
    file ``path`` (both 1-based; the moves of both players counted), with its ids."""
    from ..core.game import AutoDoubled, Beavered, Moved, Raccooned, Taken
    from ..formats.gnubgid import GameState, MatchState, encode_gnubgid
    from ..formats.mat import parse_match
    from ..formats.xgid import encode_xgid, gnubg_to_xgid

    try:
        record = parse_match(path.read_bytes())
    except OSError as exc:
        raise BgbotError(f"{path}: cannot read it ({exc.strerror or exc})") from None
    if not 1 <= game_number <= len(record.games):
        raise BgbotError(f"--game {game_number}: {path} has {_count(len(record.games), 'game')}")
    game = record.games[game_number - 1]
    moves = [a for a in game.actions if isinstance(a, Moved)]
    if not 1 <= move <= len(moves):
        raise BgbotError(f"--move {move}: game {game_number} has {_count(len(moves), 'move')}")
    cube, owner = 1, -1
    target = moves[move - 1]
    for action in game.actions:
        if action is target:
            break
        if isinstance(action, AutoDoubled):
            cube = action.cube
        elif isinstance(action, (Taken, Beavered, Raccooned)):
            cube, owner = action.cube, action.seat
    seat = target.seat
    state = MatchState(cube=cube, cube_owner=owner, on_roll=seat, crawford=game.crawford,
                       game_state=GameState.PLAYING, turn=seat, dice=target.dice,
                       match_length=record.length, score=game.score,
                       jacoby=record.rules.jacoby if record.length == 0 else False)
    gnubg_id = encode_gnubgid(target.before, state)
    names = record.names
    high, low = max(target.dice), min(target.dice)
    kind = "money session" if not record.length else f"{record.length}-point match"
    notes = [
        f"{path.name}, game {game_number}" + (" (Crawford)" if game.crawford else "")
        + f", move {move} of {len(moves)}: {names[seat]} to play {high}{low}",
        f"{kind}, score {names[0]} {game.score[0]}, {names[1]} {game.score[1]}; cube {cube}"
        + (" centred" if owner < 0 else f" owned by {names[owner]}"),
        f"played: {target.play or 'no move'}",
        f"gnubg id: {gnubg_id}",
        f"XGID: {encode_xgid(gnubg_to_xgid(target.before, state, beavers=record.rules.beavers))}",
        f"hint:  bgbot hint '{gnubg_id}'",
    ]
    return draw_board(target.before, mover_name=names[seat], opponent_name=names[1 - seat],
                      notes=notes)


def _count(n: int, what: str) -> str:
    return f"{n} {what}{'' if n == 1 else 's'}"

