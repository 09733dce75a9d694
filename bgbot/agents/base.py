"""The async Agent interface the referee and the frontends talk to (DESIGN §4).

Every in-process `Player` becomes an Agent through `PlayerAgent`; engines that live in another
process (gnubg, UBGI) implement Agent directly. Positions are always seen from the player on
roll; contexts from the agent being asked (see `bgbot.players.base`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Sequence

from ..core.position import Play, Position
from ..players.base import Context, Player, TakeDecision


class Agent(ABC):
    """A decider the referee can ask; async so out-of-process engines fit the same mould."""

    name: str = "agent"
    knowledge: str | None = None
    """What decides its play beyond its spec (e.g. the checksum of the network it loaded), or
    None; a duel records it so that a resume after the network changed is refused."""
    interactive: bool = False
    """A person decides at the terminal (no progress display may draw over it)."""

    @abstractmethod
    async def choose_play(self, position: Position, dice: Sequence[int], context: Context) -> Play:
        """I am on roll with ``dice``: which legal play?"""

    @abstractmethod
    async def should_double(self, position: Position, context: Context) -> bool:
        """I am on roll and may double: do I?"""

    @abstractmethod
    async def take_decision(self, position: Position, context: Context) -> TakeDecision:
        """The player on roll in ``position`` doubled me: take, drop or beaver?"""

    async def offer_resignation(self, position: Position, context: Context) -> int:
        """I am on roll: resign 0 (no), 1, 2 or 3? Default: never."""
        return 0

    async def accept_resignation(self, position: Position, context: Context, value: int) -> bool:
        """The player on roll in ``position`` resigns ``value``: accept? Default: never."""
        return False

    def reseed(self, key: str) -> None:
        """Restart any random stream this agent keeps from its own seed and ``key``. The
        referee calls it before every decision with a key made of the match seed, the game and
        the point in the game, so that a match resumed from its journal is the same match and
        every match of a duel has its own stream. Default: nothing (no random state)."""

    async def start(self) -> None:
        """Acquire resources (processes, sockets) before the first request."""

    async def close(self) -> None:
        """Release resources; the agent is not used afterwards."""


class PlayerAgent(Agent):
    """An in-process `Player` seen as an Agent: each request is answered synchronously."""

    def __init__(self, player: Player) -> None:
        self.player = player
        self.name = player.name

    async def choose_play(self, position: Position, dice: Sequence[int], context: Context) -> Play:
        return self.player.choose_play(position, dice, context)

    async def should_double(self, position: Position, context: Context) -> bool:
        return self.player.should_double(position, context)

    async def take_decision(self, position: Position, context: Context) -> TakeDecision:
        return self.player.take_decision(position, context)

    async def offer_resignation(self, position: Position, context: Context) -> int:
        return self.player.offer_resignation(position, context)

    async def accept_resignation(self, position: Position, context: Context, value: int) -> bool:
        return self.player.accept_resignation(position, context, value)

    def reseed(self, key: str) -> None:
        reseed = getattr(self.player, "reseed", None)  # players with random state have one
        if reseed is not None:
            reseed(key)

    def __repr__(self) -> str:
        return f"PlayerAgent({self.player!r})"
