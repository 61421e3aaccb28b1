"""Tools other plugins contribute: a taken name is refused, and a handler is given the
caller's scope (its identity and the caller rules), nothing of the server's ports."""

from __future__ import annotations

import asyncio
import logging
from typing import Any, cast

import pytest
from paseo_hookspecs.mcp_tools import McpTool, McpToolScope
from paseo_mcp.caller import PARENT_LABEL, McpCaller, ToolPolicy
from paseo_mcp.contributed import CallerScope, contributed_specs
from pydantic import BaseModel


class NoInput(BaseModel):
    pass


async def _echo(scope: McpToolScope, args: Any) -> Any:
    return {"caller": scope.caller.agent_id, "labels": dict(scope.child_labels())}


def test_a_name_the_server_offers_or_an_earlier_plugin_took_is_refused(
    caplog: pytest.LogCaptureFixture,
) -> None:
    tools = [
        McpTool("create_agent", "a replacement", NoInput, _echo),
        McpTool("mine", "mine", NoInput, _echo),
        McpTool("mine", "a second one", NoInput, _echo),
    ]
    with caplog.at_level(logging.ERROR, logger="paseo.plugins.mcp"):
        specs = contributed_specs(tools)
    assert [(s.name, s.description) for s in specs] == [("mine", "mine")]
    assert "'create_agent' is already offered" in caplog.text
    assert "'mine' is already offered" in caplog.text


def test_a_handler_gets_the_caller_the_token_identified() -> None:
    (spec,) = contributed_specs([McpTool("mine", "mine", NoInput, _echo)])
    caller = McpCaller(
        agent_id="a1",
        provider="claude",
        cwd="/w",
        workspace_id="wks_1",
        policy=ToolPolicy(),
        labels={"role": "x"},
    )
    # The tooling is the server's; a contributed handler never sees it.
    tooling = cast(Any, None)

    async def call() -> Any:
        return await spec.run(tooling, caller, NoInput())

    answer = asyncio.run(call())
    assert answer == {"caller": "a1", "labels": {PARENT_LABEL: "a1"}}
    scope = CallerScope(tooling, caller)
    assert scope.caller.labels == {"role": "x"}
    assert (scope.caller.cwd, scope.caller.workspace_id) == ("/w", "wks_1")
