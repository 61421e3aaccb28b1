""":class:`~paseo.schedules.ports.ScheduleAgents` over today's agent manager.

It uses only these members of :class:`paseo.agents.manager.AgentService`: ``get`` (resolve a
reference; ``record``/``busy`` of the live agent it returns), ``registry.default_provider``,
``create``, ``send``, ``wait`` and ``last_reply``. The agent service is looked up through a
callable because the schedules service is built before the agent service has started.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from paseo_hookspecs.errors import Conflict, NotFound
from paseo_hookspecs.records import NewAgentConfig, dump_record

from paseo.agents.profiles import find_profile
from paseo.schedules.ports import AgentState, TurnOutcome

if TYPE_CHECKING:
    from paseo.agents.live import LiveAgent
    from paseo.agents.manager import AgentService


class AgentServicePort:
    """The schedules' view of :class:`paseo.agents.manager.AgentService`."""

    def __init__(self, service: Callable[[], AgentService]) -> None:
        self._service = service

    async def lookup(self, reference: str) -> AgentState | None:
        try:
            agent = await self._service().get(reference)
        except NotFound:
            return None
        return AgentState(
            id=agent.id, archived=agent.record.archivedAt is not None, busy=_busy(agent)
        )

    def default_provider(self) -> str | None:
        return self._service().registry.default_provider()

    def profile_provider(self, reference: str) -> str:
        service = self._service()
        return find_profile(service.config.resolved.daemon.agentProfiles, reference).provider

    async def create(self, config: NewAgentConfig, prompt: str, labels: Mapping[str, str]) -> str:
        from paseo.agents.models import AgentCreateParams

        fields = dump_record(config)
        # Fields of the stored config that agent creation does not take (yet).
        for unused in ("archiveOnFinish", "isolation"):
            fields.pop(unused, None)
        params = AgentCreateParams.model_validate(
            {
                **{key: value for key, value in fields.items() if value is not None},
                "labels": dict(labels),
                "initialPrompt": prompt,
            }
        )
        record = await self._service().create(params)
        return record.id

    async def prompt(self, agent_id: str, prompt: str, message_id: str) -> None:
        service = self._service()
        agent = await service.get(agent_id)
        if agent.record.archivedAt is not None:
            raise Conflict(f"target agent {agent_id[:8]} is archived; restore it to resume runs")
        if _busy(agent):
            raise Conflict(
                f"target agent {agent_id[:8]} is busy with another turn; this run was skipped"
            )
        await service.send(agent.id, prompt, message_id)

    async def wait_turn(self, agent_id: str, *, within: float) -> TurnOutcome:
        service = self._service()
        agent, outcome = await service.wait(agent_id, within)
        reply = await service.last_reply(agent)
        if outcome == "idle":
            return TurnOutcome("succeeded", reply)
        errors = {
            "error": agent.record.lastError or "the agent's turn failed",
            "permission": "the agent is waiting for a permission answer (see `paseo permit ls`)",
            "closed": "the agent was stopped before its turn ended",
            "timeout": f"the turn did not end within {within:.0f}s",
        }
        return TurnOutcome("failed", reply, errors.get(outcome, f"the turn ended: {outcome}"))


def _busy(agent: LiveAgent) -> bool:
    return agent.busy or agent.record.lastStatus == "running"
