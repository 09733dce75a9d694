"""The daemon's configuration: one TOML file -> typed, frozen dataclasses.

Layers, lowest first: the dataclass defaults (the values `config/bgbot.toml` documents), the
TOML file, then ``BGBOT_SECTION__KEY`` environment variables (``BGBOT_LIMITS__MAX_MATCHES=50``,
``BGBOT_CONTROL__CURVE__SECRET_KEY_FILE=...``). Unknown keys and wrong types are errors that
name the file, the line (best effort: tomllib gives no positions for valid TOML) and the key.

Secrets (the control key, server passwords) never live in this file or in these objects: the
file names a key *file* or a password file, or systemd hands in a credential
(``$CREDENTIALS_DIRECTORY``); `load_control_key` and `bgbot.util.resolve_secret` read them, and
nothing here logs or prints them.

The online-server sections (``[[fibs.accounts]]``, ``[[bgammon.accounts]]``, a plugin's) are
not listed here: every kind registered in `bgbot.frontends.kinds` has one, in ``servers``.
"""

from __future__ import annotations

import dataclasses
import difflib
import math
import os
import re
import tomllib
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from ..agents.players import PLAYER_CACHE_ENTRIES
from ..core.errors import BgbotError, FormatError
from ..formats.gnubgid import LONGEST_MATCH
from ..frontends import kinds
from ..frontends.accounts import ServerAccountConfig
from ..frontends.kinds import check_account, server_kinds
from ..util import credential_path, write_atomically
from ..agents.players import SERVING_AGENT
from . import paths
from .protocol import MAX_MESSAGE_BYTES

ENV_PREFIX = "BGBOT_"
LEVELS = ("debug", "info", "warning", "error")


class ConfigError(BgbotError):
    """A bad configuration value: which file, line and key, and why."""

    def __init__(self, key: str, reason: str, *, file: str | None = None,
                 line: int | None = None) -> None:
        self.key = key
        self.reason = reason
        self.file = file
        self.line = line
        where = file or "configuration"
        if line is not None:
            where += f":{line}"
        super().__init__(f"{where}: {key}: {reason}" if key else f"{where}: {reason}")


# ============================================================================ the schema


@dataclass(frozen=True)
class DaemonConfig:
    """Where the daemon keeps things and how long it may take to stop."""

    state_dir: str = ""
    """state.db lives here; "" = $STATE_DIRECTORY, else the per-user default (bgbot.daemon.paths)."""
    logs_dir: str = ""
    """.mat files of hosted matches; "" = $LOGS_DIRECTORY, else the per-user default."""
    mat_errors: str = "stop"
    """A .mat file that cannot be written: "stop" parks the match (and refuses new ones while
    logs_dir cannot be written), "continue" plays on without the log."""
    runtime_dir: str = ""
    """ipc:// sockets; "" = $RUNTIME_DIRECTORY, else the per-user default."""
    stop_timeout: float = 60.0
    """Seconds SIGTERM waits for matches to park before stopping anyway (keep below systemd's
    TimeoutStopSec)."""


@dataclass(frozen=True)
class CurveConfig:
    """CurveZMQ for tcp:// endpoints (certificates as written by zmq.auth.create_certificates)."""

    secret_key_file: str = ""
    """The server's secret certificate (``*.key_secret``); required when an endpoint is tcp://."""
    authorized_keys_dir: str = ""
    """Directory of client public certificates (``*.key``) allowed in; "" = any client that
    knows the server's public key (the HMAC key still guards every request)."""


@dataclass(frozen=True)
class ControlConfig:
    """The control protocol's sockets and signing key (protocol/SPEC.md)."""

    requests: str = ""
    """ROUTER endpoint; "" = ipc://<runtime_dir>/control. tcp:// needs [control.curve]."""
    events: str = ""
    """PUB endpoint; "" = ipc://<runtime_dir>/events."""
    key_file: str = ""
    """HMAC key file; "" = the systemd credential ``control.key`` when the unit passes one
    (LoadCredential=), else ``control.key`` in the configuration directory (created on
    first start when missing)."""
    max_message_bytes: int = MAX_MESSAGE_BYTES
    """Largest message accepted (at most the protocol's 4 MiB); a bigger frame makes ZeroMQ
    drop the connection (ZMQ_MAXMSGSIZE), a bigger multi-frame message gets too_large."""
    replay_window: float = 300.0
    """Seconds a message's time may differ from ours; older ids are forgotten after this."""
    allow_unsigned: bool = False
    """Run without a key: requests are not signed and not checked. Only for tests and
    single-user machines where the socket's file mode is the only protection."""
    curve: CurveConfig = field(default_factory=CurveConfig)


@dataclass(frozen=True)
class LimitsConfig:
    """How much work the daemon takes on, and where it runs it."""

    max_matches: int = 200
    """Hosted matches running at once; match_start beyond this is refused."""
    match_workers: int = 0
    """Processes that host matches (each plays many at once); 0 = one per CPU."""
    decision_workers: int = 0
    """Processes that answer decision requests (evaluate, choose_play, ...); 0 = one per CPU."""
    inline_decisions: bool = False
    """Answer every decision on the event loop instead (no extra processes)."""
    quick_decisions: bool = True
    """Answer decisions of in-process players at 0-ply (heuristic, pubeval, random) on the
    event loop (about 0.1 ms each with the compiled evaluator; no hop to a worker), and only
    the others (look-ahead, engines) in decision workers."""
    decision_timeout: float = 30.0
    """Seconds a decision may take before the request gets a timeout error."""
    max_candidates: int = 32
    """Most alternatives a choose_play request may ask for."""
    player_cache: int = PLAYER_CACHE_ENTRIES
    """Entries per position cache of the heuristic evaluator in each worker process (about
    1 KB each; the evaluator's own default, 200,000, lets a long-running worker grow to
    several hundred MB). 0 = the evaluator's default."""
    rollout_workers: int = 0
    """Processes that play the trials of rollout requests (started at the first one, at a
    lower priority than the daemon); 0 = one per CPU."""
    max_rollouts: int = 2
    """Rollout requests running at once; one more gets busy."""
    max_rollout_trials: int = 129_600
    """Most trials a rollout request may ask for (100 x 1296)."""


@dataclass(frozen=True)
class NamedAgentConfig:
    """An agent the administrator defines and requests refer to by name (``[[agents.named]]``):
    the only way a request reaches an agent whose spec names a file or a program (a weights
    file, a UBGI engine's command)."""

    name: str = ""
    """The name requests use (as an agent spec with no options), e.g. "wildbg"."""
    spec: str = ""
    """The agent spec it stands for, e.g. "ubgi:command=/usr/local/bin/wildbg-ubgi"."""


@dataclass(frozen=True)
class AgentsConfig:
    """Which player answers decision requests that name none, and the named agents."""

    default: str = SERVING_AGENT
    """Agent spec (NAME[:key=value,...]), e.g. heuristic:plies=1, or a named agent."""
    named: tuple[NamedAgentConfig, ...] = ()
    """Agents defined here that requests may name (``[[agents.named]]`` tables)."""


@dataclass(frozen=True)
class StoreConfig:
    """The SQLite store (state.db)."""

    journal_sync: str = "normal"
    """"normal": journal commits survive a killed daemon (WAL); game ends and results are
    always synced to disk. "full": every journal commit is synced too (survives power loss,
    about 3 ms per commit)."""


@dataclass(frozen=True)
class LoggingConfig:
    """Log lines go to stderr (journald under systemd)."""

    level: str = "info"
    """debug (wire traffic too), info (one line per game event), warning or error."""
    format: str = "text"
    """"text" (key=value lines) or "json" (one object per line)."""


@dataclass(frozen=True)
class GnubgPlayerConfig:
    """A gnubg external-player listener the daemon runs (``set player N external ADDR``)."""

    listen: str = ""
    """HOST:PORT or a Unix socket path; required."""
    name: str = ""
    """Frontend name for frontend_start/stop; "" = gnubg-player-N (N counts from 1)."""
    agent: str = SERVING_AGENT
    """Agent spec answering gnubg."""
    seed: int = 0
    autostart: bool = True
    """Start with the daemon (false: only on a frontend_start request)."""
    log_connections: bool = False
    """One JSON-lines log per connection under <logs_dir>/gnubg-player/."""
    max_connections: int = 64


@dataclass(frozen=True)
class ServerSection:
    """A server kind's section, ``[[KIND.accounts]]`` tables (`bgbot.frontends.kinds`: every
    registered kind has one, of the shared `ServerAccountConfig` schema)."""

    accounts: tuple[ServerAccountConfig, ...] = ()


@dataclass(frozen=True)
class Config:
    """The whole configuration (see config/bgbot.toml for every option and its default)."""

    daemon: DaemonConfig = field(default_factory=DaemonConfig)
    control: ControlConfig = field(default_factory=ControlConfig)
    limits: LimitsConfig = field(default_factory=LimitsConfig)
    agents: AgentsConfig = field(default_factory=AgentsConfig)
    store: StoreConfig = field(default_factory=StoreConfig)
    logging: LoggingConfig = field(default_factory=LoggingConfig)
    gnubg_player: tuple[GnubgPlayerConfig, ...] = ()
    servers: Mapping[str, ServerSection] = field(default_factory=dict,
                                                 metadata={"internal": True})
    """Kind -> its section, for the registered server kinds (``fibs``, ``bgammon``...) the
    file names: the top-level tables named after the kinds (`bgbot.frontends.kinds`)."""
    source: str | None = field(default=None, compare=False, metadata={"internal": True})
    """The file it was read from (not a TOML key)."""
    origins: Mapping[str, str] = field(default_factory=dict, compare=False,
                                       metadata={"internal": True})
    """Dotted key -> "file" or the environment variable that set it (not a TOML key)."""

    def accounts(self, kind: str) -> tuple[ServerAccountConfig, ...]:
        """The ``[[KIND.accounts]]`` tables (none for a kind the file does not name)."""
        section = self.servers.get(kind)
        return section.accounts if section is not None else ()

    # ---------------------------------------------------------------- resolved values

    @property
    def state_dir(self) -> Path:
        return Path(self.daemon.state_dir) if self.daemon.state_dir else \
            paths.default_paths().state_dir

    @property
    def logs_dir(self) -> Path:
        return Path(self.daemon.logs_dir) if self.daemon.logs_dir else \
            paths.default_paths().logs_dir

    @property
    def runtime_dir(self) -> Path:
        return Path(self.daemon.runtime_dir) if self.daemon.runtime_dir else \
            paths.default_paths().runtime_dir

    @property
    def request_endpoint(self) -> str:
        return self.control.requests or f"ipc://{self.runtime_dir / 'control'}"

    @property
    def events_endpoint(self) -> str:
        return self.control.events or f"ipc://{self.runtime_dir / 'events'}"

    @property
    def match_workers(self) -> int:
        return self.limits.match_workers or max(1, os.cpu_count() or 1)

    @property
    def decision_workers(self) -> int:
        return self.limits.decision_workers or max(1, os.cpu_count() or 1)

    @property
    def rollout_workers(self) -> int:
        return self.limits.rollout_workers or max(1, os.cpu_count() or 1)

    def key_path(self) -> tuple[Path, str]:
        """Where the control key comes from: (path, "credential" | "file" | "default")."""
        if self.control.key_file:
            return Path(self.control.key_file), "file"
        key = paths.default_paths().key_file
        return key, "credential" if key == credential_path(paths.KEY_FILE) else "default"


# ============================================================================ loading


def default_config_file() -> Path:
    """``$BGBOT_CONFIG``, else ``$CONFIGURATION_DIRECTORY/bgbot.toml``, else the per-user one."""
    explicit = os.environ.get("BGBOT_CONFIG")
    if explicit:
        return Path(explicit)
    return paths.default_paths().config_file


def load_config(path: str | os.PathLike[str] | None = None, *,
                environ: Mapping[str, str] | None = None) -> Config:
    """Read ``path`` (default: `default_config_file`, which may be missing: then the defaults
    apply), then the ``BGBOT_*`` overrides from ``environ`` (default: os.environ)."""
    env = os.environ if environ is None else environ
    explicit = path is not None
    file = Path(path) if path is not None else default_config_file()
    text = ""
    if file.exists() or explicit:
        try:
            text = file.read_text(encoding="utf-8")
        except OSError as exc:
            raise ConfigError("", f"cannot read: {exc.strerror or exc}", file=str(file)) from None
        except UnicodeDecodeError as exc:
            raise ConfigError("", f"not UTF-8 text ({exc.reason})", file=str(file)) from None
    return parse_config(text, file=str(file) if text or explicit else None, environ=env)


def parse_config(text: str, *, file: str | None = None,
                 environ: Mapping[str, str] | None = None) -> Config:
    """`load_config` on TOML text (``file`` only names it in errors)."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        message = str(exc)
        found = re.search(r"\(at line (\d+), column \d+\)", message)
        line = int(found.group(1)) if found else None
        raise ConfigError("", f"not valid TOML: {message}", file=file, line=line) from None
    except RecursionError:
        raise ConfigError("", f"tables or arrays nested too deeply (bgbot's keys are at most "
                              f"{MAX_DEPTH} levels deep)", file=file) from None
    except ValueError as exc:  # a number of thousands of digits (Python's int limit)
        raise ConfigError("", f"not valid TOML: {exc}", file=file) from None
    deepest = _depth(data)
    if deepest > MAX_DEPTH:
        raise ConfigError("", f"tables or arrays nested {deepest} levels deep (bgbot's keys "
                              f"are at most {MAX_DEPTH} levels deep)", file=file)
    origins: dict[str, str] = {}
    _note_origins(data, "", "file", origins)
    env_values = _environment(environ if environ is not None else {}, origins)
    _merge(data, env_values)
    locate = _Locator(text, file, origins)
    kinds = server_kinds()
    sections = {kind: data.pop(kind) for kind in list(data) if kind in kinds}
    config: Config = _build(Config, data, "", locate, also=kinds)
    servers = {kind: _build(ServerSection, table, kind, locate)
               for kind, table in sections.items()}
    config = dataclasses.replace(config, servers=servers, source=file, origins=origins)
    _validate(config, locate)
    return config


# ------------------------------------------------------------------ generic building

MAX_DEPTH = 8
"""Tables and arrays nest at most this deep in a valid file (``[[fibs.accounts]]`` with its
``allow`` array is 4); deeper is refused before anything walks it."""
MAX_INTEGER = 2**63 - 1
"""No integer value may exceed a signed 64-bit one (SQLite's, msgpack's)."""


def _depth(data: Any) -> int:
    """How deeply ``data``'s tables and arrays nest (iteratively: any depth is safe)."""
    deepest = 0
    stack = [(data, 0)]
    while stack:
        value, level = stack.pop()
        if isinstance(value, dict):
            children: Any = value.values()
        elif isinstance(value, list):
            children = value
        else:
            continue
        deepest = max(deepest, level + 1)
        if level + 1 > MAX_DEPTH:
            break
        stack.extend((child, level + 1) for child in children)
    return deepest



class _Locator:
    """Turns a dotted key into (file, line) for error messages."""

    def __init__(self, text: str, file: str | None, origins: Mapping[str, str]) -> None:
        self.lines = text.splitlines()
        self.file = file
        self.origins = origins

    def error(self, key: str, reason: str) -> ConfigError:
        origin = self.origins.get(key, "file")
        if origin != "file":
            return ConfigError(key, reason, file=f"environment variable {origin}")
        return ConfigError(key, reason, file=self.file, line=self.line_of(key))

    def line_of(self, key: str) -> int | None:
        parts = _split_key(key)
        if not parts:
            return None
        table: list[str] = []
        counts: dict[str, int] = {}
        for number, raw in enumerate(self.lines, start=1):
            header = _HEADER.match(raw)
            if header:
                names = [p.strip().strip("\"'") for p in header.group(2).split(".")]
                if header.group(1) == "[[":
                    dotted = ".".join(names)
                    counts[dotted] = counts.get(dotted, -1) + 1
                    names = names + [str(counts[dotted])]
                table = names
                if table == parts:
                    return number
                continue
            assign = _ASSIGN.match(raw)
            if assign is not None:
                names = [p.strip().strip("\"'") for p in assign.group(1).split(".")]
                if table + names == parts:
                    return number
        wanted = ".".join(p for p in parts if not p.isdigit())
        for number, raw in enumerate(self.lines, start=1):
            header = _HEADER.match(raw)
            if header and header.group(2).strip() == wanted:
                return number
        return None


_HEADER = re.compile(r"^\s*(\[\[?)\s*([^\]]+?)\s*\]\]?")
_ASSIGN = re.compile(r"^\s*([A-Za-z0-9_\-.\"' ]+?)\s*=")


def _split_key(key: str) -> list[str]:
    return [p for p in re.split(r"[.\[\]]+", key) if p]


def _note_origins(data: Any, prefix: str, origin: str, out: dict[str, str]) -> None:
    if isinstance(data, dict):
        for key, value in data.items():
            _note_origins(value, f"{prefix}.{key}" if prefix else key, origin, out)
    elif isinstance(data, list) and data and all(isinstance(v, dict) for v in data):
        for index, value in enumerate(data):
            _note_origins(value, f"{prefix}[{index}]", origin, out)
    else:
        out[prefix] = origin


def _merge(base: dict[str, Any], extra: Mapping[str, Any]) -> None:
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(base.get(key), dict):
            _merge(base[key], value)
        else:
            base[key] = value


def _environment(environ: Mapping[str, str], origins: dict[str, str]) -> dict[str, Any]:
    """``BGBOT_A__B=v`` -> {"a": {"b": <v converted to the field's type>}}."""
    out: dict[str, Any] = {}
    for name in sorted(environ):
        if not name.startswith(ENV_PREFIX) or "__" not in name:
            continue
        parts = [p.lower() for p in name[len(ENV_PREFIX):].split("__")]
        dotted = ".".join(parts)
        target: Any = Config
        if parts[0] in server_kinds():
            raise ConfigError(dotted, "server accounts are tables: set them in the file",
                              file=f"environment variable {name}")
        for index, part in enumerate(parts):
            hints = _hints(target) if dataclasses.is_dataclass(target) else {}
            if part not in hints or _internal(target, part):
                raise ConfigError(dotted, f"unknown key{_suggest(part, hints)}",
                                  file=f"environment variable {name}")
            target = hints[part]
            if index < len(parts) - 1 and not dataclasses.is_dataclass(target):
                raise ConfigError(dotted, "not a table", file=f"environment variable {name}")
        if dataclasses.is_dataclass(target) or _tuple_item(target) is not None and \
                dataclasses.is_dataclass(_tuple_item(target)):
            raise ConfigError(dotted, "a table cannot be set from the environment; set its keys",
                              file=f"environment variable {name}")
        value = _from_text(target, environ[name], dotted, name)
        node = out
        for part in parts[:-1]:
            node = node.setdefault(part, {})
        node[parts[-1]] = value
        origins[dotted] = name
    return out


def _from_text(kind: Any, raw: str, key: str, variable: str) -> Any:
    where = f"environment variable {variable}"
    if kind is bool:
        lowered = raw.strip().lower()
        if lowered in ("1", "true", "yes", "on"):
            return True
        if lowered in ("0", "false", "no", "off"):
            return False
        raise ConfigError(key, f"expected true or false, got {raw!r}", file=where)
    if kind is int:
        try:
            return int(raw.strip())
        except ValueError:
            raise ConfigError(key, f"expected an integer, got {raw!r}", file=where) from None
    if kind is float:
        try:
            return float(raw.strip())
        except ValueError:
            raise ConfigError(key, f"expected a number, got {raw!r}", file=where) from None
    if _tuple_item(kind) is str:
        return [p.strip() for p in raw.split(",") if p.strip()]
    return raw


def _hints(cls: Any) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _internal(cls: Any, name: str) -> bool:
    for item in dataclasses.fields(cls):
        if item.name == name:
            return bool(item.metadata.get("internal"))
    return False


def _tuple_item(kind: Any) -> Any:
    if typing.get_origin(kind) is tuple:
        args = typing.get_args(kind)
        if len(args) == 2 and args[1] is Ellipsis:
            return args[0]
    return None


def _suggest(name: str, known: Mapping[str, Any]) -> str:
    close = difflib.get_close_matches(name, list(known), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _type_name(kind: Any) -> str:
    if kind is str:
        return "a string"
    if kind is bool:
        return "true or false"
    if kind is int:
        return "an integer"
    if kind is float:
        return "a number"
    if dataclasses.is_dataclass(kind):
        return "a table"
    item = _tuple_item(kind)
    if item is not None:
        return "an array of tables" if dataclasses.is_dataclass(item) else "an array"
    return str(kind)


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _build(cls: Any, table: Any, prefix: str, locate: _Locator,
           also: Mapping[str, Any] | None = None) -> Any:
    """``cls`` from a TOML table; ``also`` names the keys handled elsewhere (for the
    "did you mean" of an unknown key)."""
    if not isinstance(table, dict):
        raise locate.error(prefix, f"expected a table, got {_shown(table)}")
    hints = _hints(cls)
    public = {f.name for f in dataclasses.fields(cls) if not f.metadata.get("internal")}
    for key in table:
        if key not in public:
            dotted = f"{prefix}.{key}" if prefix else key
            where = f"[{prefix}]" if prefix else "the top level"
            known = dict.fromkeys([*public, *(also or {})])
            raise locate.error(dotted, f"unknown key in {where}{_suggest(key, known)}")
    values: dict[str, Any] = {}
    for name in public:
        if name in table:
            dotted = f"{prefix}.{name}" if prefix else name
            values[name] = _convert(hints[name], table[name], dotted, locate)
    return cls(**values)


def _convert(kind: Any, value: Any, key: str, locate: _Locator) -> Any:
    if dataclasses.is_dataclass(kind):
        return _build(kind, value, key, locate)
    item = _tuple_item(kind)
    if item is not None:
        if not isinstance(value, list):
            raise locate.error(key, f"expected {_type_name(kind)}, got {_shown(value)}")
        return tuple(_convert(item, v, f"{key}[{i}]", locate) for i, v in enumerate(value))
    if kind is bool:
        ok = isinstance(value, bool)
    elif kind is int:
        ok = isinstance(value, int) and not isinstance(value, bool)
        if ok and abs(value) > MAX_INTEGER:
            raise locate.error(key, f"{_shown(value)} is out of range")
    elif kind is float:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        if ok and isinstance(value, float) and not math.isfinite(value):
            raise locate.error(key, f"expected a finite number, got {_shown(value)}")
        if ok and isinstance(value, int) and abs(value) > MAX_INTEGER:
            raise locate.error(key, f"{_shown(value)} is out of range")
        value = float(value) if ok else value
    elif kind is str:
        ok = isinstance(value, str)
        if ok and "\x00" in value:
            raise locate.error(key, "contains a NUL character (\\u0000), which no path, "
                                    "name or spec may hold")
    else:  # pragma: no cover - the schema uses only the types above
        raise TypeError(f"unsupported config type {kind!r}")
    if not ok:
        raise locate.error(key, f"expected {_type_name(kind)}, got {_shown(value)}")
    return value


# ------------------------------------------------------------------ value checks


def _validate(config: Config, locate: _Locator) -> None:
    from ..agents.spec import parse_agent_spec
    from ..deciders import agent_kind, known_agents

    named: dict[str, str] = {}
    for index, agent in enumerate(config.agents.named):
        prefix = f"agents.named[{index}]"
        if not _AGENT_NAME.fullmatch(agent.name):
            raise locate.error(f"{prefix}.name", "required: 1-64 lower case letters, digits, "
                                                 f"'_' or '-', starting with a letter; got "
                                                 f"{agent.name!r}")
        if agent_kind(agent.name) is not None:
            raise locate.error(f"{prefix}.name", f"{agent.name!r} is an agent kind; give the "
                                                 "named agent another name")
        if agent.name in named:
            raise locate.error(f"{prefix}.name", f"two named agents are called {agent.name!r}")
        try:
            parsed = parse_agent_spec(agent.spec)
        except FormatError as exc:
            raise locate.error(f"{prefix}.spec", str(exc)) from None
        kind = agent_kind(parsed.name)
        if kind is None:
            raise locate.error(f"{prefix}.spec", f"unknown agent kind {parsed.name!r} (a named "
                                                 "agent's spec names a kind, not another "
                                                 "named agent)")
        if kind.interactive:
            raise locate.error(f"{prefix}.spec", f"{parsed.name} plays at a terminal; the "
                                                 "daemon has none")
        named[agent.name] = agent.spec

    def check_agent(key: str, spec: str) -> None:
        try:
            parsed = parse_agent_spec(spec)
        except FormatError as exc:
            raise locate.error(key, str(exc)) from None
        if parsed.name in named:
            if parsed.options:
                raise locate.error(key, f"{parsed.name} is a named agent: it takes no options")
            return
        kind = agent_kind(parsed.name)
        if kind is None:
            raise locate.error(key, f"unknown agent {parsed.name!r}; known: "
                                    f"{', '.join([*known_agents(), *named])}")
        if kind.interactive:
            raise locate.error(key, f"{parsed.name} plays at a terminal; the daemon has none")

    def positive(key: str, value: float, low: float = 1, high: float | None = None) -> None:
        if value < low:
            raise locate.error(key, f"must be at least {low:g}, got {value:g}")
        if high is not None and value > high:
            raise locate.error(key, f"must be at most {high:g}, got {value:g}")

    if config.logging.level.lower() not in LEVELS:
        raise locate.error("logging.level", f"expected one of {', '.join(LEVELS)}, "
                                            f"got {config.logging.level!r}")
    if config.logging.format not in ("text", "json"):
        raise locate.error("logging.format", f"expected text or json, got {config.logging.format!r}")
    if config.daemon.mat_errors not in ("stop", "continue"):
        raise locate.error("daemon.mat_errors",
                           f"expected stop or continue, got {config.daemon.mat_errors!r}")
    if config.store.journal_sync not in ("normal", "full"):
        raise locate.error("store.journal_sync",
                           f"expected normal or full, got {config.store.journal_sync!r}")
    positive("daemon.stop_timeout", config.daemon.stop_timeout, 0.1, DAY)
    positive("control.max_message_bytes", config.control.max_message_bytes, 1024)
    if config.control.max_message_bytes > MAX_MESSAGE_BYTES:
        raise locate.error("control.max_message_bytes",
                           f"at most the protocol's limit {MAX_MESSAGE_BYTES}, got "
                           f"{config.control.max_message_bytes}")
    positive("control.replay_window", config.control.replay_window, 1, DAY)
    positive("limits.max_matches", config.limits.max_matches, 1, MAX_MATCHES)
    positive("limits.match_workers", config.limits.match_workers, 0, MAX_WORKERS)
    positive("limits.decision_workers", config.limits.decision_workers, 0, MAX_WORKERS)
    positive("limits.decision_timeout", config.limits.decision_timeout, 0.01, DAY)
    positive("limits.max_candidates", config.limits.max_candidates, 1, 64)
    positive("limits.player_cache", config.limits.player_cache, 0, 10_000_000)
    from ..rollout.settings import BLOCK, MAX_TRIALS  # here: the rollout code is large

    positive("limits.rollout_workers", config.limits.rollout_workers, 0, MAX_WORKERS)
    positive("limits.max_rollouts", config.limits.max_rollouts, 1, MAX_ROLLOUTS)
    positive("limits.max_rollout_trials", config.limits.max_rollout_trials, BLOCK, MAX_TRIALS)
    check_agent("agents.default", config.agents.default)
    for key in ("requests", "events"):
        endpoint = getattr(config.control, key)
        dotted = f"control.{key}"
        if endpoint and not re.match(r"^(ipc|tcp)://.+", endpoint):
            raise locate.error(dotted, f"expected ipc://PATH or tcp://HOST:PORT, got {endpoint!r}")
        if endpoint.startswith("tcp://") and not config.control.curve.secret_key_file:
            raise locate.error(dotted, "a tcp:// endpoint needs CURVE: set "
                                       "[control.curve] secret_key_file")
    names: set[str] = set()
    for index, entry in enumerate(config.gnubg_player):
        prefix = f"gnubg_player[{index}]"
        if not entry.listen:
            raise locate.error(f"{prefix}.listen", "required (HOST:PORT or a socket path)")
        from ..frontends.gnubg_player import ListenAddress

        try:
            ListenAddress.parse(entry.listen)
        except FormatError as exc:
            raise locate.error(f"{prefix}.listen", str(exc)) from None
        check_agent(f"{prefix}.agent", entry.agent)
        positive(f"{prefix}.max_connections", entry.max_connections, 1, 10_000)
        if entry.name and not _FRONTEND_NAME.fullmatch(entry.name):
            raise locate.error(f"{prefix}.name", "1-64 letters, digits, '_', '.' or '-', got "
                                                 f"{entry.name!r}")
        name = frontend_name(entry, index)
        if name in names:
            raise locate.error(f"{prefix}.name", f"two frontends are named {name!r}")
        names.add(name)
    for server in config.servers:
        for index, account in enumerate(config.accounts(server)):
            prefix = f"{server}.accounts[{index}]"
            if not account.user:
                raise locate.error(f"{prefix}.user", "required (the login name)")
            check_agent(f"{prefix}.agent", account.agent)
            if not 0 <= account.port <= 65535:
                raise locate.error(f"{prefix}.port", f"expected 0..65535, got {account.port}")
            positive(f"{prefix}.min_length", account.min_length)
            if account.max_length < account.min_length:
                raise locate.error(f"{prefix}.max_length", f"must be at least min_length "
                                                           f"({account.min_length})")
            if account.max_length > LONGEST_MATCH:
                raise locate.error(f"{prefix}.max_length", f"matches are at most {LONGEST_MATCH} "
                                   f"points long (gnubg's limit), got {account.max_length}")
            for key in ("min_rating", "max_rating", "min_experience", "max_experience",
                        "cooldown", "keepalive"):
                positive(f"{prefix}.{key}", getattr(account, key), 0)
            for k, item in enumerate(account.invite):
                who, _, length = item.partition(":")
                if not who or (length and not length.isdigit() and length != "unlimited"):
                    raise locate.error(f"{prefix}.invite[{k}]", "expected NAME, NAME:LENGTH or "
                                                                f"NAME:unlimited, got {item!r}")
            refused = check_account(server, account)
            if refused is not None:
                raise locate.error(f"{prefix}.{refused[0]}", refused[1])
            if account.name and not _FRONTEND_NAME.fullmatch(account.name):
                raise locate.error(f"{prefix}.name", "1-64 letters, digits, '_', '.' or '-', "
                                                     f"got {account.name!r}")
            name = kinds.frontend_name(server, account)
            if name in names:
                raise locate.error(f"{prefix}.name", f"two frontends are named {name!r}")
            names.add(name)


DAY = 86400.0
"""The longest timeout or window, in seconds."""
MAX_WORKERS = 64
"""The most match or decision worker processes (each holds a player's tables: tens of MB)."""
MAX_MATCHES = 100_000
"""The highest ``limits.max_matches``."""
MAX_ROLLOUTS = 64
"""The highest ``limits.max_rollouts`` (each running rollout holds a thread)."""
_FRONTEND_NAME = re.compile(r"[A-Za-z0-9_.-]{1,64}")
_AGENT_NAME = re.compile(r"[a-z][a-z0-9_-]{0,63}")


def frontend_name(entry: GnubgPlayerConfig, index: int) -> str:
    """The configured name, else ``gnubg-player-N`` (N = 1 for the first [[gnubg_player]])."""
    return entry.name or f"gnubg-player-{index + 1}"


# ============================================================================ showing


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, (tuple, list)):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    raise TypeError(f"cannot show {value!r}")


def show_config(config: Config) -> str:
    """The effective configuration as TOML, each value marked with where it came from (the
    default, the file, a ``BGBOT_*`` variable), then the resolved locations. Holds no secret
    (the key is a file, not a value)."""
    out: list[str] = [f"# effective configuration; file: {config.source or '(none: defaults)'}"]

    def table(obj: Any, prefix: str, header: str) -> None:
        out.append("")
        out.append(header)
        nested: list[tuple[str, Any]] = []
        for item in dataclasses.fields(obj):
            value = getattr(obj, item.name)
            dotted = f"{prefix}.{item.name}"
            if dataclasses.is_dataclass(value) or (
                    isinstance(value, tuple) and value and dataclasses.is_dataclass(value[0])):
                nested.append((dotted, value))
                continue
            origin = config.origins.get(dotted)
            note = "  # default" if origin is None else (
                "  # set in the file" if origin == "file" else f"  # set by {origin}")
            out.append(f"{item.name} = {_toml_value(value)}{note}")
        for dotted, value in nested:
            if isinstance(value, tuple):
                for index, entry in enumerate(value):
                    table(entry, f"{dotted}[{index}]", f"[[{dotted}]]")
            else:
                table(value, dotted, f"[{dotted}]")

    for item in dataclasses.fields(config):
        if item.metadata.get("internal"):
            continue
        value = getattr(config, item.name)
        if isinstance(value, tuple):
            for index, entry in enumerate(value):
                table(entry, f"{item.name}[{index}]", f"[[{item.name}]]")
        else:
            table(value, item.name, f"[{item.name}]")
    for kind in config.servers:
        for index, entry in enumerate(config.accounts(kind)):
            table(entry, f"{kind}.accounts[{index}]", f"[[{kind}.accounts]]")
    key, origin = config.key_path()
    workers = "inline" if config.limits.inline_decisions else str(config.decision_workers)
    out += [
        "",
        "# resolved",
        f"#   state.db:          {config.state_dir / 'state.db'}",
        f"#   .mat files:        {config.logs_dir}",
        f"#   requests endpoint: {config.request_endpoint}",
        f"#   events endpoint:   {config.events_endpoint}",
        f"#   control key:       {key} ({origin}{'' if key.exists() else ', missing'})",
        f"#   match workers:     {config.match_workers}",
        f"#   decision workers:  {workers}",
        f"#   rollout workers:   {config.rollout_workers}",
    ]
    return "\n".join(out) + "\n"


# ============================================================================ secrets


class Secret:
    """Bytes that never show up in a repr, a str or a log line."""

    __slots__ = ("_value",)

    def __init__(self, value: bytes) -> None:
        self._value = value

    def reveal(self) -> bytes:
        return self._value

    def __repr__(self) -> str:
        return "Secret(<redacted>)"

    __str__ = __repr__

    def __reduce__(self) -> tuple[Any, ...]:
        raise TypeError("a Secret is not pickled")


def generate_key_file(path: Path) -> None:
    """Write a fresh random key (64 hex digits) to ``path`` with mode 0600, atomically; a key
    another process has just written is kept."""
    import secrets

    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    write_atomically(path, secrets.token_hex(32) + "\n", mode=0o600, replace=False)


def load_control_key(config: Config, *, create: bool = False) -> tuple[Secret, Path, str]:
    """The HMAC key, where it came from ("credential", "file", "default"), as a `Secret`.

    With ``create``, a missing default key file is generated first (a file named in the
    config must exist: a typo there should not silently mint a new key)."""
    from .protocol import KeyFileError, load_key

    path, origin = config.key_path()
    if create and origin == "default" and not path.exists():
        generate_key_file(path)
    key_name = "control.key_file" if origin == "file" else (
        "credential control.key" if origin == "credential" else "control.key_file (default)")
    try:
        return Secret(load_key(path)), path, origin
    except KeyFileError as exc:
        raise ConfigError(key_name, str(exc), file=config.source) from None

