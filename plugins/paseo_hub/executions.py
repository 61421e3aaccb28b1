"""Hub executions as agents owned by the relationship: create, control, validate, and the
owned-agents-only view of agent activity that becomes ``update`` and ``stream`` frames.

Reconciliation is the Hub's idempotent re-create: a create for an execution that already has an
agent answers that agent's current snapshot and starts nothing, except after a daemon restart
when an armed resume intent replays the interrupted initial turn once (see
:mod:`paseo_hub.intents`).

``autoArchive``: the agent is archived when its initial turn (or the replay of it) completes;
a turn that fails or is canceled leaves it for the Hub to inspect. The request's choice rides on
the resume intent, so it holds across a daemon restart.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine
from typing import Any

from paseo_hookspecs.agents import AgentObserver, RecordChange, TimelineEntry
from paseo_hookspecs.errors import PaseoError

from paseo_hub import env_policy, wire
from paseo_hub.agents import HubAgents
from paseo_hub.intents import IntentStore
from paseo_hub.models import (
    AgentSnapshot,
    CreateFailed,
    HubAgentCreate,
    HubAgentValidate,
    HubCreateError,
    HubOwner,
    PreapprovedTool,
    ToolPolicyUnsupported,
    snapshot_of,
)
from paseo_hub.text import printable

log = logging.getLogger("paseo.hub")

TERMINAL_TURN_EVENTS = frozenset({"turn_completed", "turn_failed", "turn_canceled"})
Send = Callable[[dict[str, Any]], None]


def _failed(what: str, exc: BaseException) -> None:
    """One line for a request that failed, its traceback at debug: the Hub re-sends every live
    execution's create on each connect, so a daemon in a crash loop (or an agent that cannot
    start) would otherwise log a traceback per execution per start."""
    log.error("%s failed: %s: %s", what, type(exc).__name__, printable(str(exc), 500))
    log.debug("%s failed", what, exc_info=exc)


def message_id(execution_id: str) -> str:
    """The initial turn's message id: derived from the execution, so replays share it."""
    return f"hub-{execution_id}"


class Executions(AgentObserver):
    """The relationship's executions, and the observer of its agents (subscribed while the
    socket is served). ``send`` queues one outbound message on the current Hub socket (and
    drops it when there is none: stream frames are not durably replayed)."""

    def __init__(self, agents: HubAgents, daemon_id: str, intents: IntentStore, send: Send) -> None:
        self._agents = agents
        self._daemon_id = daemon_id
        self._intents = intents
        self._send = send
        self._owned: dict[str, str] = {}
        """agent id → execution id, for every agent this relationship owns."""
        self._locks: dict[str, asyncio.Lock] = {}
        self._busy: set[str] = set()
        self._seen: set[str] = set()
        """Executions created or reconciled since this daemon started: their runs are live."""
        self._started: set[str] = set()
        """Executions whose armed turn was seen running. Only then does a record saying the
        agent is not running end it: observers are behind the agents, so a change from before
        the turn (the new session's first ``idle``) may arrive after the create returned."""
        self._tasks: set[asyncio.Task[None]] = set()

    async def load(self) -> None:
        await self._intents.load()
        for owner, snapshot in await self._agents.list_owned(self._daemon_id):
            if owner.daemonId == self._daemon_id:
                self._owned[snapshot.id] = owner.executionId

    def owns(self, agent_id: str) -> bool:
        return agent_id in self._owned

    def _owner(self, execution_id: str) -> HubOwner:
        return HubOwner(daemonId=self._daemon_id, executionId=execution_id)

    # ---------------------------------------------------------------- requests

    async def create(self, request: wire.CreateRequest) -> dict[str, Any]:
        execution_id = request.executionId
        lock = self._locks.setdefault(execution_id, asyncio.Lock())
        async with lock:
            self._busy.add(execution_id)
            try:
                snapshot = await self._create(request)
            except HubCreateError as exc:
                log.warning(
                    "Hub create for execution %s failed: %s",
                    execution_id,
                    printable(exc.message, 500),
                )
                return wire.create_response(request.requestId, execution_id, None, exc.wire_error())
            except PaseoError as exc:  # e.g. the provider is not ready: the kernel said why
                log.warning(
                    "Hub create for execution %s failed: %s",
                    execution_id,
                    printable(exc.message, 500),
                )
                error = {"code": "create_failed", "message": exc.message}
                return wire.create_response(request.requestId, execution_id, None, error)
            except Exception as exc:  # noqa: BLE001 (answered; logged by _failed)
                _failed(f"Hub create for execution {execution_id}", exc)
                error = {"code": "create_failed", "message": f"the daemon failed: {exc}"}
                return wire.create_response(request.requestId, execution_id, None, error)
            finally:
                self._busy.discard(execution_id)
        return wire.create_response(request.requestId, execution_id, snapshot, None)

    async def _create(self, request: wire.CreateRequest) -> AgentSnapshot:
        owner = self._owner(request.executionId)
        existing = await self._agents.find_owned(owner)
        if existing is not None:
            self._owned[existing.id] = request.executionId
            return await self._reconcile(request.executionId, existing)
        spec = self._spec(request, owner)
        await self._intents.arm(
            request.executionId, request.prompt, spec.messageId, auto_archive=spec.autoArchive
        )
        try:
            snapshot = await self._agents.create_owned(spec)
        except BaseException:
            await self._intents.disarm(request.executionId)
            raise
        self._owned[snapshot.id] = request.executionId
        self._seen.add(request.executionId)
        return snapshot

    async def _reconcile(self, execution_id: str, snapshot: AgentSnapshot) -> AgentSnapshot:
        """A re-sent create: the same agent, its current state, no new turn — unless this is
        the first create since a daemon restart and the initial turn was interrupted."""
        if execution_id in self._seen or snapshot.archived:
            return snapshot
        snapshot = await self._agents.ensure_loaded(snapshot.id)
        self._seen.add(execution_id)
        intent = self._intents.get(execution_id)
        if intent is None:
            return snapshot
        if intent.replayedAt is not None or snapshot.status == "running":
            await self._intents.disarm(execution_id)
            return snapshot
        await self._intents.mark_replayed(execution_id)
        log.info("replaying the interrupted initial turn of Hub execution %s", execution_id)
        return await self._agents.send_prompt(snapshot.id, intent.prompt, intent.messageId)

    def _spec(self, request: wire.CreateRequest, owner: HubOwner) -> HubAgentCreate:
        refused = env_policy.refusal(request.env or {})
        if refused is not None:
            raise CreateFailed(refused)
        servers = dict(request.mcpServers or {})
        grants = request.toolPolicy.preapproved
        unknown = sorted({g.server for g in grants} - set(servers))
        if unknown:
            raise ToolPolicyUnsupported(
                f"the tool policy grants tools of MCP servers the request does not define: "
                f"{', '.join(unknown)}",
                provider=request.provider,
            )
        return HubAgentCreate(
            owner=owner,
            provider=request.provider,
            cwd=request.cwd,
            prompt=request.prompt,
            messageId=message_id(request.executionId),
            model=request.model,
            modeId=request.modeId,
            thinkingOptionId=request.thinkingOptionId,
            providerOptions=request.providerOptions,
            env=dict(request.env or {}),
            mcpServers=servers,
            preapprovedTools=tuple(PreapprovedTool(server=g.server, tool=g.tool) for g in grants),
            worktree=request.worktree,
            autoArchive=request.autoArchive,
        )

    async def control(self, request: wire.ControlRequest) -> dict[str, Any]:
        execution_id = request.executionId
        try:
            snapshot = await self._agents.find_owned(self._owner(execution_id))
            # Cancelling or archiving always ends the initial turn: nothing to replay.
            await self._intents.disarm(execution_id)
            if snapshot is not None and not snapshot.archived:
                if request.action == "interrupt":
                    await self._agents.interrupt(snapshot.id)
                else:
                    await self._agents.archive(snapshot.id)
        except Exception as exc:  # noqa: BLE001 (answered; logged by _failed)
            _failed(f"Hub {request.action} of execution {execution_id}", exc)
            error = {"code": f"{request.action}_failed", "message": str(exc)}
            return wire.control_response(request.requestId, execution_id, request.action, error)
        return wire.control_response(request.requestId, execution_id, request.action, None)

    async def validate(self, request: wire.ValidateRequest) -> dict[str, Any]:
        query = HubAgentValidate(
            provider=request.provider,
            model=request.model,
            modeId=request.modeId,
            thinkingOptionId=request.thinkingOptionId,
            providerOptions=request.providerOptions,
        )
        try:
            issues = await self._agents.validate(query)
        except Exception as exc:  # noqa: BLE001 (answered; logged by _failed)
            _failed(f"Hub validate of provider {request.provider[:100]!r}", exc)
            error = {"code": "validate_failed", "message": str(exc)}
            return wire.validate_response(request.requestId, [], error)
        return wire.validate_response(request.requestId, [i.model_dump() for i in issues], None)

    # ------------------------------------------------------- AgentObserver

    async def on_event(self, agent_id: str, entry: TimelineEntry) -> None:
        execution_id = self._owned.get(agent_id)
        if execution_id is None:
            return  # not this relationship's agent: a Hub never sees it
        event = entry.event
        self._send(wire.stream(execution_id, agent_id, wire.event_payload(event)))
        if event.type in TERMINAL_TURN_EVENTS:
            intent = self._intents.get(execution_id)
            if event.type == "turn_completed" and intent is not None and intent.autoArchive:
                self._spawn(self._auto_archive(execution_id, agent_id))
            self._disarm_soon(execution_id)

    async def on_record(self, change: RecordChange) -> None:
        if change.kind == "deleted":
            return  # not in the Hub's update vocabulary: status and archive state are
        snapshot = snapshot_of(change.record)
        owner = snapshot.owner
        if owner is not None and owner.daemonId == self._daemon_id:
            self._owned.setdefault(snapshot.id, owner.executionId)
        execution_id = self._owned.get(snapshot.id)
        if execution_id is None:
            return
        self._send(wire.update(execution_id, snapshot))
        if snapshot.status == "running":
            self._started.add(execution_id)
        ended = snapshot.status in ("idle", "error", "closed")
        if snapshot.archived or (
            ended and execution_id in self._started and execution_id not in self._busy
        ):
            self._disarm_soon(execution_id)

    async def on_overflow(self, lost: int) -> None:
        log.warning("the Hub's view of its agents missed %d changes; resynchronising", lost)
        self._spawn(self._resync())

    async def _resync(self) -> None:
        """After lost facts: every owned agent's current state to the Hub, and the intents of
        live runs whose turn ended meanwhile disarmed (a lost ``turn_completed`` also loses
        its auto-archive; the Hub archives a finished execution itself)."""
        for owner, snapshot in await self._agents.list_owned(self._daemon_id):
            execution_id = owner.executionId
            self._owned[snapshot.id] = execution_id
            self._send(wire.update(execution_id, snapshot))
            live = execution_id in self._seen and execution_id not in self._busy
            if live and snapshot.status != "running":
                self._disarm_soon(execution_id)

    def _disarm_soon(self, execution_id: str) -> None:
        self._started.discard(execution_id)
        if self._intents.get(execution_id) is None:
            return
        self._spawn(self._intents.disarm(execution_id))

    async def _auto_archive(self, execution_id: str, agent_id: str) -> None:
        try:
            await self._agents.archive(agent_id)
        except Exception:
            # The Hub still archives a finished execution itself (its `archive` control).
            log.exception("auto-archiving the agent of Hub execution %s failed", execution_id)

    def _spawn(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def drain(self) -> None:
        """Wait for pending intent writes and auto-archives (shutdown)."""
        if self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)
