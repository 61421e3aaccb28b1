"""The MCP server is built while an agent program starts, not on the program's first request.

Building it imports the SDK (seconds on a loaded machine); an agent program whose first request
waits longer than its MCP connect timeout starts its turn without the server's tools.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any, cast

from paseo_hookspecs.records import AgentRecord
from paseo_mcp.daemon import Ports
from paseo_mcp.guard import MCP_PATH, TokenGuard
from paseo_mcp.plugin import LazyMcpApp
from paseo_mcp.settings import McpSettings
from paseo_mcp.tokens import CapabilityTokens

RECORD = AgentRecord(
    id="aaaa1111-0000-4000-8000-000000000001",
    provider="claude",
    cwd="/w",
    createdAt="2026-01-01T00:00:00.000Z",
    updatedAt="2026-01-01T00:00:00.000Z",
)


def _guard(app: LazyMcpApp, tmp_path: Path, settings: McpSettings) -> TokenGuard:
    ports = Ports(agents=cast(Any, None), settings=lambda: settings)
    return TokenGuard(
        ports,
        CapabilityTokens.rotate(tmp_path),
        lambda path: f"http://127.0.0.1:1{path}",
        app.warm,
    )


def test_giving_a_session_the_server_builds_it(tmp_path: Path) -> None:
    async def scenario() -> bool:
        app = LazyMcpApp(lambda: cast(Any, None), "0", logging.getLogger("test"))
        extras = _guard(app, tmp_path, McpSettings()).contribute(RECORD)
        assert MCP_PATH in extras.mcp_servers["paseo"]["url"]
        # Started at once, before any request (none is made here).
        warming = [t for t in asyncio.all_tasks() if t.get_name() == "paseo-mcp-warm"]
        assert len(warming) == 1
        await asyncio.wait_for(warming[0], 120)
        app.request_stop()
        await asyncio.sleep(0)  # the SDK's task group ends on the loop
        return app.loaded

    assert asyncio.run(scenario())


def test_no_injection_builds_nothing(tmp_path: Path) -> None:
    async def scenario() -> bool:
        app = LazyMcpApp(lambda: cast(Any, None), "0", logging.getLogger("test"))
        extras = _guard(app, tmp_path, McpSettings(injectIntoAgents=False)).contribute(RECORD)
        assert extras.mcp_servers == {}
        await asyncio.sleep(0)
        assert not [t for t in asyncio.all_tasks() if t.get_name() == "paseo-mcp-warm"]
        return app.loaded

    assert not asyncio.run(scenario())
