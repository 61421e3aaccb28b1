"""One TypeScript client session: its bridge into the daemon, its pushes, its reattachment.

A :class:`ClientSession` is keyed by the client's ``clientId`` and outlives a dropped socket
for :data:`REATTACH_SECONDS`: a ``hello`` with the same id (and the same trust) binds the new
socket to it. It subscribes its bridge to the ``agents`` stream and to every agent's stream,
and turns their notifications into ``agent_update`` / ``agent_stream`` /
``agent_permission_*`` pushes (``agent_stream`` goes to every client, as the TypeScript daemon
broadcasts it without a subscribe step).
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from paseo_hookspecs.transport import Observed, SessionLimits, TransportHost

from paseo_tswire import projection, timeline, translate
from paseo_tswire.bridge import RpcBridge, RpcFailure
from paseo_tswire.envelope import session_frame
from paseo_tswire.models import messages as out
from paseo_tswire.models.agent import AgentMode, AgentSnapshot, ProjectPlacement
from paseo_tswire.models.wire import Wire

log = logging.getLogger("paseo.tswire")

REATTACH_SECONDS = 90.0
"""How long a session waits for its client to reconnect (the TypeScript daemon's window)."""

MAX_INDEXES = 16
"""Agents whose timeline numbering one connection keeps at once. An index holds every row of
its agent's current epoch, so without a bound a client watching many long-lived agents would
hold all their history; the least recently used is dropped and, when next needed, rebuilt from
the durable copy (the numbering is a pure function of it, so it comes back the same)."""

SUBSCRIBE_BATCH = 64
"""Streams per ``server.subscribe`` call (the method's maximum)."""

Send = Callable[[str | bytes], Awaitable[None]]


def _ignore(task: asyncio.Task[None]) -> None:
    if not task.cancelled():
        task.exception()  # retrieved: a socket that failed to close is already gone


class ClientSession:
    """See the module docstring."""

    def __init__(
        self,
        host: TransportHost,
        *,
        client_id: str,
        client_type: str,
        kind: str,
        observed: Observed,
        limits: SessionLimits,
    ) -> None:
        self.client_id = client_id
        self.client_type = client_type
        self.kind = kind
        self.bridge = RpcBridge(
            host,
            kind=kind,
            observed=observed,
            limits=limits,
            notify=self._on_notification,
            on_overflow=self._overflowed,
        )
        self._send: Send | None = None
        self._socket: Send | None = None
        self._close: Callable[[], Coroutine[Any, Any, None]] | None = None
        self.indexes: OrderedDict[str, timeline.TimelineIndex] = OrderedDict()
        self.agents_subscribed = False
        """The client asked for ``agent_update`` pushes (``fetch_agents_request.subscribe``)."""
        self.subscription_id: str | None = None
        self.extra: dict[str, Any] = {}
        """State other rooms keep on the session (terminal slots, …)."""
        self.listeners: list[Callable[[str, dict[str, Any]], Awaitable[None]]] = []
        """Rooms that receive every notification after the agent pushes (terminals, …)."""
        self.binary: Callable[[bytes], Awaitable[None]] | None = None
        """Where inbound binary frames go (the terminals room, once used)."""
        self._streams: set[str] = set()
        self._expiry: asyncio.TimerHandle | None = None
        self.on_expire: Callable[[ClientSession], None] | None = None

    # ---------------------------------------------------------------- sockets

    def attach(self, send: Send, close: Callable[[], Coroutine[Any, Any, None]]) -> None:
        """Bind a socket: ``send`` writes one frame, ``close`` drops a client too slow to read."""
        if self._expiry is not None:
            self._expiry.cancel()
            self._expiry = None
        self._socket = send
        self._send = send
        self._close = close

    def _overflowed(self) -> None:
        """The client stopped reading: close its socket; what it missed is refetched after it
        reconnects, and the timeline numbering is rebuilt from the durable copy."""
        log.warning("tswire: %s does not read its pushes; closing its connection", self.client_id)
        self.indexes.clear()
        self._send = None
        close, self._close = self._close, None
        if close is not None:
            task: asyncio.Task[None] = asyncio.get_running_loop().create_task(close())
            task.add_done_callback(_ignore)

    def detach(self, send: Send) -> None:
        """The socket ``send`` belongs to went away: keep the session for a reattach."""
        if self._socket is not send:
            return  # a newer socket took over this session
        self._socket = self._send = None
        loop = asyncio.get_running_loop()
        self._expiry = loop.call_later(REATTACH_SECONDS, self._expired)

    def _expired(self) -> None:
        self._expiry = None
        if self.on_expire is not None:
            self.on_expire(self)

    async def aclose(self) -> None:
        if self._expiry is not None:
            self._expiry.cancel()
            self._expiry = None
        self._send = None
        await self.bridge.aclose()

    async def push(self, type_: str, payload: Wire) -> None:
        """Send one session message (dropped while no socket is attached)."""
        await self.raw(session_frame(type_, payload))

    async def raw(self, frame: str | bytes) -> None:
        send = self._send
        if send is None:
            return
        try:
            await send(frame)
        except Exception:  # noqa: BLE001 - the socket closed under us: the reader detaches it
            log.debug("tswire: a frame for %s was lost with its socket", self.client_id)

    # ------------------------------------------------------------ daemon calls

    async def call(self, method: str, params: dict[str, Any] | None = None) -> Any:
        return await self.bridge.call(method, params or {})

    async def start(self, version: str) -> dict[str, Any]:
        """``server.hello`` on the bridge, then the agent streams."""
        result = await self.bridge.hello(self.client_id, self.client_type, version)
        await self.follow(["agents"])
        listing = await self.call("agent.list", {"includeArchived": True})
        await self.follow([f"agent:{agent['id']}" for agent in listing["agents"]])
        return result

    async def follow(self, streams: list[str]) -> None:
        """Subscribe the bridge to ``streams`` (a stream that vanished meanwhile is skipped)."""
        wanted = [name for name in streams if name not in self._streams]
        for start in range(0, len(wanted), SUBSCRIBE_BATCH):
            await self._follow_batch(wanted[start : start + SUBSCRIBE_BATCH])

    async def _follow_batch(self, wanted: list[str]) -> None:
        try:
            await self.call("server.subscribe", {"streams": wanted})
            self._streams.update(wanted)
            return
        except RpcFailure as exc:
            if exc.code != "not_found":
                raise
        for name in wanted:
            try:
                await self.call("server.subscribe", {"streams": [name]})
                self._streams.add(name)
            except RpcFailure as exc:
                if exc.code != "not_found":
                    raise

    async def modes_of(self, provider: str, cache: dict[str, list[AgentMode]]) -> list[AgentMode]:
        """The modes ``provider`` offers (``provider.models``; none when it cannot say)."""
        if provider not in cache:
            try:
                result = await self.call("provider.models", {"providerId": provider})
                cache[provider] = projection.modes(result.get("modes") or [])
            except RpcFailure:
                cache[provider] = []
        return cache[provider]

    async def snapshot(self, agent_id: str) -> tuple[AgentSnapshot, ProjectPlacement]:
        """The snapshot and placement of one agent (id, prefix or title)."""
        detail = await self.call("agent.get", {"agentId": agent_id})
        record = detail["agent"]
        pending = list(detail.get("pendingPermissions") or [])
        modes = await self.modes_of(str(record.get("provider") or ""), {})
        place = await self.placements([record])
        return (
            projection.snapshot(record, pending=pending, available_modes=modes),
            place[record["id"]],
        )

    async def placements(self, records: list[dict[str, Any]]) -> dict[str, ProjectPlacement]:
        """Each record's project placement (one workspace and one project listing)."""
        workspaces: dict[str, dict[str, Any]] = {}
        projects: dict[str, dict[str, Any]] = {}
        if any(r.get("workspaceId") for r in records):
            try:
                found = await self.call("workspace.list", {"includeArchived": True})
                workspaces = {w["workspaceId"]: w for w in found.get("workspaces") or []}
                listed = await self.call("project.list", {"includeArchived": True})
                projects = {p["projectId"]: p for p in listed.get("projects") or []}
            except RpcFailure as exc:
                log.debug("tswire: placements without workspaces: %s", exc)
        result: dict[str, ProjectPlacement] = {}
        for record in records:
            workspace = workspaces.get(str(record.get("workspaceId") or ""))
            project = projects.get(str(workspace.get("projectId"))) if workspace else None
            result[record["id"]] = projection.placement(
                str(record.get("cwd") or ""), workspace, project
            )
        return result

    async def index(self, agent_id: str) -> timeline.TimelineIndex:
        """The agent's dense timeline index (read once, then kept current by its stream)."""
        found = self.indexes.get(agent_id)
        if found is None:
            found = await timeline.load(self.call, agent_id)
            self.indexes[agent_id] = found
            while len(self.indexes) > MAX_INDEXES:
                self.indexes.popitem(last=False)
        else:
            self.indexes.move_to_end(agent_id)
        return found

    # ----------------------------------------------------------- notifications

    async def _on_notification(self, method: str, params: dict[str, Any]) -> None:
        if method in ("agent.created", "agent.updated"):
            record = params["agent"]
            if method == "agent.created":
                await self.follow([f"agent:{record['id']}"])
            if self.agents_subscribed:
                await self._upsert(record)
        elif method == "agent.deleted":
            agent_id = str(params["agentId"])
            self.indexes.pop(agent_id, None)
            self._streams.discard(f"agent:{agent_id}")
            if self.agents_subscribed:
                await self.push("agent_update", out.AgentRemove(agentId=agent_id))
        elif method == "agent.event":
            await self._on_event(str(params["agentId"]), params["entry"])
        for listener in self.listeners:
            await listener(method, params)

    async def _upsert(self, record: dict[str, Any]) -> None:
        try:
            found = await self.call("agent.permissions.list", {"agentId": record["id"]})
            pending = [p["request"] for p in found.get("requests") or []]
        except RpcFailure:
            pending = []
        modes = await self.modes_of(str(record.get("provider") or ""), {})
        place = await self.placements([record])
        agent = projection.snapshot(record, pending=pending, available_modes=modes)
        await self.push("agent_update", out.AgentUpsert(agent=agent, project=place[record["id"]]))

    async def _on_event(self, agent_id: str, entry: dict[str, Any]) -> None:
        if self._send is None:
            # No socket (detached for a reattach, or dropped as too slow): nothing would be
            # pushed, and keeping the numbering current would hold every row of the timeline
            # until the session expires. It is rebuilt from the durable copy when next needed.
            self.indexes.pop(agent_id, None)
            return
        data = entry.get("event") or {}
        event = translate.event(data)
        if event is None:
            return
        seq: int | None = None
        epoch: str | None = None
        if data.get("type") == "timeline":
            kept = self.indexes.get(agent_id)
            if kept is not None and kept.epoch != entry.get("epoch"):
                # The timeline was rebuilt: renumber from the durable copy.
                self.indexes.pop(agent_id, None)
            index = await self.index(agent_id)
            row = index.add(entry)
            if row is None:
                return
            seq, epoch = row.seq, index.epoch
        timestamp = str(entry.get("timestamp") or "")
        await self.push(
            "agent_stream",
            out.AgentStream(
                agentId=agent_id, event=event, timestamp=timestamp, seq=seq, epoch=epoch
            ),
        )
        if data.get("type") == "permission_requested":
            request = translate.permission(
                data.get("request") or {}, str(data.get("provider") or "")
            )
            await self.push(
                "agent_permission_request",
                out.PermissionRequestPush(agentId=agent_id, request=request),
            )
        elif data.get("type") == "permission_resolved":
            await self.push(
                "agent_permission_resolved",
                out.PermissionResolvedPush(
                    agentId=agent_id,
                    requestId=str(data.get("requestId") or ""),
                    resolution=translate.resolution(data.get("resolution") or {}),
                ),
            )
