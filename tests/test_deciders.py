"""The agent registry: each kind registers where it is defined, `bgbot.deciders` knows them all,
`bgbot.agents` imports no engine, and $BGBOT_AGENT_MODULES adds kinds from outside bgbot.

Each check runs in a fresh interpreter, so what this test process has imported already cannot
make the registry look complete."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _python(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if k != "BGBOT_AGENT_MODULES"}
    environment.update(PYTHONPATH=str(ROOT), **env)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=environment, cwd=ROOT, timeout=120)


def test_deciders_know_every_kind_bgbot_ships() -> None:
    done = _python("import json; from bgbot.deciders import known_agents; "
                   "print(json.dumps(sorted(known_agents())))")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == ["gnubg", "heuristic", "human", "pubeval", "random",
                                       "ubgi"]


def test_the_agents_package_imports_no_engine() -> None:
    done = _python("import sys, bgbot.agents, bgbot.agents.spec; "
                   "from bgbot.agents.spec import known_agents; "
                   "print(sorted(known_agents())); "
                   "print([m for m in sys.modules if m.startswith('bgbot.engines')])")
    assert done.returncode == 0, done.stderr
    kinds, engines = done.stdout.splitlines()
    # the in-process kinds (the players and the person at the terminal) register with it
    assert kinds == "['heuristic', 'human', 'pubeval', 'random']"
    assert engines == "[]"


def test_agent_modules_add_kinds_and_a_missing_one_is_named() -> None:
    code = ("from bgbot.deciders import create_agent; agent = create_agent('slow:seconds=0'); "
            "print(agent.name)")
    done = _python(code, BGBOT_AGENT_MODULES="tests.slow_agent")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "slow:seconds=0"
    done = _python(code, BGBOT_AGENT_MODULES="tests.no_such_agent_module")
    assert done.returncode != 0
    assert "BGBOT_AGENT_MODULES" in done.stderr and "tests.no_such_agent_module" in done.stderr
