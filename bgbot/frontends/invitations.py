"""Invitation policy shared by every server frontend (FIBS, bgammon.org, ...).

A frontend turns a server's invitation into an :class:`Invitation`, asks :func:`judge` for a
:class:`Verdict`, and logs the verdict's ``reason`` for every decline.  :class:`PolicyState`
holds what the rules need to remember (when each opponent's last match ended, whether we are
busy); the per-opponent match ends survive restarts in a small JSON file written atomically.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

from ..util import write_atomically

__all__ = ["Invitation", "InvitationPolicy", "PolicyState", "Verdict", "judge"]


@dataclass(frozen=True)
class InvitationPolicy:
    """Which invitations the bot accepts.

    Names in ``allow`` and ``block`` compare case-insensitively; a non-empty ``allow`` list admits
    only the names on it.  A rating or experience bound that is set declines an opponent whose
    rating or experience the server did not tell us (the bound cannot be checked).
    ``cooldown_seconds`` is the pause required after a match with the same opponent ended.
    """

    min_length: int = 1
    max_length: int = 25
    allow_unlimited: bool = False
    min_rating: float | None = None
    max_rating: float | None = None
    min_experience: int | None = None
    max_experience: int | None = None
    allow: tuple[str, ...] = ()
    block: tuple[str, ...] = ()
    allow_bots: bool = True
    cooldown_seconds: float = 0.0
    one_match_at_a_time: bool = True


@dataclass(frozen=True)
class Invitation:
    """An invitation as the server reported it; ``length`` None means unlimited (money play)."""

    opponent: str
    length: int | None
    rating: float | None = None
    experience: int | None = None
    is_bot: bool | None = None
    resume: bool = False


@dataclass(frozen=True)
class Verdict:
    """Accept or decline, with a readable sentence saying why."""

    accept: bool
    reason: str


def _key(name: str) -> str:
    return name.strip().casefold()


class PolicyState:
    """What the policy remembers: match ends per opponent (persisted) and the busy flag.

    ``path`` None keeps everything in memory (tests, one-off runs).  The file is JSON
    ``{"match_ends": {"name": unix_time}}``, replaced atomically on every change; a missing or
    unreadable file starts empty rather than stopping the bot.  ``busy`` is not persisted: after a
    restart the frontend learns from the server whether a match is still running.
    """

    def __init__(self, path: Path | None) -> None:
        self.path = Path(path) if path is not None else None
        self._ends: dict[str, float] = {}
        self._busy = False
        if self.path is not None:
            self._load(self.path)

    def _load(self, path: Path) -> None:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return
        ends = data.get("match_ends", {}) if isinstance(data, dict) else {}
        if isinstance(ends, dict):
            for name, when in ends.items():
                if isinstance(name, str) and isinstance(when, (int, float)) and math.isfinite(when):
                    self._ends[_key(name)] = float(when)

    def _save(self) -> None:
        if self.path is None:
            return
        write_atomically(self.path, json.dumps({"match_ends": self._ends}, indent=1,
                                               sort_keys=True))

    def last_match_end(self, opponent: str) -> float | None:
        """When the last match with ``opponent`` ended (unix seconds), or None."""
        return self._ends.get(_key(opponent))

    def record_match_end(self, opponent: str, when: float) -> None:
        """Remember that a match with ``opponent`` ended at ``when`` and persist it."""
        self._ends[_key(opponent)] = float(when)
        self._save()

    @property
    def busy(self) -> bool:
        """True while the bot plays (or has agreed to play) a match."""
        return self._busy

    def set_busy(self, busy: bool) -> None:
        self._busy = bool(busy)


def _fmt(value: float) -> str:
    return f"{value:g}"


def judge(policy: InvitationPolicy, invitation: Invitation, state: PolicyState, now: float) -> Verdict:
    """Decide an invitation.

    Rules are checked in a fixed order and the first failing one gives the reason: block list,
    allow list, one match at a time, bots, length (or unlimited), rating, experience, cool-down.
    A resumed saved match with a returning opponent (``invitation.resume``) is accepted even when
    the other rules would decline it -- finishing a match already started beats any preference --
    except when the opponent is on the block list.
    """
    name = invitation.opponent
    key = _key(name)
    if key in {_key(b) for b in policy.block}:
        return Verdict(False, f"{name} is on the block list.")
    if invitation.resume:
        return Verdict(True, f"Resuming the saved match with {name}.")
    if policy.allow and key not in {_key(a) for a in policy.allow}:
        return Verdict(False, f"{name} is not on the allow list.")
    if policy.one_match_at_a_time and state.busy:
        return Verdict(False, f"Already playing a match; one match at a time (invited by {name}).")
    if invitation.is_bot and not policy.allow_bots:
        return Verdict(False, f"{name} is a bot and bots are not accepted.")
    length = invitation.length
    if length is None:
        if not policy.allow_unlimited:
            return Verdict(False, f"{name} invited to an unlimited match and unlimited matches are not accepted.")
    elif not policy.min_length <= length <= policy.max_length:
        return Verdict(False, f"{name} invited to a {length}-point match; accepted lengths are "
                              f"{policy.min_length} to {policy.max_length}.")
    if policy.min_rating is not None or policy.max_rating is not None:
        rating = invitation.rating
        if rating is None:
            return Verdict(False, f"{name}'s rating is unknown and a rating range is set.")
        if policy.min_rating is not None and rating < policy.min_rating:
            return Verdict(False, f"{name}'s rating {_fmt(rating)} is below the minimum {_fmt(policy.min_rating)}.")
        if policy.max_rating is not None and rating > policy.max_rating:
            return Verdict(False, f"{name}'s rating {_fmt(rating)} is above the maximum {_fmt(policy.max_rating)}.")
    if policy.min_experience is not None or policy.max_experience is not None:
        exp = invitation.experience
        if exp is None:
            return Verdict(False, f"{name}'s experience is unknown and an experience range is set.")
        if policy.min_experience is not None and exp < policy.min_experience:
            return Verdict(False, f"{name}'s experience {exp} is below the minimum {policy.min_experience}.")
        if policy.max_experience is not None and exp > policy.max_experience:
            return Verdict(False, f"{name}'s experience {exp} is above the maximum {policy.max_experience}.")
    if policy.cooldown_seconds > 0:
        last = state.last_match_end(name)
        if last is not None and now - last < policy.cooldown_seconds:
            wait = policy.cooldown_seconds - (now - last)
            return Verdict(False, f"Played {name} {_fmt(round(now - last))} s ago; cool-down is "
                                  f"{_fmt(policy.cooldown_seconds)} s ({_fmt(round(wait))} s left).")
    what = "an unlimited match" if length is None else f"a {length}-point match"
    return Verdict(True, f"Accepting {what} with {name}.")
