""":class:`~paseo.speech.voice.VoiceAgents` over the agent manager.

It uses only these members of :class:`paseo.agents.manager.AgentService`: ``get``, ``send``,
``interrupt``, ``close_agent`` and ``respond_permission`` (and the live agent's ``session``,
``busy``-free ``record``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from paseo.agents.manager import AgentService


class AgentServiceVoicePort:
    """Voice mode's view of the agent service (looked up through a callable: the speech
    service is built beside it)."""

    def __init__(self, service: Callable[[], AgentService]) -> None:
        self._service = service

    async def resolve(self, reference: str) -> str:
        return (await self._service().get(reference)).id

    async def refresh_tools(self, agent_id: str) -> None:
        service = self._service()
        if (await service.get(agent_id)).session is not None:
            # MCP clients list tools when they connect: the next prompt resumes the
            # conversation in a new process, which lists them again.
            await service.close_agent(agent_id, reason="reloaded")

    async def prompt(self, agent_id: str, text: str) -> None:
        await self._service().send(agent_id, text)

    async def interrupt(self, agent_id: str) -> bool:
        service = self._service()
        running = (await service.get(agent_id)).record.lastStatus == "running"
        await service.interrupt(agent_id)
        return running

    async def approve(self, agent_id: str, request_id: str) -> None:
        await self._service().respond_permission(agent_id, request_id, allow=True)
