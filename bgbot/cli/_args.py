"""Argument types the commands share (argparse ``type=`` callables)."""

from __future__ import annotations

import argparse

from ..core.errors import FormatError
from ..formats.gnubgid import check_match_length


def match_length(text: str) -> int:
    """A match length option: 0 (money) .. gnubg's longest match (64), else a usage error."""
    try:
        length = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of points") from None
    try:
        return check_match_length("match length", length)
    except FormatError as exc:
        raise argparse.ArgumentTypeError(f"{exc.reason}, got {text}") from None
