"""Plugin connectors' message channels presented as the WebSocket connections the clients
drive: :class:`ChannelConnection` (asyncio, :class:`paseo.client.client.PaseoClient`) and
:class:`SyncChannelConnection` (a loop in a thread, :class:`paseo.client.light.LightClient`).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import threading
from collections.abc import AsyncIterator, Coroutine
from typing import Any, TypeVar

from paseo_hookspecs.channels import ChannelClosed, MessageChannel
from paseo_hookspecs.connectors import ClientConnector, ConnectorError
from paseo_hookspecs.errors import Unavailable
from websockets.exceptions import ConnectionClosed

T = TypeVar("T")


async def open_channel(connector: ClientConnector, host: str) -> MessageChannel:
    """``connector.connect``, its failure as :class:`Unavailable` with the connector's text."""
    try:
        return await connector.connect(host)
    except ConnectorError as exc:
        raise Unavailable(str(exc)) from None


class ChannelConnection:
    """A :class:`MessageChannel` as the part of websockets' ``ClientConnection`` that
    :class:`paseo.client.client.PaseoClient` uses (``send``, ``close``, ``async for``), ending
    with :class:`ConnectionClosed` like a socket."""

    def __init__(self, channel: MessageChannel) -> None:
        self.channel = channel
        self.ended: ChannelClosed | None = None
        """Why the channel ended, as the connector worded it."""

    async def send(self, message: str) -> None:
        try:
            await self.channel.send(message)
        except ChannelClosed as exc:
            self.ended = self.ended or exc
            raise ConnectionClosed(None, None) from None

    async def recv(self) -> str | bytes:
        try:
            return await self.channel.recv()
        except ChannelClosed as exc:
            self.ended = self.ended or exc
            raise ConnectionClosed(None, None) from None

    async def close(self) -> None:
        with contextlib.suppress(ChannelClosed):
            await self.channel.close(1000, "")

    async def __aiter__(self) -> AsyncIterator[str | bytes]:
        while True:
            try:
                yield await self.recv()
            except ConnectionClosed:
                return


class SyncChannelConnection:
    """The same for the synchronous light client: the channel lives on an event loop in a
    daemon thread of its own; ``send``/``recv(timeout)``/``close`` wait for it there."""

    def __init__(self, connector: ClientConnector, host: str) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name="paseo-connector", daemon=True
        )
        self._thread.start()
        self._connection: ChannelConnection | None = None
        self._ended: ChannelClosed | None = None
        try:
            channel = self._run(open_channel(connector, host), None)
        except BaseException:
            self._stop()
            raise
        self._connection = ChannelConnection(channel)

    @property
    def ended(self) -> ChannelClosed | None:
        return self._connection.ended if self._connection else self._ended

    def _run(self, coro: Coroutine[Any, Any, T], timeout: float | None) -> T:
        future = asyncio.run_coroutine_threadsafe(coro, self._loop)
        try:
            return future.result(timeout)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise TimeoutError from None

    def send(self, message: str) -> None:
        assert self._connection is not None
        self._run(self._connection.send(message), None)

    def recv(self, timeout: float | None = None) -> str | bytes:
        assert self._connection is not None
        return self._run(self._connection.recv(), timeout)

    def close(self) -> None:
        connection = self._connection
        if connection is not None:
            with contextlib.suppress(Exception):
                self._run(connection.close(), 5.0)
            self._ended = connection.ended  # still told after closing
            self._connection = None
        self._stop()

    def _stop(self) -> None:
        if self._loop.is_running():
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(5.0)
        if not self._loop.is_running():
            self._loop.close()
