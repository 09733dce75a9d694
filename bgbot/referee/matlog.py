"""The one `.mat` writer (`MatWriter`) and the series' logger built on it (`MatLogger`).

Every match that bgbot logs -- `bgbot play`, the daemon's hosted matches, the online servers'
mirrors -- goes through `MatWriter`, so that logging costs the same for the 10,000th game as
for the first (DESIGN §5) and a crash never leaves a torn file:

- each game is formatted once, when it is added (`bgbot.formats.mat.format_game`), and only
  its text is kept, not the `Game`;
- a file is rewritten atomically (`bgbot.util.write_atomically`: a synced temporary file
  renamed over it) after every game, and holds at most `GAMES_PER_FILE` games: a money
  session rolls on to ``NAME-part002.mat``, ``NAME-part003.mat``... (every file a money
  session of its own that gnubg imports, its games numbered on and its score lines the
  session's running score). A match never rolls (it has at most 2 * length - 1 games);
- a failed write (a full disk, a read-only folder) raises `MatWriteError` naming the file,
  and is tried again with the next write: nothing is lost while the writer lives.

The writer is thread-safe, so the daemon adds games on its event loop and writes in a thread.
"""

from __future__ import annotations

import datetime as _dt
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

from ..core.errors import BgbotError
from ..core.game import Game
from ..formats.mat import (
    MatchRecord,
    format_game,
    format_header,
    game_record,
    join_games,
    record_names,
)
from ..util import safe_name, write_atomically
from . import events as ev

if TYPE_CHECKING:
    from .series import SeriesConfig

__all__ = ["GAMES_PER_FILE", "MatLogger", "MatWriteError", "MatWriter", "part_path",
           "written_parts"]

GAMES_PER_FILE = 100
"""Games per `.mat` file of a money session (the cost of a game's write grows with it)."""


class MatWriteError(BgbotError):
    """A `.mat` file could not be written (the message names it and says why)."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f"cannot write the match file {path}: {reason}")
        self.path = path


def part_path(path: Path, part: int) -> Path:
    """The file of part ``part`` (1-based) of the match logged as ``path``."""
    if part == 1:
        return path
    return path.with_name(f"{path.stem}-part{part:03d}{path.suffix}")


def written_parts(path: Path) -> list[Path]:
    """The files on disk of the match logged as ``path``, in order."""
    found: list[Path] = []
    while part_path(path, len(found) + 1).exists():
        found.append(part_path(path, len(found) + 1))
    return found


class MatWriter:
    """One match's `.mat` file(s) (see the module docstring).

    ``header`` gives the length, names, rules, tags and comments (its ``games`` are not used);
    they may change until the first game is added (the comments at any time). ``path`` None
    writes nothing (the text is still kept, for `text`).
    """

    def __init__(self, path: Path | None, header: MatchRecord, *, xg_tags: bool = False,
                 games_per_file: int = GAMES_PER_FILE) -> None:
        if games_per_file < 1:
            raise ValueError(f"games_per_file must be at least 1, got {games_per_file}")
        self.path = Path(path) if path is not None else None
        self.header = header
        self.xg_tags = xg_tags
        self.games_per_file = games_per_file
        self.games = 0
        """Games added so far (all parts)."""
        self._part = 1
        self._texts: list[str] = []
        """The current part's games, formatted."""
        self._finished: dict[Path, str] = {}
        """Full parts whose last write has not succeeded yet: path -> text."""
        self._changed = False
        self._lock = threading.Lock()

    @property
    def paths(self) -> list[Path]:
        """The files of this match so far, in order (none without a path)."""
        if self.path is None:
            return []
        parts = 1 if self.header.length else max(1, -(-self.games // self.games_per_file))
        return [part_path(self.path, n) for n in range(1, parts + 1)]

    def add_game(self, game: Game, score_before: Sequence[int] | None = None,
                 crawford: bool | None = None) -> None:
        """Add the next game (finished, or an unfinished last one); `write` writes it."""
        text = format_game(game_record(game, self.games + 1, score_before, crawford),
                           record_names(self.header))
        with self._lock:
            self.games += 1
            self._texts.append(text)
            self._changed = True
            if not self.header.length and len(self._texts) >= self.games_per_file:
                if self.path is not None:
                    self._finished[part_path(self.path, self._part)] = self._render()
                self._part += 1
                self._texts = []
                self._changed = False

    def _render(self, extra: str | None = None) -> str:
        texts = self._texts + [extra] if extra is not None else self._texts
        return format_header(self.header, xg_tags=self.xg_tags) + join_games(texts)

    def _in_play(self, game: Game | None) -> str | None:
        """A game in play, formatted as the next game (None: none)."""
        if game is None:
            return None
        return format_game(game_record(game, self.games + 1), record_names(self.header))

    def text(self, extra: Game | None = None) -> str:
        """The current file's text, with ``extra`` (a game in play) after its games."""
        more = self._in_play(extra)
        with self._lock:
            return self._render(more)

    def write(self, extra: Game | None = None, *, force: bool = False) -> None:
        """Write what changed since the last write: full parts not written yet, then the
        current file (``force``: also when unchanged; ``extra``: a game in play shown at its
        end). The first file is written even before any game; a later one only with games.
        `MatWriteError` when a file cannot be written (it is tried again next time)."""
        if self.path is None:
            return
        more = self._in_play(extra)
        with self._lock:
            jobs = list(self._finished.items())
            current = part_path(self.path, self._part)
            wanted = self._changed or force or more is not None
            if wanted and (self._texts or more is not None or self._part == 1):
                jobs.append((current, self._render(more)))
            self._changed = False
        for path, data in jobs:
            try:
                write_atomically(path, data)
            except OSError as exc:
                with self._lock:
                    self._changed = self._changed or wanted  # the current file: next time
                raise MatWriteError(path, exc.strerror or str(exc)) from None
            with self._lock:
                if self._finished.get(path) is data:
                    del self._finished[path]

    def close(self) -> None:
        """Forget the games' texts (after the last write): the match is over."""
        with self._lock:
            self._texts = []
            self._changed = False


class MatLogger:
    """Gives each match of a series a `MatWriter` that writes its file at every game end."""

    def __init__(self, directory: Path, config: SeriesConfig, *, xg_tags: bool = False,
                 games_per_file: int = GAMES_PER_FILE) -> None:
        self.directory = Path(directory)
        self.config = config
        self.xg_tags = xg_tags
        self.games_per_file = games_per_file
        self.writers: list[MatWriter] = []
        self.started = _dt.datetime.now()

    @property
    def paths(self) -> list[Path]:
        """Every file written so far, match by match."""
        return [path for writer in self.writers for path in writer.paths]

    def path_for(self, index: int, mirrored: bool, names: Sequence[str]) -> Path:
        stamp = self.started.strftime("%Y%m%d-%H%M%S")
        who = "-vs-".join(safe_name(n) for n in names)
        kind = "money" if self.config.length == 0 else f"{self.config.length}pt"
        suffix = "-mirror" if mirrored else ""
        return self.directory / f"{stamp}-{who}-{kind}-seed{self.config.seed}-{index + 1:03d}{suffix}.mat"

    def listeners(self, index: int, mirrored: bool, names: Sequence[str]) -> list[ev.Listener]:
        header = MatchRecord.create(self.config.length, (names[0], names[1]), self.config.rules,
                                    when=self.started)
        writer = MatWriter(self.path_for(index, mirrored, names), header, xg_tags=self.xg_tags,
                           games_per_file=self.games_per_file)
        self.writers.append(writer)

        def on_event(event: ev.Event) -> None:
            if isinstance(event, ev.GameEnded):
                writer.add_game(event.record)
                writer.write()
            elif isinstance(event, ev.MatchEnded):
                writer.close()

        return [on_event]
