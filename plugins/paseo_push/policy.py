"""Who hears about an agent that needs attention: a pure decision, no I/O.

The rules (after TypeScript Paseo's ``agent-attention-policy``):

1. Internal agents never notify.
2. A client active in the last :data:`ACTIVE_WINDOW` seconds, visible, and focused on the
   agent is already looking at it: nothing is sent.
3. Otherwise the most recently active *present* client gets an in-app notice. Present means
   active within the window, and for a mobile client also visible: a backgrounded phone app
   cannot show an in-app notice, a push reaches it instead.
4. With no client present, an Expo push goes out, except for errors (an error is worth a
   look when the user is back, not a buzz in their pocket).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

ACTIVE_WINDOW = 180.0
"""Seconds after its last activity that a client still counts as active (3 minutes)."""


@dataclass(frozen=True)
class ClientState:
    """What a client's latest ``client.heartbeat`` said, with times as epoch seconds."""

    client_id: str
    device_type: str
    focused_agent_id: str | None
    visible: bool
    last_activity: float


@dataclass(frozen=True)
class Decision:
    """``none`` (with why), ``in_app`` (to ``client_id``) or ``push``."""

    action: Literal["none", "in_app", "push"]
    why: str
    client_id: str | None = None


def _active(client: ClientState, now: float) -> bool:
    return now - client.last_activity < ACTIVE_WINDOW


def _present(client: ClientState, now: float) -> bool:
    return _active(client, now) and (client.visible or client.device_type != "mobile")


def decide(
    *,
    agent_id: str,
    reason: str,
    internal: bool,
    clients: list[ClientState],
    now: float,
) -> Decision:
    """The notification for ``agent_id`` asking for attention for ``reason``."""
    if internal:
        return Decision("none", "internal agent")
    if any(
        _active(c, now) and c.visible and c.focused_agent_id == agent_id for c in clients
    ):
        return Decision("none", "a client is viewing the agent")
    present = [c for c in clients if _present(c, now)]
    if present:
        recent = max(present, key=lambda c: c.last_activity)
        return Decision("in_app", "most recent client", recent.client_id)
    if reason == "error":
        return Decision("none", "errors are never pushed")
    return Decision("push", "no client present")
