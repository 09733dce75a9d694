"""The systemd units: `systemd-analyze verify` accepts them without a warning, and they keep
the settings the daemon relies on (skips when systemd-analyze is missing)."""

from __future__ import annotations

import re
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest

UNITS = Path(__file__).resolve().parents[1] / "systemd"
ANALYZE = shutil.which("systemd-analyze")


def _verify(tmp_path: Path, *names: str) -> subprocess.CompletedProcess[str]:
    """Verify copies whose ExecStart binary exists here (verify checks that it does)."""
    copies = []
    for name in names:
        text = (UNITS / name.replace("@x", "@")).read_text()
        copy = tmp_path / name
        copy.write_text(text.replace("/opt/bgbot/bin/bgbot ", "/bin/true "))
        copies.append(str(copy))
    return subprocess.run([ANALYZE or "systemd-analyze", "verify", *copies],
                          capture_output=True, text=True, timeout=120)


@pytest.mark.skipif(ANALYZE is None, reason="systemd-analyze is not installed (Debian: systemd)")
def test_systemd_analyze_verify_passes(tmp_path: Path) -> None:
    result = _verify(tmp_path, "bgbot.service", "bgbot@x.service")
    assert result.returncode == 0, result.stderr
    assert result.stderr.strip() == "", result.stderr  # warnings (unknown keys...) count too


@pytest.mark.skipif(ANALYZE is None, reason="systemd-analyze is not installed (Debian: systemd)")
def test_verify_would_catch_a_typo(tmp_path: Path) -> None:
    broken = tmp_path / "broken.service"
    broken.write_text((UNITS / "bgbot.service").read_text()
                      .replace("/opt/bgbot/bin/bgbot ", "/bin/true ")
                      .replace("Type=notify", "Type=notifyy"))
    result = subprocess.run([ANALYZE or "systemd-analyze", "verify", str(broken)],
                            capture_output=True, text=True, timeout=120)
    assert "notifyy" in result.stderr


@pytest.mark.parametrize("name", ["bgbot.service", "bgbot@.service"])
def test_units_keep_the_settings_the_daemon_relies_on(name: str) -> None:
    lines = {line.split("=", 1)[0]: line.split("=", 1)[1]
             for line in (UNITS / name).read_text().splitlines()
             if "=" in line and not line.startswith("#")}
    assert lines["Type"] == "notify" and lines["NotifyAccess"] == "main"
    assert int(lines["WatchdogSec"]) > 0
    assert lines["DynamicUser"] == "yes"
    for directory in ("StateDirectory", "LogsDirectory", "RuntimeDirectory",
                      "ConfigurationDirectory", "CacheDirectory"):
        assert lines[directory].startswith("bgbot")
    assert lines["LoadCredential"].startswith("control.key:")
    for hardening in ("NoNewPrivileges", "ProtectSystem", "ProtectHome", "PrivateTmp",
                      "RestrictAddressFamilies", "SystemCallFilter"):
        assert hardening in lines
    assert lines["ExecReload"] == "/bin/kill -HUP $MAINPID"
    assert lines["KillMode"] == "mixed"
    assert "serve --config" in lines["ExecStart"]
    from bgbot.daemon.config import DaemonConfig

    # the daemon parks its matches before systemd gives up and kills it
    assert DaemonConfig().stop_timeout < int(lines["TimeoutStopSec"])


# ============================================================ the documented install


README = UNITS.parent / "README.md"


def _directives(name: str) -> dict[str, str]:
    return {line.split("=", 1)[0]: line.split("=", 1)[1]
            for line in (UNITS / name).read_text().splitlines()
            if "=" in line and not line.startswith("#")}


def _installed_root(tmp_path: Path, *, with_bgbot: bool = True) -> Path:
    """A root file tree as the README's daemon set-up leaves it: the units in
    /etc/systemd/system and bgbot where the set-up's virtual environment puts it (plus the
    system's own units and /bin/kill, which verify looks up)."""
    root = tmp_path / "root"
    (root / "usr" / "lib" / "systemd").mkdir(parents=True)
    shutil.copytree("/usr/lib/systemd/system", root / "usr" / "lib" / "systemd" / "system",
                    symlinks=True)
    (root / "usr" / "bin").mkdir()
    shutil.copy2(shutil.which("kill") or "/bin/kill", root / "usr" / "bin" / "kill")
    (root / "bin").symlink_to("usr/bin")
    (root / "lib").symlink_to("usr/lib")
    units = root / "etc" / "systemd" / "system"
    units.mkdir(parents=True)
    shutil.copy(UNITS / "bgbot.service", units / "bgbot.service")
    shutil.copy(UNITS / "bgbot@.service", units / "bgbot@x.service")
    if with_bgbot:
        program = Path(_directives("bgbot.service")["ExecStart"].split()[0])
        target = root / program.relative_to("/")
        target.parent.mkdir(parents=True)
        target.write_text("#!/bin/sh\n")  # the entry point pip writes; verify needs it there
        target.chmod(0o755)
    return root


def _verify_in(root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([ANALYZE or "systemd-analyze", "verify", f"--root={root}",
                           "/etc/systemd/system/bgbot.service",
                           "/etc/systemd/system/bgbot@x.service"],
                          capture_output=True, text=True, timeout=120)


def test_the_units_run_bgbot_where_the_readme_installs_it() -> None:
    """ExecStart named /usr/bin/bgbot, which a pip install never makes, and a place under
    /root or /home would be hidden from the unit (ProtectHome); Documentation= named a file
    nothing installed."""
    text = README.read_text()
    venv = re.search(r"python3 -m venv (/\S+) && \1/bin/pip install", text)
    assert venv, "the README's daemon set-up makes a virtual environment with pip install"
    prefix = Path(venv.group(1))
    assert not prefix.is_relative_to("/root") and not prefix.is_relative_to("/home")
    for name in ("bgbot.service", "bgbot@.service"):
        lines = _directives(name)
        assert lines["ExecStart"].split()[0] == str(prefix / "bin" / "bgbot")
        assert lines["ProtectHome"] == "yes"
        # pip installs the README there (pyproject's data-files), as tests/test_wheel.py checks
        assert lines["Documentation"] == f"file://{prefix}/share/doc/bgbot/README.md"
    data_files = tomllib.loads((UNITS.parent / "pyproject.toml").read_text())[
        "tool"]["setuptools"]["data-files"]
    assert "README.md" in data_files["share/doc/bgbot"]
    for installed in (f"{prefix}/share/bgbot/systemd/bgbot.service",
                      f"{prefix}/share/bgbot/bgbot.toml"):
        assert installed in text  # the set-up copies the unit and the template from there


@pytest.mark.skipif(ANALYZE is None, reason="systemd-analyze is not installed (Debian: systemd)")
def test_systemd_analyze_verify_accepts_the_documented_install(tmp_path: Path) -> None:
    result = _verify_in(_installed_root(tmp_path))
    assert result.returncode == 0, result.stderr
    assert result.stderr.strip() == "", result.stderr
    missing = _verify_in(_installed_root(tmp_path / "bare", with_bgbot=False))
    assert "is not executable" in missing.stderr  # verify looks for ExecStart's program
