"""The daemon's request handlers: one per request type, registered where it is defined.

A handler is a function ``(daemon, message) -> content`` decorated with `handles`, which names
the request type(s) it serves and how it runs:

- ``quick=True``: answered at once, on the event loop (bookkeeping only: ``status``,
  ``frontend_list``...); the function returns the reply's content;
- otherwise the function is a coroutine function (run as a task), or a plain function that
  returns the content or an awaitable of it (a decision handed to a worker process);
- ``takes_work=True``: refused with ``shutting_down`` once the daemon is stopping.

Every request type of ``protocol/schema.json`` has exactly one handler and every handler a
schema entry: `handles` refuses a type the schema does not know, and `check_handlers` (run when
the daemon's module is imported, and by the tests) names the schema requests nobody serves. A
plugin's request type brings its messages' schemas along (``schema=``), which extends the
protocol (`bgbot.daemon.protocol.add_messages`) before the handler is registered.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Any, Callable, Collection, Mapping, TypeVar

from ..core.errors import BgbotError
from .protocol import REQUEST_TYPES, add_messages

__all__ = ["Handler", "HandlerError", "check_handlers", "handlers", "handles"]

F = TypeVar("F", bound=Callable[..., Any])


class HandlerError(BgbotError):
    """Handlers and the protocol schema disagree (a request without a handler, a handler
    without a request, two handlers for one request)."""


@dataclass(frozen=True)
class Handler:
    """How one request type is served."""

    msg_type: str
    function: Callable[..., Any]
    quick: bool
    takes_work: bool


_HANDLERS: dict[str, Handler] = {}


def handles(*msg_types: str, quick: bool = False, takes_work: bool = False,
            schema: Mapping[str, Any] | None = None) -> Callable[[F], F]:
    """Register the decorated function as the handler of ``msg_types`` (see the module
    docstring). ``schema`` adds message types the protocol schema lacks: msg_type -> schema,
    as in the ``messages`` section of ``protocol/schema.json``."""
    if not msg_types:
        raise HandlerError("handles() needs at least one request type")

    def register(function: F) -> F:
        if schema:
            add_messages(schema)
        if quick and inspect.iscoroutinefunction(function):
            raise HandlerError(f"{function.__qualname__}: a quick handler answers at once; it "
                               "cannot be a coroutine function")
        for msg_type in msg_types:
            if msg_type not in REQUEST_TYPES:
                raise HandlerError(f"{function.__qualname__} handles {msg_type!r}, which is no "
                                   "request of the protocol schema (protocol/schema.json)")
            other = _HANDLERS.get(msg_type)
            if other is not None and other.function is not function:
                raise HandlerError(f"{msg_type} has two handlers: {other.function.__qualname__}"
                                   f" and {function.__qualname__}")
            _HANDLERS[msg_type] = Handler(msg_type, function, quick, takes_work)
        return function

    return register


def handlers() -> Mapping[str, Handler]:
    """Request type -> its handler, for every registered handler."""
    return _HANDLERS


def check_handlers(request_types: Collection[str] | None = None) -> None:
    """Raise `HandlerError` unless the handlers serve exactly ``request_types`` (default: every
    request the protocol knows), naming what is missing on either side."""
    wanted = set(REQUEST_TYPES if request_types is None else request_types)
    missing = sorted(wanted - set(_HANDLERS))
    extra = sorted(set(_HANDLERS) - wanted)
    problems = []
    if missing:
        problems.append(f"requests without a handler: {', '.join(missing)}")
    if extra:
        problems.append(f"handlers without a schema request: {', '.join(extra)}")
    if problems:
        raise HandlerError("; ".join(problems))
