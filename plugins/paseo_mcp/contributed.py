"""The tools other plugins contribute (``paseo_register_mcp_tools``), served beside the
catalog's own.

A contributed tool's handler is given a :class:`CallerScope`: the caller the token guard
identified and the caller rules of :mod:`paseo_mcp.rules` (reach, a child's mode, the caller's
own access level), never the ports this plugin drives. What the tool may do with its own
plugin's state is that plugin's rule.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from paseo_hookspecs.interfaces.agent import ModeAccess
from paseo_hookspecs.mcp_tools import McpTool, McpToolCaller

from paseo_mcp.caller import PARENT_LABEL, McpCaller
from paseo_mcp.tools import BY_NAME, ToolSpec

if TYPE_CHECKING:
    from paseo_mcp.handlers import Tooling

log = logging.getLogger("paseo.plugins.mcp")


class CallerScope:
    """:class:`paseo_hookspecs.mcp_tools.McpToolScope` of one call."""

    def __init__(self, tooling: Tooling, caller: McpCaller) -> None:
        self._tooling = tooling
        self._caller = caller
        self.caller = McpToolCaller(
            agent_id=caller.agent_id,
            provider=caller.provider,
            cwd=caller.cwd,
            workspace_id=caller.workspace_id,
            labels=dict(caller.labels),
        )

    async def reaches(self, agent_id: str | None) -> bool:
        return await self._tooling.rules.reaches_owned(self._caller, agent_id)

    async def child_mode(self, provider: str) -> str | None:
        return await self._tooling.rules.inherited_mode(self._caller, provider)

    async def access(self) -> ModeAccess | None:
        rules = self._tooling.rules
        mode = await rules.current_mode(self._caller)
        return await rules.level(self._caller.provider, mode)

    def child_labels(self) -> Mapping[str, str]:
        return {PARENT_LABEL: self._caller.agent_id}


def _runner(tool: McpTool) -> Any:
    async def run(tooling: Tooling, caller: McpCaller, args: Any) -> Any:
        return await tool.handler(CallerScope(tooling, caller), args)

    return run


def contributed_specs(tools: Iterable[McpTool]) -> tuple[ToolSpec, ...]:
    """The contributed tools as catalog entries; one whose name the catalog (or an earlier
    contribution) has is logged and left out, so a plugin cannot replace a tool."""
    specs: list[ToolSpec] = []
    taken = set(BY_NAME)
    for tool in tools:
        if tool.name in taken:
            log.error(
                "an MCP tool named %r is already offered; the contributed one is ignored",
                tool.name,
            )
            continue
        taken.add(tool.name)
        specs.append(ToolSpec(tool.name, tool.description, tool.input, _runner(tool)))
    return tuple(specs)


__all__ = ["CallerScope", "contributed_specs"]
