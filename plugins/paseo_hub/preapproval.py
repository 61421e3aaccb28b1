"""Pre-approval of the tools a Hub granted an execution, whatever the provider.

A permission request of a Hub-owned agent for exactly a granted tool (``mcp__<server>__<tool>``,
listed in the record's ``hubToolPolicy``) is allowed at once through
``AgentControl.answer_permission``; every other request waits for a person as usual. The grants
live in the record, so they hold after a restart with the agent, and the observer runs from
``paseo_startup`` to ``paseo_shutdown`` whether or not the Hub is reachable: an agent resumed
while the socket is down still finishes its execution without asking anyone.
"""

from __future__ import annotations

import logging

from paseo_hookspecs.agents import AgentControl, AgentObserver, PermissionAnswer, RecordChange
from paseo_hookspecs.errors import PaseoError
from paseo_hookspecs.events import PermissionRequest

from paseo_hub.models import grants_of

log = logging.getLogger("paseo.hub")

ALLOW = PermissionAnswer(behavior="allow")


class PreApprover(AgentObserver):
    """Allows a Hub-owned agent's request for a granted tool (see the module docstring)."""

    def __init__(self, agents: AgentControl) -> None:
        self._agents = agents
        self._grants: dict[str, frozenset[str]] = {}
        """agent id → its granted tools, as its record last said (empty: none)."""

    async def on_record(self, change: RecordChange) -> None:
        if change.kind == "deleted":
            self._grants.pop(change.record.id, None)
        else:
            self._grants[change.record.id] = grants_of(change.record)

    async def on_overflow(self, lost: int) -> None:
        # Record changes may have been lost: read the grants afresh when next asked.
        self._grants.clear()

    async def _granted(self, agent_id: str) -> frozenset[str]:
        grants = self._grants.get(agent_id)
        if grants is None:
            # An agent whose record did not change since we subscribed (one resumed after a
            # restart): its record says what it was granted.
            try:
                grants = grants_of(await self._agents.get(agent_id))
            except PaseoError:
                return frozenset()
            self._grants[agent_id] = grants
        return grants

    async def on_permission_requested(self, agent_id: str, request: PermissionRequest) -> None:
        tool = request.toolName
        if tool is None or tool not in await self._granted(agent_id):
            return
        try:
            await self._agents.answer_permission(agent_id, request.id, ALLOW)
        except PaseoError as exc:  # answered or withdrawn meanwhile
            log.info("pre-approval of %s for agent %s: %s", request.id, agent_id, exc.message)
