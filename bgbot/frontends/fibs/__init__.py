"""FIBS and the other CLIP servers (fibs.com, TigerGammon, BaldLies): the ``fibs`` kind.

- `bgbot.frontends.fibs.clip`: the CLIP line reader and its typed events;
- `bgbot.frontends.fibs.mirror`: the ``.mat`` mirror of a match, replayed through a core `Game`;
- `bgbot.frontends.fibs.client`: `FibsClient` and `FibsAccount`, the FIBS dialect of the
  server-client base.

Accounts are ``[[fibs.accounts]]`` tables; passwords come from ``BGBOT_FIBS_PASSWORD_<USER>``,
``BGBOT_FIBS_PASSWORD``, ``password_file``, then the systemd credentials ``fibs-<user>``,
``fibs-password`` or ``fibs`` (`bgbot.util.resolve_secret`).
"""

from ..kinds import ServerKind, register_server_kind

KIND = register_server_kind(ServerKind(
    name="fibs", client="bgbot.frontends.fibs.client:FibsClient", default_host="fibs.com",
    default_port=4321, description="play on FIBS (CLIP): accept invitations by policy, log "
    "every match", password_required=True))
