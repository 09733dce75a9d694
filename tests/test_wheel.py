"""A built wheel carries everything the player needs: the C extensions' sources built, the
network weights file, and the checksum that guards it.

Builds the wheel of this checkout with pip (as a user's ``pip install .`` would), installs it
into a private folder and runs the player from there, away from the source tree.
"""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from bgbot.players import network

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder the wheel was installed into (``pip install --target``)."""
    if not network.SHIPPED_SHA256:
        pytest.skip("no network is shipped yet (tools/train_network.py --ship)")
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                    "-q", "-w", str(out), str(ROOT)], check=True, timeout=600)
    (wheel,) = out.glob("bgbot-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "bgbot/players/data/contact.bgw" in names
    if network.SHIPPED_ZERO_PLY_SHA256:  # the 0-ply player's own network
        assert "bgbot/players/data/contact-0ply.bgw" in names
    assert any(n.startswith("bgbot/players/_contact.") and n.endswith(".so") for n in names)
    assert any(n.startswith("bgbot/players/_selfplay.") and n.endswith(".so") for n in names)
    assert "bgbot/players/_kernels.h" in names
    assert any(n.startswith("bgbot/core/_movegen.") and n.endswith(".so") for n in names)
    # what the systemd units and the README's daemon set-up take from <environment>/share
    for shared in ("share/doc/bgbot/README.md", "share/bgbot/bgbot.toml",
                   "share/bgbot/systemd/bgbot.service", "share/bgbot/systemd/bgbot@.service"):
        assert f"bgbot-0.1.0.data/data/{shared}" in names, shared
    target = out / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target",
                    str(target), str(wheel)], check=True, timeout=600)
    return target


def _run(target: Path, code: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(target)}
    env.pop("BGBOT_PURE_PYTHON", None)
    return subprocess.run([sys.executable, "-c", code], cwd=target.parent, env=env,
                          capture_output=True, text=True, timeout=120)


PROBE = """
import bgbot
from bgbot.players.evaluator import HeuristicEvaluator
from bgbot.core.position import Position
evaluator = HeuristicEvaluator()
print(bgbot.__file__)
print(evaluator.eval, evaluator.compiled, evaluator.network.hidden)
print(round(evaluator.evaluate(Position.initial()).win, 3))
from bgbot.players import _selfplay  # training's extension is built too
print(_selfplay.KERNELS_VERSION)
"""


def test_the_wheel_plays_with_its_own_weights(installed: Path) -> None:
    result = _run(installed, PROBE)
    assert result.returncode == 0, result.stderr
    location, kind, win, kernels = result.stdout.split("\n")[:4]
    assert location.startswith(str(installed))
    assert kind.startswith("net True")
    assert 0.4 < float(win) < 0.6  # the player on roll at the start: about even
    assert kernels.isdigit()


def test_a_tampered_weights_file_in_the_wheel_is_refused(installed: Path) -> None:
    path = installed / "bgbot" / "players" / "data" / "contact.bgw"
    data = bytearray(path.read_bytes())
    data[-100] ^= 0x40
    path.write_bytes(bytes(data))
    try:
        result = _run(installed, PROBE)
    finally:
        data[-100] ^= 0x40
        path.write_bytes(bytes(data))
    assert result.returncode != 0
    assert "WeightsError" in result.stderr
    assert "not the weights this bgbot was built with" in result.stderr
