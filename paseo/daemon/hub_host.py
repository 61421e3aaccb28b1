"""The kernel side of the Hub relationship: :class:`paseo_hookspecs.hub_host.HubHost`.

The Hub plugin reaches agents only through :class:`KernelAgentControl`, a thin layer over the
agent service: a Hub create goes through :meth:`paseo.agents.manager.AgentService.create` (the
trusted clients' path) with the relationship ``owner`` written into the record before it is
first stored. Agent activity reaches observers through :class:`AgentTap`, the publisher the
agent service is given: it sees every ``agents`` record change and every ``agent.event`` in the
order clients do, and before the RPC server exists (records change during boot recovery).

Pre-approval is kernel-side and provider-independent: a ``permission_requested`` of an owned
agent for exactly a granted tool (``mcp__<server>__<tool>``) is allowed at once; every other
request waits for a person as usual. The grants live in the record (``hubToolPolicy``), so
they survive a restart with the agent.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable, Mapping
from typing import TYPE_CHECKING, Any

from paseo_hookspecs.errors import PaseoError
from paseo_hookspecs.hub_host import (
    AgentObserver,
    AgentSnapshot,
    BranchOff,
    CheckoutBranch,
    CreateFailed,
    HubAgentCreate,
    HubAgentValidate,
    HubOwner,
    ToolPolicyUnsupported,
    ValidationIssue,
)
from paseo_hookspecs.records import AgentRecord, dump_record
from paseo_hookspecs.store import MAX_PAGE_SIZE
from pydantic import ValidationError

from paseo.agents.listing import ListFilter
from paseo.agents.live import AGENTS_STREAM
from paseo.rpc.session import CallContext
from paseo.rpc.trust import is_local_client

if TYPE_CHECKING:
    from paseo_hookspecs.context import RpcContext

    from paseo.agents.manager import AgentService
    from paseo.services import Publisher
    from paseo.workspaces.service import WorkspacesService

log = logging.getLogger("paseo.hub")

POLICY_FIELD = "hubToolPolicy"
"""Record field holding the granted tool names (``mcp__<server>__<tool>``)."""
SNAPSHOT_FIELDS = ("provider", "cwd", "title", "createdAt", "updatedAt", "lastError")


def snapshot_of(record: Mapping[str, Any]) -> AgentSnapshot:
    """What a Hub may see of an agent record (a dumped record)."""
    owner = record.get("owner")
    try:
        hub_owner = HubOwner.model_validate(owner) if isinstance(owner, dict) else None
    except ValidationError:
        hub_owner = None  # another kind of owner (a TypeScript writer's): no Hub's agent
    config = record.get("config") or {}
    extra = {key: record[key] for key in SNAPSHOT_FIELDS if record.get(key) is not None}
    if isinstance(config, dict) and config.get("model"):
        extra["model"] = config["model"]
    return AgentSnapshot(
        id=str(record["id"]),
        status=record.get("lastStatus") or "closed",
        archived=record.get("archivedAt") is not None,
        owner=hub_owner,
        **extra,
    )


class AgentTap:
    """A :class:`paseo.services.Publisher` that forwards everything and tells observers about
    agent record changes and agent events."""

    def __init__(self, inner: Publisher) -> None:
        self._inner = inner
        self.observers: list[AgentObserver] = []

    def register_stream(self, name: str, access: frozenset[str]) -> None:
        self._inner.register_stream(name, access)

    def publish(self, stream: str, method: str, payload: Mapping[str, Any]) -> None:
        self._tap(stream, method, payload)
        self._inner.publish(stream, method, payload)

    def _tap(self, stream: str, method: str, payload: Mapping[str, Any]) -> None:
        if not self.observers:
            return
        if stream == AGENTS_STREAM and method in ("agent.created", "agent.updated"):
            snapshot = snapshot_of(payload["agent"])
            for observer in list(self.observers):
                self._call(observer.agent_updated, snapshot)
        elif method == "agent.event":
            agent_id, event = str(payload["agentId"]), payload["entry"]["event"]
            for observer in list(self.observers):
                self._call(observer.agent_event, agent_id, event)

    @staticmethod
    def _call(method: Callable[..., None], *args: Any) -> None:
        try:
            method(*args)
        except Exception:
            # An observer's bug must not break the agent service's publishing path.
            log.exception("a Hub agent observer failed")


class KernelAgentControl:
    """:class:`paseo_hookspecs.hub_host.AgentControl` over the agent service."""

    def __init__(self, agents: AgentService, tap: AgentTap, workspaces: WorkspacesService) -> None:
        self._agents = agents
        self._workspaces = workspaces
        self._tap = tap
        self._tasks: set[asyncio.Task[None]] = set()
        tap.observers.append(_PreApprover(self))

    # ------------------------------------------------------------------ lookups

    async def _records(self) -> AsyncIterator[AgentRecord]:
        """Every agent, a store page at a time (never all of them in memory at once)."""
        cursor: str | None = None
        while True:
            page = await self._agents.list_agents(
                ListFilter(include_archived=True), cursor=cursor, limit=MAX_PAGE_SIZE
            )
            for record in page.records:
                yield record
            cursor = page.next_cursor
            if cursor is None:
                return

    async def find_owned(self, owner: HubOwner) -> AgentSnapshot | None:
        async for record in self._records():
            snapshot = snapshot_of(dump_record(record))
            if snapshot.owner == owner:
                return snapshot
        return None

    async def list_owned(self, daemon_id: str) -> list[tuple[HubOwner, AgentSnapshot]]:
        found = []
        async for record in self._records():
            snapshot = snapshot_of(dump_record(record))
            if snapshot.owner is not None and snapshot.owner.daemonId == daemon_id:
                found.append((snapshot.owner, snapshot))
        return found

    async def _snapshot(self, agent_id: str) -> AgentSnapshot:
        return snapshot_of(dump_record((await self._agents.get(agent_id)).record))

    def granted(self, agent_id: str) -> frozenset[str]:
        """The tools pre-approved for ``agent_id`` (empty for an agent no Hub owns)."""
        agent = self._agents.agents.get(agent_id)
        if agent is None:
            return frozenset()
        tools = (agent.record.model_extra or {}).get(POLICY_FIELD)
        if not isinstance(tools, list):
            return frozenset()
        return frozenset(t for t in tools if isinstance(t, str))

    # ------------------------------------------------------------------ create

    async def create_owned(self, spec: HubAgentCreate) -> AgentSnapshot:
        from paseo.agents.models import AgentCreateParams

        unknown = sorted({t.server for t in spec.preapprovedTools} - set(spec.mcpServers))
        if unknown:
            raise ToolPolicyUnsupported(
                f"the tool policy names MCP servers the request does not define: "
                f"{', '.join(unknown)}",
                provider=spec.provider,
            )
        cwd: str | None = spec.cwd
        workspace_id = None
        if spec.worktree is not None:
            cwd, workspace_id = None, await self._worktree(spec)
        try:
            params = AgentCreateParams(
                provider=spec.provider,
                cwd=cwd,
                workspaceId=workspace_id,
                modeId=spec.modeId,
                model=spec.model,
                thinkingOptionId=spec.thinkingOptionId,
                providerOptions=dict(spec.providerOptions or {}),
                mcpServers=dict(spec.mcpServers),
                initialPrompt=spec.prompt,
                messageId=spec.messageId,
                labels={"paseo.hub/execution": spec.owner.executionId},
            )
        except ValidationError as exc:
            raise CreateFailed(f"invalid create: {exc.errors()[0].get('msg')}") from exc
        grants = [f"mcp__{t.server}__{t.tool}" for t in spec.preapprovedTools]
        extra = {"owner": spec.owner.model_dump(mode="json"), POLICY_FIELD: grants}
        try:
            record = await self._agents.create(params, extra_fields=extra, env=spec.env)
        except PaseoError as exc:
            raise CreateFailed(exc.message) from exc
        return await self._snapshot(record.id)

    async def _worktree(self, spec: HubAgentCreate) -> str:
        """The workspace of the worktree ``spec`` targets, made through the worktree service
        (the same path as ``worktree.create``; an existing one is reused, so a retried create
        lands in the same checkout)."""
        from paseo.worktrees.model import WorktreeRequest

        target = spec.worktree
        try:
            project = (await self._workspaces.ensure_workspace_for_cwd(spec.cwd)).projectId
            if isinstance(target, BranchOff):
                request = WorktreeRequest(
                    project, "branch-off", branch=target.newBranch, base=target.base
                )
            elif isinstance(target, CheckoutBranch):
                request = WorktreeRequest(project, "checkout-branch", branch=target.branch)
            else:
                pr = target.prNumber if target is not None else None
                request = WorktreeRequest(project, "change-request", change_request=pr)
            outcome = await self._workspaces.placement.worktrees.create(request)
        except PaseoError as exc:
            raise CreateFailed(f"the worktree could not be made: {exc.message}") from exc
        return outcome.workspace.workspaceId

    async def ensure_loaded(self, agent_id: str) -> AgentSnapshot:
        agent = await self._agents.get(agent_id)
        if agent.session is None and agent.record.archivedAt is None:
            try:
                await self._agents.ensure_session(agent_id)
            except PaseoError as exc:
                raise CreateFailed(f"cannot resume agent {agent_id}: {exc.message}") from exc
        return await self._snapshot(agent_id)

    async def send_prompt(self, agent_id: str, prompt: str, message_id: str) -> AgentSnapshot:
        _, _, accepted = await self._agents.send(agent_id, prompt, message_id)
        if not accepted:
            # The runner ignores a repeated message id, and a replay of an interrupted turn
            # repeats the one the Hub's turn was sent with: the replay gets its own.
            await self._agents.send(agent_id, prompt, f"{message_id}.replay")
        return await self._snapshot(agent_id)

    async def interrupt(self, agent_id: str) -> None:
        await self._agents.interrupt(agent_id)

    async def archive(self, agent_id: str) -> None:
        await self._agents.archive(agent_id)

    async def validate(self, request: HubAgentValidate) -> list[ValidationIssue]:
        try:
            provider = self._agents.registry.usable(request.provider)
        except PaseoError as exc:
            return [ValidationIssue(path="provider", message=exc.message)]
        issues = []
        launcher = self._agents.launcher
        if request.model is not None:
            models = await provider.list_models(launcher)
            if models and request.model not in {m.id for m in models}:
                issues.append(ValidationIssue(path="model", message="unknown model"))
        if request.modeId is not None:
            modes = await provider.list_modes(launcher)
            if modes and request.modeId not in {m.id for m in modes}:
                issues.append(ValidationIssue(path="modeId", message="unknown mode"))
        return issues

    def observe(self, observer: AgentObserver) -> Callable[[], None]:
        self._tap.observers.append(observer)

        def stop() -> None:
            if observer in self._tap.observers:
                self._tap.observers.remove(observer)

        return stop

    # ------------------------------------------------------------- pre-approval

    def approve_soon(self, agent_id: str, request_id: str) -> None:
        task = asyncio.get_running_loop().create_task(self._approve(agent_id, request_id))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _approve(self, agent_id: str, request_id: str) -> None:
        try:
            await self._agents.respond_permission(agent_id, request_id, allow=True)
        except PaseoError as exc:  # answered or withdrawn meanwhile
            log.info("pre-approval of %s for agent %s: %s", request_id, agent_id, exc.message)


class _PreApprover:
    """Allows an owned agent's request for a granted tool (see the module docstring)."""

    def __init__(self, control: KernelAgentControl) -> None:
        self._control = control

    def agent_updated(self, snapshot: AgentSnapshot) -> None:
        """Record changes need no answer."""

    def agent_event(self, agent_id: str, event: Mapping[str, Any]) -> None:
        if event.get("type") != "permission_requested":
            return
        request = event.get("request") or {}
        tool = request.get("toolName")
        if isinstance(tool, str) and tool in self._control.granted(agent_id):
            self._control.approve_soon(agent_id, str(request.get("id")))


class KernelHubHost:
    """:class:`paseo_hookspecs.hub_host.HubHost`."""

    def __init__(self, agents: KernelAgentControl, public_key: str) -> None:
        self._agents = agents
        self._public_key = public_key

    @property
    def agents(self) -> KernelAgentControl:
        return self._agents

    @property
    def daemon_public_key(self) -> str:
        return self._public_key

    def is_trusted_local(self, ctx: RpcContext) -> bool:
        if not isinstance(ctx, CallContext):
            return False  # not a call the RPC server observed
        session = ctx.session
        observed = session.observed
        if session.kind != "local" or observed.origin:
            return False
        # The peer as observed (a forwarded address counts only behind a trusted proxy).
        return is_local_client(
            unix_socket=observed.unix_socket, client_address=observed.client_address
        )
