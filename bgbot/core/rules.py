"""The rule options in force for a match or money session (rules/README.md R4, R20–R30)."""

from __future__ import annotations

from dataclasses import dataclass

from .errors import IllegalAction


@dataclass(frozen=True, slots=True)
class Rules:
    """Options where the rule texts leave a choice; defaults are the standard game.

    Money-only options (Jacoby, beavers, automatic doubles) are ignored in match play (R30).
    """

    cube: bool = True
    """False = cubeless play: nobody may double, and the Jacoby rule never applies (R26)."""
    crawford: bool = True
    """Match play: the game after a player first reaches N-1 is played without the cube (R29)."""
    jacoby: bool = False
    """Money: gammons and backgammons count single while the cube is centred (R26)."""
    beavers: bool = False
    """Money: the doubled player may take and redouble at once, keeping the cube (R24)."""
    raccoons: bool = True
    """Money, with beavers on: the beavered player may redouble in turn (a raccoon), and so on
    up to `beaver_limit`; False allows the beaver only (a limit of 1)."""
    beaver_limit: int = 3
    """Money, with beavers on: how many instant redoubles (beavers and raccoons together) may
    follow one double; gnubg's ``set beavers N`` (default 3: double, beaver, raccoon, beaver)."""
    automatic_doubles: int = 0
    """Money: how many opening-roll ties double the centred cube per game; 0 = off (R25)."""
    cube_limit: int = 0
    """Highest cube value allowed, a power of two; 0 = no limit (R23)."""
    backgammon_value: int = 3
    """How many times the cube a backgammon wins: 3, or 2 where local custom says so (R20)."""
    opening_reroll: bool = False
    """R4: the opening winner rolls both dice again instead of playing the opening dice."""

    def __post_init__(self) -> None:
        if self.backgammon_value not in (2, 3):
            raise IllegalAction(f"backgammon_value must be 2 or 3, got {self.backgammon_value}")
        if self.cube_limit and (self.cube_limit < 1 or self.cube_limit & (self.cube_limit - 1)):
            raise IllegalAction(f"cube_limit must be a power of two or 0, got {self.cube_limit}")
        if self.automatic_doubles < 0:
            raise IllegalAction(f"automatic_doubles must be >= 0, got {self.automatic_doubles}")
        if self.beaver_limit < 0:
            raise IllegalAction(f"beaver_limit must be >= 0, got {self.beaver_limit}")

    @property
    def max_redoubles(self) -> int:
        """Beavers and raccoons allowed after one double under these options: 0 without the
        cube or beavers, at most 1 without raccoons, else `beaver_limit` (money play only:
        `for_match` turns them off in matches)."""
        if not (self.cube and self.beavers):
            return 0
        return self.beaver_limit if self.raccoons else min(self.beaver_limit, 1)

    def for_match(self, length: int) -> Rules:
        """The options that actually apply at this match length (money-only ones off in matches)."""
        if length == 0:
            return self
        return Rules(
            cube=self.cube,
            crawford=self.crawford,
            jacoby=False,
            beavers=False,
            raccoons=False,
            beaver_limit=0,
            automatic_doubles=0,
            cube_limit=self.cube_limit,
            backgammon_value=self.backgammon_value,
            opening_reroll=self.opening_reroll,
        )
