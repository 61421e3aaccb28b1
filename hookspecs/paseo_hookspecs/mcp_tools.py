"""MCP tools that plugins contribute to the daemon's MCP server for agents.

A plugin owns its tools: it registers an :class:`McpTool` through ``paseo_register_mcp_tools``
(a typed input model, a description, an async handler), and the plugin serving the MCP
server (``paseo_mcp``) lists and calls it beside its own. Plugins never import one another:
the serving plugin finds the registered tools on the daemon (:class:`McpToolSource`), and a
handler is given no port of the server, only the :class:`McpToolScope` of the call.

Least privilege is the handler's rule to apply, with what the scope says: ``caller`` is the
agent whose capability token the request carries (never what the agent claims), ``reaches``
the server's reach rules (``callerScope``), ``child_mode`` the mode an agent made on the
caller's behalf starts in (never above the caller's own), ``access`` the caller's own level.
Internal agents are given no MCP server, so no handler is ever called for one.

.. versionadded:: 2.0
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from pydantic import BaseModel

    from paseo_hookspecs.interfaces.agent import ModeAccess


@dataclass(frozen=True)
class McpToolCaller:
    """The agent a tool call comes from, as the MCP server identified it by its token."""

    agent_id: str
    provider: str
    cwd: str
    """The agent's working directory: where what it starts may work (or below it)."""
    workspace_id: str | None
    labels: Mapping[str, str] = field(default_factory=dict)
    """The agent's labels when the call came (a loop's worker carries ``paseo.loop-id``)."""


class McpToolScope(Protocol):
    """What a tool handler is given of the MCP server: who calls, and its reach rules."""

    @property
    def caller(self) -> McpToolCaller: ...

    async def reaches(self, agent_id: str | None) -> bool:
        """Whether the caller reaches ``agent_id`` (itself, an agent it created, or more as
        the user's ``callerScope`` allows) — for something that agent made, the test of
        whether the caller may act on it. ``None`` (made by no agent: the user's) is reached
        only with ``callerScope: all``."""

    async def child_mode(self, provider: str) -> str | None:
        """The mode an agent made on the caller's behalf on ``provider`` (empty: the default
        provider) starts in: the caller's own current mode, mapped across providers by access
        level, never above it; ``None`` leaves the provider's default."""

    async def access(self) -> ModeAccess | None:
        """The access level of the caller's current mode; ``None`` when it has none."""

    def child_labels(self) -> Mapping[str, str]:
        """The labels that mark an agent as made on the caller's behalf (the caller then
        reaches it with the agent tools)."""


McpToolHandler = Callable[["McpToolScope", Any], Awaitable[Any]]
"""``handler(scope, args)``: ``args`` is the validated ``input`` model; the answer is any
JSON-serialisable value (a dict becomes the structured content). Raise a
:class:`paseo_hookspecs.errors.PaseoError` to answer with its code (``access_denied`` for a
refusal)."""


@dataclass(frozen=True)
class McpTool:
    """One MCP tool: ``name`` (unique among every tool the server offers; a name taken is
    refused and logged), what the agent is shown (``description``, the JSON schema of
    ``input``) and the ``handler``. The user's per-provider ``disabledTools`` filter applies
    to it by name, as to the server's own tools."""

    name: str
    description: str
    input: type[BaseModel]
    handler: McpToolHandler


class McpToolRegistrar(Protocol):
    def __call__(self, tool: McpTool) -> None:
        """Register an MCP tool for agents."""


@runtime_checkable
class McpToolSource(Protocol):
    """A :class:`~paseo_hookspecs.context.DaemonContext` that hands the MCP server the tools
    plugins registered (in registration order)."""

    @property
    def mcp_tools(self) -> Sequence[McpTool]: ...


__all__ = [
    "McpTool",
    "McpToolCaller",
    "McpToolHandler",
    "McpToolRegistrar",
    "McpToolScope",
    "McpToolSource",
]
