"""The agent manager: the ``agents`` kernel service.

It owns every agent record and timeline write. Per agent it keeps the live provider session,
a runner task that starts (or resumes) the session and hands it prompts, the pending permission
requests, and the :class:`paseo.agents.timeline.AgentTimeline` that numbers, persists and
publishes events.

Turn bookkeeping: ``latest_prompt`` is the message id of the newest prompt a client sent;
``provider_prompt`` the one the provider is running. A terminal event (completed, failed,
canceled) changes the status and raises attention only when it ends the newest prompt, so the
end of a run being replaced never makes a waiter think the new run is over.

Attention is derived here (never from providers): ``finished`` when a turn completes, ``error``
when it fails, ``permission`` when a request arrives; never for internal agents. Clients clear
it with ``agent.attention.clear``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
import uuid
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from paseo_hookspecs.errors import Conflict, InvalidParams, NotFound, PaseoError, Unavailable
from paseo_hookspecs.events import AllowResolution, DenyResolution, PermissionRequest
from paseo_hookspecs.interfaces.agent import AgentSession, SessionConfig
from paseo_hookspecs.interfaces.agent import PersistenceHandle as SessionHandle
from paseo_hookspecs.records import (
    AgentRecord,
    PersistenceHandle,
    RuntimeInfo,
    SerializableConfig,
    TimelineEntry,
    dump_record,
    new_agent_id,
)
from paseo_hookspecs.store import AgentFilter
from pydantic import BaseModel, ValidationError

from paseo.agents.process import set_process_tracker
from paseo.agents.record_writer import RecordWriter
from paseo.agents.registry import ProviderRegistry
from paseo.agents.resolve import resolve_agent
from paseo.agents.timeline import AgentTimeline
from paseo.agents.tracker import ManagedProcessTracker, iso_now, reconcile_orphans

if TYPE_CHECKING:
    from paseo_hookspecs.registration import RpcMethodGroup

    from paseo.agents.models import AgentCreateParams
    from paseo.daemon.runtime import Daemon

log = logging.getLogger("paseo.agents")

AGENTS_STREAM = "agents"
STREAM_ACCESS = frozenset({"local", "remote"})

DEFAULT_START_TIMEOUT = 60.0
"""Seconds a provider gets to start or resume a session (``PASEO_AGENT_START_TIMEOUT``)."""

SETTLE_TIMEOUT = 10.0
"""Seconds an interrupted turn gets to end before its session is restarted."""

CLOSE_TIMEOUT = 10.0
"""Bound on one session's ``close``; the process tracker reaps whatever is left after it."""

ACTIVITY_SAVE_INTERVAL = 1.0
"""``lastActivityAt`` alone is written at most this often."""

OPEN_TURN_SCAN = 200
"""Newest timeline entries searched for the start or end of a turn when recovering."""

SEEN_MESSAGES = 1000
"""Client message ids remembered per agent for de-duplication."""

TERMINAL = frozenset({"turn_completed", "turn_failed", "turn_canceled"})
LIVE_STATUSES = frozenset({"initializing", "idle", "running"})


def start_timeout() -> float:
    raw = os.environ.get("PASEO_AGENT_START_TIMEOUT")
    try:
        return float(raw) if raw else DEFAULT_START_TIMEOUT
    except ValueError:
        return DEFAULT_START_TIMEOUT


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
    want_session: bool = False
    latest_prompt: str | None = None
    latest_text: str | None = None
    provider_prompt: str | None = None
    pending: dict[str, PermissionRequest] = field(default_factory=dict)
    resolved: set[str] = field(default_factory=set)
    seen: OrderedDict[str, None] = field(default_factory=OrderedDict)
    seen_loaded: bool = False
    changed: asyncio.Event = field(default_factory=asyncio.Event)
    activity_saved: float = 0.0
    reply_id: str | None = None
    reply: str | None = None
    reply_loaded: bool = False
    deleted: bool = False

    @property
    def id(self) -> str:
        return self.record.id

    @property
    def busy(self) -> bool:
        """A prompt is queued or running in the provider."""
        return self.next_prompt is not None or self.provider_prompt is not None

    def remember(self, message_id: str) -> None:
        self.seen[message_id] = None
        while len(self.seen) > SEEN_MESSAGES:
            self.seen.popitem(last=False)

    def notify(self) -> None:
        """Wake every waiter (they re-check the state)."""
        self.changed.set()
        self.changed = asyncio.Event()


def _differing(record: AgentRecord, changes: dict[str, Any]) -> dict[str, Any]:
    """The entries of ``changes`` that would change ``record``."""
    current = dump_record(record)
    return {k: v for k, v in changes.items() if k not in current or current[k] != v}


def _event_dict(event: Any) -> dict[str, Any]:
    if isinstance(event, BaseModel):
        data: dict[str, Any] = event.model_dump(mode="json", exclude_none=True)
        return data
    return dict(event)


class AgentService:
    """See the module docstring. Reachable by RPC handlers as the service named ``agents``."""

    name = "agents"

    def __init__(self, daemon: Daemon) -> None:
        self.daemon = daemon
        self.agents: dict[str, LiveAgent] = {}
        self._tracker: ManagedProcessTracker | None = None
        self._registry: ProviderRegistry | None = None
        self._background: set[asyncio.Task[Any]] = set()
        self._streams_ready = False

    # ================================================================ service lifecycle

    def rpc_groups(self) -> list[RpcMethodGroup]:
        from paseo.agents.rpc import method_groups

        return method_groups()

    @property
    def registry(self) -> ProviderRegistry:
        if self._registry is None:
            raise RuntimeError("the agent service has not started")
        return self._registry

    @property
    def tracker(self) -> ManagedProcessTracker:
        if self._tracker is None:
            raise RuntimeError("the agent service has not started")
        return self._tracker

    async def start(self) -> None:
        store = self.daemon.store
        # Orphans of a crashed daemon first: nothing of theirs may outlive this boot.
        await reconcile_orphans(store.managed_processes)
        self._tracker = ManagedProcessTracker(store.managed_processes)
        set_process_tracker(self._tracker)
        plugins = self.daemon.plugins
        declared = plugins.declared_providers() if plugins is not None else {}
        self._registry = ProviderRegistry(
            plugins.providers if plugins is not None else {},
            self._provider_overrides,
            {provider_id: p.config_entry() for provider_id, p in declared.items()},
        )
        cursor: str | None = None
        while True:
            page = await store.agents.list(AgentFilter(include_archived=True), cursor=cursor)
            for record in page.items:
                self._adopt(record)
            cursor = page.next_cursor
            if cursor is None:
                break
        for agent in list(self.agents.values()):
            if agent.record.lastStatus in LIVE_STATUSES:
                await self._recover_closed(agent)

    def _provider_overrides(self) -> dict[str, dict[str, Any]]:
        providers = self.daemon.config.resolved.agents.providers
        return {
            provider_id: entry.model_dump(mode="json", exclude_none=True)
            for provider_id, entry in providers.items()
        }

    async def _recover_closed(self, agent: LiveAgent) -> None:
        """An agent the previous daemon left live has no process now: it is ``closed``; a run
        it had in flight is recorded as canceled so the timeline says how it ended."""
        if await self._turn_open(agent):
            agent.provider_prompt = agent.latest_prompt
            await self._ingest(
                agent,
                {
                    "type": "turn_canceled",
                    "provider": agent.record.provider,
                    "reason": "daemon_restarted",
                },
            )
            await agent.timeline.drain()
        await self._save(agent, {"lastStatus": "closed"})

    async def _turn_open(self, agent: LiveAgent) -> bool:
        """Whether the timeline ends inside a turn. The timeline decides, not the record: the
        status is written behind the entries it follows from and may lag them by a moment."""
        tail = await self.daemon.store.timeline.read(agent.id, limit=OPEN_TURN_SCAN, tail=True)
        for entry in reversed(tail):
            kind = entry.event.get("type")
            item = entry.event.get("item")
            if kind in TERMINAL:
                return False
            if kind == "turn_started" or (
                kind == "timeline" and isinstance(item, dict) and item.get("type") == "user_message"
            ):
                return True
        return agent.record.lastStatus == "running"

    async def stop(self) -> None:
        for task in list(self._background):
            task.cancel()
        await self.registry.stop()
        agents = list(self.agents.values())
        await asyncio.gather(
            *(self._close(agent, reason="daemon_stopped") for agent in agents),
            return_exceptions=True,
        )
        # Changes written behind (derived status) reach the disk before the store closes.
        await asyncio.gather(*(agent.writer.flush() for agent in agents), return_exceptions=True)
        # Whatever a provider lost track of dies with the daemon.
        await self.tracker.terminate()
        set_process_tracker(None)

    def _spawn(self, coro: Awaitable[Any]) -> None:
        task = asyncio.ensure_future(coro)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def serving(self) -> None:
        """The transports listen: declare every agent's stream (so a client may subscribe to
        an agent that has emitted nothing since boot) and start the provider availability
        refresh, whose first pass imports the provider modules after the daemon is ready."""
        self.ensure_streams()
        self.registry.start()

    def ensure_streams(self) -> None:
        rpc = self.daemon.rpc
        if rpc is None or self._streams_ready:
            return
        rpc.register_stream(AGENTS_STREAM, STREAM_ACCESS)
        for agent_id in self.agents:
            rpc.register_stream(f"agent:{agent_id}", STREAM_ACCESS)
        self._streams_ready = True

    def _adopt(self, record: AgentRecord) -> LiveAgent:
        cell: list[LiveAgent] = []
        timeline = AgentTimeline(
            record.id, self.daemon.store.timeline, lambda batch: self._commit(cell[0], batch)
        )
        writer = RecordWriter(record.id, self.daemon.store.agents, self._publish_record)
        agent = LiveAgent(record=record, timeline=timeline, writer=writer)
        cell.append(agent)
        self.agents[record.id] = agent
        rpc = self.daemon.rpc
        if rpc is not None:
            rpc.register_stream(f"agent:{record.id}", STREAM_ACCESS)
        return agent

    # ================================================================ publishing

    def _publish(self, stream: str, method: str, payload: dict[str, Any]) -> None:
        rpc = self.daemon.rpc
        if rpc is not None:
            rpc.publish(stream, method, payload)

    def _publish_record(self, record: AgentRecord, method: str = "agent.updated") -> None:
        self._publish(AGENTS_STREAM, method, {"agent": dump_record(record)})

    async def _save(
        self, agent: LiveAgent, changes: dict[str, Any], *, durable: bool = True
    ) -> None:
        """Apply ``changes`` (JSON-ready, top-level fields) to the record and wake waiters; the
        record writer persists them and then publishes the record. With ``durable`` (anything
        a client is told was done) this returns once they are on disk; without it (state
        derived from timeline entries that are durable already) at once."""
        changes = _differing(agent.record, changes)
        if not changes or agent.deleted:
            return
        changes = {**changes, "updatedAt": iso_now()}
        try:
            agent.record = AgentRecord.model_validate({**dump_record(agent.record), **changes})
        except ValidationError as exc:
            raise InvalidParams(f"invalid agent change: {exc.errors()[0].get('msg')}") from exc
        if "lastActivityAt" in changes:
            agent.activity_saved = time.monotonic()
        agent.writer.stage(changes, urgent=durable)
        agent.notify()
        if durable:
            await agent.writer.flush()

    # ================================================================ lookups

    def get(self, reference: str) -> LiveAgent:
        """The agent ``reference`` names (id, unique prefix or title)."""
        self.ensure_streams()
        agent = self.agents.get(reference)
        if agent is None:
            agent = self.agents[
                resolve_agent(reference, [a.record for a in self.agents.values()]).id
            ]
        return agent

    def list_agents(
        self,
        *,
        include_archived: bool = False,
        labels: dict[str, str] | None = None,
        provider: str | None = None,
        workspace_id: str | None = None,
        statuses: set[str] | None = None,
    ) -> list[AgentRecord]:
        """Agents matching every criterion, oldest first."""
        self.ensure_streams()
        result = []
        for agent in self.agents.values():
            record = agent.record
            if record.archivedAt is not None and not include_archived:
                continue
            if provider is not None and record.provider != provider:
                continue
            if workspace_id is not None and record.workspaceId != workspace_id:
                continue
            if statuses is not None and record.lastStatus not in statuses:
                continue
            if labels and any(record.labels.get(k) != v for k, v in labels.items()):
                continue
            result.append(record)
        return sorted(result, key=lambda r: (r.createdAt, r.id))

    # ================================================================ create

    async def create(self, params: AgentCreateParams) -> AgentRecord:
        """Create an agent, start its session in the background, send ``initialPrompt``."""
        provider_id, model = params.provider, params.model
        if provider_id and "/" in provider_id:
            provider_id, _, slash_model = provider_id.partition("/")
            model = model or slash_model or None
        if not provider_id:
            provider_id = self.registry.default_provider()
            if provider_id is None:
                raise Unavailable(
                    "no agent provider is ready; see `paseo provider ls` for why, or name one "
                    "with --provider"
                )
        self.registry.usable(provider_id)
        cwd, workspace_id = await self._placement(params.cwd, params.workspaceId)
        now = iso_now()
        config = SerializableConfig(
            title=params.title,
            modeId=params.modeId,
            model=model,
            thinkingOptionId=params.thinkingOptionId,
            featureValues=dict(params.featureValues),
            providerOptions=dict(params.providerOptions) or None,
            systemPrompt=params.systemPrompt,
            mcpServers=dict(params.mcpServers) or None,
        )
        fields: dict[str, Any] = {
            "id": new_agent_id(),
            "provider": provider_id,
            "cwd": cwd,
            "workspaceId": workspace_id,
            "createdAt": now,
            "updatedAt": now,
            "lastActivityAt": now,
            "title": params.title,
            "labels": dict(params.labels),
            "lastStatus": "initializing",
            "lastModeId": params.modeId,
            "config": config,
            "requiresAttention": False,
        }
        if params.internal:
            fields["internal"] = True
        record = AgentRecord.model_validate(fields)
        if not await self.daemon.store.agents.insert(record):
            raise Conflict(f"agent id {record.id} is taken; retry")
        agent = self._adopt(record)
        self._publish_record(agent.record, "agent.created")
        if params.initialPrompt:
            await self.send(record.id, params.initialPrompt, params.messageId)
        else:
            agent.want_session = True
            self._kick(agent)
        return agent.record

    async def _placement(self, cwd: str | None, workspace_id: str | None) -> tuple[str, str]:
        """Where the agent runs and the workspace it belongs to (through the workspace
        provisioning service, so every agent is stamped with a workspaceId)."""
        if workspace_id is not None:
            workspace = await self.daemon.store.workspaces.get(workspace_id)
            if workspace is None:
                raise NotFound(f"no workspace {workspace_id!r}", data={"workspaceId": workspace_id})
            if cwd is not None and os.path.normpath(cwd) != workspace.cwd:  # noqa: ASYNC240
                raise InvalidParams("give cwd or workspaceId, not two different places")
            return workspace.cwd, workspace.workspaceId
        if not cwd:
            raise InvalidParams("an agent needs a cwd (absolute directory) or a workspaceId")
        if not os.path.isabs(cwd):
            raise InvalidParams(f"cwd must be an absolute path, got {cwd!r}")
        from paseo.workspaces.service import provisioning_of

        workspace = await provisioning_of(self.daemon).ensure_workspace_for_cwd(cwd)
        return workspace.cwd, workspace.workspaceId

    # ================================================================ prompts

    async def send(
        self, reference: str, text: str, message_id: str | None = None
    ) -> tuple[LiveAgent, str, bool]:
        """Queue ``text`` as the agent's next prompt; returns ``(agent, messageId, accepted)``
        (``accepted`` is false for a repeated ``message_id``). A run in progress is
        interrupted and replaced; an archived agent is restored."""
        agent = self.get(reference)
        message_id = message_id or uuid.uuid4().hex
        await self._load_seen(agent)
        if message_id in agent.seen:
            return agent, message_id, False
        agent.remember(message_id)
        agent.latest_prompt = message_id
        agent.latest_text = text
        agent.next_prompt = (text, message_id)
        now = iso_now()
        changes: dict[str, Any] = {
            "lastStatus": "running",
            "lastUserMessageAt": now,
            "lastActivityAt": now,
            "requiresAttention": False,
            "attentionReason": None,
            "attentionTimestamp": None,
        }
        if agent.record.archivedAt is not None:
            changes["archivedAt"] = None
        seq = await self._ingest(
            agent,
            {
                "type": "timeline",
                "provider": agent.record.provider,
                "item": {"type": "user_message", "text": text, "messageId": message_id},
            },
        )
        # The status follows from the message, so the record is written behind it.
        await self._save(agent, changes, durable=False)
        # The program gets the prompt while the message is being written; the client's
        # acknowledgement waits for it to be durable.
        self._kick(agent)
        if seq is not None:
            await agent.timeline.committed(seq)
        return agent, message_id, True

    async def _load_seen(self, agent: LiveAgent) -> None:
        """After a restart, the message ids already in the timeline count as sent."""
        if agent.seen_loaded:
            return
        agent.seen_loaded = True
        entries = await self.daemon.store.timeline.read(agent.id, limit=SEEN_MESSAGES, tail=True)
        for entry in entries:
            item = entry.event.get("item")
            if isinstance(item, dict) and item.get("type") == "user_message":
                message_id = item.get("messageId")
                if isinstance(message_id, str):
                    agent.remember(message_id)

    def _kick(self, agent: LiveAgent) -> None:
        if agent.runner is None or agent.runner.done():
            agent.runner = asyncio.get_running_loop().create_task(self._run(agent))

    async def _run(self, agent: LiveAgent) -> None:
        """Start the session when needed and hand it the newest queued prompt."""
        while not agent.deleted and (agent.next_prompt is not None or agent.want_session):
            agent.want_session = False
            try:
                session = await self._ensure_session(agent)
                if agent.provider_prompt is not None and agent.next_prompt is not None:
                    session = await self._settle(agent, session)
                queued, agent.next_prompt = agent.next_prompt, None
                if queued is None:
                    continue
                text, message_id = queued
                await self._prompt(agent, session, text, message_id)
            except asyncio.CancelledError:
                raise
            except AgentStartError as exc:
                agent.next_prompt = None
                await self._fail(agent, str(exc), code="start_failed")
            except PaseoError as exc:
                agent.next_prompt = None
                await self._fail(agent, exc.message, code=exc.code)
            except Exception as exc:
                log.exception("agent %s: running the prompt failed", agent.id)
                agent.next_prompt = None
                await self._fail(agent, f"the agent failed: {exc}", code="internal")

    async def _prompt(
        self, agent: LiveAgent, session: AgentSession, text: str, message_id: str
    ) -> None:
        for attempt in (1, 2):
            agent.provider_prompt = message_id
            try:
                await session.prompt(text, message_id=message_id)
                return
            except Conflict:
                # The provider still runs a turn we did not know about: end it first.
                agent.provider_prompt = None
                if attempt == 2:
                    raise
                session = await self._settle(agent, session, force=True)
            except (BrokenPipeError, ConnectionResetError, Unavailable) as exc:
                # The program died between turns: resume the conversation in a new process.
                agent.provider_prompt = None
                if attempt == 2:
                    detail = session.diagnostics().strip()
                    raise AgentStartError(
                        f"the {agent.record.provider} agent program stopped ({exc})"
                        + (f": {detail}" if detail else "")
                        + "; send a new prompt to retry, or `paseo agent reload` it"
                    ) from exc
                log.info("agent %s: session gone (%s); resuming", agent.id, exc)
                await self._drop_session(agent)
                session = await self._ensure_session(agent)
            except BaseException:
                agent.provider_prompt = None
                raise

    async def _settle(
        self, agent: LiveAgent, session: AgentSession, *, force: bool = False
    ) -> AgentSession:
        """Interrupt the provider's running turn and wait for it to end; a session that does
        not end its turn in time is restarted (the conversation is kept)."""
        with contextlib.suppress(Exception):
            await asyncio.wait_for(session.interrupt(), SETTLE_TIMEOUT)
        deadline = time.monotonic() + SETTLE_TIMEOUT
        while (agent.provider_prompt is not None or force) and time.monotonic() < deadline:
            force = False
            changed = agent.changed
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(changed.wait(), max(0.0, deadline - time.monotonic()))
        if agent.provider_prompt is None:
            return session
        log.warning("agent %s: the interrupted turn did not end; restarting its session", agent.id)
        agent.provider_prompt = None
        await self._drop_session(agent)
        return await self._ensure_session(agent)

    async def _fail(self, agent: LiveAgent, message: str, *, code: str | None = None) -> None:
        """Record a failure of the newest prompt (or of the start): status ``error``."""
        log.warning("agent %s: %s", agent.id, message)
        agent.provider_prompt = agent.latest_prompt
        event: dict[str, Any] = {
            "type": "turn_failed",
            "provider": agent.record.provider,
            "error": message,
        }
        if code:
            event["code"] = code
        await self._ingest(agent, event)

    # ================================================================ sessions

    async def _ensure_session(self, agent: LiveAgent) -> AgentSession:
        async with agent.lock:
            if agent.session is not None:
                return agent.session
            record = agent.record
            provider = self.registry.usable(record.provider)
            if not await asyncio.to_thread(os.path.isdir, record.cwd):
                raise AgentStartError(
                    f"the agent's directory {record.cwd} does not exist; recreate it or start "
                    "a new agent elsewhere"
                )
            config = self._session_config(record)
            agent.generation += 1
            sink = self._sink(agent, agent.generation)
            limit = start_timeout()
            handle = record.persistence
            try:
                if handle is not None:
                    resumable = SessionHandle.model_validate(dump_record(handle))
                    try:
                        session = await asyncio.wait_for(
                            provider.resume_session(resumable, config, sink), limit
                        )
                    except NotFound as exc:
                        await self._note(
                            agent,
                            f"could not resume the conversation ({exc.message}); "
                            "starting a new one",
                        )
                        await self.tracker.terminate(agent.id)
                        session = await asyncio.wait_for(
                            provider.create_session(config, sink), limit
                        )
                else:
                    session = await asyncio.wait_for(provider.create_session(config, sink), limit)
            except TimeoutError:
                await self.tracker.terminate(agent.id)
                raise AgentStartError(
                    f"the {record.provider} agent did not start within {limit:.0f}s (its program "
                    "hangs during start-up); check that it runs on its own and that its "
                    "configuration is right, then send a new prompt to retry"
                ) from None
            except PaseoError as exc:
                await self.tracker.terminate(agent.id)
                raise AgentStartError(
                    f"the {record.provider} agent could not start: {exc.message}"
                ) from exc
            except OSError as exc:
                await self.tracker.terminate(agent.id)
                raise AgentStartError(
                    f"the {record.provider} agent program could not be run ({exc}); check that "
                    "it is installed (`paseo provider ls`)"
                ) from exc
            except asyncio.CancelledError:
                await self.tracker.terminate(agent.id)
                raise
            agent.session = session
            changes = self._runtime_changes(agent, session)
            if (
                agent.record.lastStatus in ("initializing", "closed", "error")
                and agent.next_prompt is None
            ):
                changes["lastStatus"] = "idle"
            await self._save(agent, changes)
            return session

    def _session_config(self, record: AgentRecord) -> SessionConfig:
        config = record.config or SerializableConfig()
        appended = self.daemon.config.resolved.daemon.appendSystemPrompt
        system = "\n\n".join(part for part in (config.systemPrompt, appended) if part) or None
        return SessionConfig(
            agentId=record.id,
            cwd=record.cwd,
            modeId=config.modeId,
            model=config.model,
            thinkingOptionId=config.thinkingOptionId,
            featureValues=dict(config.featureValues or {}),
            systemPrompt=system,
            mcpServers=dict(config.mcpServers or {}),
            env={"PASEO_AGENT_ID": record.id},
            extra=dict(config.providerOptions or {}),
        )

    def _runtime_changes(self, agent: LiveAgent, session: AgentSession) -> dict[str, Any]:
        """``runtimeInfo``, ``features`` and ``persistence`` as the session reports them,
        where they differ from the record."""
        changes: dict[str, Any] = {}
        record = agent.record
        try:
            info = dict(session.runtime_info())
        except Exception:
            log.exception("agent %s: runtime_info failed", agent.id)
            info = {}
        features = info.pop("features", None)
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
        if isinstance(features, list) and record.features != features:
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

    def _sink(self, agent: LiveAgent, generation: int) -> Callable[[Any], Awaitable[None]]:
        async def sink(event: Any) -> None:
            if agent.generation != generation or agent.deleted:
                return
            await self._ingest(agent, _event_dict(event), from_provider=True)

        return sink

    async def _drop_session(self, agent: LiveAgent) -> None:
        """Close the live session (keeping the persistence handle) and reap its processes."""
        async with agent.lock:
            session, agent.session = agent.session, None
            agent.generation += 1
            if session is not None:
                try:
                    changes = self._runtime_changes(agent, session)
                    changes.pop("lastStatus", None)
                    await self._save(agent, changes)
                except Exception:
                    log.exception("agent %s: saving the session handle failed", agent.id)
                try:
                    await asyncio.wait_for(session.close(), CLOSE_TIMEOUT)
                except Exception:
                    log.exception("agent %s: closing the session failed", agent.id)
            await self.tracker.terminate(agent.id)
            agent.pending.clear()

    async def _cancel_runner(self, agent: LiveAgent) -> bool:
        """Stop queued and starting work; returns whether a prompt was in flight."""
        in_flight = agent.next_prompt is not None or agent.provider_prompt is not None
        agent.next_prompt = None
        agent.want_session = False
        runner, agent.runner = agent.runner, None
        if runner is not None and not runner.done():
            in_flight = in_flight or agent.record.lastStatus == "running"
            runner.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await runner
        return in_flight

    async def _close(self, agent: LiveAgent, *, reason: str) -> None:
        """Interrupt, close the provider process, mark ``closed`` (resumable)."""
        in_flight = await self._cancel_runner(agent)
        in_flight = in_flight or agent.record.lastStatus == "running"
        await self._drop_session(agent)
        if in_flight:
            agent.provider_prompt = agent.latest_prompt
            await self._ingest(
                agent,
                {"type": "turn_canceled", "provider": agent.record.provider, "reason": reason},
            )
        agent.provider_prompt = None
        await agent.timeline.drain()
        if agent.record.lastStatus != "closed":
            await self._save(agent, {"lastStatus": "closed"})

    # ================================================================ events

    async def _ingest(
        self, agent: LiveAgent, event: dict[str, Any], *, from_provider: bool = False
    ) -> int | None:
        """Filter and enrich one event, then hand it to the timeline (in order); returns its
        sequence number when it was numbered at once."""
        kind = event.get("type")
        if from_provider:
            if kind == "attention_required":
                return None  # derived below, by one policy for every provider
            if kind == "permission_resolved" and event.get("requestId") in agent.resolved:
                return None  # already announced when a client answered
            item = event.get("item")
            if kind == "timeline" and isinstance(item, dict) and self._is_echo(agent, item):
                return None
        stale = kind in TERMINAL and agent.provider_prompt != agent.latest_prompt
        seq = await agent.timeline.add(event)
        reason = None
        if kind == "turn_completed" and not stale:
            reason = "finished"
        elif kind == "turn_failed" and not stale:
            reason = "error"
        elif kind == "permission_requested":
            reason = "permission"
        if reason is not None and not agent.record.internal:
            await agent.timeline.add(
                {
                    "type": "attention_required",
                    "provider": agent.record.provider,
                    "reason": reason,
                    "timestamp": iso_now(),
                    "shouldNotify": True,
                }
            )
        return seq

    @staticmethod
    def _is_echo(agent: LiveAgent, item: dict[str, Any]) -> bool:
        """A provider repeating a prompt the manager already recorded."""
        if item.get("type") != "user_message":
            return False
        message_id = item.get("messageId")
        return (message_id is not None and message_id in agent.seen) or (
            item.get("text") == agent.latest_text
        )

    async def _note(self, agent: LiveAgent, message: str) -> None:
        await self._ingest(
            agent,
            {
                "type": "timeline",
                "provider": agent.record.provider,
                "item": {"type": "error", "message": message},
            },
        )

    async def _commit(self, agent: LiveAgent, batch: list[TimelineEntry]) -> None:
        """Entries are durable: apply their effects, publish them, call the taps."""
        changes: dict[str, Any] = {}
        plugins = self.daemon.plugins
        stream = f"agent:{agent.id}"
        for entry in batch:
            event = entry.event
            self._apply(agent, event, changes)
            self._publish(stream, "agent.event", {"agentId": agent.id, "entry": dump_record(entry)})
            if plugins is not None:
                plugins.agent_event(agent.id, agent.record.provider, event)
                if event.get("type") == "attention_required":
                    plugins.attention(agent.id, str(event["reason"]), str(event["timestamp"]))
        if agent.session is not None and any(
            e.event.get("type") in TERMINAL or e.event.get("type") == "thread_started"
            for e in batch
        ):
            changes.update(self._runtime_changes(agent, agent.session))
        changes = _differing(agent.record, changes)
        if changes or time.monotonic() - agent.activity_saved >= ACTIVITY_SAVE_INTERVAL:
            changes["lastActivityAt"] = batch[-1].timestamp
            # Derived from entries that are durable now: waiters need not wait for the disk.
            await self._save(agent, changes, durable=False)
        # Effects without a record change (a permission answered, a turn ended) wake waiters too.
        agent.notify()

    def _apply(self, agent: LiveAgent, event: dict[str, Any], changes: dict[str, Any]) -> None:
        kind = event.get("type")
        if kind == "turn_started":
            if agent.provider_prompt == agent.latest_prompt:
                changes["lastStatus"] = "running"
        elif kind in TERMINAL:
            current = agent.provider_prompt == agent.latest_prompt
            agent.provider_prompt = None
            agent.pending.clear()
            if current:
                if kind == "turn_failed":
                    detail = event.get("diagnostic")
                    error = str(event.get("error") or "the turn failed")
                    changes["lastStatus"] = "error"
                    changes["lastError"] = f"{error}\n{detail}" if detail else error
                else:
                    changes["lastStatus"] = "idle"
                    if kind == "turn_completed":
                        changes["lastError"] = None
        elif kind == "permission_requested":
            try:
                request = PermissionRequest.model_validate(event.get("request") or {})
            except ValidationError:
                log.warning("agent %s: malformed permission request %r", agent.id, event)
            else:
                agent.pending[request.id] = request
        elif kind == "permission_resolved":
            agent.pending.pop(str(event.get("requestId")), None)
        elif kind == "attention_required":
            changes["requiresAttention"] = True
            changes["attentionReason"] = event.get("reason")
            changes["attentionTimestamp"] = event.get("timestamp")
        elif kind == "timeline":
            item = event.get("item")
            if isinstance(item, dict):
                _track_reply(agent, item)
                agent.reply_loaded = True

    # ================================================================ operations

    async def interrupt(self, reference: str) -> LiveAgent:
        """Cancel the running turn and any queued prompt; ``turn_canceled`` follows."""
        agent = self.get(reference)
        dropped = agent.next_prompt is not None
        agent.next_prompt = None
        starting = agent.session is None and agent.runner is not None and not agent.runner.done()
        if starting:
            await self._cancel_runner(agent)
            await self.tracker.terminate(agent.id)
        session = agent.session
        if not starting and session is not None and agent.provider_prompt is not None:
            # The provider's run is now the one whose end settles the agent.
            agent.latest_prompt = agent.provider_prompt
            await session.interrupt()
        elif starting or dropped:
            agent.provider_prompt = agent.latest_prompt
            await self._ingest(
                agent,
                {
                    "type": "turn_canceled",
                    "provider": agent.record.provider,
                    "reason": "interrupted",
                },
            )
        return agent

    async def close_agent(self, reference: str, *, reason: str = "stopped") -> LiveAgent:
        """Interrupt the run and stop the provider process; the agent becomes ``closed``."""
        agent = self.get(reference)
        await self._close(agent, reason=reason)
        return agent

    async def archive(self, reference: str) -> LiveAgent:
        agent = self.get(reference)
        await self._close(agent, reason="archived")
        if agent.record.archivedAt is None:
            await self._save(agent, {"archivedAt": iso_now()})
        return agent

    async def restore(self, reference: str) -> LiveAgent:
        agent = self.get(reference)
        if agent.record.archivedAt is not None:
            await self._save(agent, {"archivedAt": None})
        return agent

    async def delete(self, reference: str) -> str:
        agent = self.get(reference)
        await self._close(agent, reason="deleted")
        # Nothing written behind may land after the record is gone.
        await agent.writer.flush()
        agent.deleted = True
        agent.timeline.close()
        await self.daemon.store.agents.delete(agent.id)
        self.agents.pop(agent.id, None)
        self._publish(AGENTS_STREAM, "agent.deleted", {"agentId": agent.id})
        agent.notify()
        return agent.id

    async def update(
        self, reference: str, *, title: str | None, labels: dict[str, str | None]
    ) -> LiveAgent:
        agent = self.get(reference)
        changes: dict[str, Any] = {}
        if title is not None:
            changes["title"] = title
            config = dump_record(agent.record.config) if agent.record.config else {}
            changes["config"] = {**config, "title": title}
        if labels:
            merged = dict(agent.record.labels)
            for key, value in labels.items():
                if value is None:
                    merged.pop(key, None)
                else:
                    merged[key] = value
            changes["labels"] = merged
        await self._save(agent, changes)
        return agent

    async def set_option(
        self, reference: str, option: str, value: Any, feature: str | None = None
    ) -> LiveAgent:
        """Set the mode, model, thinking level or a feature, live when a session runs."""
        agent = self.get(reference)
        async with agent.lock:
            session = agent.session
            if session is not None:
                if option == "modeId":
                    await session.set_mode(value)
                elif option == "model":
                    await session.set_model(value)
                elif option == "thinkingOptionId":
                    await session.set_thinking(value)
                else:
                    await session.set_feature(str(feature), value)
            elif option == "modeId":
                modes = await self.registry.usable(agent.record.provider).list_modes()
                if modes and value not in {m.id for m in modes}:
                    raise InvalidParams(
                        f"provider {agent.record.provider!r} has no mode {value!r} "
                        f"(modes: {', '.join(m.id for m in modes)})"
                    )
            config = dump_record(agent.record.config) if agent.record.config else {}
            if option == "feature":
                config["featureValues"] = {
                    **(config.get("featureValues") or {}),
                    str(feature): value,
                }
            else:
                config[option] = value
            changes: dict[str, Any] = {"config": config}
            if option == "modeId":
                changes["lastModeId"] = value
            if session is not None:
                changes.update(self._runtime_changes(agent, session))
        await self._save(agent, changes)
        return agent

    async def reload(self, reference: str) -> LiveAgent:
        """Restart the provider process and resume the conversation in it."""
        agent = self.get(reference)
        await self._close(agent, reason="reloaded")
        await self._ensure_session(agent)
        return agent

    async def clear_attention(self, reference: str) -> LiveAgent:
        agent = self.get(reference)
        if agent.record.requiresAttention:
            await self._save(
                agent,
                {"requiresAttention": False, "attentionReason": None, "attentionTimestamp": None},
            )
        return agent

    async def respond_permission(
        self,
        reference: str,
        request_id: str,
        *,
        allow: bool,
        updated_input: dict[str, Any] | None = None,
        message: str | None = None,
        interrupt: bool = False,
    ) -> LiveAgent:
        """Answer a pending request; every client then sees ``permission_resolved``."""
        agent = self.get(reference)
        request = agent.pending.pop(request_id, None)
        if request is None:
            raise NotFound(
                f"agent {agent.id[:8]} has no pending permission request {request_id!r} "
                "(already answered?); see `paseo permit ls`",
                data={"agentId": agent.id, "requestId": request_id},
            )
        session = agent.session
        resolution = (
            AllowResolution(updatedInput=updated_input)
            if allow
            else DenyResolution(message=message, interrupt=interrupt)
        )
        if session is None:
            raise Unavailable(f"agent {agent.id[:8]} has no running session to answer")
        agent.resolved.add(request_id)
        try:
            await session.respond_permission(request_id, resolution)
        except BaseException:
            agent.resolved.discard(request_id)
            agent.pending[request_id] = request
            raise
        await agent.timeline.add(
            {
                "type": "permission_resolved",
                "provider": agent.record.provider,
                "requestId": request_id,
                "resolution": resolution.model_dump(mode="json", exclude_none=True),
            }
        )
        if not allow and interrupt and agent.provider_prompt is not None:
            with contextlib.suppress(Exception):
                await session.interrupt()
        return agent

    # ================================================================ reads

    def outcome(self, agent: LiveAgent) -> str | None:
        """How a wait on ``agent`` ends now, or ``None`` while it is working."""
        if agent.deleted:
            return "closed"
        if agent.pending:
            return "permission"
        status = agent.record.lastStatus
        if status in ("running", "initializing") or agent.busy:
            return None
        return {"idle": "idle", "error": "error", "closed": "closed"}.get(status)

    async def wait(self, reference: str, within: float) -> tuple[LiveAgent, str]:
        """Wait until the agent is idle, asks for permission, fails, or ``within`` seconds
        pass (outcome ``timeout``)."""
        agent = self.get(reference)
        deadline = time.monotonic() + within
        while True:
            outcome = self.outcome(agent)
            if outcome is not None:
                return agent, outcome
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return agent, "timeout"
            changed = agent.changed
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(changed.wait(), remaining)

    async def last_reply(self, agent: LiveAgent) -> str | None:
        """The text of the agent's newest reply (rebuilt from the timeline after a restart)."""
        if not agent.reply_loaded:
            agent.reply_loaded = True
            entries = await self.daemon.store.timeline.read(agent.id, limit=500, tail=True)
            for entry in entries:
                item = entry.event.get("item")
                if entry.event.get("type") == "timeline" and isinstance(item, dict):
                    _track_reply(agent, item)
        return agent.reply or None

    async def timeline_window(
        self,
        agent: LiveAgent,
        *,
        after: tuple[str, int] | None,
        before: tuple[str, int] | None,
        limit: int,
        tail: bool,
    ) -> tuple[str, list[TimelineEntry], bool, bool]:
        """``(epoch, entries, reset, has_more)`` for a window of the durable timeline."""
        await agent.timeline.drain()
        await agent.timeline.load()
        epoch = agent.timeline.epoch or ""
        reset = any(cursor is not None and cursor[0] != epoch for cursor in (after, before))
        after_seq = after[1] if after is not None and not reset else None
        before_seq = before[1] if before is not None and not reset else None
        if reset:
            tail = True
        entries = await self.daemon.store.timeline.read(
            agent.id, after_seq=after_seq, before_seq=before_seq, limit=limit + 1, tail=tail
        )
        has_more = len(entries) > limit
        if has_more:
            entries = entries[1:] if tail else entries[:limit]
        return epoch, entries, reset, has_more

    def pending_permissions(self, reference: str | None) -> list[tuple[str, PermissionRequest]]:
        agents = [self.get(reference)] if reference else list(self.agents.values())
        return [(agent.id, request) for agent in agents for request in agent.pending.values()]


def _track_reply(agent: LiveAgent, item: dict[str, Any]) -> None:
    """Follow the text of the newest assistant message (a user message starts over)."""
    if item.get("type") == "assistant_message":
        message_id = item.get("messageId")
        if message_id != agent.reply_id or agent.reply is None:
            agent.reply_id, agent.reply = message_id, ""
        agent.reply += str(item.get("text") or "")
    elif item.get("type") == "user_message":
        agent.reply_id, agent.reply = None, None


def create(daemon: Daemon) -> AgentService:
    """Service factory (see :mod:`paseo.daemon.services`)."""
    return AgentService(daemon)


def rpc_groups() -> list[RpcMethodGroup]:
    """The service's method groups without a daemon (for the protocol schema)."""
    from paseo.agents.rpc import method_groups

    return method_groups()


def notifications() -> dict[str, type[BaseModel]]:
    """The agent notifications (method → params model), for the protocol schema."""
    from paseo.agents.models import NOTIFICATIONS

    return dict(NOTIFICATIONS)
