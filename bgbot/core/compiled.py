"""Which optional C accelerators are in use (the pure-Python code is always the definition).

bgbot's C extensions are built by ``pip install`` when a compiler is there, and skipped
otherwise: ``bgbot.core._movegen`` (the move generator, used by `Position`) and
``bgbot.players._contact`` (the heuristic player's evaluation and search). Setting
``BGBOT_PURE_PYTHON`` to anything but "" or "0" makes every part of bgbot ignore them, for
comparisons and for machines where a build is suspect.
"""

from __future__ import annotations

import os
import warnings
from types import ModuleType

PURE_PYTHON_ENV = "BGBOT_PURE_PYTHON"
"""Set to a non-empty value other than "0", this makes bgbot skip its C extensions."""


def pure_python_forced() -> bool:
    """Whether ``BGBOT_PURE_PYTHON`` asks for the pure-Python code."""
    return os.environ.get(PURE_PYTHON_ENV, "") not in ("", "0")


def compiled_movegen() -> ModuleType | None:
    """The core's compiled move generator ``bgbot.core._movegen``, or None when it is not built
    or `pure_python_forced` (read once, when `bgbot.core.position` is imported)."""
    if pure_python_forced():
        return None
    try:
        from . import _movegen  # type: ignore[attr-defined, unused-ignore]
    except ImportError:
        warnings.warn("bgbot.core._movegen is not built (no C compiler at install?): moves are "
                      "generated in pure Python, about 20x slower; install gcc and the Python "
                      "headers and reinstall bgbot", RuntimeWarning, stacklevel=2)
        return None
    module: ModuleType = _movegen
    return module
