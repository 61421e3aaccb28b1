"""The WebSocket listener: HTTP routes, the upgrade checks, and one session per connection.

Routes (every request must carry an allowed ``Host`` header, else 403):

* ``GET /api/health`` — no authentication: ``{"ok": true, "version": ...}``.
* ``GET /api/status`` — ``Authorization: Bearer <token>``: the ``server.status`` result.
* ``GET /ws`` — the WebSocket. Refused before the upgrade with 403 (browser ``Origin`` not
  allowed), 503 (connection cap, or shutting down) or 401 (no valid token). The token is an
  ``Authorization: Bearer`` header or, for browsers, a ``paseo.bearer.<token>`` subprotocol.

Refusal bodies are fixed strings that reveal nothing about the reason beyond the status. The
decisions are the daemon's (:meth:`paseo_hookspecs.transport.TransportHost.admit`): this module
reports what it observed and maps the answer to HTTP.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import http
import json
import logging
import math
import os
import weakref
from typing import Any, cast

from paseo_hookspecs.address import Address, parse_address
from paseo_hookspecs.http import HttpForwarding, HttpMountHost
from paseo_hookspecs.interfaces.transport import Transport
from paseo_hookspecs.transport import (
    Admission,
    AdmissionPurpose,
    Observed,
    PeerFacts,
    SessionLimits,
    TransportHost,
    prepare_socket_path,
)
from websockets.asyncio.server import Server, ServerConnection, serve, unix_serve
from websockets.datastructures import Headers
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response

from paseo_websocket.connection import SessionChannel, SessionConnection
from paseo_websocket.http_routes import HttpRoutes
from paseo_websocket.settings import WebSocketSettings

log = logging.getLogger("paseo.websocket")

SUBPROTOCOL = "paseo.v1"
BEARER_SUBPROTOCOL = "paseo.bearer."
STOP_GRACE = 5.0
"""Seconds :meth:`WebSocketTransport.stop` waits for connections to close before aborting."""
TARPIT = 1.0
"""Longest delay before a ``429`` (too many password attempts) is answered: a client guessing
back to back then costs the daemon a handshake a second, not thousands."""
MAX_TARPITTED = 256
"""Refusals delayed at once; beyond, they are answered at once (memory stays bounded)."""


def _settings(host: TransportHost) -> WebSocketSettings:
    section = host.config_section("websocket")
    if isinstance(section, WebSocketSettings):
        return section
    if isinstance(section, dict):
        return WebSocketSettings.model_validate(section)
    return WebSocketSettings()


def _single(headers: Headers, name: str) -> str | None:
    """A header that must appear at most once; a repeated one counts as absent (and so fails
    the Host check) rather than letting one copy vouch for the other."""
    values = headers.get_all(name)
    return values[0] if len(values) == 1 else None


def _bearer(headers: Headers) -> str | None:
    value = _single(headers, "Authorization")
    if value:
        scheme, _, token = value.partition(" ")
        if scheme.lower() == "bearer" and token.strip():
            return token.strip()
    return None


def _offered_subprotocols(headers: Headers) -> list[str]:
    return [
        item.strip()
        for value in headers.get_all("Sec-WebSocket-Protocol")
        for item in value.split(",")
        if item.strip()
    ]


def _subprotocol_token(headers: Headers) -> str | None:
    for offered in _offered_subprotocols(headers):
        if offered.startswith(BEARER_SUBPROTOCOL) and len(offered) > len(BEARER_SUBPROTOCOL):
            return offered[len(BEARER_SUBPROTOCOL) :]
    return None


class _Admitted:
    """What the upgrade checks decided, handed from ``process_request`` to the handler."""

    __slots__ = ("kind", "observed")

    def __init__(self, kind: str, observed: Observed) -> None:
        self.kind = kind
        self.observed = observed


_ROUTES: dict[str, AdmissionPurpose] = {"/api/status": "status", "/ws": "session"}
"""Paths whose requests need more than the public screening (every other path gets it)."""


class WebSocketTransport(Transport):
    """Listens on ``daemon.listen`` (``host:port``, a port, or a unix socket path)."""

    name = "websocket"

    def __init__(self) -> None:
        self._server: Server | None = None
        self._host: TransportHost | None = None
        self._settings = WebSocketSettings()
        self._limits = SessionLimits()
        self._address: Address | None = None
        # Connections holding a slot: ``None`` while their credential is checked, then what
        # was admitted until the handler takes over. Weak: a failed handshake frees its slot.
        self._admitted: weakref.WeakKeyDictionary[ServerConnection, _Admitted | None] = (
            weakref.WeakKeyDictionary()
        )
        self._active = 0
        self._http: HttpRoutes | None = None
        self._tarpitted = 0

    @property
    def host(self) -> TransportHost:
        if self._host is None:
            raise RuntimeError("the transport is not started")
        return self._host

    # ---------------------------------------------------------------- lifecycle

    async def start(self, host: TransportHost) -> list[str]:
        self._host = host
        self._settings = settings = _settings(host)
        self._limits = SessionLimits(
            outbound_queue=settings.outboundQueue,
            outbound_bytes=settings.outboundBytes,
            outbound_bytes_total=settings.outboundBytesTotal,
            max_in_flight=settings.maxInFlight,
            rate_per_second=settings.requestsPerSecond,
            rate_burst=settings.requestBurst,
            hello_timeout=settings.helloTimeout,
            idle_timeout=settings.idleTimeout,
        )
        listen = host.listen
        try:
            address = parse_address(listen)
        except ValueError as exc:
            raise OSError(errno.EINVAL, f"daemon.listen {listen!r}: {exc}") from exc
        options: dict[str, Any] = {
            "process_request": self._process_request,
            "select_subprotocol": self._select_subprotocol,
            "compression": "deflate" if settings.compression else None,
            "server_header": None,
            "max_size": settings.maxFrameBytes,
            "ping_interval": settings.pingInterval,
            "ping_timeout": settings.pingTimeout,
            "close_timeout": settings.closeTimeout,
            "open_timeout": 10,
            "logger": log,
            "create_connection": SessionConnection,
        }
        if address.path is not None:
            self._server = await self._serve_unix(address.path, options)
            self._address = address
            return [address.ws_url()]
        if isinstance(host, HttpMountHost | HttpForwarding):
            # Mounted HTTP apps (MCP) share the TCP port and its trust model, and forwarded
            # names (the scripts proxy) are relayed before anything else (http_routes.py).
            self._http = HttpRoutes(
                host.http_app if isinstance(host, HttpMountHost) else lambda _path: None,
                host.http_forward if isinstance(host, HttpForwarding) else None,
            )
            options["create_connection"] = self._http.connection_class()
        try:
            self._server = await serve(self._handle, address.host, address.port, **options)
        except OSError as exc:
            reason = os.strerror(exc.errno) if exc.errno else str(exc)
            raise OSError(exc.errno, f"{address.listen_form()}: {reason}") from exc
        urls: list[str] = []
        for sock in self._server.sockets:
            bound_host, port = sock.getsockname()[:2]
            bound = Address(host=bound_host, port=port)
            self._address = self._address or bound
            urls.append(bound.ws_url())
        return urls

    async def _serve_unix(self, path: str, options: dict[str, Any]) -> Server:
        await asyncio.to_thread(prepare_socket_path, path)
        # Created owner-only from the start (no chmod afterwards); nothing else creates files
        # while the daemon is starting, so the process-wide umask change is safe here.
        previous = os.umask(0o177)
        try:
            return await unix_serve(self._handle, path, **options)
        finally:
            os.umask(previous)

    async def stop(self) -> None:
        server = self._server
        if server is None:
            return
        self._server = None
        server.close(close_connections=False)
        if self._http is not None:
            self._http.shutdown()
        try:
            await asyncio.wait_for(server.wait_closed(), STOP_GRACE)
        except TimeoutError:
            log.warning("connections did not close within %.0fs; aborting them", STOP_GRACE)
            for connection in list(server.connections):
                connection.transport.abort()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(server.wait_closed(), STOP_GRACE)
        if self._address is not None and self._address.path is not None:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self._address.path)

    # ----------------------------------------------------------------- requests

    def _select_subprotocol(self, connection: ServerConnection, subprotocols: Any) -> Any:
        # A browser that offered subprotocols fails the handshake unless one is selected.
        if SUBPROTOCOL in subprotocols:
            return SUBPROTOCOL
        for offered in subprotocols:
            if offered.startswith(BEARER_SUBPROTOCOL):
                return offered
        return None

    async def _process_request(
        self, connection: ServerConnection, request: Request
    ) -> Response | None:
        headers = request.headers
        path = request.path.split("?", 1)[0]
        purpose = _ROUTES.get(path, "public")
        session = purpose == "session"
        token = _bearer(headers)
        at_capacity = False
        if session:
            token = token or _subprotocol_token(headers)
            at_capacity = self._active + len(self._admitted) >= self._settings.maxConnections
            if not at_capacity:
                # The slot is taken before the (awaited, possibly slow) credential check, so
                # concurrent logins cannot all pass the cap.
                self._admitted[connection] = None
        admission = await self.host.admit(
            self._facts(connection, headers, token), purpose, at_capacity=at_capacity
        )
        if not admission.admitted:
            self._admitted.pop(connection, None)
            if session and admission.status == http.HTTPStatus.UNAUTHORIZED:
                # Debug only: the host logs bursts of failed attempts once.
                client = admission.observed.client_address if admission.observed else None
                log.debug("refused an unauthenticated connection from %s", client)
            if admission.retry_after is not None:
                return await self._too_many(connection, admission.retry_after)
            return _plain(connection, http.HTTPStatus(admission.status))
        if path == "/api/health":
            return _json(connection, self.host.health(), _cors(admission))
        if path == "/api/status":
            return _json(connection, await self.host.status(), _cors(admission))
        if not session:
            return _plain(connection, http.HTTPStatus.NOT_FOUND)
        if admission.kind is None or admission.observed is None:  # admitted sessions have both
            self._admitted.pop(connection, None)
            return _plain(connection, http.HTTPStatus.UNAUTHORIZED)
        self._admitted[connection] = _Admitted(admission.kind, admission.observed)
        return None

    async def _too_many(self, connection: ServerConnection, retry_after: float) -> Response:
        # The slot was released first: a delayed refusal never holds a connection slot.
        if self._tarpitted < MAX_TARPITTED:
            self._tarpitted += 1
            try:
                await asyncio.sleep(min(TARPIT, retry_after))
            finally:
                self._tarpitted -= 1
        response = _plain(connection, http.HTTPStatus.TOO_MANY_REQUESTS)
        response.headers["Retry-After"] = str(max(1, math.ceil(retry_after)))
        return response

    def _facts(
        self, connection: ServerConnection, headers: Headers, token: str | None
    ) -> PeerFacts:
        unix = self._address is not None and self._address.path is not None
        remote = connection.remote_address
        peer = str(remote[0]) if isinstance(remote, tuple) and remote else None
        return PeerFacts(
            transport="unix" if unix else "tcp",
            unix_socket=unix,
            peer=peer,
            hosts=tuple(headers.get_all("Host")),
            origins=tuple(headers.get_all("Origin")),
            forwarded_for=_forwarded_for(headers),
            credential=token,
        )

    # -------------------------------------------------------------- connections

    async def _handle(self, connection: ServerConnection) -> None:
        admitted = self._admitted.pop(connection, None)
        if admitted is None:  # cannot happen: the upgrade is refused without admission
            await connection.close(4401, "unauthorized")
            return
        session = self.host.open_session(
            kind=admitted.kind,
            channel=SessionChannel(connection),
            observed=admitted.observed,
            limits=self._limits,
        )
        self._active += 1
        runner = asyncio.get_running_loop().create_task(session.run())
        try:
            # The connection class given to serve(), so always a SessionConnection.
            await cast(SessionConnection, connection).feed(session)
        except ConnectionClosed:
            pass  # oversized frames (1009) and abrupt disconnects end up here
        finally:
            self._active -= 1
            session.connection_lost()
            with contextlib.suppress(asyncio.CancelledError):
                await runner


def _cors(admission: Admission) -> dict[str, str]:
    origin = admission.cors_origin
    if origin is None:
        return {}
    return {"Access-Control-Allow-Origin": origin, "Vary": "Origin"}


def _forwarded_for(headers: Headers) -> str | None:
    # Proxies may split the chain over several headers; together they form one list.
    values = headers.get_all("X-Forwarded-For")
    return ",".join(values) if values else None


def _plain(connection: ServerConnection, status: http.HTTPStatus) -> Response:
    response = connection.respond(status, f"{status.phrase}\n")
    response.headers["Cache-Control"] = "no-store"
    return response


def _json(connection: ServerConnection, data: dict[str, Any], extra: dict[str, str]) -> Response:
    response = connection.respond(http.HTTPStatus.OK, json.dumps(data) + "\n")
    del response.headers["Content-Type"]
    response.headers["Content-Type"] = "application/json"
    response.headers["Cache-Control"] = "no-store"
    for key, value in extra.items():
        response.headers[key] = value
    return response
