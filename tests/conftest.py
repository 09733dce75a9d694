"""Shared fixtures: the gnubg reference data and small board builders."""

from __future__ import annotations

import atexit
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any, Iterator

import pytest

from bgbot.core.position import Position

# Caches (the bear-off database) go to one private directory per test run, built at most once
# and shared with the CLI subprocesses the tests start; the user's ~/.cache is never touched.
if "BGBOT_CACHE_DIR" not in os.environ:
    _CACHE = tempfile.mkdtemp(prefix="bgbot-test-cache-")
    os.environ["BGBOT_CACHE_DIR"] = _CACHE
    atexit.register(shutil.rmtree, _CACHE, True)  # 4 MB a run: not left in /tmp

SHARED = Path(os.environ.get("BGBOT_SHARED", Path(__file__).resolve().parents[2] / "shared"))
TESTDATA = SHARED / "testdata"
GNUBG = shutil.which("gnubg") or ("/usr/games/gnubg" if Path("/usr/games/gnubg").exists() else None)


def side(points: dict[int, int], bar: int = 0) -> list[int]:
    """25 counts from ``{point: chequers}`` in that side's own numbering (1..24), plus the bar."""
    counts = [0] * 25
    for point, n in points.items():
        counts[point - 1] = n
    counts[24] = bar
    return counts


def board(mover: dict[int, int], opponent: dict[int, int], *, mover_bar: int = 0,
          opponent_bar: int = 0) -> Position:
    """A position with the mover's and the opponent's chequers each in their own numbering."""
    return Position(side(opponent, opponent_bar), side(mover, mover_bar))


def _jsonl(name: str) -> list[dict[str, Any]]:
    path = TESTDATA / name
    if not path.exists():
        pytest.skip(f"reference data {path} not found (set BGBOT_SHARED)")
    with path.open() as handle:
        return [json.loads(line) for line in handle]


@pytest.fixture(scope="session")
def legal_move_records() -> list[dict[str, Any]]:
    return _jsonl("legal-moves.jsonl")


@pytest.fixture(scope="session")
def id_records() -> list[dict[str, Any]]:
    return _jsonl("ids.jsonl")


@pytest.fixture(scope="session")
def equity_records() -> list[dict[str, Any]]:
    return _jsonl("equities.jsonl")


@pytest.fixture(scope="session")
def gnubg_binary() -> Iterator[str]:
    if GNUBG is None:
        pytest.skip("GNU Backgammon (/usr/games/gnubg) is not installed")
    yield GNUBG


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Long checks (``slow``) get two hours before pytest-timeout calls them stuck; the others
    get the ini's ``timeout``."""
    for item in items:
        if item.get_closest_marker("slow") and not item.get_closest_marker("timeout"):
            item.add_marker(pytest.mark.timeout(7200))


def pytest_sessionstart(session: pytest.Session) -> None:
    """Build the bear-off database into this run's cache before any test (7-15 s, once): tests
    that play against a clock (the server stand-ins) must not pay it in the middle of a game."""
    from bgbot.players.bearoff import default_database

    default_database()
