"""Event ingest as pure functions: what an agent's event means for its state and record.

Two steps, both free of I/O so they can be tested on their own:

- :func:`admit`, before an event is numbered: whether it enters the timeline at all (providers'
  own attention events, echoes of a prompt already recorded and permission answers already
  announced are dropped) and which attention it raises. Attention is derived here, never taken
  from providers: ``finished`` when the newest prompt's turn completes, ``error`` when it fails,
  ``permission`` when a request arrives; never for internal agents.
- :func:`apply`, once the entry is durable: the record changes (status, error, attention) and
  the effects on the live state (the turn ended, a request is pending or answered, the reply
  text so far).

"Newest prompt": a terminal event changes the status and raises attention only when the turn
it ends is the one of the newest prompt a client sent (``latest_prompt``), so the end of a run
being replaced never makes a waiter think the new run is over.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from paseo_hookspecs.events import (
    TERMINAL_TURN_EVENTS,
    AgentEvent,
    AssistantMessageItem,
    AttentionRequired,
    PermissionRequest,
    PermissionRequested,
    PermissionResolved,
    Timeline,
    TurnFailed,
    UserMessageItem,
)

AttentionReason = Literal["finished", "error", "permission"]


@dataclass(frozen=True)
class Reply:
    """The text of the agent's newest reply (one assistant message), as it streams."""

    message_id: str | None = None
    text: str | None = None


class TurnView(Protocol):
    """What ingest reads of a live agent (:class:`paseo.agents.live.LiveAgent` is one)."""

    @property
    def latest_prompt(self) -> str | None:
        """Message id of the newest prompt a client sent."""

    @property
    def provider_prompt(self) -> str | None:
        """Message id of the prompt the provider is running."""

    @property
    def latest_text(self) -> str | None: ...

    @property
    def seen(self) -> Collection[str]:
        """Client message ids already recorded."""

    @property
    def resolved(self) -> Collection[str]:
        """Permission requests a client answered (announced by the kernel)."""

    @property
    def internal(self) -> bool: ...

    @property
    def current_reply(self) -> Reply: ...


@dataclass(frozen=True)
class TurnState:
    """A plain :class:`TurnView` (for tests and tools)."""

    latest_prompt: str | None = None
    provider_prompt: str | None = None
    latest_text: str | None = None
    seen: Collection[str] = ()
    resolved: Collection[str] = ()
    internal: bool = False
    current_reply: Reply = Reply()


@dataclass(frozen=True)
class Admission:
    """An event that enters the timeline, and the attention it raises (if any)."""

    attention: AttentionReason | None = None


@dataclass
class Effects:
    """What a durable event changes."""

    changes: dict[str, Any] = field(default_factory=dict)
    """Record fields (JSON-ready)."""
    turn_ended: bool = False
    """The provider's run is over: no prompt in the provider, no request pending."""
    requested: PermissionRequest | None = None
    """Now pending."""
    answered: str | None = None
    """Id of a request no longer pending."""
    reply: Reply | None = None
    """The reply after a timeline item (``None``: unchanged)."""


def is_echo(state: TurnView, event: Timeline) -> bool:
    """A provider repeating a prompt the kernel already recorded."""
    item = event.item
    if not isinstance(item, UserMessageItem):
        return False
    return (item.messageId is not None and item.messageId in state.seen) or (
        item.text == state.latest_text
    )


def admit(state: TurnView, event: AgentEvent, *, from_provider: bool) -> Admission | None:
    """Whether ``event`` enters the timeline (``None``: dropped) and the attention it raises."""
    if from_provider:
        if isinstance(event, AttentionRequired):
            return None  # derived here, by one policy for every provider
        if isinstance(event, PermissionResolved) and event.requestId in state.resolved:
            return None  # already announced when a client answered
        if isinstance(event, Timeline) and is_echo(state, event):
            return None
    stale = event.type in TERMINAL_TURN_EVENTS and state.provider_prompt != state.latest_prompt
    reason: AttentionReason | None = None
    if event.type == "turn_completed" and not stale:
        reason = "finished"
    elif event.type == "turn_failed" and not stale:
        reason = "error"
    elif event.type == "permission_requested":
        reason = "permission"
    return Admission(attention=None if state.internal else reason)


def follow_reply(reply: Reply, item: Any) -> Reply:
    """The reply after timeline item ``item``: assistant text adds to the newest message (a new
    message id starts over), a user message clears it."""
    if isinstance(item, AssistantMessageItem):
        if item.messageId != reply.message_id or reply.text is None:
            reply = Reply(item.messageId, "")
        return Reply(reply.message_id, (reply.text or "") + item.text)
    if isinstance(item, UserMessageItem):
        return Reply()
    return reply


def apply(state: TurnView, event: AgentEvent) -> Effects:
    """The effects of ``event`` once it is durable."""
    effects = Effects()
    current = state.provider_prompt == state.latest_prompt
    if event.type == "turn_started":
        if current:
            effects.changes["lastStatus"] = "running"
    elif event.type in TERMINAL_TURN_EVENTS:
        effects.turn_ended = True
        usage = getattr(event, "usage", None)
        if usage is not None:
            # Even for a superseded prompt's turn: it was spent, and it is the latest report.
            effects.changes["lastUsage"] = usage.model_dump(mode="json", exclude_none=True)
        if current:
            if isinstance(event, TurnFailed):
                error = event.error or "the turn failed"
                effects.changes["lastStatus"] = "error"
                effects.changes["lastError"] = (
                    f"{error}\n{event.diagnostic}" if event.diagnostic else error
                )
            else:
                effects.changes["lastStatus"] = "idle"
                if event.type == "turn_completed":
                    effects.changes["lastError"] = None
    elif isinstance(event, PermissionRequested):
        # Pending requests are shown as the timeline entry holds them (unset fields left out).
        effects.requested = PermissionRequest.model_validate(
            event.request.model_dump(mode="json", exclude_none=True)
        )
    elif isinstance(event, PermissionResolved):
        effects.answered = event.requestId
    elif isinstance(event, AttentionRequired):
        effects.changes["requiresAttention"] = True
        effects.changes["attentionReason"] = event.reason
        effects.changes["attentionTimestamp"] = event.timestamp
    elif isinstance(event, Timeline):
        effects.reply = follow_reply(state.current_reply, event.item)
    return effects
