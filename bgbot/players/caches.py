"""The evaluators' bounded caches (per side or per board): one limit for all of them."""

from __future__ import annotations

from typing import ClassVar, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class BoundedCache(dict[K, V]):
    """A cache cleared when it holds more than `limit` entries. One limit for every cache of
    the evaluators (`agents.players.limit_player_caches` lowers it in long-running
    processes: a session of 10,000 games would otherwise grow by some 100 MB)."""

    limit: ClassVar[int] = 200_000

    def put(self, key: K, value: V) -> V:
        """Store ``value`` under ``key`` (clearing a full cache first); returns ``value``."""
        if len(self) > BoundedCache.limit:
            self.clear()
        self[key] = value
        return value
