"""The kernel's :class:`paseo_hookspecs.mcp_host.McpHost`: capability tokens, the HTTP mount
behind the daemon's trust model, and the caller rules (docs/mcp.md).

* **Tokens.** An agent's token is ``<agentId>.<HMAC-SHA256(key, agentId)>`` with a key derived
  from the local credential, so it cannot be guessed, changes whenever the credential rotates
  (every daemon start) and needs no storage. Tokens reach only the agent's own session config
  (never its stored record) and are never logged.
* **Requests** to a mounted path are screened exactly as ``/ws`` is (``Host``, ``Origin``,
  proxies: :meth:`paseo.rpc.server.RpcServer.admit`), then refused with 401 unless they carry
  a valid token (``?token=`` or ``Authorization: Bearer``) of an agent that exists.
* **Calls** run the wire protocol's own methods (their validation, their stable error codes)
  as a local session would, limited to :data:`METHODS`, with the caller rules: a child gets
  :data:`~paseo_hookspecs.mcp_host.PARENT_LABEL`, the caller's directory and its mode (mapped
  across providers by access level); a caller reaches itself and the agents it created, and
  no other agent unless ``daemon.mcp.callerScope`` widens that to its workspace's agents or
  to every agent.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import hashlib
import hmac
import json
import logging
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, quote

from paseo_hookspecs.errors import AccessDenied, InvalidParams, NotFound, PaseoError
from paseo_hookspecs.mcp_host import (
    CALLER_SCOPE_KEY,
    MCP_PATH,
    PARENT_LABEL,
    AsgiApp,
    AsgiReceive,
    AsgiScope,
    AsgiSend,
    McpCaller,
    ToolPolicy,
)
from paseo_hookspecs.transport import PeerFacts
from pydantic import BaseModel, ValidationError

from paseo.agents.mode_mapping import mapped_mode
from paseo.daemon.mcp_notify import FinishNotices
from paseo.rpc.address import parse_address

if TYPE_CHECKING:
    from paseo_hookspecs.context import DaemonContext
    from paseo_hookspecs.records import AgentRecord

    from paseo.agents.manager import AgentService
    from paseo.rpc.server import RpcServer
    from paseo.services import ConfigView

log = logging.getLogger("paseo.mcp")

METHODS = frozenset(
    {
        "agent.create",
        "agent.wait",
        "agent.send",
        "agent.get",
        "agent.list",
        "agent.timeline",
        "agent.interrupt",
        "agent.archive",
        "agent.stop",
        "agent.update",
        "agent.mode.set",
        "agent.permissions.list",
        "agent.permissions.respond",
        "schedule.create",
        "schedule.list",
        "schedule.inspect",
        "schedule.pause",
        "schedule.resume",
        "schedule.delete",
        "worktree.list",
        "worktree.create",
        "worktree.archive",
        "provider.list",
        "provider.models",
        "terminal.list",
        "terminal.create",
        "terminal.kill",
        "terminal.capture",
        "terminal.input",
        "voice.speak",
    }
)
"""What an agent may run through MCP: never config, auth, plugins or daemon control."""

MODE_LISTING_TIMEOUT = 30.0
"""Bound on listing the two providers' modes when a child's mode is mapped."""

VOICE_TOOL = "speak"
"""The voice-only tool: offered to an agent exactly while voice mode is attached to it,
whatever its provider's ``paseoTools.disabledTools`` says (that policy covers the catalog)."""


class CapabilityTokens:
    """Per-agent tokens derived from the local credential (see the module docstring)."""

    def __init__(self, credential: str) -> None:
        self._key = hashlib.sha256(b"paseo-mcp-token\0" + credential.encode()).digest()

    def _mac(self, agent_id: str) -> str:
        return hmac.new(self._key, agent_id.encode(), hashlib.sha256).hexdigest()

    def issue(self, agent_id: str) -> str:
        return f"{agent_id}.{self._mac(agent_id)}"

    def verify(self, token: str) -> str | None:
        """The agent id ``token`` was issued for, ``None`` when it is not valid."""
        agent_id, _, mac = token.rpartition(".")
        if agent_id and hmac.compare_digest(mac, self._mac(agent_id)):
            return agent_id
        return None


class _Context:
    """The :class:`paseo_hookspecs.context.RpcContext` of one MCP call: a local session."""

    def __init__(self, daemon: DaemonContext, caller: McpCaller) -> None:
        self.daemon = daemon
        self.session_kind = "local"
        self.client_id = f"mcp:{caller.agent_id}"
        self.trusted_local = False  # an agent's call, not a person's at this machine

    async def notify(self, method: str, params: dict[str, Any]) -> None:
        return None  # an MCP exchange has no notification channel

    def subscribe(self, streams: Sequence[str]) -> dict[str, int]:
        raise InvalidParams("an MCP tool call has no connection to deliver a stream to")

    def unsubscribe(self, streams: Sequence[str]) -> list[str]:
        return []


def _json(result: Any) -> Any:
    if isinstance(result, BaseModel):
        return result.model_dump(mode="json", by_alias=True)
    return result


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


async def _refuse(send: AsgiSend, status: int, text: str) -> None:
    body = (text + "\n").encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"text/plain"), (b"cache-control", b"no-store")],
        }
    )
    await send({"type": "http.response.body", "body": body})


class KernelMcpHost:
    """See the module docstring. ``rpc`` is the server once it exists (trust decisions and the
    method table); ``agents`` is bound by the composition root after the agent service is
    built (the service asks this host for the servers to inject)."""

    def __init__(
        self,
        *,
        context: DaemonContext,
        config: ConfigView,
        credential: str,
        rpc: Callable[[], RpcServer | None],
        listen_addresses: Callable[[], list[str]],
        notices_path: Path,
    ) -> None:
        self._context = context
        self._config = config
        self._tokens = CapabilityTokens(credential)
        self._rpc = rpc
        self._listen_addresses = listen_addresses
        self._mounts: dict[str, AsgiApp] = {}
        self._policies: dict[str, ToolPolicy] = {}
        self._agents: AgentService | None = None
        self._voice: Callable[[str], bool] = lambda agent_id: False
        self.notices = FinishNotices(notices_path, lambda: self.agents)
        self._loading: asyncio.Task[None] | None = None

    # ---------------------------------------------------------------- service

    name = "mcp"

    async def start(self) -> None:
        """Deliver the notices a previous run left queued (the agents are recovered), in
        the background: recovering them reads the store, which readiness need not wait for
        (attentions arriving meanwhile wait for it)."""
        self._loading = asyncio.get_running_loop().create_task(self._load_notices())

    async def _load_notices(self) -> None:
        try:
            await self.notices.load()
        except Exception:
            log.exception("the queued notifyOnFinish notices could not be recovered")

    async def stop(self) -> None:
        if self._loading is not None and not self._loading.done():
            self._loading.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._loading

    async def agent_attention(self, agent_id: str, reason: str, timestamp: str) -> None:
        try:
            await self.notices.attention(agent_id, reason, timestamp)
        except Exception:
            # A tap must not fail the plugin's task; the notice stays queued when it was saved.
            log.exception("agent %s: queueing or delivering a parent notice failed", agent_id)

    def bind_agents(self, agents: AgentService) -> None:
        self._agents = agents

    def bind_voice(self, attached: Callable[[str], bool]) -> None:
        """``attached(agentId)``: voice mode is attached to that agent (it is offered
        :data:`VOICE_TOOL`)."""
        self._voice = attached

    @property
    def agents(self) -> AgentService:
        if self._agents is None:
            raise RuntimeError("the MCP host has no agent service")
        return self._agents

    # ---------------------------------------------------------------- policy, injection

    def policy(self, provider: str) -> ToolPolicy:
        """``agents.providers.<provider>.paseoTools``; absent means every tool."""
        entry = self._config.resolved.agents.providers.get(provider)
        tools = entry.paseoTools if entry is not None else None
        if tools is None:
            return ToolPolicy()
        return ToolPolicy(
            enabled=tools.enabled is not False,
            disabled_tools=frozenset(tools.disabledTools or ()),
        )

    def _base_url(self) -> str | None:
        """``http://host:port`` of the first TCP listen address, ``None`` without one."""
        for listen in [*self._listen_addresses(), self._config.resolved.daemon.listen]:
            try:
                address = parse_address(listen)
            except ValueError:
                continue
            if address.path is None and address.port:
                host = address.host or "127.0.0.1"
                if host in ("0.0.0.0", "::", ""):  # noqa: S104 - reaching a wildcard listener
                    host = "127.0.0.1"
                return f"http://{'[' + host + ']' if ':' in host else host}:{address.port}"
        return None

    def mcp_servers(self, record: AgentRecord) -> dict[str, Any]:
        """``mcpServers`` to add to a session being created, resumed or reloaded: the Paseo
        server with this agent's token, or nothing (no TCP listener, injection off, the
        provider's policy disables the catalog). The policy is fixed here for the session."""
        policy = self.policy(record.provider)
        self._policies[record.id] = policy
        mcp = self._config.resolved.daemon.mcp
        base = self._base_url()
        if not mcp.enabled or not mcp.injectIntoAgents or not policy.enabled or base is None:
            return {}
        token = quote(self._tokens.issue(record.id), safe="")
        return {"paseo": {"type": "http", "url": f"{base}{MCP_PATH}?token={token}"}}

    def token_for(self, agent_id: str) -> str:
        """The capability token of ``agent_id`` (what its injected URL carries)."""
        return self._tokens.issue(agent_id)

    # ---------------------------------------------------------------- HTTP

    def mount_http(self, path: str, app: AsgiApp) -> None:
        # Guarded once: the transport keeps one HTTP config per app it is handed.
        self._mounts[path.rstrip("/")] = self._guarded(app)

    def http_app(self, path: str) -> AsgiApp | None:
        """The guarded app for ``path`` (see :class:`paseo_hookspecs.mcp_host.HttpMountHost`)."""
        for prefix, app in self._mounts.items():
            if path == prefix or path.startswith(prefix + "/"):
                return app
        return None

    def _guarded(self, app: AsgiApp) -> AsgiApp:
        async def guarded(scope: AsgiScope, receive: AsgiReceive, send: AsgiSend) -> None:
            rpc = self._rpc()
            if scope.get("type") != "http" or rpc is None:
                await _refuse(send, 404, "Not Found")
                return
            client = scope.get("client")
            forwarded = _header(scope, b"x-forwarded-for")
            facts = PeerFacts(
                transport="tcp",
                unix_socket=False,
                peer=str(client[0]) if client else None,
                hosts=tuple(_header(scope, b"host")),
                origins=tuple(_header(scope, b"origin")),
                forwarded_for=",".join(forwarded) if forwarded else None,
            )
            admission = await rpc.admit(facts, "public")
            if not admission.admitted or (facts.origins and admission.cors_origin is None):
                status = admission.status if not admission.admitted else 403
                await _refuse(send, status, "Forbidden" if status == 403 else "Refused")
                return
            caller = self._identify(_token(scope))
            if caller is None:
                await _refuse(send, 401, "Unauthorized")
                return
            scope[CALLER_SCOPE_KEY] = caller
            await app(scope, receive, send)

        return guarded

    def _identify(self, token: str | None) -> McpCaller | None:
        agent_id = self._tokens.verify(token) if token else None
        if agent_id is None:
            return None
        live = self.agents.agents.get(agent_id)
        if live is None or live.deleted:
            return None
        record = live.record
        policy = self._policies.get(agent_id) or self.policy(record.provider)
        voice = {VOICE_TOOL}
        disabled = (
            policy.disabled_tools - voice
            if self._voice(agent_id)
            else policy.disabled_tools | voice
        )
        policy = dataclasses.replace(policy, disabled_tools=frozenset(disabled))
        return McpCaller(agent_id=agent_id, provider=record.provider, cwd=record.cwd, policy=policy)

    # ---------------------------------------------------------------- calls

    async def call(self, caller: McpCaller, method: str, params: dict[str, Any]) -> Any:
        rpc = self._rpc()
        entry = rpc.methods.get(method) if rpc is not None else None
        if entry is None or method not in METHODS:
            raise NotFound(f"{method} is not available to agents")
        params = await self._apply_rules(caller, method, dict(params))
        result = await self._dispatch(caller, method, params)
        if method == "agent.list" and self._scope() == "workspace":
            result["agents"] = [
                item
                for item in result.get("agents", [])
                if self._reaches(
                    caller, item["id"], item.get("workspaceId"), item.get("labels") or {}
                )
            ]
        if method == "agent.permissions.list":
            result["requests"] = [
                item
                for item in result.get("requests", [])
                if self._reachable(caller, item["agentId"])
            ]
        return result

    async def _dispatch(self, caller: McpCaller, method: str, params: dict[str, Any]) -> Any:
        """Validate ``params`` and run ``method``'s handler as ``caller`` (rules applied)."""
        rpc = self._rpc()
        entry = rpc.methods.get(method) if rpc is not None else None
        if entry is None:
            raise NotFound(f"{method} is not available to agents")
        model = entry.method.params
        try:
            validated = model.model_validate(params) if model is not None else None
        except ValidationError as exc:
            problems = [
                {"path": ".".join(str(p) for p in e["loc"]), "message": e["msg"]}
                for e in exc.errors(include_url=False, include_input=False)
            ]
            raise InvalidParams(f"invalid params for {method}", data={"errors": problems}) from None
        return _json(await entry.method.handler(_Context(self._context, caller), validated))

    def _scope(self) -> str:
        """``daemon.mcp.callerScope``, read at every call (a reload applies it at once)."""
        return self._config.resolved.daemon.mcp.callerScope

    def _workspace_of(self, agent_id: str) -> str | None:
        # The caller is running, so it is loaded.
        live = self.agents.agents.get(agent_id)
        return live.record.workspaceId if live is not None else None

    def _reachable(self, caller: McpCaller, agent_id: str) -> bool:
        """:meth:`_reaches` for a loaded agent (every agent with a pending permission
        request is loaded); an agent not in memory is not reachable this way."""
        live = self.agents.agents.get(agent_id)
        if live is None or live.deleted:
            return False
        return self._reaches(caller, agent_id, live.record.workspaceId, live.record.labels)

    def _reaches(
        self,
        caller: McpCaller,
        agent_id: str,
        workspace_id: str | None,
        labels: Mapping[str, str],
    ) -> bool:
        """Whether ``caller`` may reach the agent: itself and the agents it created, or as
        ``daemon.mcp.callerScope`` widens it (its workspace's agents, every agent)."""
        if agent_id == caller.agent_id or labels.get(PARENT_LABEL) == caller.agent_id:
            return True
        scope = self._scope()
        if scope == "all":
            return True
        if scope != "workspace":
            return False
        workspace = self._workspace_of(caller.agent_id)
        return workspace is not None and workspace_id == workspace

    async def _target(self, caller: McpCaller, reference: str) -> str:
        """The id of the agent ``reference`` names, when the caller may reach it."""
        try:
            agent = await self.agents.get(reference)
        except PaseoError:
            raise NotFound(f"no agent {reference!r}") from None
        if agent.deleted:
            raise NotFound(f"no agent {reference!r}")
        if not self._reaches(caller, agent.id, agent.record.workspaceId, agent.record.labels):
            raise AccessDenied(
                f"agent {agent.id} was not created by you ({caller.agent_id}) and "
                f"daemon.mcp.callerScope ({self._scope()}) does not let you reach it"
            )
        return agent.id

    async def _terminal_rules(
        self, caller: McpCaller, method: str, params: dict[str, Any]
    ) -> dict[str, Any]:
        """An agent's terminals are its workspace's: it lists and opens terminals there, and
        reaches no terminal of another workspace."""
        live = self.agents.agents.get(caller.agent_id)
        workspace = live.record.workspaceId if live is not None else None
        if workspace is None:
            raise AccessDenied("your agent has no workspace to open terminals in")
        if method in ("terminal.list", "terminal.create"):
            params.pop("cwd", None)
            return {**params, "workspaceId": workspace}
        listed = await self._dispatch(caller, "terminal.list", {"workspaceId": workspace})
        ids = {terminal["terminalId"] for terminal in listed.get("terminals", [])}
        if params.get("terminalId") not in ids:
            raise AccessDenied(
                f"terminal {params.get('terminalId')!r} is not one of your workspace's"
            )
        return params

    async def _inherited_mode(self, caller: McpCaller, provider: str) -> str | None:
        """The mode a child on ``provider`` (empty: the default provider) starts in: the
        caller's current mode, mapped across providers by access level
        (:mod:`paseo.agents.mode_mapping`); ``None`` leaves the provider's default."""
        parent = self.agents.agents.get(caller.agent_id)
        if parent is None:
            return None
        record = parent.record
        mode = record.lastModeId or (record.config.modeId if record.config else None)
        registry = self.agents.registry
        child = provider or registry.default_provider()
        if not mode or child is None:
            return None
        if child == caller.provider:
            return mode
        launcher = self.agents.launcher
        try:
            async with asyncio.timeout(MODE_LISTING_TIMEOUT):
                parent_modes = await registry.usable(caller.provider).list_modes(launcher)
                child_modes = await registry.usable(child).list_modes(launcher)
        except (PaseoError, OSError, TimeoutError) as exc:
            # The create itself says what is wrong with the child's provider.
            log.info("no mode mapped from %s to %s: %s", caller.provider, child, exc)
            return None
        return mapped_mode(mode, parent_modes, child_modes)

    def _list_rules(self, caller: McpCaller, params: dict[str, Any]) -> dict[str, Any]:
        """``list_agents`` lists what the caller may reach (see :meth:`_reachable`): its
        children by label; with scope ``workspace`` the page is filtered after the call (a
        child in a worktree lives in another workspace, so no single filter says it)."""
        if self._scope() != "created":
            return params
        labels = dict(params.get("labels") or {})
        labels[PARENT_LABEL] = caller.agent_id
        return {**params, "labels": labels}

    async def _apply_rules(
        self, caller: McpCaller, method: str, params: dict[str, Any]
    ) -> dict[str, Any]:
        if method == "agent.create":
            labels = dict(params.get("labels") or {})
            labels[PARENT_LABEL] = caller.agent_id
            params["labels"] = labels
            params["cwd"] = caller.cwd
            if "modeId" not in params:
                provider = str(params.get("provider") or "").split("/", 1)[0]
                mode = await self._inherited_mode(caller, provider)
                if mode is not None:
                    params["modeId"] = mode
        elif method == "agent.list":
            params = self._list_rules(caller, params)
        elif isinstance(params.get("agentId"), str):
            params["agentId"] = await self._target(caller, params["agentId"])
        if method.startswith("terminal."):
            params = await self._terminal_rules(caller, method, params)
        if method == "schedule.create":
            target = params.get("target")
            if isinstance(target, dict) and isinstance(target.get("agentId"), str):
                target["agentId"] = await self._target(caller, target["agentId"])
        return params

    def __repr__(self) -> str:  # never the key
        return f"KernelMcpHost(mounts={json.dumps(sorted(self._mounts))})"
