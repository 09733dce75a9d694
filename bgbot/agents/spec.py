"""Agent specs: ``NAME[:key=value,...]`` text -> an Agent, one syntax everywhere.

Examples: ``heuristic``, ``heuristic:plies=1,noise=0.02``, ``pubeval``, ``random:seed=3``,
``gnubg:plies=0``, ``ubgi:command=...``.

Each kind of agent registers itself where it is defined (`register_agent`): the in-process
players in `bgbot.agents.players`, each engine in its module under `bgbot.engines`; a kind's
factory reads its options with `Options`. This module imports none of them: `bgbot.deciders`
imports every kind bgbot ships, so code that turns user text into agents takes `create_agent`
and `known_agents` from there, with the registry complete.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable, Iterable, Mapping, Sequence, TypeVar

from ..core.errors import FormatError
from .base import Agent

_NAME = re.compile(r"^[a-z][a-z0-9_-]*$")
N = TypeVar("N", int, float)


@dataclass(frozen=True)
class AgentSpec:
    """A parsed agent spec: the kind of agent and its options as text."""

    name: str
    options: Mapping[str, str] = field(default_factory=dict)

    def __str__(self) -> str:
        if not self.options:
            return self.name
        return self.name + ":" + ",".join(f"{k}={v}" for k, v in self.options.items())


def parse_agent_spec(text: str) -> AgentSpec:
    """Read ``NAME[:key=value,...]``; FormatError names the part at fault."""
    stripped = text.strip()
    name, _, rest = stripped.partition(":")
    name = name.strip().lower()
    if not _NAME.match(name):
        raise FormatError("agent name", name, "expected a name such as heuristic, pubeval, random")
    options: dict[str, str] = {}
    if rest.strip():
        for part in rest.split(","):
            key, eq, value = part.partition("=")
            key = key.strip().lower()
            if not eq or not key:
                raise FormatError(
                    f"agent option of {name!r}", part, "expected key=value, e.g. plies=1"
                )
            if key in options:
                raise FormatError(f"agent option of {name!r}", key, "given twice")
            options[key] = value.strip()
    return AgentSpec(name, options)


class Options:
    """Typed access to a spec's options that reports unknown and malformed ones by name.

    ``allowed`` maps each option a kind knows to a short description (for the error that
    names an unknown one)."""

    def __init__(self, spec: AgentSpec, allowed: dict[str, str]) -> None:
        self.spec = spec
        unknown = sorted(set(spec.options) - set(allowed))
        if unknown:
            known = ", ".join(f"{k} ({v})" for k, v in allowed.items()) or "none"
            raise FormatError(
                f"agent {spec.name!r} option", unknown[0], f"unknown; known options: {known}"
            )

    def integer(self, key: str, default: int, low: int = 0, high: int = 10**9) -> int:
        return self._ranged(key, default, low, high, int, "an integer")

    def number(self, key: str, default: float, low: float = 0.0, high: float = 1e9) -> float:
        return self._ranged(key, default, low, high, float, "a number")

    def _ranged(self, key: str, default: N, low: N, high: N, convert: Callable[[str], N],
                expected: str) -> N:
        raw = self.spec.options.get(key)
        if raw is None:
            return default
        what = f"agent {self.spec.name!r} option {key}"
        try:
            value = convert(raw)
        except ValueError:
            raise FormatError(what, raw, f"expected {expected}") from None
        if not low <= value <= high:
            raise FormatError(what, raw, f"must be {low}..{high}")
        return value

    def choice(self, key: str, default: str | None, choices: Sequence[str]) -> str | None:
        """One of ``choices`` (case-insensitive), or ``default`` when the option is absent."""
        raw = self.spec.options.get(key)
        if raw is None:
            return default
        if raw.lower() not in choices:
            raise FormatError(f"agent {self.spec.name!r} option {key}", raw,
                              f"expected one of {', '.join(choices)}")
        return raw.lower()

    def text(self, key: str) -> str | None:
        """The option's text as given, or None when it is absent or empty."""
        return self.spec.options.get(key) or None

    def given(self, key: str) -> bool:
        """Whether the spec sets ``key``."""
        return key in self.spec.options

    def flag(self, key: str, default: bool) -> bool:
        raw = self.spec.options.get(key)
        if raw is None:
            return default
        lowered = raw.lower()
        if lowered in ("1", "true", "yes", "on"):
            return True
        if lowered in ("0", "false", "no", "off"):
            return False
        raise FormatError(f"agent {self.spec.name!r} option {key}", raw, "expected on/off")


def option_value(text: str) -> bool | int | float | str:
    """An option's text as the value it spells: on/off (true/false, yes/no), an integer, a
    number, or the text itself (for options passed on to engines and protocol requests)."""
    lowered = text.lower()
    if lowered in ("on", "true", "yes"):
        return True
    if lowered in ("off", "false", "no"):
        return False
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


AgentFactory = Callable[[AgentSpec, int], Agent]
"""Builds an agent from its spec and a seed (each seat gets its own noise stream)."""

AgentMaker = Callable[[str, int], Agent]
"""Builds an agent from spec text and a seed: `create_agent`, or a host's own placement (the
daemon runs in-process players in its decision workers)."""


@dataclass(frozen=True)
class AgentKind:
    """A registered kind of agent and what a host must know before it builds one for others
    (the daemon, for a signed request: `bgbot.daemon.agents`)."""

    name: str
    factory: AgentFactory
    summary: str
    host_options: frozenset[str] = frozenset()
    """Options that name a file or a program on the machine the agent runs on (a weights
    file, an engine's command): the daemon takes them from its configuration only."""
    agent_options: frozenset[str] = frozenset()
    """Options whose value is itself an agent spec (an engine's fallback)."""
    host_option_keywords: Mapping[str, frozenset[str]] = field(default_factory=dict)
    """Values of a host option that name nothing on the machine (``race=net``, where
    ``race=FILE`` names a file): a request may use these."""
    interactive: bool = False
    """Needs a person at this process's terminal (``human``): never served by a daemon."""


_REGISTRY: dict[str, AgentKind] = {}
_NAMED: dict[str, str] = {}


def register_agent(name: str, factory: AgentFactory, summary: str, *,
                   host_options: Iterable[str] = (), agent_options: Iterable[str] = (),
                   host_option_keywords: Mapping[str, Iterable[str]] | None = None,
                   interactive: bool = False) -> None:
    """Make ``name`` usable in agent specs everywhere (CLI, daemon, duels); called once, by
    the module that defines the kind. ``host_options``, ``agent_options`` and
    ``host_option_keywords`` and ``interactive``: see `AgentKind` (a kind with an option that
    names a file or a program must list it, or a daemon lets every key holder set it)."""
    keywords = {option: frozenset(values)
                for option, values in (host_option_keywords or {}).items()}
    _REGISTRY[name] = AgentKind(name, factory, summary, frozenset(host_options),
                                frozenset(agent_options), keywords, interactive)


def agent_kind(name: str) -> AgentKind | None:
    """The registered kind called ``name`` (None for an unknown name or a named agent)."""
    return _REGISTRY.get(name)


def define_named_agents(named: Mapping[str, str]) -> None:
    """Let ``named`` (name -> agent spec) be used as agent names in this process: a daemon's
    ``[[agents.named]]``, which its requests may refer to. Replaces the previous table; a
    name is refused if it is a registered kind."""
    for name in named:
        if name in _REGISTRY:
            raise FormatError("named agent", name, "is the name of an agent kind")
    _NAMED.clear()
    _NAMED.update(named)


def named_agents() -> Mapping[str, str]:
    """The named agents of this process (`define_named_agents`): name -> spec."""
    return dict(_NAMED)


def known_agents() -> dict[str, str]:
    """Agent names with a one-line summary each, for --help texts (the kinds registered so far:
    `bgbot.deciders` has them all), and the named agents of this process."""
    found = {name: kind.summary for name, kind in sorted(_REGISTRY.items())}
    for name, spec in sorted(_NAMED.items()):
        found[name] = f"named agent ({parse_agent_spec(spec).name})"
    return found


def create_agent(spec: str | AgentSpec, *, seed: int = 0) -> Agent:
    """Build the agent a spec names. ``seed`` feeds its noise or randomness, if it has any.

    Knows the kinds registered so far (`bgbot.deciders`, which re-exports this function,
    imports them all) and the named agents of this process (by their name alone)."""
    parsed = parse_agent_spec(spec) if isinstance(spec, str) else spec
    named = _NAMED.get(parsed.name)
    if named is not None:
        if parsed.options:
            raise FormatError("agent name", str(parsed), f"{parsed.name} is a named agent: "
                              "it takes no options")
        agent = create_agent(named, seed=seed)
        agent.name = parsed.name
        return agent
    entry = _REGISTRY.get(parsed.name)
    if entry is None:
        raise FormatError(
            "agent name", parsed.name,
            f"unknown agent; known: {', '.join(sorted([*_REGISTRY, *_NAMED]))}")
    agent = entry.factory(parsed, seed)
    agent.name = str(parsed)
    return agent
