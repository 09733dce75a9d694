"""Build hook for the optional C extensions; everything else is in pyproject.toml.

Both are ``optional``: without a C compiler the install still succeeds and bgbot runs its
pure-Python code, which is the definition of each (the tests hold them equal):

* ``bgbot.core._movegen``: the rules core's move generator (core/position.py), source
  ``bgbot/core/_movegen.h``, shared with the player's extension so that there is one generator;
* ``bgbot.players._contact``: the heuristic evaluator (features.py, network.py), its look-ahead
  and the self-play loop of the training tool.
"""

from setuptools import Extension, setup

CORE = "bgbot/core"

setup(
    ext_modules=[
        Extension("bgbot.core._movegen", [f"{CORE}/_movegen.c"], depends=[f"{CORE}/_movegen.h"],
                  optional=True),
        Extension("bgbot.players._contact", ["bgbot/players/_contact.c"], include_dirs=[CORE],
                  depends=[f"{CORE}/_movegen.h"], optional=True),
    ],
)
