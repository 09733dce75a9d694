"""Frontends: programs and servers that drive bgbot.

- `bgbot.frontends.gnubg_player`: the listener gnubg connects to with
  ``set player N external HOST:PORT`` (sessions in `gnubg_session`, logs in `gnubg_log`);
- `bgbot.frontends.ubgi`: bgbot as a UBGI engine on stdin/stdout;
- online servers: `bgbot.frontends.server` is the base every server client shares (run loop,
  reconnects with `backoff`, agent, event log, ``.mat`` files), `invitations` the shared
  policy, and `bgbot.frontends.kinds` the registry of server kinds. Each sub-package is one
  kind and registers itself: `bgbot.frontends.fibs` (CLIP servers), `bgbot.frontends.bgammon`
  (bgammon.org); plugins add others (`bgbot.plugins`).

This package imports none of them, so that using one does not load the others.
"""
