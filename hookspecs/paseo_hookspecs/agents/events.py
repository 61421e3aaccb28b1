"""Observing agents: :class:`AgentEvents` and the :class:`AgentObserver` base.

Delivery is decoupled from the agents: the kernel puts each fact in every subscriber's own
bounded queue and returns; a task per subscriber calls its observer. So a slow observer delays
only itself, and one that raises is logged once (with its name) and keeps receiving. When a
queue is full, facts are dropped and :meth:`AgentObserver.on_overflow` says how many once the
queue has drained, so the observer can resync (``AgentControl.list``/``timeline``).
"""

from __future__ import annotations

from typing import Protocol

from paseo_hookspecs.agents.models import PermissionOutcome, RecordChange, TimelineEntry
from paseo_hookspecs.events import PermissionRequest
from paseo_hookspecs.records import AttentionReason

__all__ = ["AgentEvents", "AgentObserver", "Subscription"]


class AgentObserver:
    """Told about agent activity; override the callbacks you need (each defaults to nothing).

    For one agent, callbacks arrive in the order things happened, and the first about a new
    agent is its ``created`` record change. Timeline entries arrive once durable, with the
    ``seq`` a later ``AgentControl.timeline(after_seq=…)`` continues from. Callbacks run on the
    daemon's loop, one at a time per subscriber; treat what they receive as read-only.
    """

    async def on_record(self, change: RecordChange) -> None:
        """An agent record was created, changed or deleted."""

    async def on_event(self, agent_id: str, entry: TimelineEntry) -> None:
        """A timeline entry of ``agent_id`` became durable."""

    async def on_attention(self, agent_id: str, reason: AttentionReason, timestamp: str) -> None:
        """``agent_id`` asks for a person: it finished, failed, or needs a permission."""

    async def on_permission_requested(self, agent_id: str, request: PermissionRequest) -> None:
        """``agent_id`` waits for an answer to ``request`` (``AgentControl.answer_permission``)."""

    async def on_permission_resolved(
        self, agent_id: str, request_id: str, outcome: PermissionOutcome
    ) -> None:
        """A request is no longer pending: answered (``outcome``) or withdrawn (``None``)."""

    async def on_overflow(self, lost: int) -> None:
        """``lost`` callbacks were dropped because this subscriber fell behind."""


class Subscription(Protocol):
    def close(self) -> None:
        """Stop delivering (what is queued is dropped); idempotent."""


class AgentEvents(Protocol):
    def subscribe(
        self,
        observer: AgentObserver,
        *,
        name: str,
        max_pending: int = 1024,
        include_internal: bool = False,
    ) -> Subscription:
        """Deliver every agent's activity to ``observer`` from now on (the daemon's internal
        helper agents' only with ``include_internal``). ``name`` (e.g. the plugin's id) names
        the subscriber in logs; at most ``max_pending`` callbacks wait in its queue. Close the
        subscription in ``paseo_shutdown``."""
