"""Frontends: programs and servers that drive bgbot.

- `bgbot.frontends.gnubg_player`: the listener gnubg connects to with
  ``set player N external HOST:PORT``;
- `bgbot.frontends.ubgi`: bgbot as a UBGI engine on stdin/stdout;
- `bgbot.frontends.fibs` (CLIP servers) and `bgbot.frontends.bgammon` (bgammon.org): accounts
  that play online, with the shared `invitations` policy and `backoff` reconnects.
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
