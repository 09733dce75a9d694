"""The architecture, held by tests (DESIGN §1): no import circle anywhere in bgbot, and a kind of
thing -- an online-server kind, a daemon request type -- is one module plus one registration,
with nothing under ``bgbot/`` naming it.

The registration tests run everything that must find the new kind in child processes (the
CLI, `bgbot config check`, a real `bgbot serve`), with the test modules installed as plugins
(`tests/plugins.py`), so this process's registries stay as bgbot ships them.
"""

from __future__ import annotations

import ast
import functools
import json
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from .daemon_harness import DaemonDirs, remove_tree, short_tmpdir, start_daemon, wait_for
from .plugins import ROOT, bgbot_command, plugin_env
from .toy_server import ToyServer

PACKAGE = ROOT / "bgbot"

KNOWN_CIRCLES_TO_BE_REMOVED: list[tuple[str, str]] = []
"""Import circles tolerated while other work removes them (none now: every circle fails, and an
entry here that is no circle any more fails too)."""


# ============================================================================ import graph


def module_names(package: Path) -> dict[str, Path]:
    """Dotted module name -> file, for every module of the package at ``package`` (a C
    extension module by its type stub, ``.pyi``, which imports nothing of bgbot)."""
    names = {}
    for path in sorted(package.rglob("*.py*")):
        if path.suffix not in (".py", ".pyi") or (
                path.suffix == ".pyi" and path.with_suffix(".py").exists()):
            continue
        parts = list(path.relative_to(package.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        names[".".join(parts)] = path
    return names


def import_graph(package: Path) -> dict[str, set[str]]:
    """Module -> the modules of the same package it imports: every import statement in the
    file, at the top, inside functions or under ``if TYPE_CHECKING``; ``from X import Y``
    imports the module X.Y when there is one, else X."""
    modules = module_names(package)
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        package_parts = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
        targets: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            found: list[str] = []
            if isinstance(node, ast.Import):
                found = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package_parts[:len(package_parts) - node.level + 1]
                    prefix = ".".join(base + ([node.module] if node.module else []))
                else:
                    prefix = node.module or ""
                for alias in node.names:
                    candidate = f"{prefix}.{alias.name}"
                    found.append(candidate if candidate in modules else prefix)
            for target in found:
                while target and target not in modules:
                    target = target.rpartition(".")[0]
                if target and target != name:
                    targets.add(target)
        graph[name] = targets
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (each holds a circle), sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0

    def visit(start: str) -> None:  # Tarjan's algorithm, iteratively
        nonlocal counter
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            advanced = False
            for target in edges:
                if target not in index:
                    index[target] = low[target] = counter
                    counter += 1
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph[target]))))
                    advanced = True
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    found.append(sorted(group))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return sorted(found)


def one_circle(graph: dict[str, set[str]], group: list[str]) -> list[str]:
    """A shortest path from the group's first module back to itself, inside the group."""
    start, members = group[0], set(group)
    paths = {start: [start]}
    queue = [start]
    while queue:
        node = queue.pop(0)
        for target in sorted(graph[node] & members):
            if target == start:
                return paths[node] + [start]
            if target not in paths:
                paths[target] = paths[node] + [target]
                queue.append(target)
    raise AssertionError(f"no circle in {group}")


def without_known(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    pruned = {name: set(targets) for name, targets in graph.items()}
    for a, b in KNOWN_CIRCLES_TO_BE_REMOVED:
        pruned.get(a, set()).discard(b)
        pruned.get(b, set()).discard(a)
    return pruned


@functools.cache
def bgbot_graph() -> dict[str, frozenset[str]]:
    return {name: frozenset(targets) for name, targets in import_graph(PACKAGE).items()}


def test_no_import_circle_in_bgbot() -> None:
    graph = without_known({name: set(targets) for name, targets in bgbot_graph().items()})
    found = [" -> ".join(one_circle(graph, group)) for group in circles(graph)]
    assert not found, "import circles (arrows must point down, DESIGN §1):\n" + "\n".join(found)


def test_the_rollout_package_stays_at_the_referee_layer() -> None:
    """bgbot.rollout may use the core, formats, players, agents, engines and the referee; the
    daemon and the CLI call it, never the other way round."""
    graph = import_graph(PACKAGE)
    reached = {target for name, targets in graph.items() if name.startswith("bgbot.rollout")
               for target in targets}
    assert reached and not {t for t in reached if t.startswith(("bgbot.daemon", "bgbot.cli",
                                                                "bgbot.frontends"))}


def test_the_circles_known_to_be_removed_are_still_there() -> None:
    graph = bgbot_graph()
    gone = [(a, b) for a, b in KNOWN_CIRCLES_TO_BE_REMOVED
            if not (b in graph.get(a, set()) and a in graph.get(b, set()))]
    assert not gone, f"no longer circles: take {gone} off KNOWN_CIRCLES_TO_BE_REMOVED"


def test_the_graph_sees_imports_inside_functions_and_for_type_checking(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "sub" / "__init__.py").write_text("")
    (package / "a.py").write_text("def f():\n    from .sub import b\n")
    (package / "sub" / "b.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..c import C\n")
    (package / "c.py").write_text("import pkg.a\n")
    graph = import_graph(package)
    assert graph["pkg.a"] == {"pkg.sub.b"} and graph["pkg.sub.b"] == {"pkg.c"}
    assert circles(graph) == [["pkg.a", "pkg.c", "pkg.sub.b"]]
    assert one_circle(graph, ["pkg.a", "pkg.c", "pkg.sub.b"]) == [
        "pkg.a", "pkg.sub.b", "pkg.c", "pkg.a"]


# ============================================================================ registrations


def names_nowhere_in_bgbot(word: str) -> None:
    """No file under bgbot/ mentions ``word`` (the kind was added without changing bgbot)."""
    pattern = re.compile(rf"\b{re.escape(word)}\b")
    naming = [str(path.relative_to(ROOT)) for path in PACKAGE.rglob("*")
              if path.is_file() and path.suffix in (".py", ".json", ".toml", ".md", ".c")
              and pattern.search(path.read_text(encoding="utf-8", errors="replace"))]
    assert not naming, f"{word!r} is named in {naming}"


@pytest.fixture()
def dirs() -> Iterator[DaemonDirs]:
    found = DaemonDirs(short_tmpdir())
    yield found
    remove_tree(found.root)


def _run(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(bgbot_command(*args), capture_output=True, text=True, env=env,
                          timeout=120)


def test_a_third_server_kind_is_one_module_and_one_registration(
        tmp_path: Path, dirs: DaemonDirs) -> None:
    names_nowhere_in_bgbot("toy")
    env = {**plugin_env(tmp_path / "plugins", {"toy": "tests.toy_server"}),
           "BGBOT_TOY_PASSWORD": "sesame"}
    with ToyServer("sesame") as server:
        account = (f'[[toy.accounts]]\nuser = "alice"\nhost = "127.0.0.1"\n'
                   f'port = {server.port}\nagent = "random"\n')
        config = tmp_path / "bgbot.toml"
        config.write_text(account)

        # the configuration: its own section, checked with its keys' names
        checked = _run(env, "config", "check", str(config))
        assert checked.returncode == 0 and "OK" in checked.stdout, checked.stderr
        shown = _run(env, "config", "show", "--config", str(config)).stdout
        assert "[[toy.accounts]]" in shown and 'user = "alice"' in shown
        bad = tmp_path / "bad.toml"
        bad.write_text('[[toy.accounts]]\nusr = "alice"\n')
        refused = _run(env, "config", "check", str(bad))
        assert refused.returncode == 1
        assert "toy.accounts[0].usr: unknown key" in refused.stderr, refused.stderr

        # the CLI: bgbot toy, which keeps the configured accounts logged in until SIGTERM
        assert re.search(r"^\s+toy\s", _run(env, "--help").stdout, flags=re.M)
        assert "--config" in _run(env, "toy", "--help").stdout
        state = tmp_path / "cli-state"
        (tmp_path / "cli.toml").write_text(
            f'[daemon]\nstate_dir = "{state}"\nlogs_dir = "{state}/logs"\n' + account)
        cli = subprocess.Popen(bgbot_command("toy", "--config", str(tmp_path / "cli.toml")),
                               stderr=subprocess.PIPE, text=True, env=env)
        try:
            wait_for(lambda: "alice" in server.logins, timeout=30)
        finally:
            cli.send_signal(signal.SIGTERM)
            _, errors = cli.communicate(timeout=30)
        assert cli.returncode == 0, errors
        logged = (state / "logs" / "toy" / "toy-alice" / "toy-alice.jsonl").read_text()
        assert '"event":"login"' in logged and "sesame" not in logged

        # the daemon: a frontend of kind toy, listed and running
        server.logins.clear()
        dirs.write_config(account)
        daemon = start_daemon(dirs, env=env)
        try:
            client = daemon.client()

            def logged_in() -> dict[str, object] | None:
                listed = {f["name"]: f for f in client.frontends()["frontends"]}
                toy = listed.get("toy-alice")
                return toy if toy and toy["status"]["state"] == "logged_in" else None

            toy = wait_for(logged_in, timeout=30)
            assert toy["kind"] == "toy" and toy["state"] == "running"
            assert toy["listen"] == f"127.0.0.1:{server.port}"
            assert toy["status"]["password"] == "environment BGBOT_TOY_PASSWORD"
            assert server.logins == ["alice"]
            assert client.status()["frontends"] == {"running": 1, "total": 1}
        finally:
            assert daemon.stop() == 0
        assert "sesame" not in daemon.log


_ECHO_CLIENT = """
import json, sys
import tests.echo_request  # the client side knows the plugin's messages too
from bgbot.daemon.client import Client
client = Client(sys.argv[1], key=open(sys.argv[2], "rb").read().strip(), timeout=10)
print(json.dumps({"hello": client.hello(), "echo": client.request("echo", text="hi there")}))
client.close()
"""


def test_a_request_type_is_one_module_and_one_handler(tmp_path: Path, dirs: DaemonDirs) -> None:
    names_nowhere_in_bgbot("echo_request")
    env = plugin_env(tmp_path / "plugins", {"echo": "tests.echo_request"})
    dirs.write_config()
    daemon = start_daemon(dirs, env=env)
    try:
        ran = subprocess.run([sys.executable, "-c", _ECHO_CLIENT, dirs.control,
                              str(dirs.key_file)], capture_output=True, text=True, env=env,
                             timeout=60, cwd=ROOT)
        assert ran.returncode == 0, ran.stderr
        replies = json.loads(ran.stdout)
        assert replies["echo"] == {"text": "hi there", "state": "running"}
        assert "echo_request" in replies["hello"]["requests"]
    finally:
        assert daemon.stop() == 0


def test_every_schema_request_has_one_handler_and_a_missing_one_fails() -> None:
    import bgbot.daemon.server  # noqa: F401 - registers the daemon's handlers
    from bgbot.daemon.protocol import REQUEST_TYPES
    from bgbot.daemon.requests import HandlerError, check_handlers, handlers, handles

    check_handlers()
    assert set(handlers()) == REQUEST_TYPES
    with pytest.raises(HandlerError, match="requests without a handler: ghost_request"):
        check_handlers(REQUEST_TYPES | {"ghost_request"})
    with pytest.raises(HandlerError, match="handlers without a schema request: status_request"):
        check_handlers(REQUEST_TYPES - {"status_request"})
    with pytest.raises(HandlerError, match="no request of the protocol schema"):
        handles("ghost_request", quick=True)(lambda daemon, msg: {})
    with pytest.raises(HandlerError, match="two handlers"):
        handles("status_request", quick=True)(lambda daemon, msg: {})
    assert "ghost_request" not in handlers()
