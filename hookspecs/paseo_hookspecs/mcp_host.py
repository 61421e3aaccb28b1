"""What the daemon hands the MCP plugin: the :class:`McpHost`, and the HTTP mount a transport
serves.

The MCP server for agents (the built-in ``paseo_mcp`` plugin) speaks MCP; everything about
trust and identity is the kernel's. The kernel:

* screens every HTTP request to a mounted path exactly as it screens ``/ws`` (``Host``,
  ``Origin``, proxies) and refuses one without a valid per-agent capability token (401);
* hands the mounted ASGI app the caller it identified, in the ASGI scope under
  :data:`CALLER_SCOPE_KEY` (a :class:`McpCaller`);
* runs each operation with that caller's identity (:meth:`McpHost.call`): the same methods,
  the same validation and the same stable error codes as the wire protocol, plus the caller
  rules (children are labelled with :data:`PARENT_LABEL`, inherit the caller's workspace; a
  caller reaches only itself and the agents it created unless the user allows more).

A plugin finds the host on the :class:`~paseo_hookspecs.context.DaemonContext` handed to
``paseo_startup`` when the context is a :class:`McpHostSource`::

    @hookimpl
    def paseo_startup(context):
        if isinstance(context, McpHostSource) and context.mcp_host is not None:
            context.mcp_host.mount_http(MCP_PATH, my_asgi_app)

A transport that can carry plain HTTP requests (POST bodies, streamed answers) asks its
:class:`~paseo_hookspecs.transport.TransportHost` for the app of a path when the host is an
:class:`HttpMountHost`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

AsgiScope = MutableMapping[str, Any]
AsgiReceive = Callable[[], Awaitable[MutableMapping[str, Any]]]
AsgiSend = Callable[[MutableMapping[str, Any]], Awaitable[None]]
AsgiApp = Callable[[AsgiScope, AsgiReceive, AsgiSend], Awaitable[None]]
"""An ASGI 3 application (``http`` scopes only are sent to mounted apps)."""

MCP_PATH = "/mcp/agents"
"""Where the MCP server for agents is mounted on the daemon's listen address."""

CALLER_SCOPE_KEY = "paseo.caller"
"""The ASGI scope key under which the kernel hands a mounted app its :class:`McpCaller`."""

PARENT_LABEL = "paseo.parent-agent-id"
"""The label every agent created through MCP carries: the id of the agent that created it."""

NOTIFY_LABEL = "paseo.notify-on-finish"
"""``true`` on a child created with ``notifyOnFinish``: its parent is sent a ``<paseo-system>``
prompt when it finishes, errors or needs a permission."""


@dataclass(frozen=True)
class ToolPolicy:
    """Which Paseo tools the caller's provider is offered (``agents.providers.<id>.paseoTools``,
    resolved when its session was created, resumed or reloaded). A catalog filter, not an
    authorization boundary: an agent with a shell can reach the daemon other ways."""

    enabled: bool = True
    disabled_tools: frozenset[str] = frozenset()

    def offers(self, tool: str) -> bool:
        return self.enabled and tool not in self.disabled_tools


@dataclass(frozen=True)
class McpCaller:
    """The agent an MCP request came from, as the kernel identified it from its token."""

    agent_id: str
    provider: str
    cwd: str
    policy: ToolPolicy


class McpHost(Protocol):
    """The daemon as the MCP plugin sees it."""

    def mount_http(self, path: str, app: AsgiApp) -> None:
        """Serve ``app`` for requests to ``path`` (exactly, or below it) on the daemon's TCP
        listen address, behind the kernel's screening and token check."""

    async def call(self, caller: McpCaller, method: str, params: dict[str, Any]) -> Any:
        """Run the wire-protocol ``method`` with ``params`` as ``caller``; returns its result
        as JSON-ready data. Raises :class:`~paseo_hookspecs.errors.PaseoError` (the method's
        own, or ``access_denied`` when the caller rules forbid the target)."""

    async def agent_attention(self, agent_id: str, reason: str, timestamp: str) -> None:
        """Forwarded ``paseo_attention`` (``timestamp`` is the attention entry's, which tells
        a repeat from a new attention): the host queues (durably) and delivers the parent's
        notice of a ``notifyOnFinish`` child, and delivers notices waiting for a parent that
        just became free."""


@runtime_checkable
class McpHostSource(Protocol):
    """A :class:`~paseo_hookspecs.context.DaemonContext` that offers an :class:`McpHost`
    (``None`` when ``daemon.mcp.enabled`` is false or the daemon has no TCP listener)."""

    @property
    def mcp_host(self) -> McpHost | None: ...


@runtime_checkable
class HttpMountHost(Protocol):
    """A :class:`~paseo_hookspecs.transport.TransportHost` that serves mounted HTTP apps."""

    def http_app(self, path: str) -> AsgiApp | None:
        """The app mounted for ``path`` (without the query), ``None`` when there is none."""


__all__ = [
    "CALLER_SCOPE_KEY",
    "MCP_PATH",
    "NOTIFY_LABEL",
    "PARENT_LABEL",
    "AsgiApp",
    "AsgiReceive",
    "AsgiScope",
    "AsgiSend",
    "HttpMountHost",
    "McpCaller",
    "McpHost",
    "McpHostSource",
    "ToolPolicy",
]
