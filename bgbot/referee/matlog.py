"""Log hosted matches as gnubg `.mat` files, rewritten atomically at every game end."""

from __future__ import annotations

import datetime as _dt
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

from ..formats.mat import MatchRecord, format_match
from ..util import safe_name, write_atomically
from . import events as ev

if TYPE_CHECKING:
    from .series import SeriesConfig


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
        who = "-vs-".join(safe_name(n) for n in names)
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
