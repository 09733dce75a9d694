"""The ``.mat`` mirror of a bgammon.org match: the server's boards replayed through core
`Game`s (one per game), written as a ``.mat`` file after every game, so gnubg imports what was
really played; a turn the boards cannot explain marks the game lost (left out of the file).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...core.errors import IllegalAction
from ...core.game import Game, Phase
from ...core.position import Play, Position
from ...core.rules import Rules
from ...formats.mat import MatchRecord
from ...referee.events import action_record
from ..server import MatMirror
from . import protocol as bp

__all__ = ["MatchRun"]


def _seat_name(player: int) -> str:
    return "me" if player == 1 else "opponent"


class MatchRun(MatMirror):
    """One match mirrored in core `Game`s and written as a .mat file after every game."""

    def __init__(self, me: str, opponent: str, length: int, game_id: int, path: Path | None,
                 site: str = "bgammon.org") -> None:
        self.rules = Rules(cube=length != 1, cube_limit=64)
        super().__init__(MatchRecord.create(length, (me, opponent), self.rules,
                                            tags={"Site": site}), path)
        self.me, self.opponent, self.length, self.game_id = me, opponent, length, game_id
        self.partial = False
        """The current game was joined under way (unknown start): not written to the .mat."""
        self.finished_games = 0
        self.finalized = True
        self.over = False
        self.lost = False
        """The mirror could not follow the current game (an action the rules core refuses, or
        boards missed): it waits for the game's end and leaves it out of the .mat."""

    # ------------------------------------------------------------------ sync from boards

    def observe(self, s: bp.BoardState) -> list[tuple[str, dict[str, Any]]]:
        """Bring the mirror up to the board ``s``; returns the game events it found."""
        out: list[tuple[str, dict[str, Any]]] = []
        if s.variant != 0 or s.spectating:
            return out
        if self.lost:
            g = self.game
            if g is None or s.turn != 0 or s.winner or (s.me.points, s.opponent.points) == g.score:
                return out
            out += self.finalize(None)  # its win event was missed; a new game has begun
            self.lost, self.game = False, None
        pos = s.position()
        if self.game is None or (self.game.is_over and s.winner == 0 and
                                 (s.turn == 0 or pos == Position.initial())):
            if self.game is not None and not self.finalized:
                out += self.finalize(None)
            if s.winner or (s.turn != 0 and s.moves):
                return out  # wait for a board between turns to start from
            score = (s.me.points, s.opponent.points)
            if s.turn == 0 or (pos == Position.initial() and not s.moves and s.dice is not None):
                self.game = Game(self.rules, self.length, score, s.crawford == 1,
                                 post_crawford=s.crawford == 2)
                self.partial = False
            else:
                owner = None if s.cube_player == 0 else s.cube_player - 1
                self.game = Game.start_from(
                    s.position_for(s.turn), s.turn - 1, rules=self.rules, match_length=self.length,
                    score=score, crawford=s.crawford == 1, post_crawford=s.crawford == 2,
                    cube_value=s.cube_value, cube_owner=owner,
                    dice=s.dice)
                self.partial = True
            self.finalized = False
            out.append(("game_start", {"game": self.finished_games + 1, "score": list(score),
                                       "crawford": s.crawford == 1, "resumed": self.partial}))
        game = self.game
        for _ in range(8):
            seen = len(game.history)
            if not self._step(game, s):
                break
            out += self._records(game, seen)
        return out

    def _records(self, g: Game, seen: int) -> list[tuple[str, dict[str, Any]]]:
        """The game's actions since ``seen``, in their one plain form (`action_record`), each
        with ``by``: "me" or "opponent"."""
        out = []
        for action in g.history[seen:]:
            found = action_record(action)
            if found is not None:
                kind, fields = found
                seat = getattr(action, "seat", getattr(action, "winner", None))
                if kind == "resign":
                    seat = fields["seat"]
                out.append((kind, {**fields, "by": _seat_name(seat + 1) if seat is not None
                                   else None}))
        return out

    def _step(self, g: Game, s: bp.BoardState) -> bool:
        """Make the next action the board ``s`` shows; False when there is none (yet)."""
        phase = g.phase
        if phase is Phase.OPENING:
            if s.turn and s.dice and not s.moves:
                hi, lo = max(s.roll), min(s.roll)
                die0, die1 = (hi, lo) if s.turn == 1 else (lo, hi)
                g.opening_roll(die0, die1)
                return True
            return False
        seat = g.seat_on_roll
        player = seat + 1
        if phase is Phase.ROLL:
            if s.turn != player:
                if s.turn and not s.winner and s.position_for(player) != g.position:
                    raise IllegalAction(f"missed {_seat_name(player)}'s whole turn (no board "
                                        f"showed its dice)")
                return False
            if s.double_offered:
                g.double()
                return True
            if s.dice and (s.moves or s.position_for(player) == g.position):
                g.roll(s.dice)  # the board's dice are this turn's, even with moves under way
                return True
            return False
        if phase is Phase.MOVE:
            if s.turn == player and not s.winner:
                return False
            target = s.position_for(player)
            results = g.play_results()
            if not results and target == g.position:
                g.move(Play())
                return True
            for play, after in results:
                if after == target:
                    g.move(play)
                    return True
            raise IllegalAction(f"the board after {_seat_name(player)}'s turn is not a legal play "
                                f"of {g.dice} from {g.position.position_id()}")
        if phase is Phase.TAKE:
            answering = g.seat_to_act
            assert answering is not None
            if (not s.double_offered and not s.winner and s.cube_player == answering + 1
                    and s.cube_value == g.offered_cube):
                g.take()
                return True
        return False

    def on_win(self, winner_is_me: bool, points: int, resigned: str) -> list[tuple[str, dict[str, Any]]]:
        """A ``win`` event: ends the mirror game by a drop or a resignation if the boards did
        not already end it, then finalizes the game."""
        g = self.game
        if g is None or self.finalized:
            return []
        winner = 0 if winner_is_me else 1
        out: list[tuple[str, dict[str, Any]]] = []
        seen = len(g.history)
        if self.lost:
            out += self.finalize(points)
            self.lost, self.game = False, None  # the next board starts the next game afresh
            return out
        if not g.is_over:
            if g.phase is Phase.TAKE and g.seat_to_act == 1 - winner:
                g.drop()
            elif not resigned and g.phase is Phase.MOVE and g.seat_on_roll == winner:
                # The board after the last bear-off was missed: every play that bears off the
                # last chequer reaches the same position, so any of them records the game.
                finishing = [p for p, after in g.play_results() if not any(after.mover)]
                if finishing:
                    g.move(finishing[0])
            elif resigned and g.phase in (Phase.ROLL, Phase.MOVE):
                loser = 1 - winner
                value = max(1, min(3, points // g.cube_value)) if points else \
                    bp.resign_points(g.board_for(loser))
                g.resign(loser, value)
                g.accept_resignation()
        out += self._records(g, seen)
        out += self.finalize(points)
        return out

    def finalize(self, server_points: int | None, *, last: bool = False) -> list[tuple[str, dict[str, Any]]]:
        """Record the current game (once) and rewrite the .mat file. An unfinished game is
        written only as the ``last`` game of a match (as gnubg writes one); one the mirror
        lost track of in mid-match is left out (the JSON log still has its events)."""
        g = self.game
        if g is None or self.finalized:
            return []
        self.finalized = True
        self.finished_games += 1
        outcome = g.outcome
        info: dict[str, Any] = {
            "game": self.finished_games,
            "winner": None if outcome is None else _seat_name(outcome.winner + 1),
            "points": None if outcome is None else outcome.points,
            "ending": None if outcome is None else outcome.ending,
            "server_points": server_points,
            "recorded": not self.partial and not self.lost and (g.is_over or last),
        }
        if (server_points and outcome is not None and server_points != outcome.points
                and not self.partial):
            self.record.comments.append(
                f"Game {self.games + 1}: bgammon scored {server_points} points, the rules "
                f"{outcome.points} (bgammon scores a declined double like a resignation)")
        if info["recorded"]:
            self.add_game(g)
            self.write()
        return [("game_end", info)]
