"""Build hook for the optional C extensions; everything else is in pyproject.toml.

All are ``optional``: without a C compiler the install still succeeds and bgbot runs its
pure-Python code, which is the definition of each (the tests hold them equal):

* ``bgbot.core._movegen``: the rules core's move generator (core/position.py), source
  ``bgbot/core/_movegen.h``, shared with the player's extensions so that there is one generator;
* ``bgbot.players._contact``: the heuristic player's evaluations (features.py, network.py, the
  class dispatch of evaluator.py), its look-ahead and the rollout kernel;
* ``bgbot.players._selfplay``: what only training runs (tools/train_network.py): self-play and
  the screening duels. It shares the kernels of ``bgbot/players/_kernels.h`` with
  ``_contact`` (one source) and uses ``_contact``'s evaluators.
"""

from setuptools import Extension, setup

# Floating point exactly as written: no multiply-add fused into one rounding, whatever the
# compiler's defaults or the user's CFLAGS (-march=native would allow FMA), so that every build
# computes the same numbers bit for bit and a seeded rollout is the same on every machine of a
# cluster (the tests hold C to the Python definitions, some to the last bit).
EXACT = ["-ffp-contract=off"]
CORE = "bgbot/core"
PLAYERS = "bgbot/players"
KERNELS = [f"{CORE}/_movegen.h", f"{PLAYERS}/_kernels.h", f"{PLAYERS}/_forward.h"]

setup(
    ext_modules=[
        Extension("bgbot.core._movegen", [f"{CORE}/_movegen.c"], depends=[f"{CORE}/_movegen.h"],
                  optional=True),
        Extension("bgbot.players._contact", [f"{PLAYERS}/_contact.c"], include_dirs=[CORE],
                  depends=KERNELS, extra_compile_args=EXACT, optional=True),
        Extension("bgbot.players._selfplay", [f"{PLAYERS}/_selfplay.c"], include_dirs=[CORE],
                  depends=KERNELS, extra_compile_args=EXACT, optional=True),
    ],
)
