"""bgammon.org and other bgammon servers (tslocum/bgammon): the ``bgammon`` kind.

- `bgbot.frontends.bgammon.protocol`: the JSON-lines protocol's events and commands;
- `bgbot.frontends.bgammon.mirror`: the ``.mat`` mirror of a match, from the server's boards;
- `bgbot.frontends.bgammon.client`: `BgammonClient` and `BgammonAccount`, the bgammon dialect
  of the server-client base.

Accounts are ``[[bgammon.accounts]]`` tables (bot names ``bot_NAME``); passwords come from
``BGBOT_BGAMMON_PASSWORD_<USER>``, ``BGBOT_BGAMMON_PASSWORD``, ``password_file``, then the
systemd credentials ``bgammon-<user>``, ``bgammon-password`` or ``bgammon``
(`bgbot.util.resolve_secret`); without one the bot logs in as a guest.
"""

from ..kinds import ServerKind, register_server_kind

KIND = register_server_kind(ServerKind(
    name="bgammon", client="bgbot.frontends.bgammon.client:BgammonClient",
    default_host="bgammon.org", default_port=1337,
    description="play on bgammon.org as a bot account (hosts tables, plays, logs .mat files)",
    config_keys={"keepalive_seconds": "keepalive"}))
