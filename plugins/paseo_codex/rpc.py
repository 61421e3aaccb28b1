"""Codex's app-server wire: newline-delimited JSON-RPC on stdio without a ``"jsonrpc"`` field.

Both sides send requests: the client calls ``thread/start`` or ``turn/start``; the server calls
back with approval requests (``item/commandExecution/requestApproval``, …). Server request ids
start at ``0``, so a message is a request or a response by the *presence* of its keys, never by
the truthiness of its id.

One reader task owns stdout and dispatches notifications and server requests inline, in arrival
order, so a session sees ``item/*`` notifications and ``turn/completed`` in Codex's order.
Handlers therefore must not wait for a response from Codex: they record what they need and
answer later through :meth:`CodexConnection.respond`.
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

log = logging.getLogger("paseo_codex.rpc")

METHOD_NOT_FOUND = -32601

NotificationHandler = Callable[[str, dict[str, Any]], Awaitable[None]]
RequestHandler = Callable[[Any, str, dict[str, Any]], Awaitable[None]]
"""``(request_id, method, params)``; the handler answers later with ``respond``."""
ClosedHandler = Callable[[], Awaitable[None]]


class RpcError(Exception):
    """Codex answered a request with a JSON-RPC error."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class ConnectionLost(Exception):
    """Codex's stdout ended (the program exited) before the answer arrived."""


class CodexConnection:
    """The client end of one ``codex app-server`` process."""

    def __init__(
        self,
        process: AgentProcess,
        *,
        on_notification: NotificationHandler,
        on_request: RequestHandler,
        on_closed: ClosedHandler,
    ) -> None:
        self.process = process
        self._on_notification = on_notification
        self._on_request = on_request
        self._on_closed = on_closed
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self._closed = False
        self._reader = asyncio.create_task(self._read_loop())

    @property
    def closed(self) -> bool:
        """True once stdout ended; every later request fails with :class:`ConnectionLost`."""
        return self._closed

    async def request(self, method: str, params: dict[str, Any], *, timeout: float) -> Any:  # noqa: ASYNC109
        """Send a request and return its ``result``.

        Raises :class:`RpcError` for an error answer, :class:`ConnectionLost` when the program
        is gone and ``TimeoutError`` when no answer came within ``timeout`` seconds.
        """
        if self._closed:
            raise ConnectionLost("the Codex process has exited")
        request_id = next(self._ids)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        try:
            try:
                await self.process.write_line(
                    {"id": request_id, "method": method, "params": params}
                )
            except (BrokenPipeError, ConnectionResetError) as exc:
                raise ConnectionLost("the Codex process has exited") from exc
            return await asyncio.wait_for(future, timeout)
        finally:
            self._pending.pop(request_id, None)

    async def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        """Send a notification (no answer expected)."""
        message: dict[str, Any] = {"method": method}
        if params is not None:
            message["params"] = params
        await self._write(message)

    async def respond(self, request_id: Any, result: dict[str, Any]) -> None:
        """Answer a server request."""
        await self._write({"id": request_id, "result": result})

    async def respond_error(self, request_id: Any, code: int, message: str) -> None:
        """Refuse a server request."""
        await self._write({"id": request_id, "error": {"code": code, "message": message}})

    async def _write(self, message: dict[str, Any]) -> None:
        if self._closed:
            raise ConnectionLost("the Codex process has exited")
        try:
            await self.process.write_line(message)
        except (BrokenPipeError, ConnectionResetError) as exc:
            raise ConnectionLost("the Codex process has exited") from exc

    async def stop(self) -> None:
        """Stop reading (the caller terminates the process)."""
        if not self._reader.done():
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reader

    async def _read_loop(self) -> None:
        try:
            while (line := await self.process.read_line()) is not None:
                if line.strip():
                    await self._dispatch(line)
        except asyncio.CancelledError:
            self._fail_pending()
            raise
        except Exception:
            # A handler bug must not leave requests hanging: treat it like the end of stream.
            log.exception("Codex reader failed (agent %s)", self.process.agent_id)
        self._fail_pending()
        try:
            await self._on_closed()
        except Exception:
            log.exception("Codex close handler failed (agent %s)", self.process.agent_id)

    def _fail_pending(self) -> None:
        self._closed = True
        for future in self._pending.values():
            if not future.done():
                future.set_exception(ConnectionLost("the Codex process has exited"))

    async def _dispatch(self, line: bytes) -> None:
        try:
            message = json.loads(line)
        except ValueError:
            log.debug("non-JSON line from Codex: %.200r", line)
            return
        if not isinstance(message, dict):
            return
        method = message.get("method")
        params = message.get("params")
        params = params if isinstance(params, dict) else {}
        if isinstance(method, str):
            if "id" in message:
                await self._on_request(message["id"], method, params)
            else:
                await self._on_notification(method, params)
            return
        if "id" not in message:
            return
        future = self._pending.get(message["id"])
        if future is None or future.done():
            return
        error = message.get("error")
        if isinstance(error, dict):
            future.set_exception(
                RpcError(int(error.get("code") or 0), str(error.get("message") or "error"))
            )
        else:
            future.set_result(message.get("result"))
