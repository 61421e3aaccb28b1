"""The MCP plugin's hooks: mount the server when the daemon offers an MCP host.

The SDK (and what it pulls in: starlette, an HTTP client, JSON Schema, telemetry) is imported
on the first MCP request, in a thread, not at start-up: importing it before the daemon is ready
doubled start-to-ready (``bench/daemon.py``) for a server most runs call late or never.
"""

from __future__ import annotations

import asyncio
import importlib
from typing import TYPE_CHECKING

from paseo_hookspecs import hookimpl
from paseo_hookspecs.mcp_host import (
    MCP_PATH,
    AsgiReceive,
    AsgiScope,
    AsgiSend,
    McpHost,
    McpHostSource,
)

if TYPE_CHECKING:
    from paseo_hookspecs.context import DaemonContext

    from paseo_mcp.server import McpApp


class LazyMcpApp:
    """The mounted ASGI app: builds the SDK server on its first request."""

    def __init__(self, host: McpHost, version: str) -> None:
        self._host = host
        self._version = version
        self._app: McpApp | None = None
        self._lock = asyncio.Lock()

    async def __call__(self, scope: AsgiScope, receive: AsgiReceive, send: AsgiSend) -> None:
        app = self._app or await self._load()
        await app(scope, receive, send)

    async def _load(self) -> McpApp:
        async with self._lock:
            if self._app is None:
                module = await asyncio.to_thread(importlib.import_module, "paseo_mcp.server")
                app: McpApp = module.McpApp(self._host, self._version)
                app.start()
                self._app = app
            return self._app

    def request_stop(self) -> None:
        if self._app is not None:
            self._app.request_stop()


class McpPlugin:
    def __init__(self) -> None:
        self._app: LazyMcpApp | None = None
        self._host: McpHost | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    @hookimpl
    def paseo_startup(self, context: DaemonContext) -> None:
        # No host: `daemon.mcp.enabled` is false.
        if not isinstance(context, McpHostSource) or context.mcp_host is None:
            return
        self._host = context.mcp_host
        self._app = LazyMcpApp(context.mcp_host, context.version)
        context.mcp_host.mount_http(MCP_PATH, self._app)

    @hookimpl
    def paseo_shutdown(self, context: DaemonContext) -> None:
        app, self._app, self._host = self._app, None, None
        if app is not None:
            app.request_stop()
        # Queued notices are durable: an unfinished delivery happens on the next start.
        for task in list(self._tasks):
            task.cancel()

    @hookimpl
    def paseo_attention(self, agent_id: str, reason: str, timestamp: str) -> None:
        # Called synchronously on the daemon's loop: the host's work runs in a task.
        if self._host is None:
            return
        attention = self._host.agent_attention(agent_id, reason, timestamp)
        task = asyncio.get_running_loop().create_task(attention)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)


plugin = McpPlugin()
