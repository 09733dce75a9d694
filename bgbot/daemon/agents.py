"""Which agents a signed request may name (SPEC §7.5, "What a key holder can do").

Holding the control key must not mean running programs or reading files as the daemon's user.
A request names an agent by a spec; the daemon accepts it when

- it is a **named agent** of the configuration (``[[agents.named]]`` in bgbot.toml), by its
  name alone: the administrator wrote its spec, files and commands included; or
- it is a registered kind that a daemon can serve (not ``human``, which needs a terminal),
  without the options that name a file or a program on the daemon's machine (the kind's
  ``host_options``: a weights file, an engine's command line; their keywords such as
  ``race=net`` name no file and pass), and every option that is itself
  an agent spec (``agent_options``) passes the same test.

Anything else is ``bad_value`` naming the field. The check reads the spec only: it never opens
a file or starts a program, so its answer says nothing about what exists on the machine. The
configuration's own agents (``agents.default``, frontends, accounts) and the command line are
trusted and keep every option.
"""

from __future__ import annotations

from ..agents.spec import named_agents, parse_agent_spec
from ..core.errors import FormatError
from ..deciders import agent_kind, known_agents
from .protocol import ErrorCode, ProtocolError

__all__ = ["check_request_agent"]


def _refuse(field: str, reason: str) -> ProtocolError:
    return ProtocolError(ErrorCode.BAD_VALUE, f"{field}: {reason}",
                         {"field": field, "reason": reason})


def check_request_agent(text: str, field: str) -> None:
    """Raise ProtocolError BAD_VALUE (``details.field`` = ``field``) unless a request may name
    the agent spec ``text`` (see the module docstring)."""
    try:
        parsed = parse_agent_spec(text)
    except FormatError as exc:
        raise _refuse(field, str(exc)) from None
    if parsed.name in named_agents():
        if parsed.options:
            raise _refuse(field, f"{parsed.name} is a named agent of the daemon's "
                          "configuration: name it without options")
        return
    kind = agent_kind(parsed.name)
    if kind is None:
        raise _refuse(field, f"unknown agent {parsed.name!r}; known: "
                      f"{', '.join(known_agents())}")
    if kind.interactive:
        raise _refuse(field, f"{parsed.name} plays at a terminal; the daemon has none")
    for option in sorted(parsed.options):
        if (option in kind.host_options
                and parsed.options[option] not in kind.host_option_keywords.get(option, ())):
            raise _refuse(field, f"option {option} of {parsed.name} names a file or a program "
                          "on the daemon's machine, which a request may not choose; the "
                          "daemon's administrator can define the agent in bgbot.toml "
                          "([[agents.named]]) for requests to name it")
        if option in kind.agent_options:
            check_request_agent(parsed.options[option], field)
