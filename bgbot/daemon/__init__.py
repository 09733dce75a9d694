"""The bgbot daemon: its control protocol (``protocol/SPEC.md``), clients and server parts.

Clients: `Client` (blocking) and `AsyncClient` (asyncio). The protocol itself (envelope,
signing, schema, error codes) is `bgbot.daemon.protocol`; default places are `bgbot.daemon.paths`.
"""

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .client import DEFAULT_TIMEOUT, AsyncClient, Client, DaemonError, DaemonUnreachable
    from .protocol import (
        DELIMITER,
        MAX_MESSAGE_BYTES,
        PROTOCOL_VERSION,
        ErrorCode,
        Message,
        ProtocolError,
        Signer,
        error_reply,
        load_key,
        new_message,
        validate_content,
    )
    from .wire import event_message

_CLIENT_NAMES = {"DEFAULT_TIMEOUT", "AsyncClient", "Client", "DaemonError", "DaemonUnreachable"}
_WIRE_NAMES = {"event_message"}


def __getattr__(name: str) -> Any:
    """The names below, imported on first use: a worker process that imports one daemon
    module does not pay for the client and ZeroMQ (several MB in each process)."""
    if name in __all__:
        where = ".client" if name in _CLIENT_NAMES else ".wire" if name in _WIRE_NAMES else ".protocol"
        module = import_module(where, __name__)
        value = getattr(module, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "DEFAULT_TIMEOUT",
    "DELIMITER",
    "MAX_MESSAGE_BYTES",
    "PROTOCOL_VERSION",
    "AsyncClient",
    "Client",
    "DaemonError",
    "DaemonUnreachable",
    "ErrorCode",
    "Message",
    "ProtocolError",
    "Signer",
    "error_reply",
    "event_message",
    "load_key",
    "new_message",
    "validate_content",
]
