"""The daemon's log lines: stdlib logging to stderr, ``key=value`` text or one JSON object.

A record may carry structured fields (``log.info("played", extra={"fields": {...}})``); they
become ``key=value`` pairs (text) or keys (JSON). Under systemd (``$JOURNAL_STREAM`` set) the
text lines carry no timestamp: journald adds its own.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import time
from typing import Any

LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING,
          "error": logging.ERROR}

PLAY_EVENTS = frozenset({
    # a hosted match's events, move by move (protocol/SPEC.md)
    "rolled", "played", "doubled", "taken", "dropped", "beavered", "resigned", "game_started",
    # a server frontend's actions and exchanges (`bgbot.referee.events.action_record` kinds)
    "opening", "roll", "move", "double", "take", "drop", "beaver", "raccoon", "resign",
    "decision", "board_request", "sent", "move_sent", "moved", "say", "notice", "table",
    "double_answer",
})
"""Events that come with every roll and move: logged at debug. Info is for what an operator
needs -- matches and games ending, connections, logins, failures."""


def event_level(name: str) -> int:
    """The level to log the event ``name`` at (`PLAY_EVENTS` at debug, the others at info)."""
    return logging.DEBUG if name in PLAY_EVENTS else logging.INFO


def _text_value(value: Any) -> str:
    if isinstance(value, (list, tuple)):
        text = ",".join(str(v) for v in value)
    else:
        text = str(value)
    if not text or " " in text or '"' in text or "=" in text or "\n" in text or "\t" in text:
        return json.dumps(text)
    return text


class TextFormatter(logging.Formatter):
    """``[time] LEVEL [process] logger: message key=value ...``."""

    def __init__(self, process: str | None = None, timestamps: bool = True) -> None:
        super().__init__()
        self.process = process
        self.timestamps = timestamps
        self._second = -1
        self._stamp = ""

    def format(self, record: logging.LogRecord) -> str:
        parts = []
        if self.timestamps:
            second = int(record.created)
            if second != self._second:  # strftime once a second, not once a line
                self._second = second
                self._stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(second))
            parts.append(f"{self._stamp}.{int(record.msecs):03d}")
        parts.append(record.levelname)
        if self.process:
            parts.append(f"[{self.process}]")
        parts.append(f"{record.name}: {record.getMessage()}")
        fields = getattr(record, "fields", None)
        if isinstance(fields, dict):
            parts.extend(f"{k}={_text_value(v)}" for k, v in fields.items())
        line = " ".join(parts)
        if record.exc_info:
            line += "\n" + self.formatException(record.exc_info)
        return line


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message, process, fields."""

    def __init__(self, process: str | None = None) -> None:
        super().__init__()
        self.process = process

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "time": round(record.created, 3),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        if self.process:
            out["process"] = self.process
        fields = getattr(record, "fields", None)
        if isinstance(fields, dict):
            for key, value in fields.items():
                out.setdefault(key, value)
        if record.exc_info:
            out["exception"] = self.formatException(record.exc_info)
        return json.dumps(out, default=str)


def setup_logging(level: int | str, fmt: str = "text", *, process: str | None = None) -> None:
    """Send every bgbot log line to stderr in ``fmt`` at ``level`` (replacing earlier setup)."""
    numeric = LEVELS.get(level.lower(), logging.INFO) if isinstance(level, str) else level
    handler = logging.StreamHandler(sys.stderr)
    if fmt == "json":
        handler.setFormatter(JsonFormatter(process))
    else:
        handler.setFormatter(TextFormatter(process, timestamps="JOURNAL_STREAM" not in os.environ))
    # the logging HOWTO's "Optimization": no caller, thread or process lookups per record
    # (the daemon logs one line per game event of every hosted match)
    setattr(logging, "_srcfile", None)
    logging.logThreads = False
    logging.logProcesses = False
    logging.logMultiprocessing = False
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(numeric)
