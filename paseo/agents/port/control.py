"""``DaemonContext.agents``: :class:`KernelAgents`, the agent port over the agent service.

Every operation takes the path the ``agent.*`` methods take (:class:`~paseo.agents.manager.
AgentService`), so a plugin's agent is made, placed, prompted and archived exactly like a
client's; inputs and results are the contract's typed models and errors. Observing is the
:class:`~paseo.agents.port.subscribers.AgentSubscribers` the service's feed fills.
"""

from __future__ import annotations

import builtins
import functools
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Protocol

from paseo_hookspecs.agents import (
    AgentCreate,
    AgentObserver,
    AgentPage,
    AgentQuery,
    PermissionAnswer,
    SendResult,
    SessionContributor,
    Subscription,
    TimelineEntry,
    TimelinePage,
    WaitOutcome,
    WaitResult,
    WorktreeTarget,
)
from paseo_hookspecs.errors import Conflict, InvalidParams, Unavailable
from paseo_hookspecs.events import AgentEvent, PermissionRequest
from paseo_hookspecs.interfaces.agent import PromptImage
from paseo_hookspecs.records import AgentRecord
from paseo_hookspecs.records import TimelineEntry as StoredEntry
from pydantic import TypeAdapter, ValidationError

from paseo.agents.listing import ListFilter
from paseo.agents.live import AgentStartError, LiveAgent
from paseo.agents.port.subscribers import AgentSubscribers

if TYPE_CHECKING:
    from paseo.agents.manager import AgentService

RECORD_FIELDS = frozenset(AgentRecord.model_fields)
"""``AgentCreate.recordFields`` may not name these: the kernel owns them."""


@functools.cache
def _event_adapter() -> TypeAdapter[AgentEvent]:
    # Built on the first typed timeline entry: a TypeAdapter builds its validator (the whole
    # AgentEvent union) when made, which a start with no agent read never needs.
    return TypeAdapter(AgentEvent)


class WorktreePlacement(Protocol):
    """Makes (or finds) the worktree a new agent works in (the workspaces service)."""

    async def workspace_for(self, cwd: str, target: WorktreeTarget) -> str:
        """The id of the workspace of ``target``'s worktree of ``cwd``'s repository."""


def typed_entry(entry: StoredEntry) -> TimelineEntry:
    """A stored entry (its event as JSON) as the port's typed one."""
    return TimelineEntry(
        seq=entry.seq,
        epoch=entry.epoch,
        timestamp=entry.timestamp,
        event=_event_adapter().validate_python(entry.event),
    )


class KernelAgents:
    """:class:`paseo_hookspecs.agents.Agents` (see the module docstring)."""

    def __init__(
        self,
        service: AgentService,
        subscribers: AgentSubscribers,
        worktrees: WorktreePlacement,
    ) -> None:
        self._service = service
        self._subscribers = subscribers
        self._worktrees = worktrees

    # ------------------------------------------------------------------ events

    def subscribe(
        self,
        observer: AgentObserver,
        *,
        name: str,
        max_pending: int = 1024,
        include_internal: bool = False,
    ) -> Subscription:
        return self._subscribers.subscribe(
            observer, name=name, max_pending=max_pending, include_internal=include_internal
        )

    def add_session_contributor(
        self, contributor: SessionContributor, *, include_internal: bool = False
    ) -> Callable[[], None]:
        return self._service.contributions.add(contributor, include_internal=include_internal)

    # ------------------------------------------------------------------ create and read

    async def create(self, spec: AgentCreate) -> AgentRecord:
        from paseo.agents.models import AgentCreateParams

        owned = sorted(set(spec.recordFields) & RECORD_FIELDS)
        if owned:
            raise InvalidParams(
                f"recordFields may not set the record's own fields: {', '.join(owned)}"
            )
        cwd, workspace_id = spec.cwd, spec.workspaceId
        if spec.worktree is not None:
            if cwd is None:
                raise InvalidParams("a worktree target needs cwd: a directory of its repository")
            workspace_id = await self._worktrees.workspace_for(cwd, spec.worktree)
            cwd = None
        try:
            params = AgentCreateParams(
                profile=spec.profile,
                provider=spec.provider,
                cwd=cwd,
                workspaceId=workspace_id,
                modeId=spec.modeId,
                model=spec.model,
                thinkingOptionId=spec.thinkingOptionId,
                featureValues=dict(spec.featureValues),
                title=spec.title,
                labels=dict(spec.labels),
                systemPrompt=spec.systemPrompt,
                mcpServers=dict(spec.mcpServers),
                providerOptions=dict(spec.providerOptions),
                initialPrompt=spec.initialPrompt,
                images=list(spec.images),
                messageId=spec.messageId,
                internal=spec.internal,
            )
        except ValidationError as exc:
            raise InvalidParams(f"invalid agent: {exc.errors()[0].get('msg')}") from exc
        record = await self._service.create(
            params, extra_fields=dict(spec.recordFields) or None, env=spec.env
        )
        return self._current(record)

    def _current(self, record: AgentRecord) -> AgentRecord:
        """The newest in-memory state of ``record``'s agent."""
        agent = self._service.agents.get(record.id)
        return agent.record if agent is not None else record

    async def _agent(self, agent_id: str) -> LiveAgent:
        return await self._service.get(agent_id)

    async def get(self, agent: str) -> AgentRecord:
        return (await self._agent(agent)).record

    async def list(
        self,
        query: AgentQuery | None = None,
        *,
        cursor: str | None = None,
        limit: int | None = None,
    ) -> AgentPage:
        query = query or AgentQuery()
        admit = ListFilter(
            include_archived=query.include_archived,
            labels=dict(query.labels) or None,
            provider=query.provider,
            workspace_id=query.workspace_id,
            statuses=set(query.statuses) if query.statuses is not None else None,
            id_prefix=query.id_prefix,
            title=query.title,
        )
        page = await self._service.list_agents(
            admit, cursor=cursor, limit=limit, newest_first=query.newest_first
        )
        records = page.records
        if query.cwd is not None:
            # The store has no cwd index: a page may hold fewer than ``limit`` (never more).
            records = [record for record in records if record.cwd == query.cwd]
        return AgentPage(items=records, next_cursor=page.next_cursor)

    # ------------------------------------------------------------------ operations

    async def send(
        self,
        agent_id: str,
        text: str,
        *,
        message_id: str | None = None,
        images: Sequence[PromptImage] = (),
    ) -> SendResult:
        agent, sent_id, accepted = await self._service.send(
            agent_id, text, message_id, list(images) or None
        )
        return SendResult(agent=agent.record, message_id=sent_id, accepted=accepted)

    async def interrupt(self, agent_id: str) -> AgentRecord:
        return (await self._service.interrupt(agent_id)).record

    async def stop(self, agent_id: str) -> AgentRecord:
        return (await self._service.close_agent(agent_id)).record

    async def archive(self, agent_id: str, *, force: bool = False) -> AgentRecord:
        if not force:
            agent = await self._agent(agent_id)
            if agent.record.archivedAt is None and self._service.outcome(agent) is None:
                raise Conflict(
                    f"agent {agent.id[:8]} is running a turn; interrupt it first or archive "
                    "with force",
                    data={"agentId": agent.id},
                )
        return (await self._service.archive(agent_id)).record

    async def restore(self, agent_id: str) -> AgentRecord:
        return (await self._service.restore(agent_id)).record

    async def delete(self, agent_id: str) -> None:
        await self._service.delete(agent_id)

    async def pending_permissions(self, agent_id: str) -> builtins.list[PermissionRequest]:
        return [request for _, request in await self._service.pending_permissions(agent_id)]

    async def all_pending_permissions(self) -> dict[str, builtins.list[PermissionRequest]]:
        pending: dict[str, builtins.list[PermissionRequest]] = {}
        for agent_id, request in await self._service.pending_permissions(None):
            pending.setdefault(agent_id, []).append(request)
        return pending

    async def answer_permission(
        self, agent_id: str, request_id: str, answer: PermissionAnswer
    ) -> AgentRecord:
        agent = await self._service.respond_permission(
            agent_id,
            request_id,
            allow=answer.behavior == "allow",
            updated_input=answer.updated_input,
            message=answer.message,
            interrupt=answer.interrupt,
        )
        return agent.record

    async def set_mode(self, agent_id: str, mode_id: str) -> AgentRecord:
        return (await self._service.set_option(agent_id, "modeId", mode_id)).record

    async def set_model(self, agent_id: str, model: str) -> AgentRecord:
        return (await self._service.set_option(agent_id, "model", model)).record

    async def update(
        self,
        agent_id: str,
        *,
        title: str | None = None,
        labels: Mapping[str, str | None] | None = None,
    ) -> AgentRecord:
        agent = await self._service.update(agent_id, title=title, labels=dict(labels or {}))
        return agent.record

    async def wait(self, agent_id: str, *, timeout: float) -> WaitResult:  # noqa: ASYNC109
        agent, outcome = await self._service.wait(agent_id, max(0.0, timeout))
        ended: WaitOutcome = outcome  # type: ignore[assignment]
        return WaitResult(
            agent=agent.record,
            outcome=ended,
            last_reply=await self._service.last_reply(agent),
            pending_permissions=list(agent.pending.values()),
        )

    async def ensure_session(self, agent_id: str) -> AgentRecord:
        agent = await self._agent(agent_id)
        if agent.session is None and agent.record.archivedAt is None:
            try:
                await self._service.ensure_session(agent.id)
            except AgentStartError as exc:
                # The port's error for a provider that cannot start; the message says why.
                raise Unavailable(str(exc)) from None
        return agent.record

    async def timeline(
        self, agent_id: str, *, after_seq: int | None = None, limit: int = 200
    ) -> TimelinePage:
        agent = await self._agent(agent_id)
        await agent.timeline.load()
        after: tuple[str, int] | None = None
        if after_seq is not None:
            after = (agent.timeline.epoch or "", after_seq)
        epoch, entries, reset, has_more = await self._service.timeline_window(
            agent, after=after, before=None, limit=max(1, limit), tail=False
        )
        return TimelinePage(
            epoch=epoch,
            entries=[typed_entry(entry) for entry in entries],
            has_more=has_more,
            reset=reset,
        )

    async def last_reply(self, agent_id: str) -> str | None:
        return await self._service.last_reply(await self._agent(agent_id))
