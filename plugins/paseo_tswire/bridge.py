"""The connection's session of the daemon: opened once, with the connection's admitted kind.

Each TypeScript connection owns an :class:`RpcBridge`: a session opened through
:meth:`paseo_hookspecs.transport.TransportHost.open_session` with the kind the daemon admitted,
whose :class:`~paseo_hookspecs.transport.Channel` is this object. Agent work goes through the
session's agent port (:attr:`RpcBridge.agents`, ``SessionHandle.agents``: typed calls with the
session's access, no frames). The rooms that have no typed port yet (workspaces, projects,
worktrees, terminals, schedules, providers, presence, ``server.*``) still call the session's
JSON-RPC methods with :meth:`RpcBridge.call`: requests go in as frames, answers resolve the
caller's future, and notifications of the streams it follows are queued for the owner (so a
handler that calls the daemon while handling a notification never waits on its own writer).
Either way, access rules and limits are the session's, identical to ``/ws``
(``docs/ts-clients.md``, "Trust").
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from paseo_hookspecs.agents import Agents
from paseo_hookspecs.transport import Observed, SessionHandle, SessionLimits, TransportHost

log = logging.getLogger("paseo.tswire")

Notify = Callable[[str, dict[str, Any]], Awaitable[None]]
"""Called, in order, with each notification's method and params."""

QUEUE_LIMIT = 10_000
"""Notifications held for a client that does not read; beyond this many, or beyond the
session's ``outbound_bytes`` of their frames, ``on_overflow`` is called (the session closes
that client's socket: it reconnects and refetches)."""


class RpcFailure(Exception):
    """A JSON-RPC error answer: ``code`` is ``error.data.code`` (``not_found``, …)."""

    def __init__(self, code: str, message: str, data: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data or {}


class BridgeClosed(RpcFailure):
    """The daemon closed the in-process session (shutting down, or the bridge was closed)."""

    def __init__(self, reason: str) -> None:
        super().__init__("shutting_down", reason)


class RpcBridge:
    """See the module docstring. ``notify`` receives every notification in order."""

    def __init__(
        self,
        host: TransportHost,
        *,
        kind: str,
        observed: Observed,
        limits: SessionLimits,
        notify: Notify,
        on_overflow: Callable[[], None] | None = None,
    ) -> None:
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self._notify = notify
        # Unbounded for the end marker only: notifications are bounded in count and bytes below.
        self._notifications: asyncio.Queue[tuple[str, dict[str, Any], int] | None] = asyncio.Queue()
        self._queued_bytes = 0
        self._byte_limit = limits.outbound_bytes
        self._on_overflow = on_overflow
        self._closed: str | None = None
        self._session: SessionHandle = host.open_session(
            kind=kind, channel=self, observed=observed, limits=limits
        )
        loop = asyncio.get_running_loop()
        self._runner = loop.create_task(self._session.run())
        self._pump = loop.create_task(self._deliver())

    @property
    def closed(self) -> bool:
        return self._closed is not None

    @property
    def agents(self) -> Agents:
        """The agent port with this session's access (its subscriptions end with it)."""
        return self._session.agents

    # ------------------------------------------------------------------ channel

    async def send(self, text: str) -> None:
        """One outbound JSON-RPC frame of the in-process session."""
        message = json.loads(text)
        if "id" in message and ("result" in message or "error" in message):
            future = self._pending.pop(message["id"], None) if message["id"] is not None else None
            if future is None or future.done():
                return
            if "error" in message:
                error = message["error"]
                data = error.get("data") or {}
                future.set_exception(
                    RpcFailure(str(data.get("code", "internal_error")), error["message"], data)
                )
            else:
                future.set_result(message["result"])
            return
        method = message.get("method")
        if not isinstance(method, str):
            return
        size = len(text)
        queued = self._notifications.qsize()
        if queued >= QUEUE_LIMIT or (queued and self._queued_bytes + size > self._byte_limit):
            # Never block the daemon's writer: an answer this session waits for may be behind.
            self._drain()
            if self._on_overflow is not None:
                self._on_overflow()
            return
        self._queued_bytes += size
        self._notifications.put_nowait((method, message.get("params") or {}, size))

    def _drain(self) -> None:
        while not self._notifications.empty():
            self._notifications.get_nowait()
        self._queued_bytes = 0

    async def close(self, code: int, reason: str) -> None:
        """The daemon closed the session (see :class:`BridgeClosed`)."""
        self._fail_all(f"{reason} ({code})")

    # ------------------------------------------------------------------ calls

    async def call(self, method: str, params: dict[str, Any] | None = None) -> Any:
        """Call ``method``; return its result or raise :class:`RpcFailure`."""
        if self._closed is not None:
            raise BridgeClosed(self._closed)
        request_id = next(self._ids)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        frame = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params or {}}
        self._session.receive(json.dumps(frame))
        try:
            return await future
        finally:
            self._pending.pop(request_id, None)

    async def hello(self, client_id: str, client_type: str, version: str) -> dict[str, Any]:
        """``server.hello`` with the TypeScript client's identity."""
        kind = client_type if client_type in ("cli", "browser", "mobile", "mcp") else "other"
        result: dict[str, Any] = await self.call(
            "server.hello", {"clientId": client_id, "clientType": kind, "version": version}
        )
        return result

    async def aclose(self) -> None:
        """Close the session and wait for its writer (idempotent)."""
        self._fail_all("the connection closed")
        self._session.connection_lost()
        self._notifications.put_nowait(None)
        for task in (self._runner, self._pump):
            with contextlib.suppress(asyncio.CancelledError):
                await task

    def _fail_all(self, reason: str) -> None:
        if self._closed is None:
            self._closed = reason
        for future in self._pending.values():
            if not future.done():
                future.set_exception(BridgeClosed(reason))
        self._pending.clear()

    async def _deliver(self) -> None:
        while (item := await self._notifications.get()) is not None:
            method, params, size = item
            self._queued_bytes -= size
            try:
                await self._notify(method, params)
            except Exception:  # a push that cannot be translated must not stop the others
                log.exception("tswire: cannot forward %s", method)
