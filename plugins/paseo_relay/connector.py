"""Our CLI as a relay client (``--host "<offer URL>"`` / ``PASEO_HOST``), as the TypeScript
CLI connects (``packages/cli/src/utils/client.ts``, ``connectViaRelayOffer``): the relay only,
``role=client``, a 15 s connect timeout, no reconnect; then the E2EE handshake
(:class:`paseo_relay.e2ee.ClientChannel`) and the daemon's JSON-RPC inside the boxes.

Failures read ``Failed to connect via relay offer: <reason>``: ``Connection timed out`` when no
daemon answered the handshake, ``Server disconnected`` when the daemon dropped the tunnel (a
tampered offer: the daemon cannot open our first box), or what the relay refused.
"""

from __future__ import annotations

import asyncio
import contextlib
import os

from paseo_hookspecs.channels import ChannelClosed, MessageChannel
from paseo_hookspecs.connectors import ClientConnector, ConnectorError
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidStatus

from paseo_relay import e2ee
from paseo_relay.offer import OfferError, is_offer_url, parse_offer_url, relay_ws_url

FAILED = "Failed to connect via relay offer"
CONNECT_TIMEOUT = 15.0
"""The TypeScript CLI's relay connect timeout (the client's own timeout may lower it)."""
MAX_MESSAGE = 64 * 1024 * 1024
"""As the direct client's bound; a box is base64 of 40 bytes more than its message."""


class RelayTunnel:
    """A :class:`MessageChannel` over one relay client socket, boxing every message."""

    def __init__(self, ws: ClientConnection, channel: e2ee.ClientChannel) -> None:
        self._ws = ws
        self._channel = channel
        self._answered = False

    def _ended(self) -> ChannelClosed:
        reason = self._ws.close_reason or "Connection closed"
        if self._ws.close_code == 1012 and not self._ws.close_reason:
            reason = "Server disconnected"
        if not self._answered:
            # Nothing ever opened: the offer's key or its daemon is wrong.
            return ChannelClosed(f"{FAILED}: {reason}")
        return ChannelClosed(f"the relay connection ended: {reason}")

    async def recv(self) -> str | bytes:
        while True:
            try:
                frame = await self._ws.recv()
            except ConnectionClosed:
                raise self._ended() from None
            try:
                received = self._channel.receive(frame)
            except e2ee.E2eeError as exc:
                await self.close(e2ee.CLOSE_CODE, str(exc))
                raise ChannelClosed(f"{FAILED}: {exc}") from None
            for outgoing in received.outgoing:
                await self._send_frame(outgoing)
            if received.message is not None:
                self._answered = True
                return received.message

    async def _send_frame(self, frame: str) -> None:
        try:
            await self._ws.send(frame)
        except ConnectionClosed:
            raise self._ended() from None

    async def send(self, frame: str | bytes) -> None:
        sealed = self._channel.send(frame)
        if sealed is not None:
            await self._send_frame(sealed)

    async def close(self, code: int = 1000, reason: str = "") -> None:
        # The Cloudflare relay never answers a Close frame: do not wait for it.
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self._ws.close(code, reason), 0.5)
        transport = self._ws.transport
        if transport is not None:
            transport.abort()


async def open_tunnel(host: str, *, timeout: float = CONNECT_TIMEOUT) -> RelayTunnel:  # noqa: ASYNC109
    """Dial the relay of the offer in ``host`` and complete the handshake within ``timeout``;
    :class:`ConnectorError` with the user's message otherwise."""
    try:
        offer = parse_offer_url(host)
        channel = e2ee.ClientChannel(offer.daemon_public_key_b64)
        url = relay_ws_url(offer.endpoint, offer.server_id, "client")
    except (OfferError, e2ee.E2eeError) as exc:
        raise ConnectorError(f"{FAILED}: {exc}") from None
    ws: ClientConnection | None = None
    try:
        async with asyncio.timeout(timeout):
            ws = await connect(
                url,
                open_timeout=None,
                max_size=MAX_MESSAGE,
                compression=None,
                ping_interval=None,
                close_timeout=0.5,
            )
            await _handshake(ws, channel)
    except TimeoutError:
        await _abort(ws)
        raise ConnectorError(f"{FAILED}: Connection timed out") from None
    except InvalidStatus as exc:
        body = exc.response.body.decode("utf-8", "replace").strip() if exc.response.body else ""
        status = exc.response.status_code
        detail = f": {body}" if body else ""
        raise ConnectorError(f"{FAILED}: the relay refused (HTTP {status}{detail})") from None
    except (OSError, InvalidHandshake) as exc:
        await _abort(ws)
        raise ConnectorError(f"{FAILED}: {_describe(exc, offer.endpoint)}") from None
    except ConnectionClosed:
        assert ws is not None
        reason = ws.close_reason or f"closed ({ws.close_code})"
        await _abort(ws)
        raise ConnectorError(f"{FAILED}: {reason}") from None
    return RelayTunnel(ws, channel)


async def _handshake(ws: ClientConnection, channel: e2ee.ClientChannel) -> None:
    """Hello on open and every second until ready; then the queued sends (none here)."""
    await ws.send(channel.hello)
    while True:
        try:
            frame = await asyncio.wait_for(ws.recv(), e2ee.HANDSHAKE_RETRY_SECONDS)
        except TimeoutError:
            again = channel.retry_hello()
            if again is not None:
                await ws.send(again)
            continue
        received = channel.receive(frame)
        for outgoing in received.outgoing:
            await ws.send(outgoing)
        if received.opened:
            return


async def _abort(ws: ClientConnection | None) -> None:
    if ws is not None and ws.transport is not None:
        ws.transport.abort()


def _describe(exc: BaseException, endpoint: str) -> str:
    if isinstance(exc, OSError):
        # asyncio words a refused connection "Connect call failed (addr)"; errno says it.
        reason = os.strerror(exc.errno) if exc.errno else (exc.strerror or str(exc))
        return f"cannot reach the relay at {endpoint}: {reason}"
    return str(exc) or type(exc).__name__


class RelayConnector(ClientConnector):
    """The connector for offer URLs (anything with ``#offer=``)."""

    name = "relay"

    def accepts(self, host: str) -> bool:
        return is_offer_url(host)

    async def connect(self, host: str) -> MessageChannel:
        return await open_tunnel(host)
