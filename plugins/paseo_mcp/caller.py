"""Who an MCP request comes from, and which tools it is offered.

The caller is the agent whose capability token the request carries. Its provider's catalog
filter (``providers.<id>`` of the plugin's settings) is fixed when its session starts; the
voice-only ``speak`` tool is offered exactly while voice mode is attached to it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

PARENT_LABEL = "paseo.parent-agent-id"
"""The label every agent created through the tools carries: the id of the agent that created
it."""

NOTIFY_LABEL = "paseo.notify-on-finish"
"""``true`` on a child created with ``notifyOnFinish``: its parent is sent a ``<paseo-system>``
prompt when it finishes, errors or needs a permission."""

VOICE_TOOL = "speak"
"""Offered to an agent exactly while voice mode is attached to it, whatever its provider's
``disabledTools`` says (that policy covers the catalog)."""


@dataclass(frozen=True)
class ToolPolicy:
    """Which tools the caller's provider is offered. A catalog filter, not an authorization
    boundary: an agent with a shell can reach the daemon other ways."""

    enabled: bool = True
    disabled_tools: frozenset[str] = frozenset()

    def offers(self, tool: str) -> bool:
        return self.enabled and tool not in self.disabled_tools


@dataclass(frozen=True)
class McpCaller:
    """The agent an MCP request came from, identified by its token."""

    agent_id: str
    provider: str
    cwd: str
    workspace_id: str | None
    policy: ToolPolicy
    labels: Mapping[str, str] = field(default_factory=dict)
