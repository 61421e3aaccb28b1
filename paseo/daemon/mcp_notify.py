"""notifyOnFinish: a parent's ``<paseo-system>`` prompt when its child finishes, errors or needs
a permission.

A child created with ``notifyOnFinish`` carries the label :data:`NOTIFY_LABEL` beside
``paseo.parent-agent-id``. When it asks for attention, a notice is queued in
``$PASEO_HOME/mcp/notices.json`` (written atomically before anything is sent) and delivered
when the parent is not busy: a prompt sent to a running agent would replace its turn, so a busy
parent gets it after its own turn ends (its attention triggers delivery). A notice is removed
only once the parent's prompt was accepted, so a restart loses none: the queue is delivered
again when the daemon starts.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from paseo_hookspecs.atomic import atomic_write_json, read_json
from paseo_hookspecs.mcp_host import NOTIFY_LABEL, PARENT_LABEL

if TYPE_CHECKING:
    from paseo.agents.manager import AgentService

log = logging.getLogger("paseo.mcp")

WHAT = {
    "finished": "finished its turn",
    "error": "stopped with an error",
    "permission": "is waiting for a permission decision",
}


def notice_text(child_id: str, title: str | None, reason: str) -> str:
    name = f"{title} ({child_id})" if title else child_id
    what = WHAT.get(reason, f"needs attention ({reason})")
    hint = (
        "Use list_pending_permissions and respond_to_permission."
        if reason == "permission"
        else "Use wait_for_agent or get_agent_activity to read its result."
    )
    return f"<paseo-system>Agent {name} {what}. {hint}</paseo-system>"


class FinishNotices:
    """The durable queue of parent notices (see the module docstring)."""

    def __init__(self, path: Path, agents: Callable[[], AgentService]) -> None:
        self._path = path
        self._agents = agents
        self._queue: list[dict[str, str]] = []
        self._lock = asyncio.Lock()

    async def load(self) -> None:
        """Read the queue left by the previous run, then deliver what can be."""
        try:
            stored: Any = await asyncio.to_thread(read_json, self._path)
        except FileNotFoundError:
            stored = []
        except (OSError, ValueError) as exc:
            log.warning("%s is unreadable (%s); starting with no queued notices", self._path, exc)
            stored = []
        self._queue = [
            item
            for item in (stored if isinstance(stored, list) else [])
            if isinstance(item, dict) and {"parentId", "childId", "text"} <= item.keys()
        ]
        await self.deliver()

    async def attention(self, agent_id: str, reason: str) -> None:
        """``agent_id`` asks for attention: queue its parent's notice, if it asked for one;
        deliver what is queued (the agent may be a parent that just became free)."""
        agents = self._agents()
        live = agents.agents.get(agent_id)
        if live is not None:
            labels = live.record.labels
            parent = labels.get(PARENT_LABEL)
            if parent and labels.get(NOTIFY_LABEL) == "true":
                async with self._lock:
                    self._queue.append(
                        {
                            "parentId": parent,
                            "childId": agent_id,
                            "reason": reason,
                            "text": notice_text(agent_id, live.record.title, reason),
                        }
                    )
                    await self._save()
        await self.deliver()

    async def deliver(self) -> None:
        """Send each idle parent its oldest notice (one per parent per pass: the next one waits
        for the turn this one starts to end)."""
        agents = self._agents()
        async with self._lock:
            before = len(self._queue)
            served: set[str] = set()
            for notice in list(self._queue):
                parent_id = notice["parentId"]
                parent = await agents.load(parent_id)
                if parent is None or parent.deleted:
                    self._queue.remove(notice)
                    continue
                busy = (
                    parent.record.lastStatus == "running"
                    or parent.next_prompt is not None
                    or parent.provider_prompt is not None
                )
                if busy or parent_id in served:
                    continue
                served.add(parent_id)
                try:
                    await agents.send(parent_id, notice["text"])
                except Exception:
                    log.exception("agent %s: the notice for its child failed", parent_id)
                    continue
                self._queue.remove(notice)
            if len(self._queue) != before:
                await self._save()

    async def _save(self) -> None:
        self._path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        await asyncio.to_thread(atomic_write_json, self._path, self._queue, mode=0o600)
