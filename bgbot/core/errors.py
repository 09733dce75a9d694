"""The errors the rules core and the codecs raise."""

from __future__ import annotations

from typing import Any


class BgbotError(Exception):
    """Base class of every error bgbot raises on purpose."""

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickle as the error it is, whatever its ``__init__`` takes: an error raised in a
        worker process (a pool's, Dask's) reaches the process that waits for it. Python's
        default calls ``__init__`` again with the message alone, which fails for errors that
        take other arguments (`FormatError`), and a pool then breaks instead."""
        return (_rebuilt, (type(self), self.args, self.__dict__))


def _rebuilt(cls: type[BgbotError], args: tuple[Any, ...], state: dict[str, Any]
             ) -> BgbotError:
    """An error unpickled (`BgbotError.__reduce__`): its arguments and attributes, without
    calling its ``__init__``."""
    error = cls.__new__(cls, *args)
    error.args = args
    error.__dict__.update(state)
    return error


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
