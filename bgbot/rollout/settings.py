"""What a rollout plays: its settings, checked once, and the job a task carries.

Everything here decides the results: the same settings, position and context give the same
trials bit for bit, whichever process or machine plays them.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..agents.spec import parse_agent_spec
from ..core.context import Context
from ..core.errors import FormatError
from ..core.position import Position
from ..core.rules import Rules
from ..deciders import known_agents

__all__ = ["BLOCK", "DEFAULT_TRIALS", "RolloutJob", "RolloutSettings"]

BLOCK = 36
"""Trials come in blocks of 36: each block holds every first roll once (`dice`)."""
DEFAULT_TRIALS = 1296
"""gnubg's default, and 36 x 36: every pair of first and second rolls exactly once, so the
two rolls that weigh most in a trial's noise cost nothing."""
DEFAULT_CHUNK = 144
"""The most trials per task `RolloutSettings.chunk_for` gives: enough that a task's overhead
(a process hop, a Dask message) is small against its work."""
MAX_TRIALS = 10_000_000


@dataclass(frozen=True)
class RolloutSettings:
    """How to roll out (gnubg's rollout settings, those bgbot has)."""

    player: str = "heuristic"
    """The agent spec that plays both sides (any `bgbot.deciders` kind)."""
    trials: int = DEFAULT_TRIALS
    """A multiple of 36 (`BLOCK`)."""
    truncate: int = 0
    """Cut each trial after this many plies and take the player's evaluation there (0: play
    every game to its end)."""
    seed: int = 1
    """The dice seed (`dice.RolloutDice`)."""
    vr: bool = True
    """Variance reduction: subtract each roll's luck (`trial`)."""
    cubeful: bool | None = None
    """Play with the cube (the players' own cube decisions); None: when the position's
    context has the cube in use (`Rules.cube`), as gnubg does."""
    se_target: float | None = None
    """Stop early, at a multiple of 36 trials, once the standard error of the equity is
    below this."""
    chunk: int | None = None
    """Trials per task (a multiple of 36; None: `chunk_for` chooses); does not change the
    results."""

    def __post_init__(self) -> None:
        name = parse_agent_spec(self.player).name
        known = known_agents()
        if name not in known:
            raise FormatError("player", self.player,
                              f"no agent {name!r}; known: {', '.join(sorted(known))}")
        if not BLOCK <= self.trials <= MAX_TRIALS or self.trials % BLOCK:
            low = max(BLOCK, self.trials // BLOCK * BLOCK)
            raise FormatError("trials", str(self.trials),
                              f"must be a multiple of {BLOCK} (quasi-random dice rotate the "
                              f"first roll over {BLOCK} trials), e.g. {low} or {low + BLOCK}; "
                              f"{DEFAULT_TRIALS} = 36 x 36 balances the first two rolls")
        if self.truncate < 0:
            raise FormatError("truncate", str(self.truncate),
                              "must be >= 0 plies (0: play every game to its end)")
        if not 0 <= self.seed < 2 ** 63:
            raise FormatError("seed", str(self.seed), "must be 0 .. 2**63-1")
        if self.se_target is not None and not self.se_target > 0:
            raise FormatError("se_target", str(self.se_target), "must be a positive equity")
        if self.chunk is not None and (self.chunk < BLOCK or self.chunk % BLOCK):
            raise FormatError("chunk", str(self.chunk), f"must be a multiple of {BLOCK}")

    @classmethod
    def reported(cls, *, player: str, trials: int, truncate: int, seed: int, vr: bool,
                 cubeful: bool | None) -> RolloutSettings:
        """The settings a rollout's report gives (`RolloutResult.from_json`), not checked
        again: they were checked where the rollout ran, and its player may be an agent this
        process does not know (a daemon's named agent)."""
        settings = cls()
        for name, value in (("player", player), ("trials", trials), ("truncate", truncate),
                            ("seed", seed), ("vr", vr), ("cubeful", cubeful)):
            object.__setattr__(settings, name, value)  # frozen: past __post_init__'s checks
        return settings

    def chunk_for(self, window: int) -> int:
        """Trials per task with ``window`` tasks in flight: the set ``chunk``, else enough
        tasks to keep every worker busy (about 4 per task in flight), at most
        `DEFAULT_CHUNK` trials each."""
        if self.chunk is not None:
            return self.chunk
        share = self.trials // (4 * max(1, window)) // BLOCK * BLOCK
        return min(DEFAULT_CHUNK, max(BLOCK, share))

    def cubeful_for(self, context: Context) -> bool:
        """Whether a rollout of a position with ``context`` is played with the cube."""
        return context.rules.cube if self.cubeful is None else self.cubeful


@dataclass(frozen=True)
class RolloutJob:
    """One rollout as a task carries it (picklable): the position, with the side on roll
    before rolling, its context (from that side), the settings, whether the cube is played
    (resolved), and whose results are wanted: the side on roll's (a position's rollout), or
    the other side's (a candidate play's, where the side that just moved is asked about)."""

    opponent: tuple[int, ...]
    mover: tuple[int, ...]
    context: Context
    settings: RolloutSettings
    cubeful: bool
    for_roller: bool = True

    @classmethod
    def of(cls, position: Position, context: Context, settings: RolloutSettings, *,
           for_roller: bool = True) -> RolloutJob:
        """The job of rolling out ``position`` (the side on roll before rolling) in
        ``context`` (from that side); ``for_roller`` False reports the other side's view."""
        if position.is_game_over():
            raise FormatError("position", position.position_id(),
                              "the game is already over: there is nothing to roll out")
        cubeful = settings.cubeful_for(context)
        if not cubeful and context.rules.cube:
            context = replace(context, rules=replace(context.rules, cube=False))
        if cubeful and not context.rules.cube:
            context = replace(context, rules=replace(context.rules, cube=True))
        return cls(position.opponent, position.mover, context, settings, cubeful, for_roller)

    @property
    def position(self) -> Position:
        return Position(self.opponent, self.mover)

    @property
    def viewer_context(self) -> Context:
        """The context of the side whose results are reported."""
        return self.context if self.for_roller else self.context.swapped()

    @property
    def rules(self) -> Rules:
        return self.context.rules
