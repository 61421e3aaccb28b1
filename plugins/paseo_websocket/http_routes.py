"""Plain HTTP requests on the WebSocket listener: mounted ASGI apps (the MCP server for agents).

The websockets server reads only ``GET`` upgrade requests; streamable-HTTP MCP needs ``POST``
bodies and streamed answers on the same port and behind the same trust model. So each new
TCP connection's request line is looked at first: when the host has an app mounted for its
path, the raw connection is handed, with the bytes already read, to uvicorn's HTTP/1.1
protocol serving that app; every other connection continues as a WebSocket connection,
untouched. Routing costs one ``find`` on the first packet of each connection.

When the host forwards names (:class:`paseo_hookspecs.http.HttpForwarding`, the scripts
proxy), a request for no mounted path is held until its head is complete (at most
:data:`~paseo_websocket.forwarding.MAX_HEAD` bytes; websockets would read the same head under
its handshake timeout) and the host decides from its ``Host`` whether the whole connection is
relayed (forwarding.py), refused with a status, or served as usual. Mounted paths win over
forwarded names.

uvicorn's HTTP/1.1 protocol waits as long as a client likes for a request's headers and body,
and the websockets handshake timeout no longer applies once a connection is diverted. So every
diverted connection is bounded here, for every mounted app alike, before any app (or its token
check) sees a request: its headers must be complete within :data:`REQUEST_HEAD_TIMEOUT` and its
body within :data:`REQUEST_BODY_TIMEOUT` of its request line, or the connection is closed; and at
most :data:`MAX_RECEIVING` diverted connections may be receiving their request at once (a
request not yet read has proved nothing, not even a token): the next one is answered ``503``
and closed. A request once received is the app's to answer (a tool call may wait for an agent).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import Callable, MutableMapping
from typing import TYPE_CHECKING, Any

from paseo_hookspecs.http import AsgiApp, AsgiReceive, AsgiScope, AsgiSend, Forward

from paseo_websocket.connection import SessionConnection
from paseo_websocket.forwarding import MAX_HEAD, REASONS, forward, host_of, status_response

if TYPE_CHECKING:
    # Imported on the first diverted connection, never on the daemon's path to ready.
    from uvicorn.config import Config
    from uvicorn.protocols.http.h11_impl import H11Protocol
    from uvicorn.server import ServerState

log = logging.getLogger("paseo.websocket.http")

MAX_REQUEST_LINE = 8192
"""Bytes read before giving up looking for the request line; the WebSocket parser takes over
(and refuses what it cannot read)."""

REQUEST_HEAD_TIMEOUT = 10.0
"""Seconds from a diverted connection's request line until its headers are complete
(``PASEO_HTTP_HEAD_TIMEOUT`` overrides it)."""

REQUEST_BODY_TIMEOUT = 30.0
"""Seconds from a diverted connection's request line until its whole body is read
(``PASEO_HTTP_BODY_TIMEOUT`` overrides it)."""


def request_timeouts() -> tuple[float, float]:
    """The head and body deadlines, from the daemon's environment when set there (a test
    proving the deadlines need not wait out the defaults). A value that is not a positive number
    is ignored; the body deadline is never shorter than the head's, as both count from the
    request line."""
    head = _seconds("PASEO_HTTP_HEAD_TIMEOUT", REQUEST_HEAD_TIMEOUT)
    return head, max(head, _seconds("PASEO_HTTP_BODY_TIMEOUT", REQUEST_BODY_TIMEOUT))


def _seconds(variable: str, default: float) -> float:
    try:
        value = float(os.environ.get(variable) or default)
    except ValueError:
        return default
    return value if value > 0 else default

MAX_RECEIVING = 32
"""Diverted connections that may be receiving their request at once; more are answered 503."""

BUSY = (
    b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain\r\ncontent-length: 5\r\n"
    b"retry-after: 1\r\nconnection: close\r\n\r\nBusy\n"
)

Lookup = Callable[[str], AsgiApp | None]
Forwarder = Callable[[str], Forward]


def _received(protocol: H11Protocol) -> bool:
    """Whether the connection's request (headers and body) has been read."""
    cycle = getattr(protocol, "cycle", None)
    return cycle is not None and not getattr(cycle, "more_body", True)


def _headers_read(protocol: H11Protocol) -> bool:
    return getattr(protocol, "cycle", None) is not None


class _Detached(asyncio.BaseTransport):
    """What a diverted websockets connection keeps as its transport: its handshake task closes
    "its" transport when it ends, which must not touch the connection now served as HTTP."""

    def close(self) -> None:
        return None

    def abort(self) -> None:
        return None

    def is_closing(self) -> bool:
        return True

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return default


def _path(request_line: bytes) -> str | None:
    parts = request_line.split(b" ")
    if len(parts) != 3 or not parts[2].startswith(b"HTTP/1."):
        return None
    return parts[1].split(b"?", 1)[0].decode("ascii", "replace")


def _one_request(app: AsgiApp) -> AsgiApp:
    """``app`` answering with ``Connection: close``: the route was chosen from the connection's
    first request line, so a kept-alive connection must not carry a later request for another
    path (``/api/health``, ``/ws``) into the mounted app."""

    async def closing(scope: AsgiScope, receive: AsgiReceive, send: AsgiSend) -> None:
        async def send_closing(message: MutableMapping[str, Any]) -> None:
            if message.get("type") == "http.response.start":
                headers = [
                    (k, v) for k, v in message.get("headers", ()) if k.lower() != b"connection"
                ]
                message = {**message, "headers": [*headers, (b"connection", b"close")]}
            await send(message)

        await app(scope, receive, send_closing)

    return closing


class HttpRoutes:
    """The uvicorn side: one config per mounted app, one server state for every diverted
    connection (so :meth:`shutdown` reaches them all)."""

    def __init__(self, lookup: Lookup, forwarder: Forwarder | None = None) -> None:
        self.lookup = lookup
        self.forwarder = forwarder
        """Decides, from the ``Host`` of a connection's request head, whether the whole
        connection is relayed elsewhere (forwarding.py); asked before any route."""
        self.state: ServerState | None = None
        self._configs: dict[int, Config] = {}
        self._receiving: dict[H11Protocol, asyncio.BaseTransport] = {}
        self.timeouts = request_timeouts()

    def admit(self) -> bool:
        """Whether one more diverted connection may start receiving its request."""
        for protocol, transport in list(self._receiving.items()):
            if transport.is_closing() or _received(protocol):
                del self._receiving[protocol]
        return len(self._receiving) < MAX_RECEIVING

    def watch(self, protocol: H11Protocol, transport: asyncio.BaseTransport) -> None:
        """Close ``transport`` if its request is not read in time (see the module docstring)."""
        self._receiving[protocol] = transport
        loop = asyncio.get_running_loop()

        def expire(done: Callable[[H11Protocol], bool], what: str) -> None:
            if transport.is_closing() or done(protocol):
                return
            log.info("closing an HTTP connection whose request %s was not read in time", what)
            self._receiving.pop(protocol, None)
            transport.close()

        head_timeout, body_timeout = self.timeouts
        loop.call_later(head_timeout, expire, _headers_read, "head")
        loop.call_later(body_timeout, expire, _received, "body")

    def protocol_for(self, app: AsgiApp) -> H11Protocol:
        from uvicorn.config import Config
        from uvicorn.protocols.http.h11_impl import H11Protocol
        from uvicorn.server import ServerState

        if self.state is None:
            self.state = ServerState()
        config = self._configs.get(id(app))
        if config is None:
            config = Config(
                app=_one_request(app),
                lifespan="off",
                interface="asgi3",
                ws="none",
                # Proxies are the kernel's to judge (it reads X-Forwarded-For itself).
                proxy_headers=False,
                server_header=False,
                date_header=False,
                access_log=False,
                log_config=None,
            )
            config.load()
            self._configs[id(app)] = config
        return H11Protocol(config=config, server_state=self.state, app_state={})

    def connection_class(self) -> type[SessionConnection]:
        routes = self

        class RoutingConnection(SessionConnection):
            """A websockets connection that hands itself over to HTTP when its request line
            names a mounted path."""

            _sniffed = b""
            _decided = False

            def data_received(self, data: bytes) -> None:
                if self._decided:
                    super().data_received(data)
                    return
                buffered = self._sniffed + data
                end = buffered.find(b"\r\n")
                if end < 0 and len(buffered) < MAX_REQUEST_LINE:
                    self._sniffed = buffered
                    return
                path = _path(buffered[:end]) if end >= 0 else None
                app = routes.lookup(path) if path is not None else None
                # A mounted path is diverted on its request line, under the bounds below; any
                # other request's head is read to find its Host (websockets would read the same
                # head, under its handshake timeout).
                if routes.forwarder is not None and end >= 0 and app is None:
                    head_end = buffered.find(b"\r\n\r\n")
                    if head_end < 0 and len(buffered) < MAX_HEAD:
                        self._sniffed = buffered
                        return
                    host = host_of(buffered[:head_end]) if head_end >= 0 else None
                    decision = routes.forwarder(host) if host is not None else None
                    if decision is not None:
                        self._decided, self._sniffed = True, b""
                        self._forward(decision, buffered)
                        return
                self._decided, self._sniffed = True, b""
                if app is None:
                    super().data_received(buffered)
                    return
                if not routes.admit():
                    self._refuse()
                    return
                self._divert(routes.protocol_for(app), buffered)

            def _forward(self, decision: tuple[str, int] | int, buffered: bytes) -> None:
                transport = self.transport
                if isinstance(decision, int):
                    transport.write(status_response(decision, REASONS.get(decision, "Refused")))
                    transport.close()
                else:
                    forward(transport, buffered, decision)
                self.transport = _Detached()  # type: ignore[assignment]
                super().connection_lost(None)

            def _refuse(self) -> None:
                transport = self.transport
                transport.write(BUSY)
                transport.close()

            def _divert(self, protocol: H11Protocol, buffered: bytes) -> None:
                transport = self.transport
                transport.set_protocol(protocol)
                protocol.connection_made(transport)
                routes.watch(protocol, transport)
                protocol.data_received(buffered)
                self.transport = _Detached()  # type: ignore[assignment]
                # Ends the websockets side: its handshake sees no request and returns.
                super().connection_lost(None)

        return RoutingConnection

    def shutdown(self) -> None:
        """Ask every diverted connection to finish its answer and close."""
        for protocol in list(self.state.connections if self.state is not None else ()):
            with contextlib.suppress(Exception):
                protocol.shutdown()
