"""The agents' typed event source: every record change and durable timeline entry, once.

The roster tells the :class:`AgentFeed` what happened, typed (the record, the durable entry
and the event model it holds), at the points where it happens: a record created, written or
deleted, a batch of entries made durable, pending permission requests withdrawn by the end of
a turn. The feed hands each fact to its listeners synchronously and in order; attention and
permission facts are read off the typed events (``AttentionRequired``, ``PermissionRequested``,
``PermissionResolved``), never off wire notifications.

The listeners are fixed when the agent service is built: the wire streams (:class:`WireStreams`:
``agents`` and ``agent:{id}``, published at once, on the hot path), the plugin taps
(:class:`PluginTaps`: ``paseo_agent_event`` and ``paseo_attention``), and the port's
subscribers (:class:`paseo.agents.port.subscribers.AgentSubscribers`, which only queue).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any, Protocol

from paseo_hookspecs.agents import RecordChangeKind
from paseo_hookspecs.events import AgentEvent, AttentionRequired
from paseo_hookspecs.records import AgentRecord, TimelineEntry, dump_record

from paseo.agents.live import AGENTS_STREAM, agent_stream
from paseo.agents.ports import AgentPlugins
from paseo.services import Publisher

log = logging.getLogger("paseo.agents")

METHODS: dict[RecordChangeKind, str] = {
    "created": "agent.created",
    "updated": "agent.updated",
    "deleted": "agent.deleted",
}


class FeedListener(Protocol):
    """Told every fact at once, on the loop, in order; must not block or raise."""

    def record_changed(self, kind: RecordChangeKind, record: AgentRecord) -> None:
        """``record`` was first stored, written, or deleted (its last state)."""

    def entry_committed(self, record: AgentRecord, entry: TimelineEntry, event: AgentEvent) -> None:
        """``entry`` of ``record``'s agent is durable; ``event`` is the model it was made from."""

    def permissions_withdrawn(self, record: AgentRecord, request_ids: Sequence[str]) -> None:
        """Pending requests that ended unanswered (the turn ended, the session closed)."""


class AgentFeed:
    """See the module docstring."""

    def __init__(self, listeners: Sequence[FeedListener]) -> None:
        self._listeners = tuple(listeners)

    def record_changed(self, kind: RecordChangeKind, record: AgentRecord) -> None:
        for listener in self._listeners:
            try:
                listener.record_changed(kind, record)
            except Exception:
                log.exception("an agent feed listener failed on a record change")

    def entry_committed(self, record: AgentRecord, entry: TimelineEntry, event: AgentEvent) -> None:
        for listener in self._listeners:
            try:
                listener.entry_committed(record, entry, event)
            except Exception:
                log.exception("an agent feed listener failed on a timeline entry")

    def permissions_withdrawn(self, record: AgentRecord, request_ids: Sequence[str]) -> None:
        if not request_ids:
            return
        for listener in self._listeners:
            try:
                listener.permissions_withdrawn(record, request_ids)
            except Exception:
                log.exception("an agent feed listener failed on withdrawn permissions")


class WireStreams:
    """The ``agents`` and ``agent:{id}`` streams clients subscribe to."""

    def __init__(self, publisher: Publisher) -> None:
        self._publisher = publisher

    def record_changed(self, kind: RecordChangeKind, record: AgentRecord) -> None:
        # Internal agents (the daemon's own helpers) are never shown to clients.
        if record.internal:
            return
        if kind == "deleted":
            self._publisher.publish(AGENTS_STREAM, "agent.deleted", {"agentId": record.id})
        else:
            self._publisher.publish(AGENTS_STREAM, METHODS[kind], {"agent": dump_record(record)})

    def entry_committed(self, record: AgentRecord, entry: TimelineEntry, event: AgentEvent) -> None:
        self._publisher.publish(
            agent_stream(record.id),
            "agent.event",
            {"agentId": record.id, "entry": wire_entry(entry)},
        )

    def permissions_withdrawn(self, record: AgentRecord, request_ids: Sequence[str]) -> None:
        return None  # the timeline's terminal event says it to clients


def wire_entry(entry: TimelineEntry) -> dict[str, Any]:
    """``dump_record(entry)``, without a model dump per streamed chunk: the entry's fields are
    plain JSON values already (its ``event`` was dumped when the entry was made), so the frame
    encoder serialises it once, from this dict."""
    if entry.__pydantic_extra__ or len(entry.model_fields_set) != len(_ENTRY_FIELDS):
        return dict(dump_record(entry))  # read from disk with unknown or absent fields
    return {
        "agentId": entry.agentId,
        "seq": entry.seq,
        "epoch": entry.epoch,
        "timestamp": entry.timestamp,
        "event": entry.event,
    }


_ENTRY_FIELDS = ("agentId", "seq", "epoch", "timestamp", "event")


class PluginTaps:
    """The ``paseo_agent_event`` and ``paseo_attention`` hooks."""

    def __init__(self, plugins: AgentPlugins) -> None:
        self._plugins = plugins

    def record_changed(self, kind: RecordChangeKind, record: AgentRecord) -> None:
        return None

    def entry_committed(self, record: AgentRecord, entry: TimelineEntry, event: AgentEvent) -> None:
        self._plugins.agent_event(record.id, record.provider, event)
        if isinstance(event, AttentionRequired):
            self._plugins.attention(record.id, event.reason, event.timestamp)

    def permissions_withdrawn(self, record: AgentRecord, request_ids: Sequence[str]) -> None:
        return None
