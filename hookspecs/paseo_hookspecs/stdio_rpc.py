"""Line-framed JSON-RPC over an agent program's stdio, for providers that speak it.

Codex's ``app-server`` and every Agent Client Protocol agent exchange one JSON object per line in
both directions: the client sends requests (``turn/start``, ``session/prompt``), the program
sends requests back (approval prompts), and both send notifications. Ids may be any JSON value
including ``0``, so a message is a request or a response by the *presence* of its keys, never by
the truthiness of its id. Codex leaves out the ``"jsonrpc": "2.0"`` member; ACP requires it
(``jsonrpc_field``).

One reader task owns stdout. Notifications and incoming requests are dispatched inline, in
arrival order, so a session sees the program's notifications and the final response of a
request in the program's order; a handler therefore must not wait for an answer from the
program: it records what it needs and answers later through :meth:`StdioJsonRpc.respond`.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from paseo_hookspecs.process import AgentProcess

log = logging.getLogger("paseo_hookspecs.stdio_rpc")

METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603

RequestHandler = Callable[[Any, str, dict[str, Any]], Awaitable[None]]
"""``(request_id, method, params)``; answer later with :meth:`StdioJsonRpc.respond`."""

NotificationHandler = Callable[[str, dict[str, Any]], Awaitable[None]]
ClosedHandler = Callable[[], Awaitable[None]]


def host_version() -> str:
    """The installed Paseo version, for the ``clientInfo`` a provider sends its program (``"0"``
    when no ``paseo`` distribution is installed, e.g. a provider tested on its own)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("paseo")
    except PackageNotFoundError:
        return "0"


class RpcError(Exception):
    """The program answered a request with a JSON-RPC error."""

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
    """The program's stdout ended (it exited) before the answer arrived, or it is gone."""


class StdioJsonRpc:
    """Requests, responses and notifications in both directions over one
    :class:`~paseo_hookspecs.process.AgentProcess`. Call :meth:`start` to begin reading.

    ``program`` names the peer in error messages (``"the Codex process"``).
    """

    def __init__(
        self,
        process: AgentProcess,
        *,
        on_request: RequestHandler,
        on_notification: NotificationHandler,
        on_closed: ClosedHandler,
        jsonrpc_field: bool = True,
        program: str = "the agent program",
    ) -> None:
        self.process = process
        self._on_request = on_request
        self._on_notification = on_notification
        self._on_closed = on_closed
        self._envelope: dict[str, Any] = {"jsonrpc": "2.0"} if jsonrpc_field else {}
        self._gone = f"{program} has exited"
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self._closed = False
        self._reader: asyncio.Task[None] | None = None

    @property
    def closed(self) -> bool:
        """True once stdout ended; every later request fails with :class:`ConnectionLost`."""
        return self._closed

    def start(self) -> None:
        """Start reading the program's stdout."""
        if self._reader is None:
            self._reader = asyncio.create_task(self._read_loop(), name="stdio-rpc-reader")

    async def stop(self) -> None:
        """Stop reading (the caller terminates the process) and fail pending requests."""
        if self._reader is not None and not self._reader.done():
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reader
        self._fail_pending()

    async def send_request(self, method: str, params: dict[str, Any]) -> asyncio.Future[Any]:
        """Write a request and return the future of its result without waiting for it; the
        future fails with :class:`RpcError` or :class:`ConnectionLost`."""
        if self._closed:
            raise ConnectionLost(self._gone)
        request_id = next(self._ids)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        try:
            await self.process.write_line(
                {**self._envelope, "id": request_id, "method": method, "params": params}
            )
        except (BrokenPipeError, ConnectionResetError) as exc:
            self._pending.pop(request_id, None)
            raise ConnectionLost(self._gone) from exc
        return future

    async def request(self, method: str, params: dict[str, Any], *, timeout: float | None) -> Any:  # noqa: ASYNC109
        """Send a request and return its ``result``, waiting at most ``timeout`` seconds
        (``None``: no limit). Raises :class:`RpcError`, :class:`ConnectionLost` or
        ``TimeoutError``."""
        future = await self.send_request(method, params)
        try:
            return await asyncio.wait_for(asyncio.shield(future), timeout)
        except TimeoutError:
            future.cancel()
            raise

    async def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        """Send a notification; :class:`ConnectionLost` when the program is gone."""
        message: dict[str, Any] = {**self._envelope, "method": method}
        if params is not None:
            message["params"] = params
        await self._write(message)

    async def respond(self, request_id: Any, result: Any) -> None:
        """Answer an incoming request; :class:`ConnectionLost` when the program is gone."""
        await self._write({**self._envelope, "id": request_id, "result": result})

    async def respond_error(self, request_id: Any, code: int, message: str) -> None:
        """Refuse an incoming request; :class:`ConnectionLost` when the program is gone."""
        await self._write(
            {**self._envelope, "id": request_id, "error": {"code": code, "message": message}}
        )

    async def _write(self, message: dict[str, Any]) -> None:
        if self._closed:
            raise ConnectionLost(self._gone)
        try:
            await self.process.write_line(message)
        except (BrokenPipeError, ConnectionResetError) as exc:
            raise ConnectionLost(self._gone) from exc

    async def _read_loop(self) -> None:
        try:
            while (line := await self.process.read_line()) is not None:
                if line.strip():
                    await self._dispatch(line)
        except asyncio.CancelledError:
            # stop(): the caller is tearing down and must not hear of an unexpected exit.
            self._fail_pending()
            raise
        except Exception:
            # A reading failure must not leave requests hanging: treat it as the end of stream.
            log.exception("reading %s (agent %s) failed", self._gone, self.process.agent_id)
        self._fail_pending()
        try:
            await self._on_closed()
        except Exception:
            log.exception("close handler failed (agent %s)", self.process.agent_id)

    def _fail_pending(self) -> None:
        self._closed = True
        pending, self._pending = self._pending, {}
        for future in pending.values():
            if not future.done():
                future.set_exception(ConnectionLost(self._gone))
                # Nobody may be waiting any more (an abandoned turn): avoid "never retrieved".
                future.exception()

    async def _dispatch(self, line: bytes) -> None:
        try:
            message = json.loads(line)
        except ValueError:
            # Programs sometimes print logs to stdout; the protocol lines are still intact.
            log.debug("non-JSON line from agent %s: %.200r", self.process.agent_id, line)
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
            log.exception("handling %s from agent %s failed", method, self.process.agent_id)
            with contextlib.suppress(ConnectionLost):
                await self.respond_error(
                    request_id, INTERNAL_ERROR, str(exc) or type(exc).__name__
                )

    async def _handle_notification(self, method: str, params: dict[str, Any]) -> None:
        try:
            await self._on_notification(method, params)
        except Exception:  # one bad notification must not kill the connection
            log.exception("handling %s from agent %s failed", method, self.process.agent_id)

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


__all__ = [
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "METHOD_NOT_FOUND",
    "ClosedHandler",
    "ConnectionLost",
    "NotificationHandler",
    "RequestHandler",
    "RpcError",
    "StdioJsonRpc",
    "host_version",
]
