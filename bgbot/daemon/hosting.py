"""Hosting matches: resume from the journal, play with the referee, journal, log as .mat.

A `MatchHost` lives in one process (a match worker) and plays any number of matches at once
on its event loop. Every referee event of every match goes through a `GroupJournal`: actions
are committed to ``state.db`` before the next decision of that match is asked and before the
event is published (group commit: all matches that reach a decision in the same loop turn
share one transaction), and game ends are committed durably, then the match's ``.mat`` file
is written by the one `.mat` writer (`bgbot.referee.matlog.MatWriter`: the game formatted once
on the loop, the file rewritten atomically in a writer thread, so each game costs the same).

Agents are wrapped in `PacedAgent`, which waits for that commit and so also yields to the
loop before every decision: in-process players never await anything, and without it one
match would run to its end before the next one (or a command from the daemon) got a turn.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import datetime as _dt
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

from ..agents.base import Agent
from ..core.game import Game, Phase
from ..core.position import Play, Position
from ..deciders import create_agent
from ..formats.gnubgid import GameState, encode_gnubgid
from ..formats.gnubgid import MatchState as GnubgMatchState
from ..formats.mat import MatchRecord
from ..players.base import Context, TakeDecision
from ..referee import events as ev
from ..referee.matlog import MatWriteError, MatWriter
from ..referee.referee import Referee, Resume
from ..referee.series import dice_for, match_seed
from .wire import match_events
from .store import (
    GameRow,
    JournalEntry,
    MatchRow,
    MatchSpec,
    MatchState,
    ResumedDice,
    Store,
    StoreError,
    journal_action,
    replay,
)

log = logging.getLogger(__name__)

Publish = Callable[[list[Any]], None]
"""Receives, after each commit, the items queued with the committed entries, in order."""


class GroupJournal:
    """Buffers journal entries and game rows of many matches; commits them together."""

    def __init__(self, store: Store, publish: Publish) -> None:
        self.store = store
        self.publish = publish
        self._batches: dict[str, tuple[list[JournalEntry], list[GameRow]]] = {}
        self._outgoing: list[Any] = []
        self._waiter: asyncio.Future[None] | None = None
        self.commits = 0

    def add(self, match_id: str, entry: JournalEntry | GameRow | None, item: Any = None) -> None:
        entries, games = self._batches.setdefault(match_id, ([], []))
        if isinstance(entry, JournalEntry):
            entries.append(entry)
        elif isinstance(entry, GameRow):
            games.append(entry)
        if item is not None:
            self._outgoing.append(item)

    def flush(self, *, durable: bool = False) -> None:
        """Commit everything pending now, then publish what waited for it."""
        batches = [(mid, e, g) for mid, (e, g) in self._batches.items() if e or g]
        self._batches.clear()
        if batches or durable:
            self.store.record_many(batches, durable=durable)
            self.commits += 1
        if self._outgoing:
            outgoing, self._outgoing = self._outgoing, []
            self.publish(outgoing)

    async def barrier(self) -> None:
        """Return once everything added so far is committed (always yields to the loop)."""
        if self._waiter is None:
            loop = asyncio.get_running_loop()
            self._waiter = loop.create_future()
            loop.call_soon(self._flush_waiters)
        await asyncio.shield(self._waiter)

    def _flush_waiters(self) -> None:
        waiter, self._waiter = self._waiter, None
        assert waiter is not None
        try:
            self.flush()
        except Exception as exc:  # every waiting match fails with the store's error
            if not waiter.cancelled():
                waiter.set_exception(exc)
            return
        if not waiter.cancelled():
            waiter.set_result(None)


class PacedAgent(Agent):
    """An agent that waits for the journal before every decision (see the module docstring)."""

    def __init__(self, inner: Agent, barrier: Callable[[], Any]) -> None:
        self.inner = inner
        self.name = inner.name
        self._barrier = barrier

    async def choose_play(self, position: Position, dice: Sequence[int], context: Context) -> Play:
        await self._barrier()
        return await self.inner.choose_play(position, dice, context)

    async def should_double(self, position: Position, context: Context) -> bool:
        await self._barrier()
        return await self.inner.should_double(position, context)

    async def take_decision(self, position: Position, context: Context) -> TakeDecision:
        await self._barrier()
        return await self.inner.take_decision(position, context)

    async def offer_resignation(self, position: Position, context: Context) -> int:
        await self._barrier()
        return await self.inner.offer_resignation(position, context)

    async def accept_resignation(self, position: Position, context: Context, value: int) -> bool:
        await self._barrier()
        return await self.inner.accept_resignation(position, context, value)

    def reseed(self, key: str) -> None:
        self.inner.reseed(key)

    async def start(self) -> None:
        await self.inner.start()

    async def close(self) -> None:
        await self.inner.close()


def match_agents(spec: MatchSpec) -> tuple[Agent, Agent]:
    """The two agents of a hosted match, seeded as `bgbot play` seeds them (seed*2, seed*2+1),
    so a hosted match and ``bgbot play A B --seed S`` play the same match."""
    return (create_agent(spec.agent_a, seed=spec.seed * 2),
            create_agent(spec.agent_b, seed=spec.seed * 2 + 1))


def match_names(spec: MatchSpec, agents: Sequence[Agent]) -> tuple[str, str]:
    """The .mat column names: the spec's, else the agents' (suffixed -A/-B when equal, as
    `run_series` does)."""
    if spec.names[0] and spec.names[1]:
        return spec.names[0], spec.names[1]
    a, b = agents[0].name, agents[1].name
    return (a, b) if a != b else (f"{a}-A", f"{b}-B")


@dataclass
class HostedMatch:
    """A match being played in this process."""

    row: MatchRow
    writer: MatWriter
    task: asyncio.Task[None] | None = None
    referee: Referee | None = None
    stop_reason: str | None = None
    stop_error: str | None = None
    """Why the match was parked by itself (its .mat file could not be written)."""
    mat_failed: bool = False
    """A write of its .mat file failed (logged once)."""
    numbered: int = 0
    """Events of this match numbered so far (``n`` of the last one; `MatchHost.next_number`)."""
    settled: bool = False
    """`_run` ran to its end (a task cancelled before its first step never runs at all)."""
    state: MatchState = MatchState.RUNNING
    listeners: list[ev.Listener] = field(default_factory=list)
    resumed: Game | None = None
    """The unfinished game the journal replayed, until it ends: the game in play while the
    agents start, before the referee takes it over."""

    @property
    def game(self) -> Game | None:
        """The game in play (None between games)."""
        current = self.referee.current_game if self.referee is not None else None
        return current if current is not None else self.resumed

    def in_play(self) -> Game | None:
        """The game in play, unfinished (None between games)."""
        game = self.game
        return game if game is not None and not game.is_over else None

    def mat_text(self) -> str:
        """The .mat text so far (of the current file of a long money session), the game in
        play included."""
        return self.writer.text(self.in_play())


EventSink = Callable[[str, ev.Event], Any]
"""(match id, event) -> the item to publish after the event is committed (None: nothing)."""
StateSink = Callable[[str, MatchState, str | None], None]


class MatchHost:
    """Plays hosted matches in this process (see the module docstring)."""

    def __init__(self, store: Store, publish: Publish, *, event_item: EventSink,
                 on_state: StateSink | None = None, mat_errors: str = "stop") -> None:
        self.store = store
        self.mat_errors = mat_errors
        """A .mat write that fails: "stop" parks the match, "continue" plays on without it."""
        self.journal = GroupJournal(store, publish)
        self.event_item = event_item
        self.on_state = on_state
        self.matches: dict[str, HostedMatch] = {}
        # .mat files are written (and fsynced) by one thread, in order, so that the loop
        # goes on playing the other matches meanwhile; the journal stays the truth.
        self._writer = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="mat")

    def _write_mat(self, hosted: HostedMatch, *, act: bool = True) -> asyncio.Future[None]:
        """Write the match's .mat file(s) in the writer thread; a failure is `_mat_written`'s
        (``act`` False: only logged, as for a match already finished)."""
        future = asyncio.get_running_loop().run_in_executor(self._writer, hosted.writer.write)
        future.add_done_callback(lambda done: self._mat_written(done, hosted, act))
        return future

    def _mat_written(self, future: asyncio.Future[None], hosted: HostedMatch, act: bool) -> None:
        if future.cancelled() or future.exception() is None:
            return
        message = str(future.exception())
        if not act:
            return  # the caller logs it
        match_id = hosted.row.id
        if self.mat_errors == "continue":
            if not hosted.mat_failed:
                log.error("match %s: %s; it goes on without its log (mat_errors = continue); "
                          "the journal keeps every action", match_id, message)
            hosted.mat_failed = True
            return
        hosted.mat_failed = True
        if hosted.stop_reason is None and hosted.task is not None and not hosted.task.done():
            log.error("match %s: %s; the match is parked (mat_errors = stop) and resumes "
                      "when the daemon starts again", match_id, message)
            hosted.stop_error = message
            self.stop(match_id, "park")

    def close(self) -> None:
        """Wait for the pending .mat writes."""
        self._writer.shutdown(wait=True)

    def start(self, match_id: str) -> asyncio.Task[None]:
        """Play (or resume) the match in a task; a match already here is not started twice."""
        existing = self.matches.get(match_id)
        if existing is not None and existing.task is not None:
            return existing.task
        row = self.store.get_match(match_id)
        if row is None:
            raise KeyError(match_id)
        when = _dt.datetime.fromisoformat(row.started)
        header = MatchRecord.create(row.spec.length, ("", ""), row.spec.rules, when=when)
        hosted = HostedMatch(row, MatWriter(row.mat_path, header))
        self.matches[match_id] = hosted
        task = asyncio.get_running_loop().create_task(self._run(hosted), name=f"match-{match_id}")
        task.add_done_callback(lambda _: self._never_ran(hosted))
        hosted.task = task
        return task

    def _never_ran(self, hosted: HostedMatch) -> None:
        """A match stopped before its task took its first step: settle it here."""
        if not hosted.settled:
            hosted.settled = True
            self.matches.pop(hosted.row.id, None)
            self._settle_stop(hosted)

    def stop(self, match_id: str, reason: str) -> bool:
        """End a match here: "abort" (final) or "park" (resumes on the next start)."""
        hosted = self.matches.get(match_id)
        if hosted is None or hosted.task is None or hosted.task.done():
            return False
        if hosted.stop_reason is None:  # the first reason given wins (an abort stays one)
            hosted.stop_reason = reason
        hosted.task.cancel()
        return True

    async def stop_all(self, reason: str = "park") -> None:
        tasks = [h.task for h in self.matches.values() if h.task is not None]
        for match_id in list(self.matches):
            self.stop(match_id, reason)
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)

    def next_number(self, match_id: str) -> int:
        """The ``n`` of the match's next event (protocol 1.2): its place in `match_events`'s
        sequence, which a resumed match continues from its journal."""
        hosted = self.matches[match_id]
        hosted.numbered += 1
        return hosted.numbered

    def mat_text(self, match_id: str) -> str | None:
        hosted = self.matches.get(match_id)
        return None if hosted is None else hosted.mat_text()

    def snapshot(self, match_id: str, mat: bool = True) -> dict[str, Any] | None:
        """The live state of a match here: game number, GNU BG ID, Crawford flag and, with
        ``mat``, the .mat text so far."""
        hosted = self.matches.get(match_id)
        if hosted is None:
            return None
        game = hosted.game
        return {
            "game": hosted.writer.games + (1 if game is not None else 0),
            "position": None if game is None or game.is_over else game_gnubgid(game),
            "crawford": bool(game is not None and game.crawford),
            "mat": hosted.mat_text() if mat else None,
        }

    # ----------------------------------------------------------------- one match

    def _set_state(self, hosted: HostedMatch, state: MatchState, error: str | None = None,
                   *, best_effort: bool = False) -> None:
        """Record the match's new state and tell the daemon; ``best_effort``: a store that
        cannot be written (it is why the match stops) does not keep the daemon from knowing."""
        hosted.state = state
        try:
            self.store.set_state(hosted.row.id, state, error)
        except StoreError:
            if not best_effort:
                raise
            log.error("match %s: its state (%s) cannot be recorded; the store keeps the last "
                      "committed one", hosted.row.id, state.value)
        if self.on_state is not None:
            self.on_state(hosted.row.id, state, error)

    async def _run(self, hosted: HostedMatch) -> None:
        row = hosted.row
        agents: tuple[Agent, Agent] | None = None
        try:
            agents = match_agents(row.spec)
            await self._play(hosted, agents)
        except asyncio.CancelledError:
            try:
                self._settle_stop(hosted)
            except StoreError as exc:
                log.error("match %s: parking it failed: %s; it resumes from its last committed "
                          "action when the daemon starts again", row.id, exc)
                self._set_state(hosted, MatchState.SUSPENDED, str(exc), best_effort=True)
        except StoreError as exc:
            # The journal cannot be written (a full disk, a read-only state.db): the match
            # stops here; what was committed stays, and it resumes from there on the next start.
            log.error("match %s stopped: %s; it resumes from its last committed action when "
                      "the daemon starts again", row.id, exc)
            self._set_state(hosted, MatchState.SUSPENDED, str(exc), best_effort=True)
        except Exception as exc:
            log.error("match %s failed: %s", row.id, exc, exc_info=True)
            try:
                self.journal.flush()
            except Exception:
                log.exception("match %s: journal flush failed", row.id)
            self._set_state(hosted, MatchState.FAILED, f"{type(exc).__name__}: {exc}",
                            best_effort=True)
        finally:
            hosted.settled = True
            if agents is not None:
                for agent in agents:
                    try:
                        await agent.close()
                    except Exception:
                        log.exception("match %s: closing %s failed", row.id, agent.name)
            self.matches.pop(row.id, None)

    def _settle_stop(self, hosted: HostedMatch) -> None:
        """The match task was cancelled: commit what it did, then abort or park it."""
        row = hosted.row
        self.journal.flush(durable=True)
        if hosted.stop_reason == "abort":
            try:
                self._writer.submit(hosted.writer.write, hosted.in_play()).result()
            except MatWriteError as exc:
                log.error("match %s: %s", row.id, exc)
            self._set_state(hosted, MatchState.ABORTED, "aborted on request")
        else:
            self._set_state(hosted, MatchState.SUSPENDED, hosted.stop_error)

    async def _play(self, hosted: HostedMatch, agents: tuple[Agent, Agent]) -> None:
        row = hosted.row
        spec = row.spec
        mid = row.id
        state = replay(spec, self.store.journal(mid), self.store.games(mid))
        names = match_names(spec, agents)
        hosted.writer.header.names = names
        for done in state.finished:
            hosted.writer.add_game(done)
        hosted.resumed = state.current
        played = state.finished + ([state.current] if state.current is not None else [])
        hosted.numbered = len(match_events(mid, spec.length, spec.rules, played))
        dice = dice_for(spec.seed, 0, False)
        if state.current is not None:
            dice = ResumedDice(dice, state.number - 1, state.openings, state.rolls)
        seq = state.next_seq
        number = state.number

        def on_event(event: ev.Event) -> None:
            nonlocal seq
            item = self.event_item(mid, event)
            action = journal_action(event)
            if action is not None:
                game_number: int = getattr(event, "game")  # every journalled event has one
                self.journal.add(mid, JournalEntry(seq, game_number, action[0], action[1]), item)
                seq += 1
            elif isinstance(event, ev.GameStarted):
                self.journal.add(mid, GameRow(event.game, event.score, event.crawford,
                                              event.post_crawford), item)
            elif isinstance(event, ev.GameEnded):
                hosted.resumed = None
                self.journal.add(mid, GameRow(event.game, event.score,
                                              outcome=event.outcome), item)
                self.journal.flush(durable=True)
                hosted.writer.add_game(event.record)
                self._write_mat(hosted)
            else:
                self.journal.add(mid, None, item)

        paced = (PacedAgent(agents[0], self.journal.barrier),
                 PacedAgent(agents[1], self.journal.barrier))
        referee = Referee(paced, dice, length=spec.length, games=spec.games, rules=spec.rules,
                          listeners=[on_event], match_id=mid, names=names,
                          seed=match_seed(spec.seed, 0, False))
        for agent in agents:
            await agent.start()
        self._set_state(hosted, MatchState.RUNNING)
        if state.finished:
            with contextlib.suppress(MatWriteError):  # reported (and acted on) by _mat_written
                await self._write_mat(hosted)
        if state.current is not None:
            log.info("match %s: resuming game %d after %d journalled actions", mid, number,
                     seq - 1)
        hosted.referee = referee
        result = await referee.play(Resume(state.match, state.current, number),
                                    announce_end=False)
        self.journal.flush(durable=True)
        self.store.finish_match(mid, result.score, result.winner, result.played)
        try:  # the match is over and journalled: a log that cannot be written does not undo it
            await self._write_mat(hosted, act=False)
        except MatWriteError as exc:
            log.error("match %s finished, but %s", mid, exc)
        hosted.writer.close()
        hosted.state = MatchState.FINISHED
        on_event(ev.MatchEnded(mid, result.score, result.winner, result.played))
        self.journal.flush()
        if self.on_state is not None:
            self.on_state(mid, MatchState.FINISHED, None)


def game_gnubgid(game: Game) -> str:
    """The GNU BG ID (PositionID:MatchID) of a game in progress, as gnubg would show it."""
    owner = game.cube_owner
    resignation = game.resignation
    turn = game.seat_to_act
    dice = game.dice or (0, 0)
    state = GnubgMatchState(
        cube=game.cube_value,
        cube_owner=-1 if owner is None else owner,
        on_roll=game.seat_on_roll,
        crawford=game.crawford,
        game_state=GameState.PLAYING,
        turn=game.seat_on_roll if turn is None else turn,
        doubled=game.phase is Phase.TAKE,
        resigned=resignation[1] if resignation else 0,
        dice=dice,
        match_length=game.match_length,
        score=game.score,
        jacoby=game.rules.jacoby,
    )
    return encode_gnubgid(game.position, state)


def default_mat_path(logs_dir: Path, match_id: str, spec: MatchSpec, started: _dt.datetime) -> Path:
    """``<logs>/<YYYYmmdd-HHMMSS>-<match id>-<N>pt.mat`` (``money`` for sessions)."""
    kind = "money" if spec.length == 0 else f"{spec.length}pt"
    return logs_dir / f"{started.strftime('%Y%m%d-%H%M%S')}-{match_id}-{kind}.mat"
