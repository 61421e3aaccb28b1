"""Pending permission requests: answering one, and listing them.

A request is pending from its ``permission_requested`` entry until it is answered, withdrawn
by the provider or its turn ends (see :func:`paseo.agents.ingest.apply`). An answer from a
client is announced by the kernel (``permission_resolved``), so the provider's own
announcement of it is not recorded twice.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable
from typing import Any

from paseo_hookspecs.errors import NotFound, Unavailable
from paseo_hookspecs.events import (
    AllowResolution,
    DenyResolution,
    PermissionRequest,
    PermissionResolution,
    PermissionResolved,
)

from paseo.agents.live import LiveAgent


async def respond(
    agent: LiveAgent,
    request_id: str,
    *,
    allow: bool,
    updated_input: dict[str, Any] | None = None,
    message: str | None = None,
    interrupt: bool = False,
) -> None:
    """Answer a pending request; every client then sees ``permission_resolved``."""
    state = agent.state
    request = state.take_request(request_id)
    if request is None:
        raise NotFound(
            f"agent {agent.id[:8]} has no pending permission request {request_id!r} "
            "(already answered?); see `paseo permit ls`",
            data={"agentId": agent.id, "requestId": request_id},
        )
    session = state.session
    resolution: PermissionResolution = (
        AllowResolution(updatedInput=updated_input)
        if allow
        else DenyResolution(message=message, interrupt=interrupt)
    )
    if session is None:
        raise Unavailable(f"agent {agent.id[:8]} has no running session to answer")
    state.answering(request_id)
    try:
        await session.respond_permission(request_id, resolution)
    except BaseException:
        state.answer_failed(request)
        raise
    await agent.timeline.add(
        PermissionResolved(
            provider=agent.record.provider, requestId=request_id, resolution=resolution
        )
    )
    if not allow and interrupt and state.provider_prompt is not None:
        with contextlib.suppress(Exception):
            await session.interrupt()


def pending(agents: Iterable[LiveAgent]) -> list[tuple[str, PermissionRequest]]:
    """``(agentId, request)`` of every pending request of ``agents``."""
    return [(agent.id, request) for agent in agents for request in agent.state.pending.values()]
