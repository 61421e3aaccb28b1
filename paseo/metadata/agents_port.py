""":class:`~paseo.metadata.service.MetadataAgents` over the agent manager.

It uses only these members of :class:`paseo.agents.manager.AgentService`: ``registry``
(``usable``, ``availability``), ``create``, ``wait``, ``last_reply``, ``delete``, ``get`` and
``update``.
"""

from __future__ import annotations

import contextlib
import logging
from typing import TYPE_CHECKING

from paseo_hookspecs.errors import NotFound, PaseoError, Unavailable
from paseo_hookspecs.store import MAX_PAGE_SIZE, AgentFilter

from paseo.metadata.service import Candidate
from paseo.metadata.tasks import INSTRUCTIONS, TASK_KINDS, Task

if TYPE_CHECKING:
    from paseo.agents.manager import AgentService

log = logging.getLogger(__name__)

METADATA_LABEL = "paseo.metadata"
"""Label of an internal metadata agent: which task it runs."""
SERVED_LABEL = "paseo.metadata-for"
"""Label of an internal metadata agent: the agent it works for, when there is one."""


class AgentServicePort:
    """The metadata service's view of the agent manager."""

    def __init__(self, service: AgentService) -> None:
        self._service = service

    def usable(self, provider: str) -> bool:
        registry = self._service.registry
        try:
            if not registry.usable(provider).supports_no_tools():
                return False
        except PaseoError:
            return False
        # Automatic tries only what is known to work: right after boot nothing is yet.
        return registry.availability(provider).availability.status == "ready"

    async def answer(self, candidate: Candidate, cwd: str, task: Task, within: float) -> str:
        from paseo.agents.models import AgentCreateParams

        service = self._service
        if not service.registry.usable(candidate.provider).supports_no_tools():
            # Chosen by hand (Manual), but the task's text must never reach a program that
            # might act on it: the next candidate, as after any failure.
            raise Unavailable(
                f"provider {candidate.provider!r} cannot guarantee an agent without tools"
            )
        record = await service.create(
            AgentCreateParams(
                provider=candidate.provider,
                model=candidate.model,
                thinkingOptionId=candidate.thinking,
                cwd=cwd,
                systemPrompt=INSTRUCTIONS,
                # Native structured output where the provider has it (Claude, Codex).
                providerOptions={"outputSchema": task.schema},
                labels={
                    METADATA_LABEL: task.kind,
                    # Its usage is accounted under the agent it serves.
                    **({SERVED_LABEL: task.served} if task.served else {}),
                },
                initialPrompt=task.prompt,
                internal=True,
            )
        )
        try:
            agent, outcome = await service.wait(record.id, within)
            if outcome != "idle":
                raise RuntimeError(
                    f"the internal agent ended {outcome}: {agent.record.lastError or 'no reply'}"
                )
            return await service.last_reply(agent) or ""
        finally:
            # Gone either way: an internal agent outlives nothing it was started for.
            try:
                await service.delete(record.id)
            except Exception:
                log.exception("deleting the internal metadata agent %s failed", record.id)

    async def remove_leftovers(self) -> int:
        service = self._service
        # Read from the store: an internal agent a crash left idle is not loaded at start.
        left: list[str] = []
        for kind in TASK_KINDS:
            wanted = AgentFilter(labels={METADATA_LABEL: kind}, include_archived=True)
            cursor: str | None = None
            while True:
                page = await service.store.agents.list(wanted, cursor=cursor, limit=MAX_PAGE_SIZE)
                left.extend(record.id for record in page.items if record.internal)
                cursor = page.next_cursor
                if cursor is None:
                    break
        for agent_id in left:
            try:
                await service.delete(agent_id)
            except PaseoError as exc:
                log.warning("deleting the internal metadata agent %s failed: %s", agent_id, exc)
        return len(left)

    async def untitled_cwd(self, agent_id: str) -> str | None:
        """The cwd of ``agent_id`` while it has no title (``None``: titled, internal or gone)."""
        try:
            agent = await self._service.get(agent_id)
        except NotFound:
            return None
        record = agent.record
        if record.title is not None or agent.internal or agent.deleted:
            return None
        return record.cwd

    async def set_title(self, agent_id: str, title: str) -> None:
        with contextlib.suppress(NotFound):
            agent = await self._service.get(agent_id)
            if agent.record.title is None and not agent.deleted:
                await self._service.update(agent_id, title=title, labels={})
