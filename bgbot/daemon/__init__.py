"""The bgbot daemon: its control protocol (``protocol/SPEC.md``), clients and server parts.

Clients: `Client` (blocking) and `AsyncClient` (asyncio). The protocol itself (envelope,
signing, schema, error codes) is `bgbot.daemon.protocol`; default places are `bgbot.daemon.paths`.
"""

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
    event_message,
    load_key,
    new_message,
    validate_content,
)

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
