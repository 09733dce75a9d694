"""Out-of-process deciders bgbot asks: gnubg's ``external`` server mode, UBGI engines (DESIGN §1).

`bgbot.engines.process` is the one process-engine base (launch, handshake, time limits,
restarts, stats, the `EngineError` family); `gnubg` and `ubgi` are its dialects, each an
`Agent` that owns its process and checks every answer against the rules core before use, and
each registering its agent kind. `analysis` has gnubg analyse a match file. Submodules are
imported on demand (``bgbot.engines.gnubg``), so importing this package starts nothing and
imports nothing heavy.
"""
