"""Hosting matches between agents: the referee, its events, and result statistics."""

from .referee import IllegalDecision, MatchResult, Referee, Resume, context_for
from .stats import Tally

__all__ = ["IllegalDecision", "MatchResult", "Referee", "Resume", "Tally", "context_for"]
