"""Chouette: one player "in the box" against a team of two or more (rules/README.md R31-R34).

The model: a chouette game is one board shared by several two-player money games, one per team
member, each a core `Game` with the box in seat 0 and that member in seat 1. Every chequer play
is checked by the mover's `Game` and then applied to the `Game` of every member still playing,
so the core checks the board (legal plays, bear-off, gammons), each member's own cube (who may
double, the cube limit, the Jacoby rule) and each member's settlement. No rule is re-implemented
here; this module only decides who is asked what, and in which order.

Rules as implemented (R31-R34 and issue 9):

- **Seats (R31).** Everyone rolls one die, in the order the players were given. The highest is
  in the box, the second is captain, the rest sit in the order of their rolls. Players who tie
  roll again among themselves (as often as needed) to settle their order; the others keep
  their places.
- **Moving (R32).** The captain moves the team's chequers. With ``consult`` on, before each team
  play with a choice every other member still in the game is asked for its play (with its own
  cube as context); the opinions go to the log, and the captain's play stands.
- **Team doubles (R33).** Only unanimously: every member still in the game must be allowed to
  double his own cube (centred or his) and say yes; the mover is asked first and the first "no"
  ends the question. The box then answers each member's cube separately: a take turns that
  cube (the box owns it), a drop pays that member the cube value before the double and ends his
  game. Consequence: once the box owns any member's cube, the team cannot double until it
  redoubles that one.
- **Box doubles (R33).** The box may double any cube it may double (centred, or owned by the
  box). Every member decides alone: a pass pays the stake and ends his game, a take plays on at
  the new stake with the cube his own from then on (each member has his own cube).
- **Captain out.** When the member moving the chequers leaves the game (pass, resignation,
  the box dropping his cube) and others still play, the next member still playing (in team
  order) moves for the rest of the game. The captain stays captain for the rotation.
- **Resignations (R27, decided here).** Each member's game is his own, so a resignation is too:
  on the team's turn each member still playing may offer to resign his own game (the box
  accepts or rejects each offer); on the box's turn the box may offer one resignation per cube
  (asked per member), each member accepting or rejecting his own. An accepted resignation ends
  that member's game, as a pass does.
- **Settlement (R20, R33).** Each member's game scores by the core: cube x 1, 2 or 3 (the
  backgammon value of the rules; the Jacoby rule on a cube that was never turned, when on). The
  box pays each winner and collects from each loser; the box's result is minus the sum, so
  every game sums to zero.
- **Rotation (R34).** It follows the captain's own game, even when the captain passed and others
  played on: captain lost -> the captain goes to the end of the team, the next member becomes
  captain, the box stays; captain won -> the captain takes the box, the old box goes to the end
  of the team.
- **Options.** Beavers are never used (a chouette cube has several takers: the rules passed in
  are narrowed to ``beavers=False``; a BEAVER answer counts as a take). Automatic doubles, the
  Jacoby rule, the cube limit and the backgammon value work per cube through the core.

Decisions (issue 9 item 2, first rule): each cube is a money game of its own, so the box and the
members decide with their usual two-player money cube logic, each asked with that cube's
`Context` (money equity is linear, so a decision that is right for one cube is right for each
cube in the same state). The box is asked whether to double once per distinct cube state (value
and owner); every cube in that state is doubled or not together. The box answers team doubles,
and members answer box doubles, once per cube. The box plays its chequers with the context of
its cube against the member moving the team's chequers.

Dice: stream 0 of the `DiceSource` gives the seat dice (both dice of each roll, in order) unless
``seat_dice`` are given; game k (1-based) uses stream k. The opening roll is the box's die (seat
0) against the captain's die.

Logs (`ChouetteLog`): per game a money ``.mat`` file with one game, the box (seat 0, left column)
against the team side played by the member(s) who moved the chequers (the `Game` recorded is that
of the member moving at the end, which holds every chequer play and his own cube), and a JSON
sidecar with the seats, every member's cube, stake and cube history, who moved, the
consultations and the settlement.
"""

from __future__ import annotations

import asyncio
import datetime as _dt
import json
import logging
import uuid
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

from ..agents.base import Agent
from ..core.dice import DiceSource, GameDice
from ..core.errors import IllegalAction
from ..core.game import (
    AutoDoubled,
    Doubled,
    Dropped,
    Game,
    GameOutcome,
    Moved,
    Phase,
    ResignationAccepted,
    ResignationRejected,
    Resigned,
    Taken,
)
from ..core.position import Play, Position
from ..core.rules import Rules
from ..formats.mat import MatchRecord, format_match
from ..players.base import Context, TakeDecision
from ..util import write_atomically
from .referee import IllegalDecision, context_for, legal_play

log = logging.getLogger(__name__)

BOX = 0
"""The box's seat in every member's `Game`."""
TEAM = 1
"""The team member's seat in his `Game`."""

_KINDS = {1: "single", 2: "gammon", 3: "backgammon"}


# ============================================================================ seats


@dataclass(frozen=True, slots=True)
class Seating:
    """Who is in the box and the team in order, captain first (player indices)."""

    box: int
    team: tuple[int, ...]

    def __post_init__(self) -> None:
        if len(self.team) < 2:
            raise ValueError(f"a chouette team needs at least two members, got {self.team}")
        if len(set(self.team) | {self.box}) != len(self.team) + 1:
            raise ValueError(f"every player sits once: box {self.box}, team {self.team}")

    @property
    def captain(self) -> int:
        return self.team[0]


SeatRoll = tuple[int, int]
"""(player, die) of one seat roll."""


def roll_for_seats(
    players: Sequence[int], draw: Callable[[], int]
) -> tuple[Seating, list[list[SeatRoll]]]:
    """Seat ``players`` by one die each (R31): highest in the box, second captain, the rest in
    the order of their rolls; tied players roll again among themselves.

    ``draw`` gives one die per call. Returns the seating and every round of rolls in order.
    """
    if len(players) < 3 or len(set(players)) != len(players):
        raise ValueError(f"a chouette needs three or more distinct players, got {list(players)}")
    rounds: list[list[SeatRoll]] = []

    def rank(group: Sequence[int]) -> list[int]:
        rolls: list[SeatRoll] = []
        for player in group:
            die = draw()
            if not 1 <= die <= 6:
                raise ValueError(f"a seat die must be 1-6, got {die!r}")
            rolls.append((player, die))
        rounds.append(rolls)
        ordered: list[int] = []
        for value in sorted({die for _, die in rolls}, reverse=True):
            tied = [player for player, die in rolls if die == value]
            ordered.extend(tied if len(tied) == 1 else rank(tied))
        return ordered

    order = rank(players)
    return Seating(order[0], tuple(order[1:])), rounds


def rotate(seating: Seating, captain_won: bool) -> Seating:
    """The seats for the next game (R34), from the result of the captain's own cube."""
    captain, rest = seating.team[0], seating.team[1:]
    if captain_won:
        return Seating(captain, rest + (seating.box,))
    return Seating(seating.box, rest + (captain,))


def _dice_draw(stream: GameDice) -> Callable[[], int]:
    """One die per call from a game stream's rolls (both dice of each roll, in order)."""

    def dice() -> Iterator[int]:
        while True:
            yield from stream.roll()

    source = dice()
    return lambda: next(source)


# ============================================================================ results


@dataclass(frozen=True, slots=True)
class CubeEvent:
    """One cube or resignation action in a member's game, after ``move`` chequer plays."""

    move: int
    action: str
    """double, take, drop, resign, accept, reject, auto-double."""
    by: str
    """box or team."""
    value: int
    """The cube offered or taken, or the resignation value (1-3)."""


@dataclass(frozen=True, slots=True)
class MemberResult:
    """How one member's game with the box ended."""

    player: int
    cube: int
    """The member's cube at the end (a dropped offer not counted)."""
    owner: str
    """Who owned that cube: centre, box or member."""
    outcome: GameOutcome
    points: int
    """What the box paid this member (negative: what he paid the box)."""
    left_after: int
    """Chequer plays made in the game when this member's game ended."""
    history: tuple[CubeEvent, ...]


@dataclass
class ChouetteGame:
    """One game of a chouette session: seats, every member's result, who moved, the record."""

    number: int
    seating: Seating
    names: tuple[str, ...]
    opening: list[tuple[int, int]]
    """The opening dice, (box, captain), including ties."""
    members: list[MemberResult]
    movers: list[tuple[int, int]]
    """(chequer plays made before, player) each time a member took over the team's chequers."""
    consultations: list[dict[str, Any]]
    recorded: Game
    """The `Game` written to the .mat file: that of the member moving the chequers at the end."""
    recorded_player: int
    next_seating: Seating
    plays: int = 0

    def member(self, player: int) -> MemberResult:
        return next(m for m in self.members if m.player == player)

    @property
    def captain_won(self) -> bool:
        """The captain's own cube was won (the rotation follows it)."""
        return self.member(self.seating.captain).points > 0

    @property
    def deltas(self) -> dict[int, int]:
        """Points won (+) or lost (-) in this game per player; they sum to zero."""
        out = {m.player: m.points for m in self.members}
        out[self.seating.box] = -sum(out.values())
        return out

    def sidecar(self, mat_name: str | None = None) -> dict[str, Any]:
        """The JSON sidecar of this game (seats, cubes, movers, consultations, settlement)."""
        names = self.names
        s = self.seating
        return {
            "game": self.number,
            "players": list(names),
            "seats": {"box": names[s.box], "captain": names[s.captain],
                      "team": [names[p] for p in s.team]},
            "opening": [list(d) for d in self.opening],
            "plays": self.plays,
            "cubes": [
                {
                    "member": names[m.player],
                    "cube": m.cube,
                    "owner": m.owner,
                    "stake": abs(m.points),
                    "result": "won" if m.points > 0 else "lost",
                    "kind": _KINDS[m.outcome.kind],
                    "ending": m.outcome.ending,
                    "points": m.points,
                    "left_after_play": m.left_after,
                    "history": [
                        {"play": e.move, "action": e.action, "by": e.by, "value": e.value}
                        for e in m.history
                    ],
                }
                for m in self.members
            ],
            "movers": [{"from_play": k, "member": names[p]} for k, p in self.movers],
            "consultations": self.consultations,
            "settlement": {names[p]: d for p, d in self.deltas.items()},
            "captain_won": self.captain_won,
            "next_seats": {"box": names[self.next_seating.box],
                           "team": [names[p] for p in self.next_seating.team]},
            "mat": {"file": mat_name, "box": names[s.box],
                    "team_side": _team_side_name(self)},
        }


def _team_side_name(game: ChouetteGame) -> str:
    """The right-hand name of the .mat: the member(s) who moved the team's chequers."""
    movers: list[str] = []
    for _, player in game.movers:
        name = game.names[player]
        if name not in movers:
            movers.append(name)
    return "+".join(movers)


def game_record(game: ChouetteGame) -> MatchRecord:
    """The .mat record of one chouette game: a money session of one game, box vs team side."""
    names = (game.names[game.seating.box], _team_side_name(game))
    record = MatchRecord.create(0, names, game.recorded.rules, tags={
        "Event": f"chouette game {game.number}",
    })
    record.add_game(game.recorded, (0, 0), False)
    return record


@dataclass
class ChouetteResult:
    """A whole session: the first seats and how they were rolled, every game, the totals."""

    names: tuple[str, ...]
    seating: Seating
    seat_rolls: list[list[SeatRoll]]
    games: list[ChouetteGame] = field(default_factory=list)
    totals: list[int] = field(default_factory=list)

    @property
    def final_seating(self) -> Seating:
        return self.games[-1].next_seating if self.games else self.seating


# ============================================================================ the session


class Chouette:
    """Hosts a chouette session between three or more agents (see the module docstring)."""

    def __init__(
        self,
        agents: Sequence[Agent],
        dice: DiceSource,
        *,
        games: int = 1,
        rules: Rules | None = None,
        names: Sequence[str] | None = None,
        seat_dice: Sequence[int] | None = None,
        seating: Seating | None = None,
        consult: bool = True,
        on_seated: Callable[[Seating, list[list[SeatRoll]]], None] | None = None,
        on_game: Callable[[ChouetteGame, list[int]], None] | None = None,
    ) -> None:
        if len(agents) < 3:
            raise ValueError(f"a chouette needs three or more agents, got {len(agents)}")
        if games < 1:
            raise ValueError(f"a session needs at least one game, got {games}")
        self.agents = list(agents)
        self.dice = dice
        self.games = games
        self.rules = replace(rules if rules is not None else Rules(), beavers=False)
        chosen = list(names) if names is not None else unique_names([a.name for a in agents])
        if len(chosen) != len(agents) or len(set(chosen)) != len(chosen):
            raise ValueError(f"one distinct name per agent needed, got {chosen}")
        self.names = tuple(str(n) for n in chosen)
        self.seat_dice = None if seat_dice is None else list(seat_dice)
        self.initial_seating = seating
        self.consult = consult
        self.on_seated = on_seated
        self.on_game = on_game
        self.session_id = uuid.uuid4().hex[:12]

    def seat(self) -> tuple[Seating, list[list[SeatRoll]]]:
        """The first game's seats: given, or rolled for (R31)."""
        if self.initial_seating is not None:
            return self.initial_seating, []
        if self.seat_dice is not None:
            script = iter(self.seat_dice)

            def draw() -> int:
                try:
                    return next(script)
                except StopIteration:
                    raise ValueError("seat_dice ran out before the seats were settled") from None

            return roll_for_seats(range(len(self.agents)), draw)
        return roll_for_seats(range(len(self.agents)), _dice_draw(self.dice.for_game(0)))

    async def play(self) -> ChouetteResult:
        """Seat the players and play every game; agents are started and closed here."""
        for agent in self.agents:
            await agent.start()
        try:
            seating, rounds = self.seat()
            if self.on_seated is not None:
                self.on_seated(seating, rounds)
            result = ChouetteResult(self.names, seating, rounds, totals=[0] * len(self.agents))
            for number in range(1, self.games + 1):
                game = await self.play_game(seating, number)
                for player, delta in game.deltas.items():
                    result.totals[player] += delta
                result.games.append(game)
                if self.on_game is not None:
                    self.on_game(game, list(result.totals))
                seating = game.next_seating
            return result
        finally:
            for agent in self.agents:
                await agent.close()

    async def play_game(self, seating: Seating, number: int = 1) -> ChouetteGame:
        """Play game ``number`` (dice stream ``number``) with these seats to its end."""
        return await _GameRun(self, seating, number).run()


def unique_names(names: Sequence[str]) -> list[str]:
    """``names`` made distinct: a name given more than once gets ``#1``, ``#2``, ... in order."""
    seen: dict[str, int] = {}
    out: list[str] = []
    for name in names:
        if list(names).count(name) > 1:
            seen[name] = seen.get(name, 0) + 1
            out.append(f"{name}#{seen[name]}")
        else:
            out.append(name)
    return out


class _GameRun:
    """The state of one chouette game while it is played."""

    def __init__(self, chouette: Chouette, seating: Seating, number: int) -> None:
        self.c = chouette
        self.seating = seating
        self.number = number
        self.box_agent = chouette.agents[seating.box]
        self.games = {p: Game(rules=chouette.rules) for p in seating.team}
        self.mover = seating.captain
        self.movers: list[tuple[int, int]] = [(0, seating.captain)]
        self.plays = 0
        self.left_after: dict[int, int] = {}
        self.opening: list[tuple[int, int]] = []
        self.consultations: list[dict[str, Any]] = []
        self.dice = chouette.dice.for_game(number)

    # ----------------------------------------------------------------- state

    def active(self) -> list[int]:
        """Members still in the game, in team order."""
        return [p for p in self.seating.team if not self.games[p].is_over]

    def _update(self) -> None:
        """Note who left, and hand the chequers on when the mover left and others play on."""
        for player, game in self.games.items():
            if game.is_over and player not in self.left_after:
                self.left_after[player] = self.plays
        if self.games[self.mover].is_over:
            following = self.active()
            if following:
                self.mover = following[0]
                self.movers.append((self.plays, self.mover))

    def _name(self, player: int) -> str:
        return self.c.names[player]

    # ----------------------------------------------------------------- play

    async def run(self) -> ChouetteGame:
        games = list(self.games.values())
        while True:
            box_die, captain_die = self.dice.opening()
            self.opening.append((box_die, captain_die))
            decided = [game.opening_roll(box_die, captain_die) for game in games]
            if decided[0]:
                break
        while True:
            self._update()
            active = self.active()
            if not active:
                break
            reference = self.games[self.mover]
            phase = reference.phase
            if phase is Phase.ROLL:
                if reference.seat_on_roll == BOX:
                    await self._box_turn()
                else:
                    await self._team_turn()
            elif phase is Phase.MOVE:
                await self._move()
            else:  # pragma: no cover - every offer is answered where it is made
                raise IllegalDecision(f"chouette reached an unexpected phase {phase.value}")
        return self._result()

    def _roll(self) -> None:
        active = self.active()
        if not active:
            return
        dice = self.dice.roll()
        for player in active:
            self.games[player].roll(dice)

    async def _box_turn(self) -> None:
        box = self.box_agent
        # Resignations: one offer per cube, each member answering for his own.
        for player in self.active():
            game = self.games[player]
            value = await box.offer_resignation(game.position, context_for(game, BOX))
            if not value:
                continue
            if value not in (1, 2, 3) or not game.may_resign(BOX, value):
                log.warning("chouette: box %s offered an invalid resignation %r; ignored",
                            box.name, value)
                continue
            game.resign(BOX, value)
            accepted = await self.c.agents[player].accept_resignation(
                game.position, context_for(game, TEAM), value)
            if accepted:
                game.accept_resignation()
            else:
                game.reject_resignation()
        # Doubles: one question per distinct cube state; every member answers for himself.
        groups: dict[Context, list[int]] = {}
        for player in self.active():
            game = self.games[player]
            if game.may_double():
                groups.setdefault(context_for(game, BOX), []).append(player)
        for context, players in groups.items():
            position = self.games[players[0]].position
            if not await box.should_double(position, context):
                continue
            for player in players:
                game = self.games[player]
                game.double()
                answer = await self.c.agents[player].take_decision(
                    game.position, context_for(game, TEAM))
                if answer is TakeDecision.DROP:
                    game.drop()
                else:
                    game.take()
        self._roll()

    async def _team_turn(self) -> None:
        box = self.box_agent
        # Resignations: each member may concede his own game; the box answers each offer.
        for player in self.active():
            game = self.games[player]
            value = await self.c.agents[player].offer_resignation(
                game.position, context_for(game, TEAM))
            if not value:
                continue
            if value not in (1, 2, 3) or not game.may_resign(TEAM, value):
                log.warning("chouette: %s offered an invalid resignation %r; ignored",
                            self._name(player), value)
                continue
            game.resign(TEAM, value)
            if await box.accept_resignation(game.position, context_for(game, BOX), value):
                game.accept_resignation()
            else:
                game.reject_resignation()
        self._update()
        active = self.active()
        # A team double: unanimous among the members still playing, the mover asked first.
        if active and all(self.games[p].may_double() for p in active):
            asked = [self.mover] + [p for p in active if p != self.mover]
            unanimous = True
            for player in asked:
                game = self.games[player]
                if not await self.c.agents[player].should_double(
                        game.position, context_for(game, TEAM)):
                    unanimous = False
                    break
            if unanimous:
                for player in active:
                    self.games[player].double()
                for player in active:
                    game = self.games[player]
                    answer = await box.take_decision(game.position, context_for(game, BOX))
                    if answer is TakeDecision.DROP:
                        game.drop()
                    else:
                        game.take()
        self._roll()

    async def _move(self) -> None:
        reference = self.games[self.mover]
        seat = reference.seat_on_roll
        dice = reference.dice
        assert dice is not None
        before = reference.position
        results = {after: play for play, after in reference.play_results()}
        others = [p for p in self.active() if p != self.mover]
        if len(results) <= 1:
            made = reference.move(next(iter(results.values())) if results else Play())
        else:
            agent = self.box_agent if seat == BOX else self.c.agents[self.mover]
            consulted: dict[str, Any] | None = None
            if seat == TEAM and self.c.consult and others:
                consulted = await self._consult(others, before, dice, results)
            made = await legal_play(agent, reference, context_for(reference, seat),
                                    f"chouette game {self.number}")
            if consulted is not None:
                consulted["play"] = str(made)
        for player in others:
            self.games[player].move(made)
        self.plays += 1

    async def _consult(self, members: list[int], before: Position, dice: tuple[int, int],
                       results: dict[Position, Play]) -> dict[str, Any]:
        """Ask every other member still playing for his play (R32); the captain decides."""

        async def opinion(player: int) -> str | None:
            game = self.games[player]
            play = await self.c.agents[player].choose_play(before, dice,
                                                           context_for(game, TEAM))
            try:
                found = results.get(before.apply(play))
            except IllegalAction:
                found = None
            return None if found is None else str(found)

        answers = await asyncio.gather(*(opinion(p) for p in members))
        entry: dict[str, Any] = {
            "play_number": self.plays + 1,
            "dice": f"{max(dice)}{min(dice)}",
            "mover": self._name(self.mover),
            "play": None,
            "opinions": {self._name(p): a for p, a in zip(members, answers)},
        }
        self.consultations.append(entry)
        return entry

    # ----------------------------------------------------------------- result

    def _result(self) -> ChouetteGame:
        self._update()
        members: list[MemberResult] = []
        for player in self.seating.team:
            game = self.games[player]
            outcome = game.outcome
            assert outcome is not None
            owner = game.cube_owner
            members.append(MemberResult(
                player=player,
                cube=game.cube_value,
                owner="centre" if owner is None else ("box" if owner == BOX else "member"),
                outcome=outcome,
                points=outcome.points if outcome.winner == TEAM else -outcome.points,
                left_after=self.left_after[player],
                history=tuple(_cube_events(game)),
            ))
        captain = next(m for m in members if m.player == self.seating.captain)
        return ChouetteGame(
            number=self.number,
            seating=self.seating,
            names=self.c.names,
            opening=self.opening,
            members=members,
            movers=self.movers,
            consultations=self.consultations,
            recorded=self.games[self.mover],
            recorded_player=self.mover,
            next_seating=rotate(self.seating, captain.points > 0),
            plays=self.plays,
        )


def _cube_events(game: Game) -> Iterator[CubeEvent]:
    """The cube and resignation actions of a member's game, each after its chequer-play count."""
    plays = 0
    for action in game.history:
        if isinstance(action, Moved):
            plays += 1
        elif isinstance(action, AutoDoubled):
            yield CubeEvent(plays, "auto-double", "box", action.cube)
        elif isinstance(action, Doubled):
            yield CubeEvent(plays, "double", _side(action.seat), action.cube)
        elif isinstance(action, Taken):
            yield CubeEvent(plays, "take", _side(action.seat), action.cube)
        elif isinstance(action, Dropped):
            yield CubeEvent(plays, "drop", _side(action.seat), action.cube)
        elif isinstance(action, Resigned):
            yield CubeEvent(plays, "resign", _side(action.seat), action.value)
        elif isinstance(action, ResignationAccepted):
            yield CubeEvent(plays, "accept", _side(action.seat), action.value)
        elif isinstance(action, ResignationRejected):
            yield CubeEvent(plays, "reject", _side(action.seat), action.value)


def _side(seat: int) -> str:
    return "box" if seat == BOX else "team"


# ============================================================================ logs


class ChouetteLog:
    """Writes each game as ``game-NNN.mat`` plus ``game-NNN.json`` and keeps ``session.json``
    up to date, in one directory per session (files replaced atomically)."""

    def __init__(self, directory: Path, names: Sequence[str], *, seed: int | str | None = None,
                 when: _dt.datetime | None = None) -> None:
        stamp = (when or _dt.datetime.now()).strftime("%Y%m%d-%H%M%S")
        suffix = f"-seed{seed}" if seed is not None else ""
        self.directory = Path(directory) / f"{stamp}-chouette-{len(names)}p{suffix}"
        self.names = tuple(names)
        self.paths: list[Path] = []
        self.session: dict[str, Any] = {"players": list(names), "seed": seed, "games": []}

    def start(self, seating: Seating, rounds: list[list[SeatRoll]]) -> None:
        """Record the first seats and the seat rolls in ``session.json``."""
        names = self.names
        self.session["seats"] = {"box": names[seating.box],
                                 "team": [names[p] for p in seating.team]}
        self.session["seat_rolls"] = [[{"player": names[p], "die": d} for p, d in r]
                                      for r in rounds]
        self._write_session()

    def __call__(self, game: ChouetteGame, totals: list[int]) -> None:
        stem = f"game-{game.number:03d}"
        mat = self.directory / f"{stem}.mat"
        sidecar = self.directory / f"{stem}.json"
        write_atomically(mat, format_match(game_record(game)))
        write_atomically(sidecar, json.dumps(game.sidecar(mat.name), indent=1) + "\n")
        self.paths += [mat, sidecar]
        self.session["games"].append({"game": game.number, "mat": mat.name,
                                      "json": sidecar.name,
                                      "settlement": game.sidecar()["settlement"]})
        self.session["totals"] = {self.names[p]: t for p, t in enumerate(totals)}
        self._write_session()

    def _write_session(self) -> None:
        write_atomically(self.directory / "session.json", json.dumps(self.session, indent=1) + "\n")
