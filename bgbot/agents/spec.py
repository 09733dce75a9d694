"""Agent specs: ``NAME[:key=value,...]`` text -> an Agent, one syntax everywhere.

Examples: ``heuristic``, ``heuristic:plies=1,noise=0.02``, ``pubeval``, ``random:seed=3``.
Engines register themselves here as they are added (``gnubg:plies=0``, ``ubgi:command=...``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable, Mapping

from ..core.errors import FormatError
from .base import Agent, PlayerAgent

_NAME = re.compile(r"^[a-z][a-z0-9_-]*$")


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


class _Options:
    """Typed access to a spec's options that reports unknown and malformed ones by name."""

    def __init__(self, spec: AgentSpec, allowed: dict[str, str]) -> None:
        self.spec = spec
        unknown = sorted(set(spec.options) - set(allowed))
        if unknown:
            known = ", ".join(f"{k} ({v})" for k, v in allowed.items()) or "none"
            raise FormatError(
                f"agent {spec.name!r} option", unknown[0], f"unknown; known options: {known}"
            )

    def integer(self, key: str, default: int, low: int = 0, high: int = 10**9) -> int:
        raw = self.spec.options.get(key)
        if raw is None:
            return default
        try:
            value = int(raw)
        except ValueError:
            raise FormatError(f"agent {self.spec.name!r} option {key}", raw, "expected an integer") from None
        if not low <= value <= high:
            raise FormatError(f"agent {self.spec.name!r} option {key}", raw, f"must be {low}..{high}")
        return value

    def number(self, key: str, default: float, low: float = 0.0, high: float = 1e9) -> float:
        raw = self.spec.options.get(key)
        if raw is None:
            return default
        try:
            value = float(raw)
        except ValueError:
            raise FormatError(f"agent {self.spec.name!r} option {key}", raw, "expected a number") from None
        if not low <= value <= high:
            raise FormatError(f"agent {self.spec.name!r} option {key}", raw, f"must be {low}..{high}")
        return value

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

_REGISTRY: dict[str, tuple[AgentFactory, str]] = {}


def register_agent(name: str, factory: AgentFactory, summary: str) -> None:
    """Make ``name`` usable in agent specs everywhere (CLI, daemon, duels)."""
    _REGISTRY[name] = (factory, summary)


def known_agents() -> dict[str, str]:
    """Agent names with a one-line summary each, for --help texts."""
    return {name: summary for name, (_, summary) in sorted(_REGISTRY.items())}


def create_agent(spec: str | AgentSpec, *, seed: int = 0) -> Agent:
    """Build the agent a spec names. ``seed`` feeds its noise or randomness, if it has any."""
    parsed = parse_agent_spec(spec) if isinstance(spec, str) else spec
    entry = _REGISTRY.get(parsed.name)
    if entry is None:
        raise FormatError(
            "agent name", parsed.name, f"unknown agent; known: {', '.join(sorted(_REGISTRY))}"
        )
    agent = entry[0](parsed, seed)
    agent.name = str(parsed)
    return agent


def _heuristic(spec: AgentSpec, seed: int) -> Agent:
    from ..players.heuristic import HeuristicPlayer

    opts = _Options(spec, {"plies": "0 or 1, look-ahead depth", "noise": "equity noise, e.g. 0.02",
                           "seed": "noise seed"})
    return PlayerAgent(
        HeuristicPlayer(
            plies=opts.integer("plies", 0, 0, 1),
            noise=opts.number("noise", 0.0, 0.0, 10.0),
            seed=opts.integer("seed", seed),
        )
    )


def _pubeval(spec: AgentSpec, seed: int) -> Agent:
    from ..players.pubeval import PubevalPlayer

    _Options(spec, {})
    return PlayerAgent(PubevalPlayer())


def _random(spec: AgentSpec, seed: int) -> Agent:
    from ..players.random_player import RandomPlayer

    opts = _Options(spec, {"seed": "random seed", "cube": "on = random cube actions too"})
    return PlayerAgent(RandomPlayer(seed=opts.integer("seed", seed), cube=opts.flag("cube", False)))


register_agent("heuristic", _heuristic, "bgbot's heuristic player (plies=0|1, noise=X)")
register_agent("pubeval", _pubeval, "Tesauro's public evaluation function, the yardstick")
register_agent("random", _random, "uniformly random legal plays (seed=N, cube=on)")


def _gnubg(spec: AgentSpec, seed: int) -> Agent:
    from ..engines.gnubg import create  # imported lazily: gnubg is optional and starts a process

    return create(spec, seed)


register_agent("gnubg", _gnubg, "GNU Backgammon's engine, run headless (plies=N, noise=X, seed=S)")


def _ubgi(spec: AgentSpec, seed: int) -> Agent:
    from ..engines.ubgi import create  # imported lazily: starts a subprocess when first asked

    return create(spec, seed)


register_agent("ubgi", _ubgi, "any UBGI engine as a subprocess (command=PATH ARGS, timeout=SEC, "
               "fallback=AGENT, engine.KEY=VALUE)")
