"""notifyOnFinish: a parent's ``<paseo-system>`` prompt when its child finishes, errors or needs
a permission.

A child created with ``notifyOnFinish`` carries :data:`~paseo_mcp.caller.NOTIFY_LABEL` beside
``paseo.parent-agent-id``. When it asks for attention (an :class:`AgentObserver` callback), a
notice is queued in ``notices.json`` of the plugin's state directory (written atomically, 0600,
before anything is sent) and delivered when the parent is not busy: a prompt sent to a running
agent would replace its turn, so a busy parent gets it after its own turn ends (its attention
triggers delivery). A notice is removed only once the parent's prompt was accepted, so a
restart loses none: the queue is delivered again when the daemon starts.

The daemon can also die after the child's attention entry is durable in its timeline but before
the notice is queued. So the file also keeps, per child, the timestamp of the attention last
queued (``notified``); at start the newest attention entry of every ``notifyOnFinish`` child
that no prompt has followed is compared with it, and one not yet queued is queued then. (A
``permission`` attention is not: the request died with the process.)

Before the MCP server was a plugin of its own the queue lived in ``$PASEO_HOME/mcp/``; that file
is read when the new one does not exist yet, and removed once the new one is written.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from pathlib import Path
from typing import Any

from paseo_hookspecs.agents import AgentControl, AgentObserver, AgentQuery
from paseo_hookspecs.atomic import atomic_write_json, read_json, sweep_temp_files
from paseo_hookspecs.errors import NotFound, PaseoError
from paseo_hookspecs.records import AgentRecord, AttentionReason

from paseo_mcp.caller import NOTIFY_LABEL, PARENT_LABEL

log = logging.getLogger("paseo.plugins.mcp")

ATTENTION_SCAN = 50
"""Newest timeline entries of a child searched at start for an attention not yet queued."""

TIMELINE_PAGE = 500

WHAT = {
    "finished": "finished its turn",
    "error": "stopped with an error",
    "permission": "is waiting for a permission decision",
    "budget": "spent its budget: its prompts are refused until it is raised",
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


class FinishNotices(AgentObserver):
    """The durable queue of parent notices (see the module docstring)."""

    def __init__(self, path: Path, agents: AgentControl, *, legacy_path: Path | None = None):
        self._path = path
        self._legacy = legacy_path
        self._agents = agents
        self._queue: list[dict[str, str]] = []
        self._notified: dict[str, str] = {}
        """child id → timestamp of the attention whose notice was queued last."""
        self._lock = asyncio.Lock()
        self._loaded = asyncio.Event()
        """Set once :meth:`load` has recovered the queue: attentions wait for it."""

    # ------------------------------------------------------------------ observer

    async def on_attention(self, agent_id: str, reason: AttentionReason, timestamp: str) -> None:
        try:
            await self.attention(agent_id, reason, timestamp)
        except Exception:
            # The notice stays queued when it was saved; the next attention delivers it.
            log.exception("agent %s: queueing or delivering a parent notice failed", agent_id)

    # ------------------------------------------------------------------ recovery

    async def load(self) -> None:
        """Read the queue left by the previous run, queue what a crash kept from it, then
        deliver what can be. Attentions wait until the queue is recovered (or failed to be)."""
        try:
            await self._read_queue()
        except Exception:
            log.exception("the queued notifyOnFinish notices could not be recovered")
        finally:
            self._loaded.set()
        await self.deliver()

    async def _read_document(self) -> Any:
        for path in (self._path, self._legacy):
            if path is None:
                continue
            try:
                return await asyncio.to_thread(read_json, path)
            except FileNotFoundError:
                continue  # nothing was ever queued there
            except (OSError, ValueError) as exc:
                log.warning("%s is unreadable (%s); starting with no queued notices", path, exc)
                return None
        return {"queue": [], "notified": {}}

    async def _read_queue(self) -> None:
        # Before the queue is first rewritten: a write killed half-way left its copy behind.
        await asyncio.to_thread(sweep_temp_files, self._path.parent, {self._path.name})
        stored = await self._read_document()
        document = stored if isinstance(stored, dict) else {"queue": stored}
        queue = document.get("queue")
        self._queue = [
            item
            for item in (queue if isinstance(queue, list) else [])
            if isinstance(item, dict) and {"parentId", "childId", "text"} <= item.keys()
        ]
        notified = document.get("notified")
        if isinstance(notified, dict):
            self._notified = {k: v for k, v in notified.items() if isinstance(v, str)}
            await self._recover()
        else:
            # A file from before the watermarks, or a damaged one: what children asked for
            # until now counts as notified, so nothing old is sent again.
            await self._recover(mark_only=True)

    async def _recover(self, *, mark_only: bool = False) -> None:
        """Queue the notice of every attention a crash kept from the queue. Watermarks of
        agents no longer there are dropped, so the file does not grow with every child."""
        wanted = AgentQuery(labels={NOTIFY_LABEL: "true"}, include_archived=True)
        page = await self._agents.list(wanted)
        children: dict[str, AgentRecord] = {record.id: record for record in page.items}
        changed = set(self._notified) - set(children)
        self._notified = {k: v for k, v in self._notified.items() if k in children}
        for child_id, record in children.items():
            parent = record.labels.get(PARENT_LABEL)
            if not parent:
                continue
            attention = await self._newest_attention(child_id)
            if attention is None or self._notified.get(child_id) == attention[1]:
                continue
            reason, timestamp = attention
            self._notified[child_id] = timestamp
            changed.add(child_id)
            if not mark_only and reason != "permission":
                log.info("agent %s: queueing the notice a restart kept from its parent", child_id)
                self._queue.append(self._notice(parent, child_id, record.title, reason))
        if changed or (self._legacy is not None and self._legacy.exists()):
            async with self._lock:
                await self._save()

    async def _newest_attention(self, agent_id: str) -> tuple[str, str] | None:
        """``(reason, timestamp)`` of the child's newest attention no prompt has followed."""
        tail: deque[dict[str, Any]] = deque(maxlen=ATTENTION_SCAN)
        after: int | None = None
        while True:
            page = await self._agents.timeline(agent_id, after_seq=after, limit=TIMELINE_PAGE)
            tail.extend(entry.event.model_dump(mode="json") for entry in page.entries)
            if not page.has_more or not page.entries:
                break
            after = page.entries[-1].seq
        for event in reversed(tail):
            item = event.get("item")
            if isinstance(item, dict) and item.get("type") == "user_message":
                return None
            if event.get("type") == "attention_required":
                reason, timestamp = event.get("reason"), event.get("timestamp")
                if isinstance(reason, str) and isinstance(timestamp, str):
                    return reason, timestamp
                return None
        return None

    @staticmethod
    def _notice(parent_id: str, child_id: str, title: str | None, reason: str) -> dict[str, str]:
        return {
            "parentId": parent_id,
            "childId": child_id,
            "reason": reason,
            "text": notice_text(child_id, title, reason),
        }

    # ------------------------------------------------------------------ queue

    async def attention(self, agent_id: str, reason: str, timestamp: str) -> None:
        """``agent_id`` asks for attention: queue its parent's notice, if it asked for one;
        deliver what is queued (the agent may be a parent that just became free)."""
        await self._loaded.wait()
        try:
            record: AgentRecord | None = await self._agents.get(agent_id)
        except PaseoError:
            record = None
        if record is not None:
            parent = record.labels.get(PARENT_LABEL)
            if parent and record.labels.get(NOTIFY_LABEL) == "true":
                async with self._lock:
                    if self._notified.get(agent_id) != timestamp:
                        self._notified[agent_id] = timestamp
                        self._queue.append(self._notice(parent, agent_id, record.title, reason))
                        await self._save()
        await self.deliver()

    async def deliver(self) -> None:
        """Send each idle parent its oldest notice (one per parent per pass: the next one waits
        for the turn this one starts to end)."""
        async with self._lock:
            before = len(self._queue)
            served: set[str] = set()
            for notice in list(self._queue):
                parent_id = notice["parentId"]
                try:
                    # A zero wait says whether the parent works now, a prompt on its way to
                    # its program included (``lastStatus`` alone lags behind that).
                    state = await self._agents.wait(parent_id, timeout=0)
                except NotFound:
                    state = None
                if state is None or state.agent.deletedAt is not None:
                    self._queue.remove(notice)
                    continue
                # A parent waiting for a permission decision is in the middle of its turn too.
                busy = state.outcome in ("timeout", "permission")
                if busy or parent_id in served:
                    continue
                served.add(parent_id)
                try:
                    await self._agents.send(parent_id, notice["text"])
                except Exception:
                    log.exception("agent %s: the notice for its child failed", parent_id)
                    continue
                self._queue.remove(notice)
            if len(self._queue) != before:
                await self._save()

    async def _save(self) -> None:
        document = {"queue": self._queue, "notified": self._notified}
        self._path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        await asyncio.to_thread(atomic_write_json, self._path, document, mode=0o600)
        if self._legacy is not None:
            with contextlib.suppress(FileNotFoundError):
                await asyncio.to_thread(self._legacy.unlink)
