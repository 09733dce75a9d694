"""The errors the rules core and the codecs raise."""

from __future__ import annotations


class BgbotError(Exception):
    """Base class of every error bgbot raises on purpose."""


class InvalidPosition(BgbotError, ValueError):
    """A board that cannot occur: wrong counts, both sides on one point, negative chequers."""


class IllegalAction(BgbotError, ValueError):
    """An action the rules do not allow in the current state; the message says what was legal."""


class FormatError(BgbotError, ValueError):
    """Text that a codec cannot read; the message names the field and the value at fault."""

    def __init__(self, field: str, value: object, reason: str) -> None:
        self.field = field
        self.value = value
        self.reason = reason
        shown = repr(value)
        if len(shown) > 120:
            shown = shown[:117] + "..."
        super().__init__(f"{field}: {reason} (got {shown})")
