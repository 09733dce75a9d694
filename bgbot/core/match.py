"""A match to N points or a money session: score, Crawford state, games (R28-R30)."""

from __future__ import annotations

from .errors import IllegalAction
from .game import Game, GameOutcome
from .rules import Rules


class Match:
    """The score and the Crawford state of a match (``length`` > 0) or money session (0).

    Scores are the uncapped sums of the games' points, as gnubg keeps them (a gammon in a
    1-point match scores 2). The Crawford game is the first game after a player first reaches
    ``length - 1`` (when `rules.crawford`); the games after it are post-Crawford (R29). A money
    session never ends by score.
    """

    def __init__(self, length: int = 0, rules: Rules | None = None) -> None:
        if length < 0:
            raise IllegalAction(f"match length must be >= 0 (0 = money session), got {length}")
        self._length = length
        self._rules = (rules if rules is not None else Rules()).for_match(length)
        self._score = [0, 0]
        self._games: list[GameOutcome] = []
        self._crawford_next = False
        self._post_crawford = False
        self._current: Game | None = None

    @property
    def length(self) -> int:
        """Points needed to win; 0 = money session."""
        return self._length

    @property
    def is_money(self) -> bool:
        return self._length == 0

    @property
    def rules(self) -> Rules:
        """The options that apply at this length (`Rules.for_match`: money-only ones off, R30)."""
        return self._rules

    @property
    def score(self) -> tuple[int, int]:
        """(seat 0, seat 1) points so far."""
        return self._score[0], self._score[1]

    @property
    def games(self) -> tuple[GameOutcome, ...]:
        """The recorded outcomes, in order."""
        return tuple(self._games)

    @property
    def game(self) -> Game | None:
        """The game started with `new_game` and not yet recorded, if any."""
        return self._current

    @property
    def is_crawford_game(self) -> bool:
        """The next game to record (the current one, if started) is the Crawford game."""
        return self._crawford_next

    @property
    def is_post_crawford(self) -> bool:
        """The Crawford game has been played: the next game is post-Crawford."""
        return self._post_crawford

    @property
    def is_over(self) -> bool:
        return bool(self._length) and max(self._score) >= self._length

    @property
    def winner(self) -> int | None:
        """The seat that won the match, or None (match not over, or a money session)."""
        if not self.is_over:
            return None
        return 0 if self._score[0] >= self._length else 1

    def new_game(self) -> Game:
        """Start the next game with the score and the Crawford flag in force."""
        if self.is_over:
            raise IllegalAction(f"the match is over: seat {self.winner} won {self.score}")
        if self._current is not None:
            raise IllegalAction(
                f"game {len(self._games) + 1} is still to be recorded; record its outcome first"
            )
        self._current = Game(
            self._rules,
            self._length,
            self.score,
            crawford=self._crawford_next,
            post_crawford=self._post_crawford,
        )
        return self._current

    def record(self, outcome: GameOutcome | None = None) -> None:
        """Add a finished game to the score (default: the outcome of the current game)."""
        if outcome is None:
            if self._current is None or self._current.outcome is None:
                raise IllegalAction("there is no finished game to record")
            outcome = self._current.outcome
        if self.is_over:
            raise IllegalAction(f"the match is over: seat {self.winner} won {self.score}")
        if outcome.winner not in (0, 1) or outcome.points < 1:
            raise IllegalAction(f"not a valid outcome: {outcome!r}")
        self._current = None
        self._games.append(outcome)
        self._score[outcome.winner] += outcome.points
        if not self._length or not self._rules.crawford:
            return
        # gnubg's bookkeeping: once the Crawford game is played, the rest is post-Crawford;
        # the Crawford game is the first game with a player at length - 1.
        if self._crawford_next:
            self._post_crawford = True
        self._crawford_next = (
            not self._post_crawford
            and not self.is_over
            and self._length - 1 in self._score
        )

    def __repr__(self) -> str:
        kind = "money session" if self.is_money else f"{self._length}-point match"
        return f"<Match {kind} score={self.score} games={len(self._games)}>"
