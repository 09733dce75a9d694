"""The configuration of an online-server account: one ``[[KIND.accounts]]`` table of
bgbot.toml (every server kind shares this schema), and the invitation policy it describes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..agents.players import SERVING_AGENT

if TYPE_CHECKING:
    from .invitations import InvitationPolicy

__all__ = ["ServerAccountConfig", "invitation_policy"]


@dataclass(frozen=True)
class ServerAccountConfig:
    """One account the daemon keeps logged in on an online server: a ``[[KIND.accounts]]``
    table of bgbot.toml (every server kind shares this schema).

    Numeric limits of 0 mean "no limit". The password is never written here: it comes from
    the environment, ``password_file``, ``password_credential`` or the default systemd
    credentials, in the order of `bgbot.util.resolve_secret`."""

    user: str = ""
    """Login name; required."""
    host: str = ""
    """Server host; "" = the kind's public host (fibs.com, bgammon.org)."""
    port: int = 0
    """Server port; 0 = the kind's usual port (FIBS 4321, bgammon 1337)."""
    name: str = ""
    """Frontend name for frontend_start/stop; "" = KIND-USER (fibs-USER, bgammon-USER)."""
    password_file: str = ""
    """File holding the password (mode 0600); used when no environment variable is set."""
    password_credential: str = ""
    """systemd credential name (LoadCredential=) holding the password, else the credentials
    KIND-USER, KIND-password and KIND are looked for."""
    agent: str = SERVING_AGENT
    """Agent spec that plays."""
    seed: int = 0
    autostart: bool = True
    min_length: int = 1
    """Shortest match accepted (points)."""
    max_length: int = 25
    """Longest match accepted (points)."""
    allow_unlimited: bool = False
    """Accept unlimited (money) matches."""
    min_rating: float = 0.0
    max_rating: float = 0.0
    min_experience: int = 0
    max_experience: int = 0
    allow: tuple[str, ...] = ()
    """Only these opponents (empty = anyone not blocked)."""
    block: tuple[str, ...] = ()
    """Never these opponents."""
    allow_bots: bool = True
    cooldown: float = 0.0
    """Seconds after a match with an opponent before accepting them again."""
    match_length: int = 5
    """bgammon: the length of the tables bgbot opens; FIBS: of an invite without :LENGTH."""
    invite: tuple[str, ...] = ()
    """Opponents to invite, "NAME", "NAME:LENGTH" or "NAME:unlimited" (FIBS only)."""
    greeting: str = ""
    """Said to the opponent at the start, {opponent} replaced; "" = nothing."""
    farewell: str = ""
    """Said at the end of a match, {opponent} replaced; "" = nothing."""
    keepalive: float = 0.0
    """Seconds between keep-alive messages; 0 = the server's safe default."""



def invitation_policy(entry: ServerAccountConfig) -> InvitationPolicy:
    """The account's invitation rules (limits of 0 mean none)."""
    from .invitations import InvitationPolicy

    return InvitationPolicy(
        min_length=entry.min_length, max_length=entry.max_length,
        allow_unlimited=entry.allow_unlimited,
        min_rating=entry.min_rating or None, max_rating=entry.max_rating or None,
        min_experience=entry.min_experience or None, max_experience=entry.max_experience or None,
        allow=entry.allow, block=entry.block, allow_bots=entry.allow_bots,
        cooldown_seconds=entry.cooldown)
