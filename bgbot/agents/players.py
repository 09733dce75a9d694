"""The in-process players as agent kinds: ``heuristic``, ``pubeval``, ``random``.

Each is a `Player` from `bgbot.players` behind a `PlayerAgent`; the player modules are
imported when an agent is first built (the heuristic's tables are not small). Registered when
`bgbot.agents` is imported, so these kinds are always known.
"""

from __future__ import annotations

from .base import Agent, PlayerAgent
from .spec import AgentSpec, Options, register_agent


def _heuristic(spec: AgentSpec, seed: int) -> Agent:
    from ..players.heuristic import HeuristicPlayer

    opts = Options(spec, {"plies": "0 or 1, look-ahead depth", "noise": "equity noise, e.g. 0.02",
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

    Options(spec, {})
    return PlayerAgent(PubevalPlayer())


def _random(spec: AgentSpec, seed: int) -> Agent:
    from ..players.random_player import RandomPlayer

    opts = Options(spec, {"seed": "random seed", "cube": "on = random cube actions too"})
    return PlayerAgent(RandomPlayer(seed=opts.integer("seed", seed), cube=opts.flag("cube", False)))


register_agent("heuristic", _heuristic, "bgbot's heuristic player (plies=0|1, noise=X)")
register_agent("pubeval", _pubeval, "Tesauro's public evaluation function, the yardstick")
register_agent("random", _random, "uniformly random legal plays (seed=N, cube=on)")
