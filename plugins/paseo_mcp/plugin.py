"""The MCP plugin's hooks: mount the server when the daemon offers an MCP host."""

from __future__ import annotations

from typing import TYPE_CHECKING

from paseo_hookspecs import hookimpl
from paseo_hookspecs.mcp_host import MCP_PATH, McpHostSource

if TYPE_CHECKING:
    from paseo_hookspecs.context import DaemonContext

    from paseo_mcp.server import McpApp


class McpPlugin:
    def __init__(self) -> None:
        self._app: McpApp | None = None

    @hookimpl
    def paseo_startup(self, context: DaemonContext) -> None:
        # No host: `daemon.mcp.enabled` is false, `--no-mcp`, or the daemon has no TCP listener.
        if not isinstance(context, McpHostSource) or context.mcp_host is None:
            return
        from paseo_mcp.server import McpApp

        self._app = McpApp(context.mcp_host, context.version)
        self._app.start()
        context.mcp_host.mount_http(MCP_PATH, self._app)

    @hookimpl
    def paseo_shutdown(self, context: DaemonContext) -> None:
        app, self._app = self._app, None
        if app is not None:
            app.request_stop()


plugin = McpPlugin()
