"""Internal agents (the daemon's own helpers) get no MCP tools: the agent port gives their
sessions no server, and a valid token naming one is refused (401) all the same."""

from __future__ import annotations

import asyncio
from collections.abc import MutableMapping
from pathlib import Path
from typing import Any, cast

from paseo_hookspecs.errors import NotFound
from paseo_hookspecs.records import AgentRecord
from paseo_mcp.daemon import Ports
from paseo_mcp.guard import CALLER_SCOPE_KEY, TokenGuard
from paseo_mcp.settings import McpSettings
from paseo_mcp.tokens import CapabilityTokens

HELPER = "aaaa1111-0000-4000-8000-000000000001"
WORKER = "bbbb2222-0000-4000-8000-000000000002"


def _record(agent_id: str, *, internal: bool) -> AgentRecord:
    return AgentRecord(
        id=agent_id,
        provider="claude",
        cwd="/w",
        createdAt="2026-01-01T00:00:00.000Z",
        updatedAt="2026-01-01T00:00:00.000Z",
        internal=internal,
    )


class Agents:
    async def get(self, reference: str) -> AgentRecord:
        if reference == HELPER:
            return _record(HELPER, internal=True)
        if reference == WORKER:
            return _record(WORKER, internal=False)
        raise NotFound(reference)


def _status(guard: TokenGuard, token: str) -> tuple[int, Any]:
    sent: list[dict[str, Any]] = []
    reached: list[Any] = []

    async def app(scope: MutableMapping[str, Any], receive: Any, send: Any) -> None:
        reached.append(scope[CALLER_SCOPE_KEY])

    async def send(message: MutableMapping[str, Any]) -> None:
        assert isinstance(message, dict)
        sent.append(message)

    async def receive() -> MutableMapping[str, Any]:
        return {"type": "http.request", "body": b""}

    scope = {"type": "http", "query_string": f"token={token}".encode(), "headers": []}
    async def request() -> None:
        await guard.guarded(app)(scope, receive, send)

    asyncio.run(request())
    status = next((m["status"] for m in sent if m["type"] == "http.response.start"), 200)
    return status, reached[0] if reached else None


def test_a_token_of_an_internal_agent_is_refused(tmp_path: Path) -> None:
    tokens = CapabilityTokens.rotate(tmp_path)
    ports = Ports(agents=cast(Any, Agents()), settings=McpSettings)
    guard = TokenGuard(ports, tokens, lambda path: None)
    assert _status(guard, tokens.issue(HELPER)) == (401, None)
    status, caller = _status(guard, tokens.issue(WORKER))
    assert status == 200
    assert caller.agent_id == WORKER
