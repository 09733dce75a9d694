"""Frontends: programs that drive bgbot (gnubg's external player, and later UBGI, FIBS, bgammon).

`bgbot.frontends.gnubg_player` is the listener gnubg connects to with
``set player N external HOST:PORT``.
"""

from .gnubg_player import GnubgPlayerServer, ListenAddress, PlayerServerConfig, ServerStats
from .gnubg_session import GNUBG_DEFAULT_RULES, PlayerSession, Reply

__all__ = [
    "GNUBG_DEFAULT_RULES",
    "GnubgPlayerServer",
    "ListenAddress",
    "PlayerServerConfig",
    "PlayerSession",
    "Reply",
    "ServerStats",
]
