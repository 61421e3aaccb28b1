"""The listeners: a unix socket in the daemon's home (the TypeScript CLI finds it through
``paseo.pid``) and, when configured, a TCP address for the app and remote clients.

Every upgrade is screened by the daemon (:meth:`paseo_hookspecs.transport.TransportHost.admit`,
the same decision as ``/ws``): a refused ``Host``/``Origin`` is HTTP 403, the connection cap or
shutdown 503, too many password attempts 429; a missing or wrong credential is accepted and
then closed with 4401, as the TypeScript daemon does (its clients read that code).
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import functools
import http
import json
import logging
import os
import weakref
from collections import OrderedDict
from typing import TYPE_CHECKING, Any

from paseo_hookspecs.address import parse_address
from paseo_hookspecs.channels import ChannelClosed, ChannelHost, MessageChannel
from paseo_hookspecs.http import HttpMountHost
from paseo_hookspecs.interfaces.transport import Transport
from paseo_hookspecs.transport import (
    Observed,
    SessionLimits,
    TransportHost,
    prepare_socket_path,
)
from websockets.asyncio.server import Server, ServerConnection, serve, unix_serve
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response

from paseo_tswire import http_download
from paseo_tswire.settings import TsWireSettings

# The protocol's models and handlers take about 0.1 s to import: they are imported by the
# first connection, so a daemon no TypeScript client talks to never pays for them.
if TYPE_CHECKING:
    from paseo_tswire import handshake
    from paseo_tswire.connection import ClientSession

log = logging.getLogger("paseo.tswire")

STOP_GRACE = 5.0
MAX_SOCKET_PATH = 107
"""Bytes of a unix socket path (``sun_path`` holds 108 with the terminating NUL)."""
CLOSE_SLOW = 4008
"""The client did not read its pushes (as ``/ws``'s slow-consumer close)."""
"""A ``hello`` named the ``clientId`` of a session a live connection holds: "try again later"
(once that connection is gone, the session is free to reattach). Taking it over would hand
the newcomer the first client's answers and pushes while the first heard nothing."""


def _settings(host: TransportHost) -> TsWireSettings:
    section = host.config_section("tswire")
    if isinstance(section, TsWireSettings):
        return section
    if isinstance(section, dict):
        return TsWireSettings.model_validate(section)
    return TsWireSettings()


class _Admitted:
    __slots__ = ("kind", "observed", "refusal")

    def __init__(
        self, kind: str | None, observed: Observed | None, refusal: str = "Password required"
    ) -> None:
        self.kind = kind
        self.observed = observed
        self.refusal = refusal
        """The 4401 reason when refused: the TypeScript daemon's, which its clients show."""


class TsWireTransport(Transport):
    """See the module docstring."""

    name = "tswire"
    typescript_discovery = True

    def __init__(self) -> None:
        self._host: TransportHost | None = None
        self._settings = TsWireSettings()
        self._servers: list[tuple[Server, str | None]] = []
        self._admitted: weakref.WeakKeyDictionary[ServerConnection, _Admitted] = (
            weakref.WeakKeyDictionary()
        )
        self._unix: weakref.WeakSet[Server] = weakref.WeakSet()
        self._sessions: dict[str, ClientSession] = {}
        self._waiting: OrderedDict[str, ClientSession] = OrderedDict()
        """The detached sessions, oldest first (a subset of ``_sessions``)."""
        self._active = 0

    @property
    def host(self) -> TransportHost:
        if self._host is None:
            raise RuntimeError("the transport is not started")
        return self._host

    # ---------------------------------------------------------------- lifecycle

    async def start(self, host: TransportHost) -> list[str]:
        self._host = host
        self._settings = settings = _settings(host)
        if isinstance(host, ChannelHost):
            # Clients of a carrying transport (the relay's tunnels) speak this protocol too.
            host.register_channel_protocol(self.name, self)
        options: dict[str, Any] = {
            "process_request": self._process_request,
            "select_subprotocol": _select_subprotocol,
            "server_header": None,
            "max_size": settings.maxFrameBytes,
            "compression": None,
            "open_timeout": 10,
            "logger": log,
        }
        urls: list[str] = []
        try:
            path = _socket_path(host.home, settings.socket) if settings.socket else None
            if path is not None and len(os.fsencode(path)) > MAX_SOCKET_PATH:
                # An optional compatibility socket never stops the daemon from starting.
                log.warning(
                    "tswire: %s is longer than a unix socket path may be (%d bytes); set "
                    "plugins.tswire.settings.socket to a shorter absolute path",
                    path,
                    MAX_SOCKET_PATH,
                )
                path = None
            if path is not None:
                await asyncio.to_thread(prepare_socket_path, path)
                previous = os.umask(0o177)  # created owner-only, never chmod-ed afterwards
                try:
                    server = await unix_serve(self._connection, path, **options)
                finally:
                    os.umask(previous)
                self._unix.add(server)
                self._servers.append((server, path))
                urls.append(f"unix://{path}")
            if settings.listen:
                bind_host, bind_port = _tcp_address(settings.listen)
                server = await serve(self._connection, bind_host, bind_port, **options)
                self._servers.append((server, None))
                for sock in server.sockets:
                    bound_host, port = sock.getsockname()[:2]
                    shown = f"[{bound_host}]" if ":" in bound_host else bound_host
                    urls.append(f"ws://{shown}:{port}/ws")
        except BaseException:
            await self.stop()
            raise
        return urls

    async def stop(self) -> None:
        if isinstance(self._host, ChannelHost):
            self._host.unregister_channel_protocol(self.name)
        servers, self._servers = self._servers, []
        for server, _ in servers:
            server.close(close_connections=False)
        sessions, self._sessions = list(self._sessions.values()), {}
        self._waiting.clear()
        for session in sessions:
            await session.aclose()
        for server, path in servers:
            try:
                await asyncio.wait_for(server.wait_closed(), STOP_GRACE)
            except TimeoutError:
                for connection in list(server.connections):
                    connection.transport.abort()
            if path is not None:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(path)

    # ----------------------------------------------------------------- upgrade

    async def _process_request(
        self, connection: ServerConnection, request: Request
    ) -> Response | None:
        from paseo_tswire import trust

        server = connection.server if hasattr(connection, "server") else None
        unix = server in self._unix if server is not None else False
        facts = trust.facts(
            unix=unix,
            remote=connection.remote_address,
            headers=request.headers,
            sock=connection.transport.get_extra_info("socket"),
        )
        if request.path.split("?", 1)[0] == http_download.PATH and not unix:
            app = (
                self.host.http_app(http_download.PATH)
                if isinstance(self.host, HttpMountHost)
                else None
            )
            if app is not None:
                return await http_download.serve(
                    app, request, connection.remote_address, connection.local_address
                )
        at_capacity = self._active + len(self._admitted) >= self._settings.maxConnections
        admission = await self.host.admit(facts, "session", at_capacity=at_capacity)
        if admission.status == http.HTTPStatus.UNAUTHORIZED:
            # Accepted, then closed with 4401 by the handler: what the TypeScript clients expect.
            refusal = "Incorrect password" if facts.credential else "Password required"
            self._admitted[connection] = _Admitted(None, admission.observed, refusal)
            return None
        if not admission.admitted or admission.kind is None or admission.observed is None:
            status = http.HTTPStatus(admission.status if not admission.admitted else 401)
            response = connection.respond(status, f"{status.phrase}\n")
            if admission.retry_after is not None:
                response.headers["Retry-After"] = str(max(1, round(admission.retry_after)))
            return response
        if request.path.split("?", 1)[0] != "/ws":
            return connection.respond(http.HTTPStatus.NOT_FOUND, "Not Found\n")
        self._admitted[connection] = _Admitted(admission.kind, admission.observed)
        return None

    # ------------------------------------------------------------- connections

    async def _connection(self, connection: ServerConnection) -> None:
        from paseo_tswire import handshake

        admitted = self._admitted.pop(connection, None)
        if admitted is None or admitted.kind is None or admitted.observed is None:
            refusal = admitted.refusal if admitted is not None else "Password required"
            await connection.close(handshake.CLOSE_UNAUTHORIZED, refusal)
            return
        self._active += 1
        try:
            await self._serve(connection, admitted.kind, admitted.observed)
        except ConnectionClosed:
            pass
        finally:
            self._active -= 1

    async def _serve(self, connection: ServerConnection, kind: str, observed: Observed) -> None:
        from paseo_tswire import handshake

        try:
            first = await asyncio.wait_for(connection.recv(), self._settings.helloTimeout)
        except TimeoutError:
            await connection.close(handshake.CLOSE_HELLO_TIMEOUT, "Hello timeout")
            return
        with contextlib.suppress(ChannelClosed):
            await self.serve(_SocketChannel(connection), first, kind=kind, observed=observed)

    # ------------------------------------------------- as a channel protocol

    def claims(self, first: str | bytes) -> bool:
        """See :class:`paseo_hookspecs.channels.ChannelProtocol`: a JSON object with a
        ``type`` and no ``jsonrpc`` is this protocol's (a ``hello``, or what a client
        wrongly sent first, which :meth:`serve` then refuses as the TypeScript daemon does)."""
        if not isinstance(first, str) or not first.lstrip().startswith("{"):
            return False
        try:
            data = json.loads(first)
        except ValueError:
            return False
        return (
            isinstance(data, dict) and isinstance(data.get("type"), str) and "jsonrpc" not in data
        )

    async def serve(
        self, channel: MessageChannel, first: str | bytes, *, kind: str, observed: Observed
    ) -> None:
        """Serve one connection whose ``first`` frame was read: this transport's sockets, or
        a channel another transport carries (:meth:`paseo_hookspecs.channels.ChannelHost.
        serve_channel`), with the same sessions, reattachment and bounds."""
        from paseo_tswire import handshake
        from paseo_tswire.dispatch import handle
        from paseo_tswire.envelope import WS_PONG, FrameError, parse_frame, session_frame

        connection = channel
        try:
            hello = _first_hello(first)
        except handshake.HelloRefused as exc:
            await connection.close(exc.code, exc.reason[:120])
            return
        held = self._sessions.get(hello.clientId)
        # The TypeScript CLI keeps one clientId per home for all its invocations, so two at
        # once (`chat wait` beside `chat post`) name the same one. The later gets a session of
        # its own, not the live one's answers and pushes, and closed with its connection:
        # there is nothing to reattach to.
        own = held is not None and held.attached
        session = (
            await self._open_session(hello, kind, observed)
            if own
            else await self._session_for(hello, kind, observed)
        )
        if session is None:
            await connection.close(1011, "the daemon refused the session")
            return
        send = connection.send
        session.attach(send, functools.partial(connection.close, CLOSE_SLOW, "Client too slow"))
        info = await self._server_info(session)
        await connection.send(session_frame("status", info))
        in_flight = asyncio.Semaphore(self._settings.maxInFlight)
        tasks: set[asyncio.Task[None]] = set()
        try:
            while True:
                try:
                    raw = await connection.recv()
                except ChannelClosed:
                    return
                if isinstance(raw, bytes):
                    await _binary(session, raw)
                    continue
                try:
                    frame = parse_frame(raw)
                except FrameError as exc:
                    log.debug("tswire: dropped a frame from %s: %s", hello.clientId, exc)
                    continue
                if frame.kind == "ping":
                    await connection.send(WS_PONG)
                elif frame.kind == "hello":
                    await connection.close(
                        handshake.CLOSE_PROTOCOL, "Hello on an active connection"
                    )
                    return
                elif frame.kind == "session":
                    await in_flight.acquire()
                    task = asyncio.get_running_loop().create_task(handle(session, frame.body))
                    tasks.add(task)
                    task.add_done_callback(functools.partial(_finished, tasks, in_flight))
        finally:
            if own:
                self._expire(session)
            elif session.detach(send):
                self._detached(session)
            for task in list(tasks):
                task.cancel()

    async def _session_for(
        self, hello: handshake.Hello, kind: str, observed: Observed
    ) -> ClientSession | None:
        existing = self._sessions.get(hello.clientId)
        if existing is not None and self._waiting.get(hello.clientId) is existing:
            del self._waiting[hello.clientId]
        if existing is not None and existing.kind == kind and not existing.bridge.closed:
            existing.extra["capabilities"] = hello.capabilities
            return existing
        if existing is not None:
            self._sessions.pop(hello.clientId, None)
            await existing.aclose()
        session = await self._open_session(hello, kind, observed)
        if session is not None:
            self._sessions[hello.clientId] = session
        return session

    async def _open_session(
        self, hello: handshake.Hello, kind: str, observed: Observed
    ) -> ClientSession | None:
        """A new daemon session for ``hello``, not yet registered for a reattach."""
        from paseo_tswire.connection import ClientSession

        session = ClientSession(
            self.host,
            client_id=hello.clientId,
            client_type=hello.clientType,
            kind=kind,
            observed=observed,
            limits=SessionLimits(hello_timeout=self._settings.helloTimeout, idle_timeout=86400.0),
        )
        try:
            result = await session.start(hello.appVersion or "unknown")
        except Exception:  # shutting down, or the daemon refused: close the socket
            log.debug("tswire: session for %s not opened", hello.clientId, exc_info=True)
            await session.aclose()
            return None
        session.extra["hello"] = result
        session.extra["capabilities"] = hello.capabilities
        session.on_expire = self._expire
        return session

    def _detached(self, session: ClientSession) -> None:
        """Bound the sessions kept for a reattach (``maxDetachedSessions``): beyond it the
        oldest detached ones are closed, so clients that say hello and go away cannot pile
        up sessions for the whole reattach window."""
        self._waiting.pop(session.client_id, None)
        self._waiting[session.client_id] = session
        while len(self._waiting) > self._settings.maxDetachedSessions:
            _client_id, oldest = self._waiting.popitem(last=False)
            log.debug("tswire: dropped the detached session of %s (cap)", oldest.client_id)
            self._expire(oldest)

    def _expire(self, session: ClientSession) -> None:
        if self._waiting.get(session.client_id) is session:
            del self._waiting[session.client_id]
        if self._sessions.get(session.client_id) is session:
            del self._sessions[session.client_id]
        task = asyncio.get_running_loop().create_task(session.aclose())
        task.add_done_callback(lambda _t: None)

    async def _server_info(self, session: ClientSession) -> Any:
        from paseo_tswire.handlers import config_watch

        result = session.extra.get("hello") or {}
        return await config_watch.server_info(
            session, str(result.get("serverId") or ""), str(result.get("version") or "")
        )


async def _binary(session: ClientSession, frame: bytes) -> None:
    """An inbound binary frame (terminal input or resize); a refused one is only logged, as
    the TypeScript daemon does: the client has no reply to wait for."""
    from paseo_tswire.bridge import RpcFailure

    if session.binary is None:
        return
    try:
        await session.binary(frame)
    except RpcFailure as exc:
        log.debug("tswire: a terminal frame from %s was refused: %s", session.client_id, exc)


def _finished(
    tasks: set[asyncio.Task[None]], in_flight: asyncio.Semaphore, task: asyncio.Task[None]
) -> None:
    tasks.discard(task)
    in_flight.release()


class _SocketChannel:
    """One of this transport's own sockets as a :class:`MessageChannel`."""

    __slots__ = ("_connection",)

    def __init__(self, connection: ServerConnection) -> None:
        self._connection = connection

    async def recv(self) -> str | bytes:
        try:
            return await self._connection.recv()
        except ConnectionClosed:
            raise ChannelClosed from None

    async def send(self, frame: str | bytes) -> None:
        try:
            await self._connection.send(frame)
        except ConnectionClosed:
            raise ChannelClosed from None

    async def close(self, code: int, reason: str) -> None:
        await self._connection.close(code, reason)


def _first_hello(first: str | bytes) -> handshake.Hello:
    """The connection's first frame as a valid hello; :class:`handshake.HelloRefused` else."""
    from paseo_tswire import handshake
    from paseo_tswire.envelope import FrameError, parse_frame

    try:
        frame = parse_frame(first) if isinstance(first, str) else None
    except FrameError:
        frame = None
    if frame is None or frame.kind != "hello":
        raise handshake.HelloRefused(handshake.CLOSE_PROTOCOL, "Session message before hello")
    return handshake.read_hello(frame.body)


def _select_subprotocol(_connection: ServerConnection, offered: Any) -> str | None:
    from paseo_tswire import trust

    return trust.select_subprotocol(list(offered))


def _socket_path(home: str, configured: str) -> str:
    return os.path.join(home, os.path.expanduser(configured))


def _tcp_address(listen: str) -> tuple[str, int]:
    address = parse_address(listen)
    if address.path is not None or address.host is None or address.port is None:
        raise OSError(errno.EINVAL, "plugins.tswire.settings.listen must be a TCP host:port")
    return address.host, address.port
