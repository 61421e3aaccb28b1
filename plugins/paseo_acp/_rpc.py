"""A small JSON-RPC 2.0 peer over an agent process's newline-delimited stdio.

ACP is symmetric: the client sends requests (``session/prompt``) and the agent sends requests
back (``session/request_permission``), both sides send notifications, and every message is one
JSON object per line. Ids may be any JSON value including ``0``, so "is this a request" is
decided by the *presence* of the ``id`` key, never by its truthiness.

One reader task owns stdout. Notifications and incoming requests are dispatched inline, in the
order they arrive, so a provider sees ``session/update`` notifications and the prompt's final
response in exactly the agent's order; a request handler must therefore not block — it records
what it needs and answers later through :meth:`JsonRpcPeer.respond`.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from paseo.agents.process import AgentProcess

log = logging.getLogger("paseo_acp.rpc")

METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603

RequestHandler = Callable[[Any, str, dict[str, Any]], Awaitable[None]]
"""``(request_id, method, params)``; answer later with :meth:`JsonRpcPeer.respond`."""

NotificationHandler = Callable[[str, dict[str, Any]], Awaitable[None]]
ClosedHandler = Callable[[], Awaitable[None]]


class RpcError(Exception):
    """The peer answered a request with a JSON-RPC error."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data

    def describe(self) -> str:
        """The message plus the error data when it adds something (agents put details there)."""
        if self.data in (None, {}, ""):
            return self.message
        detail = self.data if isinstance(self.data, str) else json.dumps(self.data)
        return f"{self.message}: {detail[:500]}"


class ConnectionLost(Exception):
    """The agent's stdout ended (the program exited) before the answer arrived."""


class JsonRpcPeer:
    """Requests, responses and notifications in both directions over one :class:`AgentProcess`."""

    def __init__(
        self,
        process: AgentProcess,
        *,
        on_request: RequestHandler,
        on_notification: NotificationHandler,
        on_closed: ClosedHandler,
    ) -> None:
        self._process = process
        self._on_request = on_request
        self._on_notification = on_notification
        self._on_closed = on_closed
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self._closed = False
        self._reader: asyncio.Task[None] | None = None

    @property
    def closed(self) -> bool:
        """True once the agent's stdout has ended."""
        return self._closed

    def start(self) -> None:
        """Start reading the agent's stdout."""
        if self._reader is None:
            self._reader = asyncio.create_task(self._read_loop(), name="acp-rpc-reader")

    async def stop(self) -> None:
        """Stop reading (the process is being terminated) and fail pending requests."""
        if self._reader is not None and not self._reader.done():
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reader
        self._fail_pending()

    async def send_request(self, method: str, params: dict[str, Any]) -> asyncio.Future[Any]:
        """Write a request and return the future of its result (without waiting for it).

        The future fails with :class:`RpcError` or :class:`ConnectionLost`.
        """
        if self._closed:
            raise ConnectionLost("the agent program has exited")
        request_id = next(self._ids)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        try:
            await self._process.write_line(
                {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
            )
        except (BrokenPipeError, ConnectionResetError) as exc:
            self._pending.pop(request_id, None)
            raise ConnectionLost("the agent program has exited") from exc
        return future

    async def request(self, method: str, params: dict[str, Any], within: float | None) -> Any:
        """Send a request and wait (at most ``within`` seconds, ``None``: no limit) for its
        result."""
        future = await self.send_request(method, params)
        try:
            return await asyncio.wait_for(asyncio.shield(future), within)
        except TimeoutError:
            future.cancel()
            raise

    async def notify(self, method: str, params: dict[str, Any]) -> None:
        """Send a notification; silently dropped when the program is gone."""
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            await self._process.write_line({"jsonrpc": "2.0", "method": method, "params": params})

    async def respond(self, request_id: Any, result: Any) -> None:
        """Answer an incoming request with a result."""
        await self._send_response({"jsonrpc": "2.0", "id": request_id, "result": result})

    async def respond_error(self, request_id: Any, code: int, message: str) -> None:
        """Answer an incoming request with an error."""
        await self._send_response(
            {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}
        )

    async def _send_response(self, message: dict[str, Any]) -> None:
        # The agent may have exited while a person was deciding: the answer has nowhere to go.
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            await self._process.write_line(message)

    async def _read_loop(self) -> None:
        try:
            while (line := await self._process.read_line()) is not None:
                if line.strip():
                    await self._dispatch(line)
        finally:
            self._closed = True
            self._fail_pending()
        # Outside the finally: a cancelled reader (stop()) must not report an unexpected exit.
        await self._on_closed()

    def _fail_pending(self) -> None:
        pending, self._pending = self._pending, {}
        for future in pending.values():
            if not future.done():
                future.set_exception(ConnectionLost("the agent program has exited"))
                # Nobody may be waiting any more (an abandoned turn): avoid "never retrieved".
                future.exception()

    async def _dispatch(self, line: bytes) -> None:
        try:
            message = json.loads(line)
        except ValueError:
            # Agents sometimes print logs to stdout; the protocol lines are still intact.
            log.debug("non-JSON line from the ACP agent: %.200r", line)
            return
        if not isinstance(message, dict):
            return
        method = message.get("method")
        if isinstance(method, str):
            params = message.get("params")
            params = params if isinstance(params, dict) else {}
            if "id" in message:
                await self._handle_request(message["id"], method, params)
            else:
                await self._handle_notification(method, params)
            return
        if "id" in message:
            self._resolve(message)

    async def _handle_request(self, request_id: Any, method: str, params: dict[str, Any]) -> None:
        try:
            await self._on_request(request_id, method, params)
        except Exception as exc:  # a handler bug must not kill the connection
            log.exception("handling %s from the ACP agent failed", method)
            await self.respond_error(request_id, INTERNAL_ERROR, str(exc) or type(exc).__name__)

    async def _handle_notification(self, method: str, params: dict[str, Any]) -> None:
        try:
            await self._on_notification(method, params)
        except Exception:  # one bad notification must not kill the connection
            log.exception("handling %s from the ACP agent failed", method)

    def _resolve(self, message: dict[str, Any]) -> None:
        request_id = message.get("id")
        future = self._pending.pop(request_id, None) if isinstance(request_id, int) else None
        if future is None or future.done():
            return
        error = message.get("error")
        if isinstance(error, dict):
            code = error.get("code")
            future.set_exception(
                RpcError(
                    code if isinstance(code, int) else INTERNAL_ERROR,
                    str(error.get("message") or "error"),
                    error.get("data"),
                )
            )
        else:
            future.set_result(message.get("result"))
