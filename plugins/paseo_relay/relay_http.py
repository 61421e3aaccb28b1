"""The HTTP surface of ``paseo relay serve``, as the Cloudflare Worker answers it
(``cloudflare-adapter.ts``, its ``fetch``): ``GET /health`` is ``{"status":"ok"}``;
``GET /ws?serverId=…&role=server|client&v=2[&connectionId=…]`` upgrades (400 for a missing
serverId or role or a ``v`` other than 1 or 2, 426 without ``Upgrade: websocket``, checked in
that order); anything else is 404. Past a bound of :class:`RelayLimits` the answer is 503.
"""

from __future__ import annotations

import asyncio
import http
from urllib.parse import parse_qs, urlsplit

from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.http11 import Request, Response

from paseo_relay.relay_server import Relay, RelayLimits

MAX_ID = 256
"""Longest serverId or connectionId accepted (the Worker has none; ids are short)."""


def _version(raw: list[str] | None) -> str | None:
    """``1`` (also for a missing or empty ``v``), ``2``, or ``None`` for anything else."""
    value = raw[0].strip() if raw else ""
    if not value:
        return "1"
    return value if value in ("1", "2") else None


def _reject(connection: ServerConnection, status: int, text: str) -> Response:
    return connection.respond(http.HTTPStatus(status), text)


class RelayHttp:
    """``process_request`` for the websockets server: answers plain HTTP, checks the socket
    parameters and stores them for :meth:`handler`."""

    def __init__(self, relay: Relay) -> None:
        self.relay = relay
        self._params: dict[ServerConnection, tuple[str, str, str, str]] = {}

    def process_request(self, connection: ServerConnection, request: Request) -> Response | None:
        url = urlsplit(request.path)
        if url.path == "/health":
            response = connection.respond(http.HTTPStatus.OK, '{"status":"ok"}')
            del response.headers["Content-Type"]
            response.headers["Content-Type"] = "application/json"
            return response
        if url.path != "/ws":
            return _reject(connection, 404, "Not found")
        query = parse_qs(url.query)
        server_id = (query.get("serverId") or [""])[0]
        if not server_id:
            return _reject(connection, 400, "Missing serverId parameter")
        version = _version(query.get("v"))
        if version is None:
            return _reject(connection, 400, "Invalid v parameter (expected 1 or 2)")
        role = (query.get("role") or [""])[0]
        if role not in ("server", "client"):
            return _reject(connection, 400, "Missing or invalid role parameter")
        connection_id = (query.get("connectionId") or [""])[0].strip()
        if len(server_id) > MAX_ID or len(connection_id) > MAX_ID:
            return _reject(connection, 400, "Parameter too long")
        upgrade = request.headers.get("Upgrade", "")
        if upgrade.lower() != "websocket":
            return _reject(connection, 426, "Expected WebSocket upgrade")
        refused = self.relay.admit(version, server_id, role, connection_id)
        if refused is not None:
            return _reject(connection, 503, refused)
        self._params[connection] = (version, server_id, role, connection_id)
        return None

    async def handler(self, connection: ServerConnection) -> None:
        params = self._params.pop(connection, None)
        if params is None:  # pragma: no cover - process_request always ran first
            return
        await self.relay.handle(connection, *params)

    def forget(self, connection: ServerConnection) -> None:
        """A handshake that failed after ``process_request`` leaves no parameters behind."""
        self._params.pop(connection, None)


async def start_relay(
    host: str, port: int, limits: RelayLimits | None = None, *, relay: Relay | None = None
) -> tuple[Server, Relay]:
    """A listening relay server (port 0 picks one: ``server.sockets[0].getsockname()``);
    ``relay`` serves instead of a new :class:`Relay` (tests observe what it forwards)."""
    relay = relay if relay is not None else Relay(limits)
    front = RelayHttp(relay)

    def process_response(
        connection: ServerConnection, request: Request, response: Response
    ) -> None:
        if response.status_code != http.HTTPStatus.SWITCHING_PROTOCOLS:
            front.forget(connection)

    server = await serve(
        front.handler,
        host,
        port,
        process_request=front.process_request,
        process_response=process_response,
        max_size=relay.limits.max_frame,
        # One frame queued per socket: the relay's memory is its sockets times a few frames.
        max_queue=1,
        write_limit=1 << 16,
        # The daemon and the apps keep their own keepalives; a dead peer is still found.
        ping_interval=30,
        ping_timeout=30,
        close_timeout=relay.limits.close_timeout,
        compression=None,
        server_header="paseo-relay",
    )
    return server, relay


async def run_relay(host: str, port: int, limits: RelayLimits, ready: asyncio.Event) -> None:
    """Serve until cancelled."""
    server, _relay = await start_relay(host, port, limits)
    ready.set()
    try:
        await server.serve_forever()
    finally:
        server.close()
        await server.wait_closed()
