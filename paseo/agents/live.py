"""The daemon's in-memory handle of one agent, and the record changes a live session implies.

What the daemon knows of an agent's prompts, turns, requests and session is owned by its
:class:`~paseo.agents.state.AgentState` (a state machine without I/O); :class:`LiveAgent` holds
it with the agent's record, timeline, record writer, lock and runner task.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable, Collection, Coroutine, Mapping
from dataclasses import dataclass, field
from typing import Any

from paseo_hookspecs.events import PermissionRequest
from paseo_hookspecs.interfaces.agent import AgentSession
from paseo_hookspecs.records import AgentRecord, PersistenceHandle, RuntimeInfo, dump_record
from pydantic import ValidationError

from paseo.agents.ingest import Reply
from paseo.agents.record_writer import RecordWriter
from paseo.agents.state import AgentState
from paseo.agents.timeline import AgentTimeline

log = logging.getLogger("paseo.agents")

AGENTS_STREAM = "agents"
STREAM_ACCESS = frozenset({"local", "remote"})

DEFAULT_START_TIMEOUT = 60.0
"""Seconds a provider gets to start or resume a session (``PASEO_AGENT_START_TIMEOUT``)."""

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
    """The daemon's in-memory handle of one agent (the record is the durable part): its
    record, timeline and record writer, the lock serialising its session, its runner task,
    and its live :class:`~paseo.agents.state.AgentState`, which the agent modules ask and tell
    (the read-only properties here are that state's, for readers outside the agent rooms)."""

    record: AgentRecord
    """The current state; :attr:`writer` makes it durable behind it. Only the roster
    replaces it (:meth:`paseo.agents.roster.AgentRoster.save`)."""
    timeline: AgentTimeline
    writer: RecordWriter
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    """Serialises session start, close and reload."""
    state: AgentState = field(default_factory=AgentState)
    _runner: asyncio.Task[None] | None = None
    _changed: asyncio.Event | None = None
    activity_saved: float = 0.0
    budget_stop: str | None = None
    """What of its budget the running turn reached mid-turn (it is being interrupted), until
    the turn ends (see :meth:`paseo.agents.roster.AgentRoster.usage_reported`)."""
    """When ``lastActivityAt`` was last written (the roster's throttle)."""

    @property
    def id(self) -> str:
        return self.record.id

    @property
    def internal(self) -> bool:
        return bool(self.record.internal)

    # The state's reads (and :class:`paseo.agents.ingest.TurnView`), read-only.

    @property
    def session(self) -> AgentSession | None:
        return self.state.session

    @property
    def next_prompt(self) -> tuple[str, str] | None:
        return self.state.next_prompt

    @property
    def latest_prompt(self) -> str | None:
        return self.state.latest_prompt

    @property
    def latest_text(self) -> str | None:
        return self.state.latest_text

    @property
    def provider_prompt(self) -> str | None:
        return self.state.provider_prompt

    @property
    def pending(self) -> Mapping[str, PermissionRequest]:
        return self.state.pending

    @property
    def resolved(self) -> Collection[str]:
        return self.state.resolved

    @property
    def seen(self) -> Collection[str]:
        return self.state.seen

    @property
    def current_reply(self) -> Reply:
        return self.state.current_reply

    @property
    def deleted(self) -> bool:
        return self.state.deleted

    @property
    def busy(self) -> bool:
        """A prompt is queued or running in the provider."""
        return self.state.busy

    # The runner task.

    def kick(self, run: Callable[[], Coroutine[Any, Any, None]]) -> None:
        """Run ``run()`` as the agent's runner task unless one runs."""
        if self._runner is None or self._runner.done():
            self._runner = asyncio.get_running_loop().create_task(run())

    @property
    def starting(self) -> bool:
        """The runner task works with no session yet (it is starting one)."""
        return self.state.session is None and self._runner is not None and not self._runner.done()

    def take_runner(self) -> asyncio.Task[None] | None:
        """The runner task, forgotten here (to be cancelled)."""
        runner, self._runner = self._runner, None
        return runner

    # What memory alone holds.

    @property
    def at_rest(self) -> bool:
        """Closed with nothing running, queued or unwritten: stopping has nothing to do."""
        return (
            self.state.session is None
            and self._runner is None
            and not self.state.busy
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
            self.state.quiet
            and self._runner is None
            and self._changed is None
            and not self.lock.locked()
            and self.timeline.idle
            and self.writer.idle
        )

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
    if not changes:  # most commit batches (streamed text) change nothing: no record dump
        return {}
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
