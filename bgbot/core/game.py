"""One game of backgammon as a state machine (rules/README.md R3-R27, DESIGN §2).

`Game` never rolls dice: the caller supplies them (a referee from a `DiceSource`, a .mat reader
from the file), so the same class replays recorded games and hosts live ones.

Seats are 0 and 1 (gnubg's player 0 and player 1; player 0 is the first column of a .mat file).
The board is kept as a core `Position` seen from the seat on roll (`position`, `seat_on_roll`);
`board_for(seat)` gives it from either side. Before the opening is decided nobody is on roll
and the board is seen from seat 0; after the winning move the board stays seen from the winner.

Phases and who acts (`seat_to_act`):

- OPENING: `opening_roll(die0, die1)`; a tie stays in OPENING (R3, R25).
- ROLL: the seat on roll may `double` (when `may_double()`) or `roll`.
- MOVE: the seat on roll must `move` one of `legal_plays()` (the empty play only if none).
- TAKE: the doubled seat answers `take`, `drop` or, money with beavers, `beaver` (R22, R24).
- BEAVER_TAKE: the seat that must answer a beaver (the original doubler) or a raccoon answers
  `take`, `drop` or, while `may_raccoon()`, `raccoon`: take and redouble at once again.
- RESIGNED: the other seat must `accept_resignation` or `reject_resignation` (R27).
- OVER: `outcome` holds the result.

Resignations: the seat to act may `resign` in ROLL, MOVE, TAKE and BEAVER_TAKE (never in the
opening, never while another offer is pending). A rejected offer returns to the phase it
interrupted; like gnubg ("has already declined your offer"), that seat may then offer only a
higher value until the next move is played. An accepted resignation scores cube x value
(a backgammon = `rules.backgammon_value`) with the cube in force, ignoring any pending double
and, as gnubg 1.07 does, ignoring the Jacoby rule (checked: with Jacoby on and the cube centred,
gnubg scores an accepted gammon resignation 2 points).

Beaver chains (R24), as GNU Backgammon 1.07 plays them. After a double the answering seat may
take and redouble at once (`beaver`), then the other seat (`raccoon`), and so on back and forth
(`raccoon` for every later one), up to `Rules.max_redoubles` instant redoubles: gnubg's ``set
beavers N``, default 3 (double, beaver, raccoon, beaver); gnubg calls every one a beaver.
Observed by driving gnubg 1.07 headless (money session, both players human, Jacoby off, ``set
beavers 3``, `double`, `beaver` repeated, then `take` or `drop`, `show cube`, `show score`):
seat 0 doubles a centred cube 1 ->

    chain after the double              take: cube, owner   drop: who wins how much
    (none)                              2, seat 1           seat 0 wins 1
    beaver (seat 1)                     4, seat 1           seat 1 wins 2
    beaver, raccoon (seat 0)            8, seat 1           seat 0 wins 4
    beaver, raccoon, beaver (seat 1)    16, seat 1          seat 1 wins 8

and the same mirrored (seat 1 doubling), and doubled again when the doubler already owned a
2-cube (double to 4, beaver, raccoon, take: cube 16 with the doubled seat; drop: 8 to the last
redoubler). So a take always leaves the cube with the seat that was doubled, whoever redoubled
last (gnubg sets the owner to the player not on roll; after double, beaver, raccoon, take the
doubler's next ``double`` gets "You do not own the cube"), and a drop gives the last redoubler
the cube value before its redouble. A fourth redouble is refused ("Only 3 beavers are
permitted"); with ``set beavers 1`` the raccoon is ("Only one beaver is permitted"), with 0 the
beaver ("Beavers are disabled"). The doubler stays on roll throughout and rolls after the take.
While a chain is pending, `cube_value` is the value before the last redouble and `cube_owner`
is unchanged from before the double.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Literal, Sequence, Union

from .context import Context, CubeOwner
from .errors import IllegalAction
from .position import Play, Position, check_dice
from .rules import Rules

Dice = tuple[int, int]
Ending = Literal["normal", "drop", "resign"]

_SHOWN_PLAYS = 12
"""How many legal plays an illegal-move message lists before truncating."""


class Phase(Enum):
    """What the game waits for (see the module docstring)."""

    OPENING = "opening"
    ROLL = "roll"
    MOVE = "move"
    TAKE = "take"
    BEAVER_TAKE = "beaver_take"
    RESIGNED = "resigned"
    OVER = "over"


@dataclass(frozen=True, slots=True)
class GameOutcome:
    """How a game ended: who won, how many points, and why.

    ``kind`` is 1 single, 2 gammon, 3 backgammon: for a played-out game what the board shows
    (even when the Jacoby rule scores it single), for a resignation the value resigned, 1 for a
    drop. ``cube`` is the cube value in force at the end (a dropped offer is not counted).
    """

    winner: int
    points: int
    kind: int
    ending: Ending
    cube: int

    @property
    def loser(self) -> int:
        return 1 - self.winner


# ----------------------------------------------------------------- history records


@dataclass(frozen=True, slots=True)
class OpeningRolled:
    """Each seat rolled one die; ``winner`` is the seat on roll, or None on a tie (R3)."""

    die0: int
    die1: int
    winner: int | None


@dataclass(frozen=True, slots=True)
class AutoDoubled:
    """An opening tie doubled the centred cube to ``cube`` (R25)."""

    cube: int


@dataclass(frozen=True, slots=True)
class Rolled:
    """``seat`` rolled ``dice`` (not recorded for opening dice that are played directly)."""

    seat: int
    dice: Dice


@dataclass(frozen=True, slots=True)
class Moved:
    """``seat`` played ``play`` (the generator's canonical play; empty = no legal play).

    ``before`` is the board before the play, seen from ``seat``.
    """

    seat: int
    dice: Dice
    play: Play
    before: Position


@dataclass(frozen=True, slots=True)
class Doubled:
    """``seat`` offered the cube at ``cube``."""

    seat: int
    cube: int


@dataclass(frozen=True, slots=True)
class Taken:
    """``seat`` accepted the offer of ``cube`` (a double, beaver or raccoon)."""

    seat: int
    cube: int


@dataclass(frozen=True, slots=True)
class Dropped:
    """``seat`` refused the offer of ``cube`` and lost the value before it."""

    seat: int
    cube: int


@dataclass(frozen=True, slots=True)
class Beavered:
    """``seat`` took the double and redoubled at once to ``cube``, keeping the cube (R24)."""

    seat: int
    cube: int


@dataclass(frozen=True, slots=True)
class Raccooned:
    """``seat`` took the pending beaver (or raccoon) and redoubled at once to ``cube``.

    The first raccoon is the original doubler's; in a longer chain the seats alternate.
    """

    seat: int
    cube: int


@dataclass(frozen=True, slots=True)
class Resigned:
    """``seat`` offered to resign ``value`` (1 single, 2 gammon, 3 backgammon)."""

    seat: int
    value: int


@dataclass(frozen=True, slots=True)
class ResignationAccepted:
    """``seat`` accepted the other seat's resignation of ``value``; the game is over."""

    seat: int
    value: int


@dataclass(frozen=True, slots=True)
class ResignationRejected:
    """``seat`` rejected the other seat's resignation of ``value``; play goes on."""

    seat: int
    value: int


Action = Union[
    OpeningRolled,
    AutoDoubled,
    Rolled,
    Moved,
    Doubled,
    Taken,
    Dropped,
    Beavered,
    Raccooned,
    Resigned,
    ResignationAccepted,
    ResignationRejected,
]

_RESIGN_NAMES = {1: "a single game", 2: "a gammon", 3: "a backgammon"}


def _dice_text(dice: Dice) -> str:
    return f"{dice[0]}-{dice[1]}"


def _check_seat(seat: int, what: str = "seat") -> int:
    if seat not in (0, 1):
        raise IllegalAction(f"{what} must be 0 or 1, got {seat!r}")
    return seat


class Game:
    """The state machine of one game; see the module docstring for phases and actions."""

    def __init__(
        self,
        rules: Rules | None = None,
        match_length: int = 0,
        score: Sequence[int] = (0, 0),
        crawford: bool = False,
        position: Position | None = None,
        cube_value: int = 1,
        cube_owner: int | None = None,
        *,
        post_crawford: bool = False,
    ) -> None:
        """A game waiting for its opening roll.

        ``position`` (default: the initial position) is seen from seat 0; ``rules`` are narrowed
        with `Rules.for_match`, so money-only options never apply in a match (R30).
        """
        if match_length < 0:
            raise IllegalAction(f"match_length must be >= 0 (0 = money), got {match_length}")
        if len(score) != 2 or any(s < 0 for s in score):
            raise IllegalAction(f"score must be two non-negative numbers, got {tuple(score)!r}")
        if crawford and not match_length:
            raise IllegalAction("a money game cannot be the Crawford game")
        if crawford and post_crawford:
            raise IllegalAction("a game cannot be both the Crawford game and post-Crawford")
        if cube_value < 1 or cube_value & (cube_value - 1):
            raise IllegalAction(f"cube_value must be a power of two, got {cube_value}")
        if cube_owner is not None:
            _check_seat(cube_owner, "cube_owner")
            if cube_value < 2:
                raise IllegalAction("an owned cube must be at 2 or more")
        if crawford and (cube_value != 1 or cube_owner is not None):
            raise IllegalAction("the Crawford game is played without the cube (cube 1, centred)")
        start = Position.initial() if position is None else position
        if start.is_game_over():
            raise IllegalAction("the starting position is already over")
        self._rules = (rules if rules is not None else Rules()).for_match(match_length)
        self._length = match_length
        self._score = (int(score[0]), int(score[1]))
        self._crawford = crawford
        self._post_crawford = post_crawford
        self._position = start
        self._on_roll = 0
        self._phase = Phase.OPENING
        self._dice: Dice | None = None
        self._cube = cube_value
        self._owner = cube_owner
        self._offered = 0
        self._to_answer = 0
        self._redoubles = 0
        self._auto_doubles = 0
        self._resignation: tuple[int, int] | None = None
        self._resumed_phase = Phase.ROLL
        self._declined = [0, 0]
        self._results: dict[Position, Play] | None = None
        self._history: list[Action] = []
        self._outcome: GameOutcome | None = None

    @classmethod
    def start_from(
        cls,
        position: Position,
        seat_on_roll: int = 0,
        *,
        dice: Sequence[int] | None = None,
        rules: Rules | None = None,
        match_length: int = 0,
        score: Sequence[int] = (0, 0),
        crawford: bool = False,
        post_crawford: bool = False,
        cube_value: int = 1,
        cube_owner: int | None = None,
    ) -> Game:
        """A game already under way: ``position`` seen from ``seat_on_roll``, in phase ROLL,
        or MOVE when ``dice`` are given. For replaying mid-game positions and for tests."""
        _check_seat(seat_on_roll, "seat_on_roll")
        game = cls(
            rules,
            match_length,
            score,
            crawford,
            position,
            cube_value,
            cube_owner,
            post_crawford=post_crawford,
        )
        game._on_roll = seat_on_roll
        if dice is None:
            game._phase = Phase.ROLL
        else:
            game._dice = check_dice(dice)
            game._phase = Phase.MOVE
        return game

    # ----------------------------------------------------------------- state

    @property
    def rules(self) -> Rules:
        """The options in force (already narrowed for match play)."""
        return self._rules

    @property
    def match_length(self) -> int:
        return self._length

    @property
    def is_money(self) -> bool:
        return self._length == 0

    @property
    def score(self) -> tuple[int, int]:
        """Match score before this game, (seat 0, seat 1)."""
        return self._score

    @property
    def crawford(self) -> bool:
        """This is the Crawford game: nobody may double (R29)."""
        return self._crawford

    @property
    def post_crawford(self) -> bool:
        return self._post_crawford

    @property
    def phase(self) -> Phase:
        return self._phase

    @property
    def position(self) -> Position:
        """The board seen from `seat_on_roll`."""
        return self._position

    @property
    def seat_on_roll(self) -> int:
        """The seat whose turn it is (0 during the opening; the winner once the game is over)."""
        return self._on_roll

    @property
    def seat_to_act(self) -> int | None:
        """The seat that must act now; None in the opening (both roll) and once the game is over."""
        phase = self._phase
        if phase in (Phase.ROLL, Phase.MOVE):
            return self._on_roll
        if phase in (Phase.TAKE, Phase.BEAVER_TAKE):
            return self._to_answer
        if phase is Phase.RESIGNED:
            assert self._resignation is not None
            return 1 - self._resignation[0]
        return None

    def board_for(self, seat: int) -> Position:
        """The board seen from ``seat``."""
        _check_seat(seat)
        return self._position if seat == self._on_roll else self._position.swapped()

    @property
    def dice(self) -> Dice | None:
        """The dice rolled and still to play (phase MOVE, or RESIGNED during MOVE), else None."""
        return self._dice

    @property
    def cube_value(self) -> int:
        """The cube value in force (a pending offer is `offered_cube`)."""
        return self._cube

    @property
    def cube_owner(self) -> int | None:
        """The seat that owns the cube, or None while it is centred."""
        return self._owner

    @property
    def offered_cube(self) -> int | None:
        """The value of the pending double, beaver or raccoon, in phases TAKE and BEAVER_TAKE."""
        return self._offered if self._phase in (Phase.TAKE, Phase.BEAVER_TAKE) else None

    @property
    def resignation(self) -> tuple[int, int] | None:
        """The pending offer (seat, value) in phase RESIGNED, else None."""
        return self._resignation if self._phase is Phase.RESIGNED else None

    @property
    def outcome(self) -> GameOutcome | None:
        return self._outcome

    @property
    def is_over(self) -> bool:
        return self._phase is Phase.OVER

    @property
    def history(self) -> tuple[Action, ...]:
        """Every action so far, in order."""
        return tuple(self._history)

    def legal_plays(self) -> list[Play]:
        """The legal plays for the current dice (phase MOVE); [] when the roll cannot be played."""
        if self._phase is not Phase.MOVE:
            raise self._illegal("list plays", "no dice are waiting to be played")
        return list(self._plays().values())

    def play_results(self) -> list[tuple[Play, Position]]:
        """`legal_plays` with each resulting board (mover's view, before the turn passes)."""
        if self._phase is not Phase.MOVE:
            raise self._illegal("list plays", "no dice are waiting to be played")
        return [(play, after) for after, play in self._plays().items()]

    def context_for(self, seat: int) -> Context:
        """The decision context of ``seat``: cube, score, Crawford and rules from its side."""
        owner = self._owner
        return Context(
            cube_value=self._cube,
            cube_owner=CubeOwner.CENTRE if owner is None else (
                CubeOwner.ME if owner == seat else CubeOwner.OPPONENT),
            match_length=self._length,
            my_score=self._score[seat],
            opponent_score=self._score[1 - seat],
            crawford=self._crawford,
            post_crawford=self._post_crawford,
            rules=self._rules,
        )

    def may_double(self) -> bool:
        """May the seat on roll double now?"""
        return self._double_refusal() is None

    def may_beaver(self) -> bool:
        """May the doubled seat beaver now?"""
        return self._beaver_refusal() is None

    def may_raccoon(self) -> bool:
        """May the seat answering a beaver or raccoon redouble once more now?"""
        return self._raccoon_refusal() is None

    def may_resign(self, seat: int, value: int = 1) -> bool:
        """May ``seat`` offer to resign ``value`` now?"""
        return self._resign_refusal(seat, value) is None

    def legal_actions(self) -> list[str]:
        """Names of the methods that are legal now (``resign`` for the seat to act)."""
        phase = self._phase
        if phase is Phase.OPENING:
            return ["opening_roll"]
        if phase is Phase.OVER:
            return []
        if phase is Phase.RESIGNED:
            return ["accept_resignation", "reject_resignation"]
        names: list[str] = []
        if phase is Phase.ROLL:
            names.append("roll")
            if self.may_double():
                names.append("double")
        elif phase is Phase.MOVE:
            names.append("move")
        elif phase is Phase.TAKE:
            names += ["take", "drop"]
            if self.may_beaver():
                names.append("beaver")
        else:
            names += ["take", "drop"]
            if self.may_raccoon():
                names.append("raccoon")
        if self._declined[self._to_act()] < 3:
            names.append("resign")
        return names

    # ----------------------------------------------------------------- actions

    def opening_roll(self, die0: int, die1: int) -> bool:
        """Each seat rolls one die (R3). True when decided, False on a tie (roll again).

        The higher die's seat goes on roll and plays (die0, die1) as its roll, or, with
        `rules.opening_reroll` (R4), must `roll` fresh dice (phase ROLL; it may double first,
        as on any turn). In money play with `rules.automatic_doubles`, a tie doubles the
        centred cube, at most that many times per game and never above the cube limit (R25).
        """
        if self._phase is not Phase.OPENING:
            raise self._illegal("make the opening roll", "the opening roll is already decided")
        dice = check_dice((die0, die1))
        if dice[0] == dice[1]:
            self._history.append(OpeningRolled(dice[0], dice[1], None))
            rules = self._rules
            if (
                self.is_money
                and rules.cube
                and self._auto_doubles < rules.automatic_doubles
                and self._owner is None
                and self._within_limit(self._cube * 2)
            ):
                self._auto_doubles += 1
                self._cube *= 2
                self._history.append(AutoDoubled(self._cube))
            return False
        winner = 0 if dice[0] > dice[1] else 1
        self._history.append(OpeningRolled(dice[0], dice[1], winner))
        if winner == 1:
            self._position = self._position.swapped()
        self._on_roll = winner
        if self._rules.opening_reroll:
            self._phase = Phase.ROLL
        else:
            self._start_move(dice)
        return True

    def roll(self, dice: Sequence[int]) -> None:
        """The seat on roll rolls ``dice`` (phase ROLL -> MOVE)."""
        if self._phase is not Phase.ROLL:
            raise self._illegal("roll", self._phase_reason())
        checked = check_dice(dice)
        self._history.append(Rolled(self._on_roll, checked))
        self._start_move(checked)

    def move(self, play: Play) -> Play:
        """The seat on roll plays ``play``; returns the canonical legal play that was recorded.

        Any play reaching the same board as a legal play is accepted (R5-R19). The empty play
        is legal only when no play is. Bearing off the fifteenth chequer ends the game (R19,
        R20); otherwise the other seat goes on roll in phase ROLL.
        """
        if self._phase is not Phase.MOVE:
            raise self._illegal("move", self._phase_reason())
        assert self._dice is not None
        dice = self._dice
        seat = self._on_roll
        results = self._plays()
        if not play.steps:
            if results:
                raise self._illegal(
                    "pass",
                    f"an empty play is legal only when no play is possible with "
                    f"{_dice_text(dice)}; {self._plays_text()}",
                )
            canonical = play
            after = self._position
        else:
            if not results:
                raise self._illegal(
                    f"play {play}",
                    f"no play is possible with {_dice_text(dice)}; the only legal play is "
                    f"the empty play",
                )
            try:
                after = self._position.apply(play)
                found = results.get(after)
            except IllegalAction as exc:
                raise self._illegal(f"play {play}", f"{exc}; {self._plays_text()}") from None
            if found is None:
                raise self._illegal(
                    f"play {play}",
                    f"it is not a legal play for {_dice_text(dice)}; {self._plays_text()}",
                )
            canonical = found
        self._history.append(Moved(seat, dice, canonical, self._position))
        self._dice = None
        self._results = None
        self._declined = [0, 0]
        kind = after.win_kind()
        if kind:
            self._position = after
            multiplier = 1 if self._jacoby_applies() else self._multiplier(kind)
            self._finish(GameOutcome(seat, self._cube * multiplier, kind, "normal", self._cube))
        else:
            self._position = after.swapped()
            self._on_roll = 1 - seat
            self._phase = Phase.ROLL
        return canonical

    def double(self) -> None:
        """The seat on roll offers the cube at twice its value (R21, R23)."""
        reason = self._double_refusal()
        if reason is not None:
            raise self._illegal("double", reason)
        self._offered = self._cube * 2
        self._to_answer = 1 - self._on_roll
        self._redoubles = 0
        self._phase = Phase.TAKE
        self._history.append(Doubled(self._on_roll, self._offered))

    def take(self) -> None:
        """Accept the pending double, beaver or raccoon (R22, R24).

        The doubled seat then owns the cube, however long the chain of beavers and raccoons
        was and whoever redoubled last (as gnubg: see the module docstring). The doubler, still
        on roll, then rolls (it may not double: it does not own the cube).
        """
        if self._phase not in (Phase.TAKE, Phase.BEAVER_TAKE):
            raise self._illegal("take", "no double is pending")
        seat = self._to_answer
        self._cube = self._offered
        self._owner = 1 - self._on_roll
        self._history.append(Taken(seat, self._offered))
        self._offered = 0
        self._phase = Phase.ROLL

    def drop(self) -> None:
        """Refuse the pending offer: the other seat wins the cube value before it (R22)."""
        if self._phase not in (Phase.TAKE, Phase.BEAVER_TAKE):
            raise self._illegal("drop", "no double is pending")
        seat = self._to_answer
        self._history.append(Dropped(seat, self._offered))
        self._offered = 0
        self._finish(GameOutcome(1 - seat, self._cube, 1, "drop", self._cube))

    def beaver(self) -> None:
        """The doubled seat takes and at once redoubles, keeping the cube (R24, money only)."""
        reason = self._beaver_refusal()
        if reason is not None:
            raise self._illegal("beaver", reason)
        seat = self._to_answer
        self._cube = self._offered
        self._offered = self._cube * 2
        self._to_answer = 1 - seat
        self._redoubles = 1
        self._phase = Phase.BEAVER_TAKE
        self._history.append(Beavered(seat, self._offered))

    def raccoon(self) -> None:
        """The seat answering a beaver (or raccoon) takes it and at once redoubles again.

        Money only, with `rules.raccoons`, while fewer than `Rules.max_redoubles` beavers and
        raccoons have followed the double (R24; gnubg's ``set beavers N``).
        """
        reason = self._raccoon_refusal()
        if reason is not None:
            raise self._illegal("raccoon", reason)
        seat = self._to_answer
        self._cube = self._offered
        self._offered = self._cube * 2
        self._to_answer = 1 - seat
        self._redoubles += 1
        self._history.append(Raccooned(seat, self._offered))

    def resign(self, seat: int, value: int = 1) -> None:
        """``seat`` offers to resign ``value`` (1 single, 2 gammon, 3 backgammon; R27)."""
        reason = self._resign_refusal(seat, value)
        if reason is not None:
            raise self._illegal(f"resign {_RESIGN_NAMES.get(value, value)}", reason, seat)
        self._resignation = (seat, value)
        self._resumed_phase = self._phase
        self._phase = Phase.RESIGNED
        self._history.append(Resigned(seat, value))

    def accept_resignation(self) -> None:
        """The other seat accepts: it wins cube x the resigned value (no Jacoby, as gnubg)."""
        if self._phase is not Phase.RESIGNED:
            raise self._illegal("accept a resignation", "no resignation is pending")
        assert self._resignation is not None
        seat, value = self._resignation
        self._history.append(ResignationAccepted(1 - seat, value))
        points = self._cube * self._multiplier(value)
        self._finish(GameOutcome(1 - seat, points, value, "resign", self._cube))

    def reject_resignation(self) -> None:
        """The other seat rejects: play resumes where the offer interrupted it."""
        if self._phase is not Phase.RESIGNED:
            raise self._illegal("reject a resignation", "no resignation is pending")
        assert self._resignation is not None
        seat, value = self._resignation
        self._history.append(ResignationRejected(1 - seat, value))
        self._declined[seat] = max(self._declined[seat], value)
        self._resignation = None
        self._phase = self._resumed_phase

    # ----------------------------------------------------------------- helpers

    def _to_act(self) -> int:
        seat = self.seat_to_act
        return self._on_roll if seat is None else seat

    def _start_move(self, dice: Dice) -> None:
        self._dice = dice
        self._results = None
        self._phase = Phase.MOVE

    def _plays(self) -> dict[Position, Play]:
        if self._results is None:
            assert self._dice is not None
            self._results = {
                after: play for play, after in self._position.play_results(self._dice)
            }
        return self._results

    def _plays_text(self) -> str:
        plays = list(self._plays().values())
        if not plays:
            return "no play is possible (play the empty play)"
        shown = ", ".join(str(p) for p in plays[:_SHOWN_PLAYS])
        more = len(plays) - _SHOWN_PLAYS
        tail = f" (and {more} more)" if more > 0 else ""
        return f"legal plays: {shown}{tail}"

    def _within_limit(self, value: int) -> bool:
        limit = self._rules.cube_limit
        return not limit or value <= limit

    def _multiplier(self, kind: int) -> int:
        return (1, 2, self._rules.backgammon_value)[kind - 1]

    def _jacoby_applies(self) -> bool:
        rules = self._rules
        return rules.jacoby and rules.cube and self.is_money and self._owner is None

    def _finish(self, outcome: GameOutcome) -> None:
        self._outcome = outcome
        self._phase = Phase.OVER
        self._dice = None
        self._results = None
        self._resignation = None

    def _phase_reason(self) -> str:
        phase = self._phase
        if phase is Phase.OPENING:
            return "the opening roll has not been made"
        if phase is Phase.ROLL:
            return f"seat {self._on_roll} has not rolled yet"
        if phase is Phase.MOVE:
            assert self._dice is not None
            return f"seat {self._on_roll} must play {_dice_text(self._dice)} first"
        if phase in (Phase.TAKE, Phase.BEAVER_TAKE):
            return f"seat {self._to_answer} must answer the cube offered at {self._offered}"
        if phase is Phase.RESIGNED:
            assert self._resignation is not None
            seat, value = self._resignation
            offer = _RESIGN_NAMES[value]
            return f"seat {1 - seat} must answer seat {seat}'s offer to resign {offer}"
        return "the game is over"

    def _double_refusal(self) -> str | None:
        if self._phase is Phase.MOVE:
            return "the dice are already rolled"
        if self._phase is not Phase.ROLL:
            return self._phase_reason()
        context = self.context_for(self._on_roll)
        if context.cube_owner is CubeOwner.OPPONENT:
            return f"the cube is owned by seat {self._owner}"
        return context.double_refusal()

    def _beaver_refusal(self) -> str | None:
        if self._phase is Phase.BEAVER_TAKE:
            return "a beaver can only answer a double"
        if self._phase is not Phase.TAKE:
            return "no double is pending"
        if not self.is_money:
            return "beavers are not allowed in match play"
        if not self._rules.beavers:
            return "beavers are not in use"
        if self._rules.max_redoubles < 1:
            return "beavers are not in use (beaver_limit is 0)"
        if not self._within_limit(self._offered * 2):
            return f"the cube would pass the limit of {self._rules.cube_limit}"
        return None

    def _raccoon_refusal(self) -> str | None:
        if self._phase is not Phase.BEAVER_TAKE:
            return "no beaver is pending"
        if not self.is_money:
            return "raccoons are not allowed in match play"
        if not (self._rules.beavers and self._rules.raccoons):
            return "raccoons are not in use"
        limit = self._rules.max_redoubles
        if self._redoubles >= limit:
            return (f"the limit of {limit} beavers and raccoons after one double is reached "
                    f"(rules.beaver_limit)")
        if not self._within_limit(self._offered * 2):
            return f"the cube would pass the limit of {self._rules.cube_limit}"
        return None

    def _resign_refusal(self, seat: int, value: int) -> str | None:
        if seat not in (0, 1):
            return f"there is no seat {seat!r}"
        if value not in (1, 2, 3):
            return f"the value must be 1 (single), 2 (gammon) or 3 (backgammon), got {value!r}"
        if self._phase in (Phase.OPENING, Phase.RESIGNED, Phase.OVER):
            return self._phase_reason()
        if seat != self._to_act():
            return f"it is seat {self._to_act()}'s turn to act"
        if value <= self._declined[seat]:
            return (
                f"seat {1 - seat} has already declined {_RESIGN_NAMES[self._declined[seat]]} "
                f"this turn; only a higher value may be offered"
            )
        return None

    def _illegal(self, action: str, reason: str, seat: int | None = None) -> IllegalAction:
        who = self.seat_to_act if seat is None else seat
        if who is not None:
            subject = f"seat {who}"
        else:
            subject = "nobody" if self._phase is Phase.OVER else "the players"
        legal = ", ".join(self.legal_actions()) or "nothing (the game is over)"
        return IllegalAction(f"{subject} cannot {action}: {reason}; legal now: {legal}")

    def __repr__(self) -> str:
        return (
            f"<Game phase={self._phase.value} on_roll={self._on_roll} cube={self._cube}"
            f" owner={self._owner} position={self._position.position_id()}>"
        )
