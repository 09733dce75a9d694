"""The commands of README.md, as a reader would copy them: every line of its ``sh`` blocks (a
line ending in ``\\``, ``&&`` or ``|`` goes on on the next one; a ``#`` comment after two
spaces is dropped) and every inline code span that is a command, each with the section it is
in. `tests/test_readme.py` runs or accounts for each one; `.ci/fresh-debian12` runs the
set-up and test commands on a stock Debian 12 exactly as written.

As a script: ``python3 tests/readme_commands.py setup|test|daemon-install`` prints those
commands (one a line), for a shell to run.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"

_BLOCK = re.compile(r"^```sh\n(.*?)^```", re.S | re.M)
_HEADING = re.compile(r"^(#{2,3}) (.+)$", re.M)
_COMMENT = re.compile(r"\s{2,}#.*$|^\s*#.*$")
_SPAN = re.compile(r"`([^`]+)`")
_COMMAND_START = re.compile(r"^(?:[A-Z_]+=\S* )?(?:bgbot|python3?|systemctl|journalctl|"
                            r"/\S+/bin/\S+)(?: |$)")


@dataclass(frozen=True)
class Command:
    text: str
    section: str
    inline: bool
    """An inline code span (a command named in the prose), not a line of an sh block."""


def _section_at(text: str, offset: int) -> str:
    found = ""
    for heading in _HEADING.finditer(text):
        if heading.start() > offset:
            break
        found = heading.group(2).strip()
    return found


def block_commands(text: str | None = None) -> list[Command]:
    """The commands of the ``sh`` blocks, in order."""
    text = README.read_text() if text is None else text
    found = []
    for block in _BLOCK.finditer(text):
        section = _section_at(text, block.start())
        pending = ""
        for raw in block.group(1).splitlines():
            line = _COMMENT.sub("", raw).rstrip()
            if not line.strip():
                continue
            pending = f"{pending} {line.strip()}" if pending else line.strip()
            if pending.endswith("\\"):
                pending = pending[:-1].rstrip()
                continue
            if pending.endswith(("&&", "|")):
                continue
            found.append(Command(pending, section, False))
            pending = ""
        if pending:
            found.append(Command(pending, section, False))
    return found


def inline_commands(text: str | None = None) -> list[Command]:
    """The inline code spans that are commands (they start like one), whitespace collapsed."""
    text = README.read_text() if text is None else text
    prose = _BLOCK.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    prose = re.sub(r"^```.*?^```", "", prose, flags=re.S | re.M)
    found = []
    for span in _SPAN.finditer(prose):
        if "\n\n" in span.group(1):
            continue
        command = " ".join(span.group(1).split())
        if _COMMAND_START.match(command):
            found.append(Command(command, _section_at(prose, span.start()), True))
    return found


def named(which: str) -> list[str]:
    """``setup``: the set-up command; ``test``: the test command; ``daemon-install``: the
    systemd install block."""
    commands = block_commands()
    if which == "setup":
        return [c.text for c in commands if c.section == "Set-up"][:1]
    if which == "test":
        return [c.text for c in commands if c.section == "Set-up"][1:2]
    if which == "daemon-install":
        start = next(i for i, c in enumerate(commands) if "python3 -m venv /opt/" in c.text)
        section = commands[start].section
        return [c.text for c in commands[start:] if c.section == section]
    raise SystemExit(f"unknown set {which!r}: setup, test or daemon-install")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    print("\n".join(named(sys.argv[1])))
