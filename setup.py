"""Build hook for the optional C extension; everything else is in pyproject.toml.

``bgbot.players._contact`` speeds up the heuristic evaluator's contact positions. It is
``optional``: without a C compiler the install still succeeds and the evaluator runs its
pure-Python code (the reference definition, bgbot/players/features.py).
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension("bgbot.players._contact", ["bgbot/players/_contact.c"], optional=True),
    ],
)
