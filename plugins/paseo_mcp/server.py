"""The MCP server (the official ``mcp`` SDK, streamable HTTP) over the tool catalog.

Stateless with JSON answers: every POST is one self-contained exchange, so nothing is held per
agent between calls and a daemon restart loses no MCP state. The caller is the one the token
guard identified (:data:`paseo_mcp.guard.CALLER_SCOPE_KEY`); its provider's policy filters
``tools/list`` and refuses a filtered tool in ``tools/call``.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from paseo_hookspecs.errors import PaseoError
from paseo_hookspecs.http import AsgiReceive, AsgiScope, AsgiSend
from pydantic import ValidationError

from paseo_mcp.caller import McpCaller
from paseo_mcp.guard import CALLER_SCOPE_KEY
from paseo_mcp.handlers import Tooling
from paseo_mcp.tools import TOOLS, ToolSpec, input_schema

log = logging.getLogger("paseo.plugins.mcp")


def _caller(ctx: ServerRequestContext[Any, Any]) -> McpCaller:
    request = ctx.request
    scope = getattr(request, "scope", None)
    caller = scope.get(CALLER_SCOPE_KEY) if isinstance(scope, dict) else None
    if not isinstance(caller, McpCaller):  # the guard refuses requests it cannot identify
        raise PaseoError("the request carries no caller")
    return caller


def _error(code: str, message: str) -> types.CallToolResult:
    text = json.dumps({"error": {"code": code, "message": message}})
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True)


def _result(data: Any) -> types.CallToolResult:
    text = json.dumps(data, ensure_ascii=False, default=str)
    structured = data if isinstance(data, dict) else {"result": data}
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)], structured_content=structured
    )


class McpApp:
    """The ASGI app mounted at ``/mcp/agents``, and the SDK session manager's lifetime."""

    def __init__(
        self, tooling: Tooling, version: str, contributed: tuple[ToolSpec, ...] = ()
    ) -> None:
        self._tooling = tooling
        self._tools = (*TOOLS, *contributed)
        """The catalog, then the tools other plugins registered (:mod:`paseo_mcp.contributed`)."""
        self._by_name = {tool.name: tool for tool in self._tools}
        self._server: Server[Any] = Server(
            "paseo",
            version=version,
            instructions=(
                "Paseo: start, steer and wait for sub-agents; schedules; worktrees; "
                "chat rooms and loops."
            ),
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
        )
        self._manager = StreamableHTTPSessionManager(
            app=self._server,
            json_response=True,
            stateless=True,
            # Host and Origin were screened by the daemon, as for /ws.
            security_settings=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        )
        self._running: asyncio.Task[None] | None = None
        self._stop = asyncio.Event()
        self._ready = asyncio.Event()

    async def __call__(self, scope: AsgiScope, receive: AsgiReceive, send: AsgiSend) -> None:
        await self._ready.wait()
        await self._manager.handle_request(scope, receive, send)

    def start(self) -> None:
        self._running = asyncio.get_running_loop().create_task(self._run(), name="paseo-mcp")

    async def _run(self) -> None:
        async with self._manager.run():
            self._ready.set()
            await self._stop.wait()

    def request_stop(self) -> None:
        """End the SDK's task group (the shutdown hook is synchronous; the task finishes on
        the loop, cancelling any exchange still running)."""
        self._stop.set()

    async def _list_tools(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        policy = _caller(ctx).policy
        return types.ListToolsResult(
            tools=[
                types.Tool(
                    name=tool.name, description=tool.description, input_schema=input_schema(tool)
                )
                for tool in self._tools
                if policy.offers(tool.name)
            ]
        )

    async def _call_tool(
        self, ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        caller = _caller(ctx)
        tool = self._by_name.get(params.name)
        if tool is None or not caller.policy.offers(params.name):
            return _error("not_found", f"no tool {params.name!r} is offered to this agent")
        try:
            args = tool.input.model_validate(params.arguments or {})
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in e['loc']) or 'input'}: {e['msg']}"
                for e in exc.errors(include_url=False, include_input=False)
            )
            return _error("invalid_params", f"invalid input for {tool.name}: {problems}")
        try:
            return _result(await tool.run(self._tooling, caller, args))
        except PaseoError as exc:
            return _error(exc.code, exc.message)
