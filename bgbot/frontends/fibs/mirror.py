"""The ``.mat`` mirror of a FIBS match: what the server tells both players (FIBS shows both
sides' rolls and moves), replayed through a core `Game`, so the file gnubg imports follows the
rules and the server's score lines.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import Callable

from ...core.errors import FormatError, IllegalAction
from ...core.game import Game, Phase
from ...core.position import Play, Position
from ...core.rules import Rules
from ...formats.mat import MatchRecord
from ...formats.notation import parse_fibs_move
from ..server import MatMirror

__all__ = ["FIBS_RULES", "MatchMirror", "fibs_words"]

log = logging.getLogger("bgbot.fibs")

FIBS_RULES = Rules(jacoby=False, beavers=False)
"""FIBS plays matches without the Jacoby rule or beavers."""


def fibs_words(text: str) -> str:
    """Move text with FIBS's other words for the bar and off (``b``; ``home``, ``h``, ``o``:
    BaldLies writes bear-offs as ``6-home``) spelt ``bar`` and ``off``."""
    def word(found: re.Match[str]) -> str:
        return "bar" if found.group(0).lower() == "b" else "off"
    return re.sub(r"(?<![A-Za-z])(?:home|h|o|b)(?![A-Za-z])", word, text, flags=re.IGNORECASE)



class MatchMirror(MatMirror):
    """The match as the server tells it, replayed through a core `Game` for the ``.mat`` file.

    Seat 0 is us (the left column), seat 1 the opponent.  Any action the core refuses marks the
    current game lost (``broken`` holds why); it is then left out of the file, the score kept
    from the server's score lines.
    """

    def __init__(self, me: str, opponent: str, length: int, path: Path | None, *,
                 resumed: bool = False, rules: Rules = FIBS_RULES) -> None:
        super().__init__(MatchRecord.create(length, (me, opponent), rules), path)
        self.me, self.opponent, self.length = me, opponent, length
        self.rules = rules
        self.resumed = resumed
        self.score = [0, 0]
        self.crawford_next = False
        self.post_crawford = False
        self.broken: str | None = "the game began before this mirror" if resumed else None
        self.pending: Play | None = None
        self.games_seen = 0
        self.games_lost = 0

    # ---------------------------------------------------------------- bookkeeping

    def set_score(self, mine: int, theirs: int) -> None:
        """Take the server's score (score lines, resume lines) as the truth.

        Without the history (a match resumed after a restart) the Crawford state is a guess:
        both at N-1 is post-Crawford; one at N-1 is taken to mean the Crawford game comes next.
        Play does not depend on the guess (the board's may-double flag decides), only the
        ``.mat`` marking does."""
        self.score = [mine, theirs]
        away = self.length - 1
        if not self.length or not self.rules.crawford or away not in self.score \
                or max(self.score) >= self.length:
            return
        if self.score[0] == self.score[1]:
            self.crawford_next, self.post_crawford = False, True
        elif not self.post_crawford:
            self.crawford_next = True

    def new_game(self) -> None:
        self.games_seen += 1
        self.pending = None
        try:
            self.game = Game(self.rules, self.length, tuple(self.score), crawford=self.crawford_next,
                             post_crawford=self.post_crawford)
            self.broken = None
        except IllegalAction as exc:
            self.game, self.broken = None, str(exc)

    def _do(self, what: str, action: Callable[[Game], object]) -> None:
        if self.game is None or self.broken is not None:
            return
        try:
            self.apply(self.game, action)
        except (IllegalAction, FormatError) as exc:
            self.broken = f"{what}: {exc}"
            log.warning("%s: the .mat record lost game %d (%s)", self.opponent, self.games_seen,
                        self.broken)

    def opening(self, my_die: int, their_die: int) -> None:
        self._do("opening roll", lambda g: g.opening_roll(my_die, their_die))

    def rolled(self, seat: int, dice: tuple[int, int]) -> None:
        if seat == 1:
            self.commit_pending()
        def roll(g: Game) -> None:
            if g.phase is not Phase.ROLL or g.seat_on_roll != seat:
                raise IllegalAction(f"seat {seat} rolled {dice} in phase {g.phase.value}")
            g.roll(dice)
        self._do("roll", roll)

    def moved(self, seat: int, text: str, direction: int) -> None:
        """The opponent's ``moves`` text; ``direction`` is theirs (tried both ways if needed)."""
        def move(g: Game) -> None:
            if g.phase is not Phase.MOVE or g.seat_on_roll != seat or g.dice is None:
                raise IllegalAction(f"seat {seat} moved in phase {g.phase.value}")
            words = fibs_words(text)
            try:
                play = parse_fibs_move(words, g.position, g.dice, direction)
            except (IllegalAction, FormatError):
                play = parse_fibs_move(words, g.position, g.dice, -direction)
            g.move(play)
        self._do("move", move)

    def play_ours(self, play: Play) -> None:
        """We sent ``play``; it counts once the server shows it was taken (`commit_pending`)."""
        self.pending = play

    def commit_pending(self, board: Position | None = None) -> None:
        """Apply our pending play: when the opponent acts next, or when ``board`` (our view)
        shows its result."""
        play, self.pending = self.pending, None
        if play is None or self.game is None or self.broken is not None:
            return
        if board is not None:
            after = self.game.position.apply(play) if self.game.seat_on_roll == 0 else None
            if after is None or board != after:
                self.pending = play  # not yet taken
                return
        def move(g: Game) -> None:
            if g.phase is not Phase.MOVE or g.seat_on_roll != 0:
                raise IllegalAction("our play came when we were not to move")
            g.move(play)
        self._do("our move", move)

    def cant_move(self, seat: int) -> None:
        def dance(g: Game) -> None:
            if g.phase is not Phase.MOVE or g.seat_on_roll != seat:
                raise IllegalAction(f"seat {seat} cannot move in phase {g.phase.value}")
            g.move(Play())
        self._do("no move", dance)

    def doubled(self, seat: int) -> None:
        if seat == 1:
            self.commit_pending()
        self._do("double", lambda g: g.double())

    def taken(self) -> None:
        self._do("take", lambda g: g.take())

    def dropped(self) -> None:
        self._do("drop", lambda g: g.drop())

    def resigned(self, seat: int, points: int) -> None:
        if seat == 1:
            self.commit_pending()
        def resign(g: Game) -> None:
            value = max(1, min(3, points // max(1, g.cube_value)))
            g.resign(seat, value)
        self._do("resign", resign)

    def resignation_answered(self, accepted: bool) -> None:
        self._do("resignation answer",
                 lambda g: g.accept_resignation() if accepted else g.reject_resignation())

    def game_over(self, winner: int, points: int) -> bool:
        """Close the game (idempotent per game); True when it was recorded in the file."""
        if self.game is None and self.broken is None:
            return False  # already closed
        self.commit_pending()  # our winning move: no board follows it
        game, self.game = self.game, None
        recorded = False
        if game is not None and self.broken is None:
            outcome = game.outcome
            if outcome is None or outcome.winner != winner:
                self.broken = f"the server's result ({winner}, {points}) is not the game's {outcome}"
                log.warning("%s: the .mat record lost game %d (%s)", self.opponent,
                            self.games_seen, self.broken)
            else:
                if outcome.points != points:
                    # BaldLies announces drops and resignations without the cube; its score
                    # line (which `set_score` follows) agrees with the rules.
                    log.warning("%s: the server announced %d points, the rules give %d",
                                self.opponent, points, outcome.points)
                    points = outcome.points
                self.add_game(game, tuple(self.score), crawford=game.crawford)
                recorded = True
        if not recorded:
            self.games_lost += 1
        self.broken = None
        self.score[winner] += points
        if self.length and self.rules.crawford:
            if self.crawford_next:
                self.post_crawford = True
            self.crawford_next = (not self.post_crawford and max(self.score) < self.length
                                  and self.length - 1 in self.score)
        self.write()
        return recorded

    def crawford_flags(self) -> tuple[bool, bool] | None:
        """(Crawford game, post-Crawford) when the mirror knows; None otherwise."""
        if self.game is not None:
            return self.game.crawford, self.game.post_crawford
        return None
