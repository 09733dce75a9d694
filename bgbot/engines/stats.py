"""What happened on an out-of-process engine's connection (gnubg, UBGI engines)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class EngineStats:
    """Counters an engine agent keeps; read them to see how healthy the engine was."""

    requests: int = 0
    starts: int = 0
    restarts: int = 0
    """Starts after the first: every one followed a crash, a hang or a lost connection."""
    timeouts: int = 0
    crashes: int = 0
    """Connections lost or processes that died under a request."""
    error_replies: int = 0
    """Error replies (the engine could not read our line)."""
    unusable: int = 0
    """Answers that failed the rules check (or could not be had) and were replaced."""
