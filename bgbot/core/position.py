"""Backgammon positions seen from the player on roll, and their legal plays.

There is exactly one orientation inside bgbot (DESIGN §2): a `Position` holds two tuples of 25
counts, ``opponent`` then ``mover`` (gnubg's ``[not on roll, on roll]`` order). Index ``i``
(0..23) is point ``i + 1`` counted from that side's own home; index 24 is that side's bar. Point
``i`` of one side is point ``23 - i`` of the other. Every text format converts to and from this
in its own codec; the Position ID lives here because it is the position's canonical key (as FEN
is in python-chess).
"""

from __future__ import annotations

import base64
from typing import Iterable, Sequence

from .compiled import compiled_movegen
from .errors import FormatError, IllegalAction, InvalidPosition
from .notation import BAR_POINT, OFF_POINT, Play, RawStep, Step

__all__ = ["BAR_INDEX", "BAR_POINT", "CHEQUERS", "OFF_POINT", "Dice", "Play", "Position", "RawStep",
           "Step", "check_dice"]

CHEQUERS = 15
BAR_INDEX = 24

Dice = tuple[int, int]

_new_play = tuple.__new__


def _check_side(name: str, counts: Sequence[int]) -> tuple[int, ...]:
    if len(counts) != 25:
        raise InvalidPosition(f"{name}: expected 25 counts (24 points and the bar), got {len(counts)}")
    out = tuple(int(c) for c in counts)
    for i, c in enumerate(out):
        if c < 0:
            raise InvalidPosition(f"{name}: negative count {c} at index {i}")
    total = sum(out)
    if total > CHEQUERS:
        raise InvalidPosition(f"{name}: {total} chequers on the board, at most {CHEQUERS} allowed")
    return out


class Position:
    """An immutable board seen from the player on roll (see the module docstring)."""

    __slots__ = ("opponent", "mover", "_hash")

    opponent: tuple[int, ...]
    mover: tuple[int, ...]
    _hash: int

    def __init__(self, opponent: Sequence[int], mover: Sequence[int]) -> None:
        opp = _check_side("opponent", opponent)
        mov = _check_side("mover", mover)
        for i in range(24):
            if mov[i] and opp[23 - i]:
                raise InvalidPosition(
                    f"point {i + 1} (mover's numbering) holds chequers of both sides: "
                    f"{mov[i]} of the mover and {opp[23 - i]} of the opponent"
                )
        object.__setattr__(self, "opponent", opp)
        object.__setattr__(self, "mover", mov)
        object.__setattr__(self, "_hash", hash((opp, mov)))

    @classmethod
    def _trusted(cls, opponent: tuple[int, ...], mover: tuple[int, ...]) -> Position:
        """Build without validation, for boards the move generator derived from a valid one."""
        pos = object.__new__(cls)
        object.__setattr__(pos, "opponent", opponent)
        object.__setattr__(pos, "mover", mover)
        object.__setattr__(pos, "_hash", hash((opponent, mover)))
        return pos

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("Position is immutable")

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Position)
            and self.mover == other.mover
            and self.opponent == other.opponent
        )

    def __hash__(self) -> int:
        return self._hash

    def __repr__(self) -> str:
        return f"Position.from_position_id({self.position_id()!r})"

    # ----------------------------------------------------------------- construction

    @classmethod
    def initial(cls) -> Position:
        """The starting position (R2): 2 on the 24, 5 on the 13, 3 on the 8, 5 on the 6."""
        side = [0] * 25
        side[23], side[12], side[7], side[5] = 2, 5, 3, 5
        return cls(side, side)

    @classmethod
    def from_board(cls, board: Sequence[Sequence[int]]) -> Position:
        """From gnubg's ``board()`` pair ``[opponent, on roll]``."""
        if len(board) != 2:
            raise InvalidPosition(f"a board is two lists [opponent, mover], got {len(board)}")
        return cls(board[0], board[1])

    def to_board(self) -> list[list[int]]:
        """gnubg's ``board()`` pair ``[opponent, on roll]`` as lists."""
        return [list(self.opponent), list(self.mover)]

    @classmethod
    def from_position_id(cls, position_id: str) -> Position:
        """Decode a gnubg Position ID (14 characters of base64, first half = side not on roll)."""
        text = position_id.strip()
        if len(text) != 14:
            raise FormatError("position id", position_id, "must be 14 base64 characters")
        try:
            raw = base64.b64decode(text + "==", validate=True)
        except ValueError:
            raise FormatError("position id", position_id, "is not valid base64") from None
        # The bits, first bit first, are one run of ones (the chequers) per location, each
        # closed by a zero: 25 locations of the side not on roll, then 25 of the other.
        runs = format(int.from_bytes(raw, "little"), "080b")[::-1].split("0")
        if len(runs) < 51:
            raise FormatError("position id", position_id, "ends before both sides are complete")
        if any(runs[50:]):
            raise FormatError("position id", position_id, "has chequer bits after both sides")
        sides = [[len(run) for run in runs[:25]], [len(run) for run in runs[25:50]]]
        try:
            position = cls(sides[0], sides[1])
        except InvalidPosition as exc:
            raise FormatError("position id", position_id, str(exc)) from None
        if position.position_id() != text:
            raise FormatError("position id", position_id,
                              f"padding bits are set; the canonical id is {position.position_id()}")
        return position

    def position_id(self) -> str:
        """The gnubg Position ID of this board (side not on roll first, as gnubg 1.07 writes)."""
        bits = 0
        shift = 0
        for side in (self.opponent, self.mover):
            for count in side:
                bits |= ((1 << count) - 1) << shift
                shift += count + 1
        return base64.b64encode(bits.to_bytes(10, "little")).decode("ascii")[:14]

    def key(self) -> tuple[int, ...]:
        """A compact hashable key (both sides' counts), stable across runs, for caches."""
        return self.opponent + self.mover

    # ----------------------------------------------------------------- facts

    def swapped(self) -> Position:
        """The same board seen from the other side: the next player is now on roll."""
        return Position._trusted(self.mover, self.opponent)

    def pip_counts(self) -> tuple[int, int]:
        """(mover's pips, opponent's pips); a chequer on the bar counts 25."""
        return (
            sum(c * (i + 1) for i, c in enumerate(self.mover)),
            sum(c * (i + 1) for i, c in enumerate(self.opponent)),
        )

    def borne_off(self) -> tuple[int, int]:
        """(mover's chequers off, opponent's chequers off)."""
        return CHEQUERS - sum(self.mover), CHEQUERS - sum(self.opponent)

    def is_contact(self) -> bool:
        """True while some chequer of one side still has to pass a chequer of the other."""
        mover_back = max((i for i, c in enumerate(self.mover) if c), default=-1)
        opponent_back = max((i for i, c in enumerate(self.opponent) if c), default=-1)
        if mover_back < 0 or opponent_back < 0:
            return False
        return mover_back + opponent_back > 23

    def is_race(self) -> bool:
        """No contact left: the game is a pure race."""
        return not self.is_contact()

    def is_game_over(self) -> bool:
        """One side has borne off all fifteen chequers."""
        return not any(self.mover) or not any(self.opponent)

    def win_kind(self) -> int:
        """How the side that bore off all chequers wins: 0 (game not over), 1, 2 or 3.

        2 = gammon (the loser has borne off none), 3 = backgammon (and the loser still has a
        chequer on the bar or in the winner's home board), R20.
        """
        if not any(self.mover):
            winner, loser = self.mover, self.opponent
        elif not any(self.opponent):
            winner, loser = self.opponent, self.mover
        else:
            return 0
        del winner
        if sum(loser) < CHEQUERS:
            return 1
        if any(loser[18:25]):
            return 3
        return 2

    # ----------------------------------------------------------------- moving

    def apply(self, play: Play | Iterable[Step | tuple[int, int]]) -> Position:
        """The position after the mover makes ``play``, still from the mover's side.

        Hits are worked out from the board, not from the steps' flags. Each step is checked
        for a chequer to move and an open landing point; full legality (dice, order of the
        rules) is `legal_plays`' job.
        """
        steps = tuple(play)
        mover = list(self.mover)
        opponent = list(self.opponent)
        for step in steps:
            source, target = step[0] - 1, step[1] - 1
            if not 0 <= source <= BAR_INDEX or not -1 <= target < source:
                raise IllegalAction(f"step {step[0]}/{step[1]} is not a forward move on the board")
            if mover[source] == 0:
                raise IllegalAction(f"step {step[0]}/{step[1]}: no chequer of the mover on {step[0]}")
            mover[source] -= 1
            if target >= 0:
                mirror = 23 - target
                if opponent[mirror] >= 2:
                    raise IllegalAction(f"step {step[0]}/{step[1]}: point {step[1]} is blocked")
                if opponent[mirror] == 1:
                    opponent[mirror] = 0
                    opponent[BAR_INDEX] += 1
                mover[target] += 1
        return Position._trusted(tuple(opponent), tuple(mover))

    def legal_plays(self, dice: Sequence[int]) -> list[Play]:
        """Every legal play for ``dice``, one per distinct resulting position (R5–R19).

        An empty list means the roll cannot be played. Generated by the core's C twin of
        `_generate` when it is built (the same plays in the same order), else in Python.
        """
        if _MOVEGEN is not None:
            d1, d2 = check_dice(dice)
            plays: list[Play] = _MOVEGEN.plays(self.mover, self.opponent, d1, d2, Play)
            return plays
        return [_new_play(Play, steps) for steps, _ in _generate(self, dice)]

    def play_results(self, dice: Sequence[int]) -> list[tuple[Play, Position]]:
        """`legal_plays` with each play's resulting position (mover's view), for players."""
        if _MOVEGEN is not None:
            d1, d2 = check_dice(dice)
            trusted = Position._trusted
            return [
                (_new_play(Play, steps), trusted(opponent, mover))
                for steps, mover, opponent in _MOVEGEN.results(self.mover, self.opponent, d1, d2)
            ]
        return [
            (_new_play(Play, steps), Position._trusted(opponent, mover))
            for steps, (opponent, mover) in _generate(self, dice)
        ]

    def python_play_results(self, dice: Sequence[int]) -> list[tuple[Play, Position]]:
        """`play_results` from the pure-Python generator (the definition), whatever is built:
        for the tests that hold the compiled generator to it."""
        return [
            (_new_play(Play, steps), Position._trusted(opponent, mover))
            for steps, (opponent, mover) in _generate(self, dice)
        ]


_MOVEGEN = compiled_movegen()


def check_dice(dice: Sequence[int]) -> Dice:
    """Validate two dice values 1..6 and return them as a tuple."""
    if len(dice) != 2:
        raise IllegalAction(f"a roll is two dice, got {list(dice)!r}")
    d1, d2 = int(dice[0]), int(dice[1])
    if not (1 <= d1 <= 6 and 1 <= d2 <= 6):
        raise IllegalAction(f"dice must be 1..6, got {d1} and {d2}")
    return d1, d2


_RawStep = RawStep
_Result = tuple[tuple[_RawStep, ...], tuple[tuple[int, ...], tuple[int, ...]]]


def _generate(position: Position, dice: Sequence[int]) -> list[_Result]:
    """The move generator: every legal play with its resulting board, deduplicated.

    Backtracks over the dice in both orders (all four steps for doubles, with sources taken in
    non-increasing order so each set of steps is visited once), keeps the plays that use the
    most dice (a play that bears off the last chequer counts as using them all), and when only
    one die of a non-double can be used keeps the higher one if it can be (R9).
    """
    d1, d2 = check_dice(dice)
    mover = list(position.mover)
    opponent = list(position.opponent)
    doubles = d1 == d2
    full = 4 if doubles else 2
    # Running counts, so the bear-off test and the end-of-game test cost nothing per step.
    state = [sum(mover), sum(mover[6:])]  # chequers on the board, chequers outside home
    # key (mover counts + hit mask) -> (dice used, first die, raw steps, opponent after)
    found: dict[tuple[int, ...], tuple[int, int, tuple[_RawStep, ...], tuple[int, ...]]] = {}
    steps: list[_RawStep] = []

    def record(used: int, first_die: int, hit_mask: int) -> None:
        if not state[0]:
            used = full
        key = (*mover, hit_mask)
        known = found.get(key)
        if known is None or known[0] < used or (known[0] == used and first_die > known[1]):
            found[key] = (used, first_die, tuple(steps), tuple(opponent))

    def moves_for(die: int, limit: int) -> list[_RawStep]:
        """Legal single steps (source index, target index, hit) with ``die``, sources <= limit."""
        if not state[0]:
            return []
        if mover[24]:
            if limit < 24:
                return []
            target = 24 - die
            count = opponent[23 - target]
            if count >= 2:
                return []
            return [(24, target, count == 1)]
        if state[1]:
            shift = 23 + die
            return [
                (i, i - die, opponent[shift - i] == 1)
                for i in range(min(limit, 23), die - 1, -1)
                if mover[i] and opponent[shift - i] < 2
            ]
        out: list[_RawStep] = []
        # All fifteen at home (R15/R16): exact bear-offs, and from the highest point with a
        # larger die.
        highest = 5
        while highest >= 0 and not mover[highest]:
            highest -= 1
        for i in range(min(limit, highest), -1, -1):
            if mover[i]:
                target = i - die
                if target >= 0:
                    count = opponent[23 - target]
                    if count < 2:
                        out.append((i, target, count == 1))
                elif target == -1 or i == highest:
                    out.append((i, -1, False))
        return out

    def push(move: _RawStep) -> None:
        source, target, hit = move
        mover[source] -= 1
        if target >= 0:
            mover[target] += 1
            if hit:
                opponent[23 - target] = 0
                opponent[24] += 1
            if source >= 6 and target < 6:
                state[1] -= 1
        else:
            state[0] -= 1
        steps.append((source + 1, target + 1, hit))

    def pop(move: _RawStep) -> None:
        source, target, hit = move
        steps.pop()
        mover[source] += 1
        if target >= 0:
            mover[target] -= 1
            if hit:
                opponent[23 - target] = 1
                opponent[24] -= 1
            if source >= 6 and target < 6:
                state[1] += 1
        else:
            state[0] += 1

    if doubles:

        def walk(depth: int, limit: int, hit_mask: int) -> None:
            moves = moves_for(d1, limit)
            if not moves:
                if depth:
                    record(depth, d1, hit_mask)
                return
            if depth < 3:
                for move in moves:
                    push(move)
                    walk(depth + 1, move[0], hit_mask | (1 << move[1]) if move[2] else hit_mask)
                    pop(move)
                return
            # The fourth step inline: only a new result pays for building its record.
            prefix = tuple(steps)
            for source, target, hit in moves:
                mover[source] -= 1
                if target >= 0:
                    mover[target] += 1
                mask = hit_mask | (1 << target) if hit else hit_mask
                key = (*mover, mask)
                if key not in found:
                    after = opponent
                    if hit:
                        after = opponent.copy()
                        after[23 - target] = 0
                        after[24] += 1
                    found[key] = (4, d1, (*prefix, (source + 1, target + 1, hit)), tuple(after))
                mover[source] += 1
                if target >= 0:
                    mover[target] -= 1

        walk(0, 24, 0)
    else:
        for first, second in ((d1, d2), (d2, d1)):
            for move in moves_for(first, 24):
                push(move)
                mask = (1 << move[1]) if move[2] else 0
                follow = moves_for(second, 24)
                if not follow:
                    record(1, first, mask)
                    pop(move)
                    continue
                step1 = steps[0]
                # The last step inline: only a new result pays for building its record.
                for source2, target2, hit2 in follow:
                    mover[source2] -= 1
                    if target2 >= 0:
                        mover[target2] += 1
                    mask2 = mask | (1 << target2) if hit2 else mask
                    key = (*mover, mask2)
                    known = found.get(key)
                    if known is None or known[0] < 2 or (known[0] == 2 and first > known[1]):
                        after = opponent
                        if hit2:
                            after = opponent.copy()
                            after[23 - target2] = 0
                            after[24] += 1
                        found[key] = (
                            2,
                            first,
                            (step1, (source2 + 1, target2 + 1, hit2)),
                            tuple(after),
                        )
                    mover[source2] += 1
                    if target2 >= 0:
                        mover[target2] -= 1
                pop(move)

    if not found:
        return []
    best = max(value[0] for value in found.values())
    high = max(d1, d2)
    higher_only = best == 1 and not doubles and any(
        used == 1 and first == high for used, first, _, _ in found.values()
    )
    out: list[_Result] = []
    for key, (used, first, raw, opponent_after) in found.items():
        if used != best or (higher_only and first != high):
            continue
        out.append((raw, (opponent_after, key[:25])))
    return out
