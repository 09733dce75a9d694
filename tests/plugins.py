"""Installing test modules as bgbot plugins for a child process, the way a real plugin is
installed: a distribution's ``entry_points.txt`` with a ``bgbot.plugins`` entry per module
(`bgbot.plugins`), here in a temporary ``.dist-info`` directory put on ``PYTHONPATH``."""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def plugin_env(directory: Path, plugins: dict[str, str]) -> dict[str, str]:
    """An environment for a child process that sees ``plugins`` (entry point name -> module
    under ``tests/``) as installed bgbot plugins."""
    info = directory / "bgbot_test_plugins-0.dist-info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: bgbot-test-plugins\nVersion: 0\n")
    (info / "entry_points.txt").write_text(
        "[bgbot.plugins]\n" + "".join(f"{name} = {module}\n" for name, module in plugins.items()))
    path = os.pathsep.join([str(directory), str(ROOT), os.environ.get("PYTHONPATH", "")])
    return {**os.environ, "PYTHONPATH": path.rstrip(os.pathsep)}


def bgbot_command(*args: str) -> list[str]:
    """``bgbot ARGS`` run by this Python."""
    return [sys.executable, "-m", "bgbot.cli", *args]
