"""The capability-token check in front of the MCP server, and the session injection.

The daemon has already screened the request as it screens ``/ws`` (``Host``, ``Origin``,
proxies: :mod:`paseo_hookspecs.http`); here a request is refused with 401 unless it carries a
valid token (``?token=`` or ``Authorization: Bearer``) of an agent that exists and is not
internal (the daemon's own helpers get no tools). The caller it
identifies is handed to the server in the ASGI scope under :data:`CALLER_SCOPE_KEY`.

Injection: every session an agent starts gets ``mcpServers.paseo`` with the agent's token (a
:class:`~paseo_hookspecs.agents.SessionContributor`), unless injection is off, the agent's
provider's catalog is disabled, or the daemon listens on no TCP address. The provider's policy
is fixed for the session there.
"""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import parse_qs, quote

from paseo_hookspecs.agents import SessionExtras
from paseo_hookspecs.errors import PaseoError
from paseo_hookspecs.http import AsgiApp, AsgiReceive, AsgiScope, AsgiSend, send_plain
from paseo_hookspecs.records import AgentRecord

from paseo_mcp.caller import VOICE_TOOL, McpCaller, ToolPolicy
from paseo_mcp.daemon import Ports
from paseo_mcp.settings import McpSettings
from paseo_mcp.tokens import CapabilityTokens

MCP_PATH = "/mcp/agents"
"""Where the MCP server for agents is mounted on the daemon's listen address."""

CALLER_SCOPE_KEY = "paseo.mcp.caller"
"""The ASGI scope key under which the guard hands the server its :class:`McpCaller`."""


def provider_policy(settings: McpSettings, provider: str) -> ToolPolicy:
    """``providers.<provider>`` of the settings; absent means every tool."""
    tools = settings.providers.get(provider)
    if tools is None:
        return ToolPolicy()
    return ToolPolicy(
        enabled=tools.enabled is not False,
        disabled_tools=frozenset(tools.disabledTools or ()),
    )


def _header(scope: AsgiScope, name: bytes) -> list[str]:
    return [value.decode("latin-1") for key, value in scope.get("headers", ()) if key == name]


def _token(scope: AsgiScope) -> str | None:
    query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
    values: list[str] = query.get("token", [])
    if len(values) == 1 and values[0]:
        return values[0]
    auth = _header(scope, b"authorization")
    if len(auth) == 1 and auth[0].lower().startswith("bearer "):
        return auth[0][7:].strip() or None
    return None


class TokenGuard:
    """Tokens, per-session policies and the guarded app (see the module docstring)."""

    def __init__(
        self,
        ports: Ports,
        tokens: CapabilityTokens,
        url: Callable[[str], str | None],
        injected: Callable[[], None] = lambda: None,
    ) -> None:
        self._ports = ports
        self._tokens = tokens
        self._url = url
        self._injected = injected
        """Called each time a session is given the server (the plugin warms the server)."""
        self._policies: dict[str, ToolPolicy] = {}

    # ------------------------------------------------------------------ injection

    def contribute(self, record: AgentRecord) -> SessionExtras:
        settings = self._ports.settings()
        policy = provider_policy(settings, record.provider)
        self._policies[record.id] = policy
        base = self._url(MCP_PATH)
        if not settings.injectIntoAgents or not policy.enabled or base is None:
            return SessionExtras()
        token = quote(self._tokens.issue(record.id), safe="")
        self._injected()
        return SessionExtras(
            mcp_servers={"paseo": {"type": "http", "url": f"{base}?token={token}"}}
        )

    # ------------------------------------------------------------------ requests

    def guarded(self, app: AsgiApp) -> AsgiApp:
        async def guarded(scope: AsgiScope, receive: AsgiReceive, send: AsgiSend) -> None:
            caller = await self._identify(_token(scope))
            if caller is None:
                await send_plain(send, 401, "Unauthorized")
                return
            scope[CALLER_SCOPE_KEY] = caller
            await app(scope, receive, send)

        return guarded

    async def _identify(self, token: str | None) -> McpCaller | None:
        agent_id = self._tokens.verify(token) if token else None
        if agent_id is None:
            return None
        try:
            record = await self._ports.agents.get(agent_id)
        except PaseoError:
            return None
        if record.id != agent_id or record.deletedAt is not None:
            return None
        if record.internal:
            # The daemon's own helpers are given no server (the agent port contributes no
            # session extras to them); a token naming one is refused all the same.
            return None
        policy = self._policies.get(agent_id) or provider_policy(
            self._ports.settings(), record.provider
        )
        voice = self._ports.voice
        attached = voice is not None and voice.attached(agent_id)
        disabled = (
            policy.disabled_tools - {VOICE_TOOL}
            if attached
            else policy.disabled_tools | {VOICE_TOOL}
        )
        return McpCaller(
            agent_id=agent_id,
            provider=record.provider,
            cwd=record.cwd,
            workspace_id=record.workspaceId,
            policy=ToolPolicy(enabled=policy.enabled, disabled_tools=frozenset(disabled)),
            labels=dict(record.labels),
        )
