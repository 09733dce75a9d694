"""The in-process players as agent kinds: ``heuristic``, ``pubeval``, ``random``.

Each is a `Player` from `bgbot.players` behind a `PlayerAgent`; the player modules are
imported when an agent is first built (the heuristic's tables are not small). Registered when
`bgbot.agents` is imported, so these kinds are always known.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from ..core.errors import FormatError
from .base import Agent, PlayerAgent
from .spec import AgentSpec, Options, register_agent


SERVING_AGENT = "heuristic:plies=2"
"""The agent that plays for bgbot where others wait on it: the daemon's decisions that name no
agent, its online-server accounts and its gnubg external player, and the ``bgbot fibs``,
``bgbot bgammon`` and ``bgbot gnubg-player`` commands: the strongest setting whose decisions
keep p99 under 1 s with 4 matches in flight on two cores (``python bench/protocol.py --agent
SPEC --window 4``: 2-ply p50 67 ms, p99 0.59 s). 2-ply errs 2.2 +- 0.6 milli-points less per
chequer decision than 1-ply on gnubg-judged positions (``bench/chequer_judge.py``) and gains
+0.050 +- 0.070 ppg over it in 1,000 games; the figures are in the README."""


def _seed(opts: Options, seed: int) -> int:
    """The player's seed: ``seed`` (the host's: per seat, per duel pair), combined with the
    spec's ``seed=`` when it gives one, so a fixed spec seed is a base, not one stream that
    every pair of a duel replays."""
    if not opts.given("seed"):
        return seed
    base = opts.integer("seed", 0)
    digest = hashlib.sha256(f"bgbot-agent-seed:{base}:{seed}".encode()).digest()
    return int.from_bytes(digest[:4], "big")
PLAYER_CACHE_ENTRIES = 5_000
"""Entries per position cache of the heuristic player (its evaluator's and the bear-off
database's) in processes that play for long: the daemon and its workers (``limits.player_cache``)
and ``bgbot play``. The players' own limit (200,000) lets a session of 10,000 games grow by
some 100 MB; this one keeps it flat, and costs no speed."""


def limit_player_caches(entries: int = PLAYER_CACHE_ENTRIES) -> None:
    """Bound the heuristic player's position caches in this process (0: the players' own
    limit)."""
    if entries > 0:
        from ..players.bearoff import BearoffDatabase
        from ..players.caches import BoundedCache

        BoundedCache.limit = entries
        BearoffDatabase.SIDE_CACHE_LIMIT = entries


def _heuristic(spec: AgentSpec, seed: int) -> Agent:
    from ..players.evaluator import EVALUATIONS
    from ..players.heuristic import LEVELS, HeuristicPlayer, shared_evaluator

    opts = Options(spec, {
        "plies": "0, 1 or 2, look-ahead depth", "noise": "equity noise, e.g. 0.02",
        "seed": "noise seed", "level": f"a named strength: {', '.join(LEVELS)}",
        "eval": "net (the default: the network) or linear (the linear heads of before)",
        "weights": "a network weights file instead of the shipped ones (the 0-ply player's "
                   "and the look-ahead's)",
        "race": "model (the race formula), net (the race network, where one is shipped) or "
                "a race network weights file (phase race)",
        "crashed": "a network weights file for crashed positions (phase crashed; default: the "
                   "contact evaluation decides them)",
        "cube_life": "Janowski cube efficiency in contact, 0..1 (default 0.68)",
    })
    level = opts.choice("level", None, tuple(LEVELS))
    if level is not None and (opts.given("plies") or opts.given("noise")):
        raise FormatError(f"agent {spec.name!r} option level", level,
                          "sets plies and noise itself: give level or plies/noise, not both")
    plies, noise = LEVELS[level] if level is not None else (
        opts.integer("plies", 0, 0, 2), opts.number("noise", 0.0, 0.0, 10.0))
    evaluation = opts.choice("eval", None, EVALUATIONS)
    weights = opts.text("weights")
    if weights is not None and evaluation == "linear":
        raise FormatError(f"agent {spec.name!r} option weights", weights,
                          "is a network file: it goes with eval=net, not eval=linear")
    race = opts.text("race")
    race_file = Path(race) if race not in (None, "net", "model") else None
    if race == "net":
        from ..players.network import shipped_race_weights

        if shipped_race_weights() is None:
            raise FormatError(f"agent {spec.name!r} option race", race,
                              "no race network is shipped (tools/train_network.py --phase "
                              "race trains one): races use the race formula")
    crashed = opts.text("crashed")
    if (race_file is not None or crashed) and evaluation == "linear":
        raise FormatError(f"agent {spec.name!r} option {'race' if race_file else 'crashed'}",
                          str(race_file or crashed),
                          "is a network file: it goes with eval=net, not eval=linear")
    try:
        evaluator = shared_evaluator(evaluation, Path(weights) if weights else None,
                                     race_model=race == "model",
                                     crashed=Path(crashed) if crashed else None,
                                     race=race_file, zero_ply=plies == 0)
    except ValueError as error:  # a weights file that cannot be used, or none installed
        # a WeightsError names the file first
        option, value = (("crashed", crashed) if crashed and str(error).startswith(crashed)
                         else ("race", race) if race and race_file and str(error).startswith(race)
                         else ("weights", weights) if weights else ("eval", evaluation))
        raise FormatError(f"agent {spec.name!r} option {option}", value or "",
                          str(error)) from None
    cube_life = opts.number("cube_life", -1.0, 0.0, 1.0) if opts.given("cube_life") else None
    agent = PlayerAgent(HeuristicPlayer(plies=plies, noise=noise,
                                        seed=_seed(opts, seed), evaluator=evaluator,
                                        cube_life=cube_life))
    agent.knowledge = evaluator.knowledge
    return agent


def _pubeval(spec: AgentSpec, seed: int) -> Agent:
    from ..players.pubeval import PubevalPlayer

    Options(spec, {})
    return PlayerAgent(PubevalPlayer())


def _random(spec: AgentSpec, seed: int) -> Agent:
    from ..players.random_player import RandomPlayer

    opts = Options(spec, {"seed": "random seed", "cube": "on = random cube actions too"})
    return PlayerAgent(RandomPlayer(seed=_seed(opts, seed), cube=opts.flag("cube", False)))


register_agent("heuristic", _heuristic, "bgbot's heuristic player (plies=0|1|2, noise=X, "
               "level=NAME, eval=net|linear, weights=FILE, race=net|model|FILE, crashed=FILE)",
               host_options=("weights", "crashed", "race"),
               host_option_keywords={"race": ("net", "model")})
register_agent("pubeval", _pubeval, "Tesauro's public evaluation function, the yardstick")
register_agent("random", _random, "uniformly random legal plays (seed=N, cube=on)")
