"""The daemon's in-memory state of one agent, and the record changes a live session implies.

Turn bookkeeping: ``latest_prompt`` is the message id of the newest prompt a client sent;
``provider_prompt`` the one the provider is running. A terminal event (completed, failed,
canceled) changes the status and raises attention only when it ends the newest prompt, so the
end of a run being replaced never makes a waiter think the new run is over.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from paseo_hookspecs.events import PermissionRequest
from paseo_hookspecs.interfaces.agent import AgentSession, PromptImage
from paseo_hookspecs.records import AgentRecord, PersistenceHandle, RuntimeInfo, dump_record
from pydantic import ValidationError

from paseo.agents.ingest import Reply
from paseo.agents.record_writer import RecordWriter
from paseo.agents.timeline import AgentTimeline

log = logging.getLogger("paseo.agents")

AGENTS_STREAM = "agents"
STREAM_ACCESS = frozenset({"local", "remote"})

DEFAULT_START_TIMEOUT = 60.0
"""Seconds a provider gets to start or resume a session (``PASEO_AGENT_START_TIMEOUT``)."""

SEEN_MESSAGES = 1000
"""Client message ids remembered per agent for de-duplication."""

LIVE_STATUSES = frozenset({"initializing", "idle", "running"})


def start_timeout() -> float:
    raw = os.environ.get("PASEO_AGENT_START_TIMEOUT")
    try:
        return float(raw) if raw else DEFAULT_START_TIMEOUT
    except ValueError:
        return DEFAULT_START_TIMEOUT


AGENT_STREAM_PREFIX = "agent:"


def agent_stream(agent_id: str) -> str:
    """The stream carrying ``agent.event`` of one agent."""
    return AGENT_STREAM_PREFIX + agent_id


class AgentStartError(Exception):
    """A session could not be started; the message says what happened and what to do."""


@dataclass
class LiveAgent:
    """The daemon's in-memory state of one agent (the record is the durable part)."""

    record: AgentRecord
    """The current state; :attr:`writer` makes it durable behind it."""
    timeline: AgentTimeline
    writer: RecordWriter
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    """Serialises session start, close and reload."""
    session: AgentSession | None = None
    generation: int = 0
    """Bumped whenever a session is dropped: events of older sessions are ignored."""
    runner: asyncio.Task[None] | None = None
    next_prompt: tuple[str, str] | None = None
    images: dict[str, list[PromptImage]] = field(default_factory=dict)
    """The images of the queued prompt, by its message id."""
    want_session: bool = False
    latest_prompt: str | None = None
    latest_text: str | None = None
    provider_prompt: str | None = None
    pending: dict[str, PermissionRequest] = field(default_factory=dict)
    resolved: set[str] = field(default_factory=set)
    seen: OrderedDict[str, None] = field(default_factory=OrderedDict)
    seen_loaded: bool = False
    _changed: asyncio.Event | None = None
    activity_saved: float = 0.0
    reply_id: str | None = None
    reply: str | None = None
    reply_loaded: bool = False
    deleted: bool = False

    @property
    def id(self) -> str:
        return self.record.id

    @property
    def internal(self) -> bool:
        return bool(self.record.internal)

    @property
    def current_reply(self) -> Reply:
        return Reply(self.reply_id, self.reply)

    @property
    def busy(self) -> bool:
        """A prompt is queued or running in the provider."""
        return self.next_prompt is not None or self.provider_prompt is not None

    @property
    def at_rest(self) -> bool:
        """Closed with nothing running, queued or unwritten: stopping has nothing to do."""
        return (
            self.session is None
            and self.runner is None
            and not self.busy
            and self.record.lastStatus == "closed"
            and not self.lock.locked()
            and self.timeline.idle
            and self.writer.idle
        )

    @property
    def unloadable(self) -> bool:
        """Nothing lives only in memory: no session, run, queued prompt, permission request,
        waiter or unwritten change. Such an agent can be dropped and loaded again from the
        store (what it remembers of its timeline is read back on first use)."""
        return (
            self.session is None
            and self.runner is None
            and not self.busy
            and not self.want_session
            and not self.pending
            and self._changed is None
            and not self.lock.locked()
            and not self.deleted
            and self.timeline.idle
            and self.writer.idle
        )

    def remember(self, message_id: str) -> None:
        self.seen[message_id] = None
        while len(self.seen) > SEEN_MESSAGES:
            self.seen.popitem(last=False)

    @property
    def changed(self) -> asyncio.Event:
        """Set at the next :meth:`notify`; made on first wait (an Event per stored agent
        would cost every one of them a deque)."""
        if self._changed is None:
            self._changed = asyncio.Event()
        return self._changed

    def notify(self) -> None:
        """Wake every waiter (they re-check the state)."""
        if self._changed is not None:
            self._changed.set()
            self._changed = None


def differing(record: AgentRecord, changes: dict[str, Any]) -> dict[str, Any]:
    """The entries of ``changes`` that would change ``record``."""
    current = dump_record(record)
    return {k: v for k, v in changes.items() if k not in current or current[k] != v}


def runtime_changes(agent: LiveAgent, session: AgentSession) -> dict[str, Any]:
    """``runtimeInfo``, ``features`` (:meth:`AgentSession.features`, else a ``features`` key of
    ``runtime_info``) and ``persistence`` as the session reports them, where they differ from
    the record."""
    changes: dict[str, Any] = {}
    record = agent.record
    try:
        info = dict(session.runtime_info())
    except Exception:
        log.exception("agent %s: runtime_info failed", agent.id)
        info = {}
    features = info.pop("features", None)
    try:
        reported = session.features()
    except Exception:
        log.exception("agent %s: features failed", agent.id)
        reported = None
    if reported is not None:
        features = [dump_record(f) for f in reported]
    known = {"sessionId", "model", "thinkingOptionId", "modeId"}
    runtime: dict[str, Any] = {"provider": record.provider}
    runtime.update({k: info[k] for k in known if isinstance(info.get(k), str)})
    extra = {k: v for k, v in info.items() if k not in known}
    if extra:
        runtime["extra"] = extra
    try:
        runtime_json = dump_record(RuntimeInfo.model_validate(runtime))
    except ValidationError:
        runtime_json = {"provider": record.provider}
    if record.runtimeInfo is None or dump_record(record.runtimeInfo) != runtime_json:
        changes["runtimeInfo"] = runtime_json
    stored_features = None if record.features is None else [dump_record(f) for f in record.features]
    if isinstance(features, list) and stored_features != features:
        changes["features"] = features
    handle = session.persistence_handle()
    if handle is not None:
        data = handle.model_dump(mode="json")
        if data.get("metadata") is None:
            data.pop("metadata", None)
        try:
            stored = dump_record(PersistenceHandle.model_validate(data))
        except ValidationError:
            log.warning("agent %s: unusable persistence handle %r", agent.id, data)
        else:
            if record.persistence is None or dump_record(record.persistence) != stored:
                changes["persistence"] = stored
    mode = runtime.get("modeId")
    if isinstance(mode, str) and mode != record.lastModeId:
        changes["lastModeId"] = mode
    return changes
