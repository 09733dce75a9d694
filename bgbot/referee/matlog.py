"""Log hosted matches as gnubg `.mat` files, rewritten atomically at every game end."""

from __future__ import annotations

import datetime as _dt
import os
import re
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

from ..formats.mat import MatchRecord, format_match
from . import events as ev

if TYPE_CHECKING:
    from .series import SeriesConfig

_UNSAFE = re.compile(r"[^A-Za-z0-9._=-]+")


def write_atomically(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` so a reader (or a crash) never sees half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    try:
        dir_fd = os.open(path.parent, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


class MatLogger:
    """Gives each match of a series a listener that keeps its `.mat` file up to date."""

    def __init__(self, directory: Path, config: SeriesConfig, *, xg_tags: bool = False) -> None:
        self.directory = Path(directory)
        self.config = config
        self.xg_tags = xg_tags
        self.paths: list[Path] = []
        self.started = _dt.datetime.now()

    def path_for(self, index: int, mirrored: bool, names: Sequence[str]) -> Path:
        stamp = self.started.strftime("%Y%m%d-%H%M%S")
        who = "-vs-".join(_UNSAFE.sub("_", n).strip("_") or "player" for n in names)
        kind = "money" if self.config.length == 0 else f"{self.config.length}pt"
        suffix = "-mirror" if mirrored else ""
        return self.directory / f"{stamp}-{who}-{kind}-seed{self.config.seed}-{index + 1:03d}{suffix}.mat"

    def listeners(self, index: int, mirrored: bool, names: Sequence[str]) -> list[ev.Listener]:
        path = self.path_for(index, mirrored, names)
        record = MatchRecord.create(self.config.length, (names[0], names[1]), self.config.rules,
                                    when=self.started)
        self.paths.append(path)

        def on_event(event: ev.Event) -> None:
            if isinstance(event, ev.GameEnded):
                record.add_game(event.record)
                write_atomically(path, format_match(record, xg_tags=self.xg_tags))

        return [on_event]
