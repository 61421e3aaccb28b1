"""The execution's MCP server (``mcpServers.hub``): streamable HTTP, JSON answers only.

An agent ends its execution by calling ``finish_execution``; the Hub then archives the agent
(``archive`` control, when the execution auto-archives) or stops it (``interrupt``, when the
agent reports failure).
"""

from __future__ import annotations

from typing import Any, Protocol

from paseo.testing.fake_hub.http import Request, response
from paseo.testing.fake_hub.state import Execution


class Hub(Protocol):
    """What the endpoint needs of the fake Hub (a Protocol: the Hub module imports this one)."""

    @property
    def executions(self) -> dict[str, Execution]: ...

    def spawn_control(self, daemon_id: str, execution_id: str, action: str) -> None: ...

    def changed(self) -> None: ...

FINISH_TOOL = {
    "name": "finish_execution",
    "description": "Report that the execution is done, with its outcome and a summary.",
    "inputSchema": {
        "type": "object",
        "properties": {
            "status": {"type": "string", "enum": ["succeeded", "failed"]},
            "summary": {"type": "string"},
        },
        "required": ["summary"],
    },
}


def _result(request_id: Any, result: dict[str, Any]) -> bytes:
    return response(200, {"jsonrpc": "2.0", "id": request_id, "result": result})


def _error(request_id: Any, code: int, message: str) -> bytes:
    body = {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}
    return response(200, body)


async def handle(hub: Hub, request: Request, execution_id: str) -> bytes:
    execution = hub.executions.get(execution_id)
    if execution is None or request.bearer() != execution.completion_token:
        return response(401, {"error": "unauthorized"})
    if request.method != "POST":
        return response(405, {"error": "method not allowed"})
    try:
        call = request.json()
    except ValueError:
        return response(400, {"error": "invalid JSON"})
    if not isinstance(call, dict):
        return response(400, {"error": "batches are not supported"})
    if "id" not in call:
        return response(202)  # a notification (notifications/initialized, …)
    method, request_id = call.get("method"), call["id"]
    if method == "initialize":
        params = call.get("params") or {}
        return _result(
            request_id,
            {
                "protocolVersion": params.get("protocolVersion", "2025-03-26"),
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "paseo-fake-hub", "version": "1"},
            },
        )
    if method == "ping":
        return _result(request_id, {})
    if method == "tools/list":
        return _result(request_id, {"tools": [FINISH_TOOL]})
    if method == "tools/call":
        params = call.get("params") or {}
        if params.get("name") != "finish_execution":
            return _error(request_id, -32602, f"unknown tool {params.get('name')!r}")
        arguments = params.get("arguments") or {}
        execution.finish = dict(arguments)
        failed = arguments.get("status") == "failed"
        execution.state = "failed" if failed else "finished"
        execution.failure = "agent_failed" if failed else None
        action = "interrupt" if failed else ("archive" if execution.auto_archive else None)
        if action is not None:
            execution.pending_control = action
            hub.spawn_control(execution.daemon_id, execution_id, action)
        hub.changed()
        text = "Execution finished." if not failed else "Execution marked as failed."
        return _result(request_id, {"content": [{"type": "text", "text": text}]})
    return _error(request_id, -32601, f"unknown method {method!r}")
