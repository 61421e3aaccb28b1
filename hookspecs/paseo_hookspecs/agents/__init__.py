"""The agent port: how a plugin drives and observes the daemon's agents.

The kernel hands every plugin an :class:`Agents` as ``DaemonContext.agents`` (in
``paseo_startup``): :class:`AgentControl` to create, prompt, interrupt, archive agents and answer
their permission requests, and :class:`AgentEvents` to observe them with typed callbacks
(:class:`AgentObserver`). ``docs/plugins.md`` ("Driving and observing agents") shows both.

.. versionadded:: 2.0
"""

from __future__ import annotations

from typing import Protocol

from paseo_hookspecs.agents.control import AgentControl, SessionContributor
from paseo_hookspecs.agents.events import AgentEvents, AgentObserver, Subscription
from paseo_hookspecs.agents.models import (
    AgentCreate,
    AgentPage,
    AgentQuery,
    BranchOff,
    CheckoutBranch,
    CheckoutPr,
    PermissionAnswer,
    PermissionOutcome,
    RecordChange,
    RecordChangeKind,
    SendResult,
    SessionExtras,
    TimelineEntry,
    TimelinePage,
    WaitOutcome,
    WaitResult,
    WorktreeTarget,
)

__all__ = [
    "AgentControl",
    "AgentCreate",
    "AgentEvents",
    "AgentObserver",
    "AgentPage",
    "AgentQuery",
    "Agents",
    "BranchOff",
    "CheckoutBranch",
    "CheckoutPr",
    "PermissionAnswer",
    "PermissionOutcome",
    "RecordChange",
    "RecordChangeKind",
    "SendResult",
    "SessionContributor",
    "SessionExtras",
    "Subscription",
    "TimelineEntry",
    "TimelinePage",
    "WaitOutcome",
    "WaitResult",
    "WorktreeTarget",
]


class Agents(AgentControl, AgentEvents, Protocol):
    """Both halves of the port: what ``DaemonContext.agents`` returns."""
