"""Recognise any position text a user may paste: Position ID, gnubg id, XGID, FIBS board line."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..core.errors import FormatError
from ..core.position import Position
from .fibsboard import Dialect, FibsBoard, Request, Side, parse_board
from .gnubgid import MatchState, decode_gnubgid
from .xgid import decode_xgid, xgid_to_gnubg


@dataclass(frozen=True)
class Shown:
    """A position (seen from the player on roll) with the words worth showing next to it."""

    position: Position
    mover_name: str = "X"
    opponent_name: str = "O"
    notes: list[str] = field(default_factory=list)


def _cube_text(value: int, owner: str | None) -> str:
    return f"cube {value}" + (f" owned by {owner}" if owner else " centred")


def _match_notes(state: MatchState, names: tuple[str, str]) -> list[str]:
    """Lines describing a gnubg MatchState; ``names`` are gnubg seats 0 and 1."""
    kind = "money session" if not state.match_length else f"{state.match_length}-point match"
    score = f"score {names[0]} {state.score[0]}, {names[1]} {state.score[1]}"
    flags = []
    if state.crawford:
        flags.append("Crawford game")
    if state.match_length == 0:
        flags.append("Jacoby" if state.jacoby else "no Jacoby")
    owner = None if state.cube_owner < 0 else names[state.cube_owner]
    notes = [f"{kind}, {score}" + (f" ({', '.join(flags)})" if flags else "")]
    roll = (f"rolled {state.dice[0]}{state.dice[1]}" if state.rolled else "to roll")
    notes.append(f"{names[state.on_roll]} on roll, {roll}; {_cube_text(state.cube, owner)}")
    if state.doubled:
        notes.append(f"{names[state.turn]} must answer a double to {state.cube * 2}")
    if state.resigned:
        notes.append(f"{names[1 - state.turn]} offers to resign "
                     f"{['', 'a single game', 'a gammon', 'a backgammon'][state.resigned]}")
    return notes


def _from_gnubg(position: Position, state: MatchState, source: str) -> Shown:
    names = ("player 0", "player 1")
    mover = names[state.on_roll]
    notes = _match_notes(state, names) + [source]
    return Shown(position, mover, names[1 - state.on_roll], notes)


def _from_board(board: FibsBoard) -> Shown:
    me, them = board.my_name, board.opponent_name
    mover, other = (me, them) if board.on_roll is Side.ME else (them, me)
    kind = "money" if board.is_money else f"{board.match_length}-point match"
    notes = [f"{kind}, score {me} {board.my_score}, {them} {board.opponent_score}"]
    owner = None if board.cube_owner is None else (me if board.cube_owner is Side.ME else them)
    what = {
        Request.ROLL_OR_DOUBLE: "to roll or double",
        Request.MOVE: f"to play {board.dice[0]}{board.dice[1]}" if board.dice else "to move",
        Request.TAKE: "has doubled",
        Request.GAME_OVER: "game over",
    }[board.kind]
    notes.append(f"{mover} on roll, {what}; {_cube_text(board.cube_value, owner)}")
    if board.crawford:
        notes.append("Crawford game")
    elif board.post_crawford:
        notes.append("post-Crawford")
    notes.append(f"read as a {'gnubg external-player' if board.dialect is Dialect.GNUBG else 'FIBS'} board line")
    return Shown(board.position, mover, other, notes)


def read_any(text: str, *, gnubg_dialect: bool = False, my_seat: int | None = None) -> Shown:
    """Decode ``text`` by its shape; raise FormatError naming the forms tried when none fits.

    ``board:`` lines are read as a FIBS server writes them unless ``gnubg_dialect`` (gnubg's
    external-player writer, where ``my_seat`` may be needed, see `fibsboard.parse_board`).
    """
    stripped = text.strip().strip("\x00").strip()
    if stripped.lower().startswith("board:"):
        dialect = Dialect.GNUBG if gnubg_dialect else Dialect.FIBS
        return _from_board(parse_board(stripped, dialect, my_seat=my_seat))
    if stripped.upper().startswith("XGID="):
        position, state = xgid_to_gnubg(decode_xgid(stripped))
        return _from_gnubg(position, state, "read as an XGID (uppercase = gnubg player 1)")
    if len(stripped) == 14 and ":" not in stripped:
        return Shown(Position.from_position_id(stripped))
    if ":" in stripped or stripped.lower().startswith("gnubgid"):
        position, state = decode_gnubgid(stripped)
        return _from_gnubg(position, state, "read as a gnubg id (Position ID:Match ID)")
    raise FormatError(
        "position text",
        text,
        "not a Position ID (14 characters), PosID:MatchID, XGID=... or board:... line",
    )
