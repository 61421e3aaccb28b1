"""Agent operations on behalf of the relationship, over the agent port
(:mod:`paseo_hookspecs.agents`): the Hub only ever names agents through a :class:`HubOwner`,
so it can reach no agent it does not own.

A Hub create is an ordinary create of the port (the path ``agent.create`` takes: workspace
placement, the worktree target, the provider's checks), with the relationship ``owner`` and the
granted tool names written into the record before it is first stored
(``AgentCreate.recordFields``) and the Hub's ``env`` passed beside the record, never in it
(``AgentCreate.env``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable

from paseo_hookspecs.agents import AgentCreate, AgentObserver, AgentQuery, Agents
from paseo_hookspecs.errors import PaseoError
from paseo_hookspecs.providers import ProviderCatalog
from paseo_hookspecs.records import AgentRecord
from paseo_hookspecs.store import MAX_PAGE_SIZE
from pydantic import ValidationError

from paseo_hub.models import (
    EXECUTION_LABEL,
    OWNER_FIELD,
    POLICY_FIELD,
    AgentSnapshot,
    CreateFailed,
    HubAgentCreate,
    HubAgentValidate,
    HubOwner,
    ToolPolicyUnsupported,
    ValidationIssue,
    owner_of,
    snapshot_of,
)

SUBSCRIBER = "hub"
"""The name the relationship's subscriptions carry in the daemon's logs."""


class HubAgents:
    """The relationship's agents (see the module docstring)."""

    def __init__(self, agents: Agents, providers: ProviderCatalog) -> None:
        self._agents = agents
        self._providers = providers

    # ------------------------------------------------------------------ lookups

    async def _records(self) -> AsyncIterator[AgentRecord]:
        """Every agent, a page at a time (never all of them in memory at once). Owners are
        matched on the record itself, not on a label a person may edit."""
        cursor: str | None = None
        query = AgentQuery(include_archived=True)
        while True:
            page = await self._agents.list(query, cursor=cursor, limit=MAX_PAGE_SIZE)
            for record in page.items:
                yield record
            cursor = page.next_cursor
            if cursor is None:
                return

    async def find_owned(self, owner: HubOwner) -> AgentSnapshot | None:
        """The agent whose record carries ``owner`` (archived ones included), else ``None``."""
        async for record in self._records():
            if owner_of(record) == owner:
                return snapshot_of(record)
        return None

    async def list_owned(self, daemon_id: str) -> list[tuple[HubOwner, AgentSnapshot]]:
        """Every agent whose record owner has ``daemonId == daemon_id``."""
        found = []
        async for record in self._records():
            owner = owner_of(record)
            if owner is not None and owner.daemonId == daemon_id:
                found.append((owner, snapshot_of(record)))
        return found

    async def _snapshot(self, agent_id: str) -> AgentSnapshot:
        return snapshot_of(await self._agents.get(agent_id))

    # ------------------------------------------------------------------- create

    async def create_owned(self, spec: HubAgentCreate) -> AgentSnapshot:
        """Create the agent with ``spec.owner`` in its record, then send ``spec.prompt`` as
        message ``spec.messageId``. Durable on return (a retried create finds it with
        :meth:`find_owned`); raises a :class:`~paseo_hub.models.HubCreateError` and writes
        nothing when the agent cannot be made."""
        unknown = sorted({t.server for t in spec.preapprovedTools} - set(spec.mcpServers))
        if unknown:
            raise ToolPolicyUnsupported(
                f"the tool policy names MCP servers the request does not define: "
                f"{', '.join(unknown)}",
                provider=spec.provider,
            )
        try:
            create = AgentCreate(
                provider=spec.provider,
                cwd=spec.cwd,
                worktree=spec.worktree,
                modeId=spec.modeId,
                model=spec.model,
                thinkingOptionId=spec.thinkingOptionId,
                providerOptions=dict(spec.providerOptions or {}),
                mcpServers=dict(spec.mcpServers),
                initialPrompt=spec.prompt,
                messageId=spec.messageId,
                labels={EXECUTION_LABEL: spec.owner.executionId},
                env=dict(spec.env),
                recordFields={
                    OWNER_FIELD: spec.owner.model_dump(mode="json"),
                    POLICY_FIELD: [tool.name for tool in spec.preapprovedTools],
                },
            )
        except ValidationError as exc:
            raise CreateFailed(f"invalid create: {exc.errors()[0].get('msg')}") from exc
        try:
            record = await self._agents.create(create)
        except PaseoError as exc:
            raise CreateFailed(exc.message) from exc
        return await self._snapshot(record.id)

    # ------------------------------------------------------------------ control

    async def ensure_loaded(self, agent_id: str) -> AgentSnapshot:
        """Bring an owned, unarchived agent back to life if no provider session holds it (a
        daemon restart), resuming its conversation. Raises :class:`CreateFailed` when the
        session cannot be resumed."""
        record = await self._agents.get(agent_id)
        if record.archivedAt is not None:
            return snapshot_of(record)
        try:
            await self._agents.ensure_session(agent_id)
        except PaseoError as exc:
            raise CreateFailed(f"cannot resume agent {agent_id}: {exc.message}") from exc
        return await self._snapshot(agent_id)

    async def send_prompt(self, agent_id: str, prompt: str, message_id: str) -> AgentSnapshot:
        """Start a turn with ``prompt`` as user message ``message_id``; the snapshot once the
        turn was accepted (``running``)."""
        result = await self._agents.send(agent_id, prompt, message_id=message_id)
        if not result.accepted:
            # A repeated message id is not sent again, and a replay of an interrupted turn
            # repeats the one the Hub's turn was sent with: the replay gets its own.
            await self._agents.send(agent_id, prompt, message_id=f"{message_id}.replay")
        return await self._snapshot(agent_id)

    async def interrupt(self, agent_id: str) -> None:
        """Cancel the running turn; nothing running is success."""
        await self._agents.interrupt(agent_id)

    async def archive(self, agent_id: str) -> None:
        """Stop and archive the agent, also mid-turn: a Hub archives an execution it is done
        with (or that finished through its tool while the turn still winds down)."""
        await self._agents.archive(agent_id, force=True)

    async def validate(self, request: HubAgentValidate) -> list[ValidationIssue]:
        """What is wrong with ``request`` for its provider (empty: valid). An unknown or
        unusable provider is an issue at path ``provider``, not an exception."""
        try:
            await self._providers.check(request.provider)
        except PaseoError as exc:
            return [ValidationIssue(path="provider", message=exc.message)]
        issues = []
        if request.model is not None:
            models = await self._providers.models(request.provider)
            if models and request.model not in {m.id for m in models}:
                issues.append(ValidationIssue(path="model", message="unknown model"))
        if request.modeId is not None:
            modes = await self._providers.modes(request.provider)
            if modes and request.modeId not in {m.id for m in modes}:
                issues.append(ValidationIssue(path="modeId", message="unknown mode"))
        return issues

    # ---------------------------------------------------------------- observing

    def observe(self, observer: AgentObserver) -> Callable[[], None]:
        """Start telling ``observer`` about every agent; returns the function that stops it
        (the observer filters to the agents it owns)."""
        return self._agents.subscribe(observer, name=SUBSCRIBER).close
