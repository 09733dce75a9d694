"""Clients of the daemon's control protocol: `Client` (blocking) and `AsyncClient` (asyncio).

Both connect a DEALER to the control endpoint (never REQ: a timed-out request must not wedge
the socket) and, for `watch`, a SUB to the events endpoint. Replies are matched to requests by
their parent msg_id; stray replies (to requests that timed out earlier) are dropped.

    with Client() as daemon:                      # default endpoints and key (bgbot.daemon.paths)
        print(daemon.status()["uptime"])
        started = daemon.match_start(["heuristic", "pubeval"], length=5, seed=7)
        for event in daemon.watch(started["match"]["match_id"]):
            print(event.msg_type, event.content)

Errors: an ``error`` reply raises `DaemonError` (its ``code`` is an `ErrorCode`); no reply in
time raises `DaemonUnreachable` with a hint (daemon not running, wrong key).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
import uuid
from pathlib import Path
from typing import (Any, AsyncIterator, Awaitable, Callable, Generic, Iterator, Mapping, Sequence,
                    TypeVar, cast)

import zmq
import zmq.asyncio

from .. import __version__
from ..core.errors import BgbotError
from .paths import client_paths
from .protocol import (
    MAX_MESSAGE_BYTES,
    PROTOCOL_VERSION,
    ErrorCode,
    Message,
    ProtocolError,
    Signer,
    load_key,
    match_topic,
    new_message,
    reply_type,
    request_type,
    rollout_topic,
    validate_content,
)

__all__ = ["AsyncClient", "Client", "DaemonError", "DaemonUnreachable", "DEFAULT_TIMEOUT"]

log = logging.getLogger(__name__)

DEFAULT_TIMEOUT = 10.0
"""Seconds to wait for a reply."""
_POLL_SLICE_MS = 250
FOLLOW_PAGE = 5000
"""Events asked per ``match_get`` while `Client.follow` catches up with a match."""


class DaemonError(BgbotError):
    """The daemon answered with an error (or we could not use its answer)."""

    def __init__(self, code: ErrorCode, message: str, details: Mapping[str, Any] | None = None) -> None:
        super().__init__(f"{code.value}: {message}")
        self.code = code
        self.message = message
        self.details: dict[str, Any] = dict(details or {})

    @classmethod
    def from_reply(cls, content: Mapping[str, Any]) -> DaemonError:
        return cls(ErrorCode(content["code"]), str(content["message"]), content.get("details"))


class DaemonUnreachable(DaemonError):
    """No reply in time: the daemon is not running, not reachable, or does not trust our key."""

    def __init__(self, message: str) -> None:
        super().__init__(ErrorCode.TIMEOUT, message)


def _resolve_key(key: bytes | None, key_file: str | os.PathLike[str] | None, default: Path) -> tuple[bytes, str]:
    """The key to sign with and a description of where it came from, for error messages."""
    if key is not None:
        return key, "the key given"
    if key_file is not None:
        return load_key(key_file), f"key file {key_file}"
    if default.exists():
        return load_key(default), f"key file {default}"
    return b"", f"no key (unsigned; {default} does not exist)"


def _ipc_path(endpoint: str) -> Path | None:
    return Path(endpoint[len("ipc://"):]) if endpoint.startswith("ipc://") else None


R = TypeVar("R")


class _Requests(Generic[R]):
    """The convenience methods, shared: each builds a request and hands it to `request`."""

    def request(self, msg_type: str, /, **content: Any) -> R:
        raise NotImplementedError

    def hello(self) -> R:
        """Versions, capabilities, agents and limits of the daemon."""
        return self.request("hello", client=f"bgbot-client/{__version__}", versions=[PROTOCOL_VERSION])

    def status(self) -> R:
        """Uptime, matches, frontends, load."""
        return self.request("status")

    def evaluate(self, position: str, *, context: Mapping[str, Any] | None = None,
                 rules: Mapping[str, Any] | None = None, agent: str | None = None) -> R:
        """Cubeless chances of the player on roll (``position``: Position ID, GNU BG ID or XGID)."""
        return self.request("evaluate", **_decision(position, context, rules, agent))

    def choose_play(self, position: str, dice: Sequence[int] | None = None, *, candidates: int = 0,
                    context: Mapping[str, Any] | None = None, rules: Mapping[str, Any] | None = None,
                    agent: str | None = None) -> R:
        """The play for ``dice`` (which a GNU BG ID or XGID may carry instead)."""
        content = _decision(position, context, rules, agent)
        if dice is not None:
            content["dice"] = [int(d) for d in dice]
        if candidates:
            content["candidates"] = candidates
        return self.request("choose_play", **content)

    def cube_decision(self, position: str, *, context: Mapping[str, Any] | None = None,
                      rules: Mapping[str, Any] | None = None, agent: str | None = None) -> R:
        """Does the player on roll double?"""
        return self.request("cube_decision", **_decision(position, context, rules, agent))

    def take_decision(self, position: str, *, context: Mapping[str, Any] | None = None,
                      rules: Mapping[str, Any] | None = None, agent: str | None = None) -> R:
        """The player on roll doubled: take, drop or beaver (``context`` from the taker)?"""
        return self.request("take_decision", **_decision(position, context, rules, agent))

    def resign_decision(self, position: str, offered: int = 0, *,
                        context: Mapping[str, Any] | None = None,
                        rules: Mapping[str, Any] | None = None, agent: str | None = None) -> R:
        """``offered`` 0: how much does the player on roll resign? 1-3: accept that offer?"""
        content = _decision(position, context, rules, agent)
        if offered:
            content["offered"] = offered
        return self.request("resign_decision", **content)

    def match_start(self, players: Sequence[str], *, length: int = 7, games: int | None = None,
                    rules: Mapping[str, Any] | None = None, seed: int | None = None,
                    names: Sequence[str] | None = None) -> R:
        """Host a match (``length`` 0 = money session of ``games`` games)."""
        content: dict[str, Any] = {"players": list(players), "length": length}
        if games is not None:
            content["games"] = games
        if rules:
            content["rules"] = dict(rules)
        if seed is not None:
            content["seed"] = seed
        if names is not None:
            content["names"] = list(names)
        return self.request("match_start", **content)

    def match_list(self, state: str = "all", limit: int = 100) -> R:
        return self.request("match_list", state=state, limit=limit)

    def match_get(self, match_id: str, *, mat: bool = False, events: bool = False,
                  events_from: int | None = None, events_limit: int | None = None) -> R:
        """One match in detail; ``events`` (protocol 1.2): with its numbered events so far,
        (1.3) from the n ``events_from``, at most ``events_limit`` of them (``events_more`` in
        the reply says whether more follow)."""
        content: dict[str, Any] = {"match_id": match_id, "mat": mat}
        if events:
            content["events"] = True
            if events_from is not None:
                content["events_from"] = events_from
            if events_limit is not None:
                content["events_limit"] = events_limit
        return self.request("match_get", **content)

    def match_abort(self, match_id: str, reason: str | None = None) -> R:
        content: dict[str, Any] = {"match_id": match_id}
        if reason:
            content["reason"] = reason
        return self.request("match_abort", **content)

    def frontends(self) -> R:
        """The frontend list (``frontend_list``)."""
        return self.request("frontend_list")

    def frontend_start(self, name: str, *, kind: str | None = None,
                       options: Mapping[str, Any] | None = None) -> R:
        content: dict[str, Any] = {"name": name}
        if kind is not None:
            content["kind"] = kind
        if options:
            content["options"] = dict(options)
        return self.request("frontend_start", **content)

    def frontend_stop(self, name: str) -> R:
        return self.request("frontend_stop", name=name)

    def rollout(self, position: str, dice: Sequence[int] | None = None, *,
                context: Mapping[str, Any] | None = None, rules: Mapping[str, Any] | None = None,
                **settings: Any) -> R:
        """A rollout of ``position``, or with ``dice`` of its candidate plays (protocol 1.3);
        ``settings``: player, trials, truncate, seed, vr, cubeful, se_target, candidates (left
        out: the daemon's defaults). This waits at most the client's timeout; `Client.rollout`
        waits for the end however long it takes, with progress."""
        return self.request("rollout", **rollout_content(position, dice, context, rules, settings))

    def rollout_cancel(self, rollout_id: str) -> R:
        """Stop a running rollout (its id: the msg_id of its request); its own reply then
        comes with the trials so far."""
        return self.request("rollout_cancel", rollout_id=rollout_id)

    def reload(self) -> R:
        return self.request("reload")

    def shutdown(self, reason: str | None = None) -> R:
        return self.request("shutdown", **({"reason": reason} if reason else {}))


def _decision(position: str, context: Mapping[str, Any] | None, rules: Mapping[str, Any] | None,
              agent: str | None) -> dict[str, Any]:
    content: dict[str, Any] = {"position": position}
    if context:
        content["context"] = dict(context)
    if rules:
        content["rules"] = dict(rules)
    if agent:
        content["agent"] = agent
    return content


def rollout_content(position: str, dice: Sequence[int] | None,
                    context: Mapping[str, Any] | None, rules: Mapping[str, Any] | None,
                    settings: Mapping[str, Any]) -> dict[str, Any]:
    """A rollout_request's content; settings given as None are left out."""
    content = _decision(position, context, rules, None)
    if dice is not None:
        content["dice"] = [int(d) for d in dice]
    content.update({key: value for key, value in settings.items() if value is not None})
    return content


class _Core:
    """Endpoints, key, signers and the reply/event checks both clients share."""

    def __init__(
        self,
        endpoint: str | None,
        events_endpoint: str | None,
        key: bytes | None,
        key_file: str | os.PathLike[str] | None,
        timeout: float,
        server_public_key: bytes | None,
    ) -> None:
        defaults = client_paths()
        self.endpoint = endpoint or defaults.control_endpoint
        self.events_endpoint = events_endpoint or defaults.events_endpoint
        self.key, self.key_source = _resolve_key(key, key_file, defaults.key_file)
        self.timeout = timeout
        self.server_public_key = server_public_key
        self.session = uuid.uuid4().hex
        self._signer = Signer(self.key)

    def _configure(self, socket: zmq.Socket[Any]) -> None:
        socket.setsockopt(zmq.LINGER, 0)
        socket.setsockopt(zmq.MAXMSGSIZE, MAX_MESSAGE_BYTES)
        if self.server_public_key is not None:
            public, secret = zmq.curve_keypair()
            socket.curve_serverkey = self.server_public_key
            socket.curve_publickey = public
            socket.curve_secretkey = secret

    def _build(self, msg_type: str, content: dict[str, Any]) -> tuple[Message, list[bytes]]:
        try:
            full = request_type(msg_type)
            validate_content(full, content)
            msg = new_message(full, content, session=self.session)
            return msg, self._signer.serialize(msg)
        except ProtocolError as exc:
            raise DaemonError(exc.code, f"request not sent: {exc.message}", exc.details) from None

    def _unreachable(self, what: str, timeout: float) -> DaemonUnreachable:
        hint = ""
        path = _ipc_path(self.endpoint)
        if path is not None and not path.exists():
            hint = f" (the socket {path} does not exist)"
        return DaemonUnreachable(
            f"{what} {self.endpoint} within {timeout:g} s{hint} - is the daemon running "
            f"(bgbot serve, or: systemctl status bgbot) and is the key right (using {self.key_source})?"
        )

    def _events_unreachable(self) -> DaemonUnreachable:
        hint = ""
        path = _ipc_path(self.events_endpoint)
        if path is not None and not path.exists():
            hint = f" (the socket {path} does not exist)"
        return DaemonUnreachable(
            f"could not connect to the events endpoint {self.events_endpoint} within "
            f"{self.timeout:g} s{hint} - is the daemon running, and is this its events "
            "endpoint (--events-endpoint, or --config with the daemon's bgbot.toml)?")

    def _decode(self, frames: Sequence[bytes], what: str, signer: Signer | None = None) -> Message | None:
        """Check a received message; None to skip it (an unknown type from a newer daemon)."""
        try:
            return (signer or self._signer).deserialize(frames)
        except ProtocolError as exc:
            if exc.code is ErrorCode.UNAUTHORIZED:
                raise DaemonError(
                    ErrorCode.UNAUTHORIZED,
                    f"the daemon's {what} is not signed with our key ({self.key_source}); "
                    "the daemon uses another key - check --key-file",
                ) from None
            if exc.code is ErrorCode.UNKNOWN_TYPE:
                log.debug("skipping a %s of unknown type: %s", what, exc.message)
                return None
            raise DaemonError(exc.code, f"unusable {what} from the daemon: {exc.message}",
                              exc.details) from None

    def _event(self, frames: Sequence[bytes], signer: Signer) -> Message | None:
        """A received event; a bad one is logged and skipped, except under the wrong key."""
        try:
            return self._decode(frames, "event", signer)
        except DaemonError as exc:
            if exc.code is ErrorCode.UNAUTHORIZED:
                raise
            log.warning("skipping an event: %s", exc)
            return None

    def _answer(self, request: Message, reply: Message) -> Message | None:
        """The reply to ``request``, raising on ``error``; None if ``reply`` is for another request."""
        if reply.parent_id != request.msg_id:
            if not (reply.parent_id is None and reply.msg_type == "error"):
                log.debug("dropping a reply to another request (%s)", reply.parent_id)
                return None
        if reply.msg_type == "error":
            raise DaemonError.from_reply(reply.content)
        expected = reply_type(request.msg_type)
        if reply.msg_type != expected:
            raise DaemonError(ErrorCode.BAD_MESSAGE,
                              f"expected a {expected} from the daemon, got {reply.msg_type}")
        return reply

    def _topic(self, match_id: str | None) -> bytes:
        return match_topic(match_id) if match_id else b""


class Client(_Core, _Requests[dict[str, Any]]):
    """A blocking client. Not thread-safe: one thread per Client.

    ``endpoint`` / ``events_endpoint`` default to `bgbot.daemon.paths.client_paths`; the key
    is ``key`` if given, else read from ``key_file``, else from the default key file if it
    exists, else none (unsigned). ``server_public_key`` (Z85) enables CURVE for tcp endpoints.
    """

    def __init__(
        self,
        endpoint: str | None = None,
        events_endpoint: str | None = None,
        *,
        key: bytes | None = None,
        key_file: str | os.PathLike[str] | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        server_public_key: bytes | None = None,
        context: zmq.Context[Any] | None = None,
    ) -> None:
        super().__init__(endpoint, events_endpoint, key, key_file, timeout, server_public_key)
        self._own_context = context is None
        self._context: zmq.Context[Any] = context if context is not None else zmq.Context()
        self._socket: zmq.Socket[Any] | None = None

    def _control(self) -> zmq.Socket[Any]:
        if self._socket is None:
            socket = self._context.socket(zmq.DEALER)
            self._configure(socket)
            socket.setsockopt(zmq.IMMEDIATE, 1)  # queue nothing for a daemon that is not there
            socket.connect(self.endpoint)
            self._socket = socket
        return self._socket

    def request(self, msg_type: str, /, **content: Any) -> dict[str, Any]:
        """Send a request (``status`` or ``status_request``) and return the reply's content."""
        return self.request_message(msg_type, content).content

    def request_message(self, msg_type: str, content: dict[str, Any],
                        timeout: float | None = None) -> Message:
        """Like `request` but returns the whole reply Message."""
        msg, frames = self._build(msg_type, content)
        wait = self.timeout if timeout is None else timeout
        deadline = time.monotonic() + wait
        socket = self._control()
        if not socket.poll(max(0, int(wait * 1000)), zmq.POLLOUT):
            raise self._unreachable("could not connect to", wait)
        socket.send_multipart(frames, flags=zmq.NOBLOCK)
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not socket.poll(max(1, int(left * 1000)), zmq.POLLIN):
                raise self._unreachable("no reply from", wait)
            reply = self._decode(socket.recv_multipart(), "reply")
            if reply is not None:
                answer = self._answer(msg, reply)
                if answer is not None:
                    return answer

    def rollout(self, position: str, dice: Sequence[int] | None = None, *,
                context: Mapping[str, Any] | None = None, rules: Mapping[str, Any] | None = None,
                progress: Callable[[dict[str, Any]], None] | None = None,
                **settings: Any) -> dict[str, Any]:
        """A rollout of ``position``, or with ``dice`` of its candidate plays (protocol 1.3;
        ``settings`` as `_Requests.rollout`): the reply's content, when the rollout ends,
        however long it takes. ``progress`` gets the content of each ``rollout_progress``
        event (subscribed to before the request goes). While no reply comes, the daemon is
        asked ``status`` after every ``timeout`` seconds without news: a daemon that does not
        answer it raises `DaemonUnreachable`. A KeyboardInterrupt cancels the rollout
        (``rollout_cancel``) and the reply, with the trials so far, is still returned; a
        second one is raised."""
        msg, frames = self._build("rollout", rollout_content(position, dice, context, rules,
                                                             settings))
        with contextlib.ExitStack() as stack:
            sub = None
            if progress is not None:
                sub = stack.enter_context(self._subscribed(rollout_topic(msg.msg_id)))
            return self._long_request(msg, frames, sub, progress).content

    def _long_request(self, msg: Message, frames: list[bytes], sub: zmq.Socket[Any] | None,
                      on_event: Callable[[dict[str, Any]], None] | None) -> Message:
        """Send a request whose reply may take long (a rollout) and wait for it, giving its
        events on ``sub`` to ``on_event``, probing the daemon with ``status`` after every
        ``timeout`` seconds of silence, and cancelling the rollout on a first Ctrl-C."""
        socket = self._control()
        if not socket.poll(max(0, int(self.timeout * 1000)), zmq.POLLOUT):
            raise self._unreachable("could not connect to", self.timeout)
        socket.send_multipart(frames, flags=zmq.NOBLOCK)
        poller = zmq.Poller()
        poller.register(socket, zmq.POLLIN)
        if sub is not None:
            poller.register(sub, zmq.POLLIN)
        signer = Signer(self.key)
        topic = rollout_topic(msg.msg_id)
        news = time.monotonic()
        probe: tuple[Message, float] | None = None
        cancelled = False
        while True:
            try:
                ready = dict(poller.poll(_POLL_SLICE_MS))
                if sub is not None and sub in ready:
                    while sub.poll(0, zmq.POLLIN):
                        received = sub.recv_multipart()
                        if received[0] != topic:
                            continue  # a longer id with ours as its prefix
                        event = self._event(received[1:], signer)
                        news = time.monotonic()
                        if event is not None and on_event is not None:
                            on_event(dict(event.content))
                if socket in ready:
                    reply = self._decode(socket.recv_multipart(), "reply")
                    if reply is not None and probe is not None \
                            and reply.parent_id == probe[0].msg_id:
                        probe, news = None, time.monotonic()  # alive
                    elif reply is not None:
                        answer = self._answer(msg, reply)
                        if answer is not None:
                            return answer
                now = time.monotonic()
                if probe is not None and now > probe[1]:
                    raise self._unreachable("no reply from", self.timeout)
                if probe is None and now - news >= self.timeout:
                    status, status_frames = self._build("status", {})
                    socket.send_multipart(status_frames, flags=zmq.NOBLOCK)
                    probe = (status, now + self.timeout)
            except KeyboardInterrupt:
                if cancelled or msg.msg_type != "rollout_request":
                    raise
                cancelled = True  # the reply still comes, with the trials so far
                _, cancel_frames = self._build("rollout_cancel", {"rollout_id": msg.msg_id})
                socket.send_multipart(cancel_frames, flags=zmq.NOBLOCK)

    @contextlib.contextmanager
    def _subscribed(self, prefix: bytes) -> Iterator[zmq.Socket[Any]]:
        """A SUB socket on the events endpoint, subscribed to the topics that begin with
        ``prefix``, connected (`DaemonUnreachable` when it is not within the client's timeout:
        ZeroMQ itself would wait for ever, silently); closed on leaving."""
        sub = self._context.socket(zmq.SUB)
        try:
            self._configure(sub)
            sub.setsockopt(zmq.SUBSCRIBE, prefix)
            monitor = sub.get_monitor_socket(zmq.EVENT_HANDSHAKE_SUCCEEDED)
            try:
                sub.connect(self.events_endpoint)
                if not monitor.poll(max(1, int(self.timeout * 1000)), zmq.POLLIN):
                    raise self._events_unreachable()
            finally:
                sub.disable_monitor()
                monitor.close(0)
            yield sub
        finally:
            sub.close(0)

    def _received(self, sub: zmq.Socket[Any], topic: bytes | None,
                  timeout: float | None) -> Iterator[Message]:
        """The verified events arriving on ``sub``, of exactly ``topic`` (None: any topic the
        socket is subscribed to), until ``timeout`` seconds pass without one (None: never)."""
        signer = Signer(self.key)
        idle = 0.0
        while True:
            if not sub.poll(_POLL_SLICE_MS, zmq.POLLIN):
                idle += _POLL_SLICE_MS / 1000
                if timeout is not None and idle >= timeout:
                    return
                continue
            idle = 0.0
            frames = sub.recv_multipart()
            if topic is not None and frames[0] != topic:
                continue  # another match (or a longer match id with ours as prefix)
            event = self._event(frames[1:], signer)
            if event is not None:
                yield event

    def watch(self, match_id: str | None = None, *, timeout: float | None = None) -> Iterator[Message]:
        """Yield events as they are published: of one match, or of everything (None).

        Events published before the subscription is set up are not seen (ZeroMQ PUB/SUB).
        ``timeout``: stop after that many seconds without an event (None: never).
        """
        topic = self._topic(match_id)
        with self._subscribed(topic) as sub:
            yield from self._received(sub, topic if match_id else None, timeout)

    def follow(self, start: Callable[[], str], *,
               timeout: float | None = None) -> Iterator[tuple[str, dict[str, Any]]]:
        """Every event of one match from its very start, in order and none twice (SPEC §9,
        "Seeing a match from its start", protocol 1.2), as (msg_type, content).

        Subscribes to every match, then calls ``start`` (which starts the match and returns
        its id), then yields the events ``match_get`` with ``events`` gives and after them the
        live ones with a higher ``n`` (and the daemon's ``match_started`` / ``match_aborted``),
        until ``match_ended`` or ``match_aborted``. ``timeout``: stop after that many seconds
        without an event (None: never)."""
        with self._subscribed(self._topic(None)) as sub:
            match_id = start()
            done = 0
            while True:  # a page at a time (protocol 1.3): a long session has many events
                so_far = self.request("match_get", match_id=match_id, events=True,
                                      events_from=done + 1, events_limit=FOLLOW_PAGE)
                for item in so_far["events"]:
                    done = int(item["content"]["n"])
                    yield str(item["msg_type"]), dict(item["content"])
                    if item["msg_type"] == "match_ended":
                        return
                if not so_far.get("events_more") or not so_far["events"]:
                    break
            state = so_far["match"]["state"]
            if state in ("aborted", "failed"):  # ended before our subscription took effect
                yield "match_aborted", {"match_id": match_id, "state": state,
                                        "reason": so_far.get("error") or state}
                return
            for event in self._received(sub, self._topic(match_id), timeout):
                number = event.content.get("n")
                if isinstance(number, int):
                    if number <= done:
                        continue  # already given (by match_get, or published twice)
                    done = number
                yield event.msg_type, dict(event.content)
                if event.msg_type in ("match_ended", "match_aborted"):
                    return

    def close(self) -> None:
        if self._socket is not None:
            self._socket.close(0)
            self._socket = None
        if self._own_context:
            self._context.term()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class AsyncClient(_Core, _Requests[Awaitable[dict[str, Any]]]):
    """An asyncio client (``zmq.asyncio``); concurrent requests on one client are fine.

    Same arguments as `Client`. Use ``async with AsyncClient() as daemon: await daemon.status()``.
    """

    def __init__(
        self,
        endpoint: str | None = None,
        events_endpoint: str | None = None,
        *,
        key: bytes | None = None,
        key_file: str | os.PathLike[str] | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        server_public_key: bytes | None = None,
        context: zmq.asyncio.Context | None = None,
    ) -> None:
        super().__init__(endpoint, events_endpoint, key, key_file, timeout, server_public_key)
        self._own_context = context is None
        self._context = context if context is not None else zmq.asyncio.Context()
        self._socket: zmq.asyncio.Socket | None = None
        self._reader: asyncio.Task[None] | None = None
        self._pending: dict[str, asyncio.Future[Message]] = {}

    def _control(self) -> zmq.asyncio.Socket:
        if self._socket is None:
            socket = self._context.socket(zmq.DEALER)
            self._configure(socket)
            socket.setsockopt(zmq.IMMEDIATE, 1)
            socket.connect(self.endpoint)
            self._socket = socket
        if self._reader is None or self._reader.done():
            self._reader = asyncio.get_running_loop().create_task(self._read(self._socket))
        return self._socket

    async def request(self, msg_type: str, /, **content: Any) -> dict[str, Any]:
        """Send a request and return the reply's content."""
        return (await self.request_message(msg_type, content)).content

    async def request_message(self, msg_type: str, content: dict[str, Any],
                              timeout: float | None = None) -> Message:
        msg, frames = self._build(msg_type, content)
        wait = self.timeout if timeout is None else timeout
        deadline = time.monotonic() + wait
        socket = self._control()
        if not await cast(Any, socket).poll(max(0, int(wait * 1000)), zmq.POLLOUT):
            raise self._unreachable("could not connect to", wait)
        future: asyncio.Future[Message] = asyncio.get_running_loop().create_future()
        self._pending[msg.msg_id] = future
        try:
            await socket.send_multipart(frames)
            left = max(0.0, deadline - time.monotonic())
            try:
                reply = await asyncio.wait_for(future, left)
            except asyncio.TimeoutError:
                raise self._unreachable("no reply from", wait) from None
        finally:
            self._pending.pop(msg.msg_id, None)
        if reply.msg_type == "error":
            raise DaemonError.from_reply(reply.content)
        expected = reply_type(msg.msg_type)
        if reply.msg_type != expected:
            raise DaemonError(ErrorCode.BAD_MESSAGE,
                              f"expected a {expected} from the daemon, got {reply.msg_type}")
        return reply

    async def _read(self, socket: zmq.asyncio.Socket) -> None:
        """Route every reply to the request waiting for it."""
        while True:
            frames = await socket.recv_multipart()
            try:
                reply = self._decode(frames, "reply")
            except DaemonError as exc:
                for future in self._pending.values():
                    if not future.done():
                        future.set_exception(exc)
                continue
            if reply is None:
                continue
            target = self._pending.get(reply.parent_id or "")
            if target is None and reply.parent_id is None and len(self._pending) == 1:
                target = next(iter(self._pending.values()))
            if target is None or target.done():
                log.debug("dropping a reply to another request (%s)", reply.parent_id)
                continue
            target.set_result(reply)

    async def watch(self, match_id: str | None = None, *,
                    timeout: float | None = None) -> AsyncIterator[Message]:
        """Events as they are published (see `Client.watch`)."""
        topic = self._topic(match_id)
        sub = self._context.socket(zmq.SUB)
        signer = Signer(self.key)
        try:
            self._configure(sub)
            sub.setsockopt(zmq.SUBSCRIBE, topic)
            monitor = sub.get_monitor_socket(zmq.EVENT_HANDSHAKE_SUCCEEDED)
            try:
                sub.connect(self.events_endpoint)
                if not await cast(Any, monitor).poll(max(1, int(self.timeout * 1000))):
                    raise self._events_unreachable()
            finally:
                sub.disable_monitor()
                monitor.close(0)
            while True:
                if not await cast(Any, sub).poll(None if timeout is None else int(timeout * 1000)):
                    return
                frames = await sub.recv_multipart()
                if match_id and frames[0] != topic:
                    continue
                event = self._event(frames[1:], signer)
                if event is not None:
                    yield event
        finally:
            sub.close(0)

    async def close(self) -> None:
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._reader
            self._reader = None
        if self._socket is not None:
            self._socket.close(0)
            self._socket = None
        if self._own_context:
            self._context.term()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
