"""Text codecs: move notation, Position/Match ID, XGID, FIBS board lines, .mat files."""

from ..core.errors import FormatError

__all__ = ["FormatError"]
