"""The systemd units: `systemd-analyze verify` accepts them without a warning, and they keep
the settings the daemon relies on (skips when systemd-analyze is missing)."""

from __future__ import annotations

import shutil
import subprocess
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
        copy.write_text(text.replace("/usr/bin/bgbot ", "/bin/true "))
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
                      .replace("/usr/bin/bgbot ", "/bin/true ")
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
