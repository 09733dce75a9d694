"""What `bgbot hint`, `bgbot plays` and `bgbot show` share: a position text read with its
decision context and dice, and the heuristic player's ranking of the legal plays.

The ranking is `HeuristicPlayer.rank_plays` -- the search `choose_play` makes, so the first
play is the one the player would choose (without noise) -- and the daemon ranks
``choose_play`` candidates with the same method (`bgbot.daemon.decisions`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

from ..core.context import Context
from ..core.errors import BgbotError
from ..core.position import Position, check_dice
from ..core.rules import Rules
from ..formats.anyid import Shown, read_any

if TYPE_CHECKING:
    from ..players.heuristic import HeuristicPlayer, RankedPlay

__all__ = ["Situation", "heuristic_player", "parse_dice", "read_situation"]


@dataclass(frozen=True)
class Situation:
    """A position text, read: the board from the player on roll, that player's context, the
    dice the text says were rolled (None: not rolled), and what `bgbot show` draws."""

    position: Position
    context: Context
    dice: tuple[int, int] | None
    shown: Shown


def read_situation(text: str, *, gnubg_dialect: bool = False,
                   my_seat: int | None = None) -> Situation:
    """Any position text `bgbot.formats.anyid.read_any` reads, with its context: a Position
    ID alone is a money game with the cube centred; a gnubg id or XGID brings the cube, the
    score, the Crawford flag, the Jacoby rule and the dice; a board line its own."""
    from ..daemon.wire import context_from_state
    from ..formats.fibsboard import Dialect, parse_board
    from ..formats.gnubgid import check_match_length, check_playable, decode_gnubgid
    from ..formats.xgid import decode_xgid, xgid_to_gnubg

    shown = read_any(text, gnubg_dialect=gnubg_dialect, my_seat=my_seat)
    stripped = text.strip().strip("\x00").strip()
    rules = Rules()
    if stripped.lower().startswith("board:"):
        board = parse_board(stripped, Dialect.GNUBG if gnubg_dialect else Dialect.FIBS,
                            my_seat=my_seat)
        check_match_length("match length", board.match_length)
        return Situation(board.position, board.context(side=board.on_roll), board.dice, shown)
    if stripped.upper().startswith("XGID="):
        xgid = decode_xgid(stripped)
        position, state = xgid_to_gnubg(xgid)
        rules = Rules(beavers=xgid.beavers)
    elif ":" in stripped or stripped.lower().startswith("gnubgid"):
        position, state = decode_gnubgid(stripped)
    else:
        return Situation(shown.position, Context(rules=rules), None, shown)
    check_playable(state, "position")
    dice = (state.dice[0], state.dice[1]) if state.rolled else None
    return Situation(position, context_from_state(state, state.on_roll, rules), dice, shown)


def parse_dice(words: Sequence[str]) -> tuple[int, int]:
    """Dice as ``31``, ``3 1``, ``3-1`` or ``3,1``."""
    text = "".join(words).replace("-", "").replace(",", "").replace(" ", "")
    if len(text) != 2 or not text.isdigit():
        raise BgbotError(
            f"dice: expected two digits 1-6 such as '31' or '3 1', got {' '.join(words)!r}"
        )
    return check_dice((int(text[0]), int(text[1])))


def dice_for(situation: Situation, words: Sequence[str]) -> tuple[int, int] | None:
    """The dice typed (``words``), else those of the position text; both must agree."""
    if not words:
        return situation.dice
    typed = parse_dice(words)
    if situation.dice is not None and sorted(situation.dice) != sorted(typed):
        raise BgbotError(f"dice: the position says {situation.dice[0]}{situation.dice[1]} were "
                         f"rolled, not {typed[0]}{typed[1]}")
    return typed


def heuristic_player(spec: str) -> HeuristicPlayer:
    """The heuristic player an agent spec names (``heuristic[:plies=N,...]``); other kinds
    cannot rank plays."""
    from ..agents.base import PlayerAgent
    from ..deciders import create_agent
    from ..players.heuristic import HeuristicPlayer

    agent = create_agent(spec)
    player = agent.player if isinstance(agent, PlayerAgent) else None
    if not isinstance(player, HeuristicPlayer):
        raise BgbotError(f"--player {spec}: only the heuristic player ranks plays "
                         "(heuristic[:plies=N,...])")
    return player


def ranked_plays(player: HeuristicPlayer, situation: Situation,
                 dice: tuple[int, int]) -> list[RankedPlay]:
    """Every legal play of ``dice``, best first, as ``player`` weighs them."""
    return player.rank_plays(situation.position, dice, situation.context)
