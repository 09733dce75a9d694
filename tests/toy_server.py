"""A third online-server kind, ``toy``, written the way a new server is added to bgbot: one
module with its dialect of the server-client base and one registration (`register_server_kind`
below; the module is installed as a plugin by `tests/plugins.py`). Nothing under ``bgbot/``
names it: the configuration, `bgbot config check`, the daemon's frontends and the CLI find it
in the registry (tests/test_architecture.py).

The toy protocol, one line each way: the client sends ``login USER PASSWORD``; the server
answers ``welcome USER`` or ``denied``, then sends ``ping`` now and then, answered ``pong``.
`ToyServer` is a stand-in server for it (a thread with a listening socket), not a real one.
"""

from __future__ import annotations

import asyncio
import select
import socketserver
import threading
from dataclasses import dataclass
from typing import Any, ClassVar

from bgbot.frontends.accounts import ServerAccountConfig
from bgbot.frontends.kinds import ServerKind, register_server_kind
from bgbot.frontends.server import ConnectionLost, LoginFailed, ServerAccount, ServerClient


@dataclass(frozen=True)
class ToyAccount(ServerAccount):
    KIND: ClassVar[str] = "toy"

    host: str = "127.0.0.1"
    port: int = 7777
    read_timeout: float = 30.0


class ToyClient(ServerClient):
    """Logs in and keeps the connection alive; the base does the rest (backoff, agent, log)."""

    account: ToyAccount

    @classmethod
    def account_from_config(cls, entry: ServerAccountConfig,
                            common: dict[str, Any]) -> ToyAccount:
        return ToyAccount(**common)

    async def _session(self) -> None:
        account = self.account
        reader, writer = await self._connect()
        writer.write(f"login {account.user} {account.password or '-'}\n".encode())
        await writer.drain()
        while not self.stopping.is_set():
            try:
                async with asyncio.timeout(account.read_timeout):
                    line = (await reader.readline()).decode().strip()
            except TimeoutError:
                raise ConnectionLost("the toy server went silent") from None
            if not line and reader.at_eof():
                raise ConnectionLost("closed by the toy server")
            if line == "denied":
                raise LoginFailed(f"the toy server refused {account.user}")
            if line.startswith("welcome "):
                self.phase = "logged_in"
                self.backoff.reset()
                self._emit("login", name=line.split(" ", 1)[1])
            elif line == "ping":
                writer.write(b"pong\n")
                await writer.drain()


KIND = register_server_kind(ServerKind(
    name="toy", client=f"{__name__}:ToyClient", default_host="127.0.0.1", default_port=7777,
    description="keep accounts logged in on the test suite's toy server"))


class ToyServer:
    """The toy protocol's server on 127.0.0.1 (a stand-in, in a thread): accepts ``password``,
    remembers who logged in."""

    def __init__(self, password: str) -> None:
        self.password = password
        self.logins: list[str] = []
        outer = self

        class Handler(socketserver.StreamRequestHandler):
            def handle(self) -> None:
                words = self.rfile.readline().decode().split()
                if len(words) != 3 or words[0] != "login" or words[2] != outer.password:
                    self.wfile.write(b"denied\n")
                    return
                outer.logins.append(words[1])
                self.wfile.write(f"welcome {words[1]}\n".encode())
                while not outer.closing.is_set():  # read (and drop) pongs until the end
                    ready, _, _ = select.select([self.request], [], [], 0.2)
                    if ready and not self.request.recv(4096):
                        return

        self.closing = threading.Event()
        self.server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port: int = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> ToyServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.closing.set()
        self.server.shutdown()
        self.server.server_close()
