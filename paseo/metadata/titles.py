"""Titles on first prompts: the metadata service learns of an untitled agent's first prompt by
observing the agent port, so the agent service needs no reference to the metadata service
(which runs internal agents through it).

A prompt is a ``user_message`` timeline entry with a message id: the kernel stamps one on every
prompt it queues (``AgentControl.send``, ``agent.send``, an initial prompt). Messages read back
from a provider's own history carry none, so re-filling a timeline titles nothing — as before,
when the agent service asked for a title from ``send`` itself.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from paseo_hookspecs.agents import AgentObserver, RecordChange, TimelineEntry
from paseo_hookspecs.events import Timeline, UserMessageItem

UntitledCwd = Callable[[str], Awaitable["str | None"]]
"""``agent id -> its cwd`` while it has no title (``None``: titled, internal or gone)."""

RequestTitle = Callable[[str, str, str], None]
"""``(agent id, cwd, first prompt)``: title it in the background
(:meth:`paseo.metadata.service.MetadataService.request_title`)."""


class FirstPromptTitles(AgentObserver):
    """Asks once per daemon run for a title of each untitled agent, from its first prompt."""

    def __init__(self, untitled_cwd: UntitledCwd, request: RequestTitle) -> None:
        self._untitled_cwd = untitled_cwd
        self._request = request
        self._asked: set[str] = set()
        """Agents whose title was asked for in this run (once is enough)."""

    async def on_event(self, agent_id: str, entry: TimelineEntry) -> None:
        event = entry.event
        if not isinstance(event, Timeline) or agent_id in self._asked:
            return
        item = event.item
        if not isinstance(item, UserMessageItem) or item.messageId is None:
            return
        cwd = await self._untitled_cwd(agent_id)
        if cwd is None:
            return
        self._asked.add(agent_id)
        self._request(agent_id, cwd, item.text)

    async def on_record(self, change: RecordChange) -> None:
        if change.kind == "deleted":
            self._asked.discard(change.record.id)
