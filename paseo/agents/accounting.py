"""Usage accounting: a :class:`~paseo_hookspecs.usage.UsageRecord` for every turn that ends.

Each agent's timeline asks :meth:`Accounting.usage_of` for the record of every terminal turn
event (``turn_completed``, ``turn_canceled``, ``turn_failed``) and writes it in the same
atomic write as the event's entry (``TimelineRepository.append_with_usage``), so a crash never
leaves a finished turn without its usage; on a store without that method the roster calls
:meth:`Accounting.turn_ended` once the entry is durable. Either way it is before any client
sees the turn end, so once a client learns a turn ended its usage is on disk too. What the
provider reported is recorded as it is: a token count or cost the provider did not report stays
``None``. The record's id is the timeline entry's (agent, epoch, seq), so a retried write never
counts a turn twice.

What caused the turn is read from the agent's labels: a schedule, loop or Hub execution, or
``metadata`` for an internal metadata agent, which is accounted under the agent it served when
its labels name one.
"""

from __future__ import annotations

import logging

from paseo_hookspecs.events import (
    TERMINAL_TURN_EVENTS,
    AgentEvent,
    TurnCanceled,
    TurnCompleted,
    TurnFailed,
)
from paseo_hookspecs.interfaces.store import Store
from paseo_hookspecs.records import AgentRecord, TimelineEntry
from paseo_hookspecs.usage import UsageRecord, UsageTotals

log = logging.getLogger("paseo.agents.usage")

SOURCE_LABELS = (
    ("schedule", "paseo.schedule-id"),
    ("loop", "paseo.loop-id"),
    ("hub", "paseo.hub/execution"),
)
"""Labels naming what started an agent, in the order they are looked for."""

METADATA_LABEL = "paseo.metadata"
"""An internal metadata agent's label (its task)."""

SERVED_LABELS = ("paseo.metadata-for", "paseo.parent-agent-id")
"""Labels naming the agent an internal agent served."""

_OUTCOMES = {"turn_completed": "completed", "turn_canceled": "canceled", "turn_failed": "failed"}


def usage_record(
    record: AgentRecord, entry: TimelineEntry, event: AgentEvent, *, project_id: str | None
) -> UsageRecord | None:
    """The usage of the turn ``event`` ended, or ``None`` when it is no terminal event."""
    if not isinstance(event, TurnCompleted | TurnCanceled | TurnFailed):
        return None
    usage = event.usage
    labels = record.labels
    agent_id, source, source_id = record.id, None, None
    for kind, label in SOURCE_LABELS:
        if labels.get(label):
            source, source_id = kind, labels[label]
            break
    if METADATA_LABEL in labels:
        source, source_id = "metadata", labels[METADATA_LABEL]
        agent_id = next((labels[name] for name in SERVED_LABELS if labels.get(name)), record.id)
    runtime = record.runtimeInfo
    model = (runtime.model if runtime is not None else None) or (
        record.config.model if record.config is not None else None
    )
    return UsageRecord(
        id=f"{record.id}:{entry.epoch}:{entry.seq}",
        at=entry.timestamp,
        agentId=agent_id,
        provider=record.provider,
        model=model,
        projectId=project_id,
        workspaceId=record.workspaceId,
        source=source,
        sourceId=source_id,
        outcome=_OUTCOMES[event.type],  # type: ignore[arg-type]
        inputTokens=usage.inputTokens if usage else None,
        outputTokens=usage.outputTokens if usage else None,
        cacheReadTokens=usage.cachedInputTokens if usage else None,
        cacheWriteTokens=getattr(usage, "cacheWriteTokens", None) if usage else None,
        costUsd=usage.costUsd if usage else None,
    )


class Accounting:
    """Writes usage records into the store's ``usage`` repository (nothing when it has none)."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self._projects: dict[str, str | None] = {}
        """Workspace id → its project (a workspace never changes project)."""

    @property
    def enabled(self) -> bool:
        return getattr(self._store, "usage", None) is not None

    async def project_of(self, workspace_id: str | None) -> str | None:
        if workspace_id is None:
            return None
        if workspace_id not in self._projects:
            workspace = await self._store.workspaces.get(workspace_id)
            self._projects[workspace_id] = workspace.projectId if workspace else None
        return self._projects[workspace_id]

    async def usage_of(
        self, record: AgentRecord, entry: TimelineEntry, event: AgentEvent
    ) -> UsageRecord | None:
        """The usage record of the turn ``event`` ends, to be written with its entry
        (``None``: it ends no turn, or the store keeps no usage)."""
        if event.type not in TERMINAL_TURN_EVENTS or not self.enabled:
            return None
        project = await self.project_of(record.workspaceId)
        return usage_record(record, entry, event, project_id=project)

    async def turn_ended(
        self, record: AgentRecord, entry: TimelineEntry, event: AgentEvent
    ) -> UsageRecord | None:
        """Record the usage of the turn ``event`` ended; returns the record written."""
        repository = getattr(self._store, "usage", None)
        if repository is None:
            return None
        try:
            project = await self.project_of(record.workspaceId)
            usage = usage_record(record, entry, event, project_id=project)
            if usage is None:
                return None
            await repository.add(usage)
        except Exception:
            # The turn's end is durable and reaches clients regardless; only its accounting
            # is lost, which the log says.
            log.exception("could not record the usage of agent %s", record.id)
            return None
        return usage

    async def totals(self, agent_id: str) -> UsageTotals:
        """Everything ``agent_id`` spent (zero on a store that keeps no usage)."""
        repository = getattr(self._store, "usage", None)
        if repository is None:
            return UsageTotals(key=agent_id)
        groups: list[UsageTotals] = await repository.query(agent_id=agent_id, group_by="agent")
        return groups[0] if groups else UsageTotals(key=agent_id)
