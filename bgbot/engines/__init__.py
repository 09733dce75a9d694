"""Out-of-process deciders bgbot asks: gnubg's ``external`` server mode, UBGI engines (DESIGN §1).

Each engine is an `Agent` that owns its process; every answer it gets is checked against the
rules core before use. Submodules are imported on demand (``bgbot.engines.gnubg``), so
importing this package starts nothing and imports nothing heavy.
"""
