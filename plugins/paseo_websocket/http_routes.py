"""Plain HTTP requests on the WebSocket listener: mounted ASGI apps (the MCP server for agents).

The websockets server reads only ``GET`` upgrade requests; streamable-HTTP MCP needs ``POST``
bodies and streamed answers on the same port and behind the same trust model. So each new
TCP connection's request line is looked at first: when the host has an app mounted for its
path, the raw connection is handed, with the bytes already read, to uvicorn's HTTP/1.1
protocol serving that app; every other connection continues as a WebSocket connection,
untouched. Routing costs one ``find`` on the first packet of each connection.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, MutableMapping
from typing import TYPE_CHECKING, Any

from paseo_hookspecs.http import AsgiApp, AsgiReceive, AsgiScope, AsgiSend

from paseo_websocket.connection import SessionConnection

if TYPE_CHECKING:
    # Imported on the first diverted connection, never on the daemon's path to ready.
    from uvicorn.config import Config
    from uvicorn.protocols.http.h11_impl import H11Protocol
    from uvicorn.server import ServerState

log = logging.getLogger("paseo.websocket.http")

MAX_REQUEST_LINE = 8192
"""Bytes read before giving up looking for the request line; the WebSocket parser takes over
(and refuses what it cannot read)."""

Lookup = Callable[[str], AsgiApp | None]


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

    def __init__(self, lookup: Lookup) -> None:
        self.lookup = lookup
        self.state: ServerState | None = None
        self._configs: dict[int, Config] = {}

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
                self._decided, self._sniffed = True, b""
                path = _path(buffered[:end]) if end >= 0 else None
                app = routes.lookup(path) if path is not None else None
                if app is None:
                    super().data_received(buffered)
                    return
                self._divert(routes.protocol_for(app), buffered)

            def _divert(self, protocol: H11Protocol, buffered: bytes) -> None:
                transport = self.transport
                transport.set_protocol(protocol)
                protocol.connection_made(transport)
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
