"""One TypeScript client session: its way into the daemon, its pushes, its reattachment.

A :class:`ClientSession` is keyed by the client's ``clientId`` and outlives a dropped socket
for :data:`REATTACH_SECONDS`: a ``hello`` with the same id (and the same trust) binds the new
socket to it. It opens one in-process session of the daemon with the connection's admitted
kind (:class:`~paseo_tswire.bridge.RpcBridge`) and drives agents through that session's agent
port (``SessionHandle.agents``, so with that session's access); :class:`AgentFeed` observes
them. Every frame for the client goes through one bounded outbox (:data:`QUEUE_LIMIT` frames,
the session's ``outbound_bytes``): a client that stops reading is closed with 4008 rather
than held in memory.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import OrderedDict, deque
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from paseo_hookspecs.agents import Agents, RecordChange, Subscription
from paseo_hookspecs.transport import Observed, SessionLimits, TransportHost

from paseo_tswire import projection, timeline
from paseo_tswire.agent_feed import AgentFeed
from paseo_tswire.bridge import QUEUE_LIMIT, RpcBridge, RpcFailure
from paseo_tswire.envelope import session_frame
from paseo_tswire.models.agent import AgentMode, AgentSnapshot, ProjectPlacement
from paseo_tswire.models.wire import Wire
from paseo_tswire.port import as_json

log = logging.getLogger("paseo.tswire")

REATTACH_SECONDS = 90.0
"""How long a session waits for its client to reconnect (the TypeScript daemon's window)."""

MAX_INDEXES = 16
"""Agents whose timeline numbering one connection keeps at once. An index keeps up to
``timeline.ROWS_BYTES`` of its agent's newest rows, so without a bound a client watching many
agents would hold that much of each; the least recently used is dropped and, when next needed,
rebuilt from the durable copy (the numbering is a pure function of it, so it comes back the
same)."""

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
            on_overflow=self.overflowed,
        )
        self.agents: Agents = self.bridge.agents
        """The agent port with this session's access (``SessionHandle.agents``)."""
        self._subscription: Subscription | None = None
        self._send: Send | None = None
        self._socket: Send | None = None
        self._close: Callable[[], Coroutine[Any, Any, None]] | None = None
        self._outbox: deque[str | bytes] = deque()
        self._outbox_bytes = 0
        self._outbox_limit = limits.outbound_bytes
        self._wake = asyncio.Event()
        self._written = asyncio.Event()
        self._written.set()
        self._writer = asyncio.get_running_loop().create_task(self._write())
        self.indexes: OrderedDict[str, timeline.TimelineIndex] = OrderedDict()
        self.agents_subscribed = False
        """The client asked for ``agent_update`` pushes (``fetch_agents_request.subscribe``)."""
        self.subscription_id: str | None = None
        self.extra: dict[str, Any] = {}
        """State other rooms keep on the session (terminal slots, …)."""
        self.listeners: list[Callable[[str, dict[str, Any]], Awaitable[None]]] = []
        """Rooms that receive every notification of the session's streams (terminals, …)."""
        self.record_listeners: list[Callable[[RecordChange], None]] = []
        """Rooms told of every agent record change first (the workspaces feed's buckets)."""
        self.binary: Callable[[bytes], Awaitable[None]] | None = None
        """Where inbound binary frames go (the terminals room, once used)."""
        self.closers: list[Callable[[], Awaitable[None]]] = []
        """Rooms' clean-ups run when the session closes (file watches of diff subscriptions…)."""
        self._streams: set[str] = set()
        self._expiry: asyncio.TimerHandle | None = None
        self.on_expire: Callable[[ClientSession], None] | None = None

    # ---------------------------------------------------------------- sockets

    @property
    def attached(self) -> bool:
        """A socket takes this session's frames now."""
        return self._send is not None

    def attach(self, send: Send, close: Callable[[], Coroutine[Any, Any, None]]) -> None:
        """Bind a socket: ``send`` writes one frame, ``close`` drops a client too slow to read."""
        if self._expiry is not None:
            self._expiry.cancel()
            self._expiry = None
        self._socket = send
        self._send = send
        self._close = close

    def overflowed(self) -> None:
        """The client stopped reading: close its socket; what it missed is refetched after it
        reconnects, and the timeline numbering is rebuilt from the durable copy."""
        log.warning("tswire: %s does not read its pushes; closing its connection", self.client_id)
        self.indexes.clear()
        self._drop_outbox()
        self._send = None
        close, self._close = self._close, None
        if close is not None:
            task: asyncio.Task[None] = asyncio.get_running_loop().create_task(close())
            task.add_done_callback(_ignore)

    def detach(self, send: Send) -> bool:
        """The socket ``send`` belongs to went away: keep the session for a reattach. False
        when a newer socket had already taken the session over (nothing changed)."""
        if self._socket is not send:
            return False
        self._socket = self._send = None
        self._drop_outbox()
        loop = asyncio.get_running_loop()
        self._expiry = loop.call_later(REATTACH_SECONDS, self._expired)
        return True

    def _expired(self) -> None:
        self._expiry = None
        if self.on_expire is not None:
            self.on_expire(self)

    async def aclose(self) -> None:
        if self._expiry is not None:
            self._expiry.cancel()
            self._expiry = None
        self._send = None
        closers, self.closers = self.closers, []
        for closer in closers:
            # One room's failed clean-up must not skip the others'.
            try:
                await closer()
            except Exception:
                log.exception("tswire: a room of %s failed to close", self.client_id)
        if self._subscription is not None:
            self._subscription.close()
        self._writer.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._writer
        await self.bridge.aclose()

    async def push(self, type_: str, payload: Wire) -> None:
        """Send one session message (dropped while no socket is attached)."""
        await self.raw(session_frame(type_, payload))

    async def raw(self, frame: str | bytes) -> None:
        """Queue ``frame`` for the socket, in order, without waiting for the client to read
        it (dropped while no socket is attached). Past :data:`QUEUE_LIMIT` frames or the
        session's ``outbound_bytes`` held, the client is closed as too slow."""
        if self._send is None:
            return
        size = len(frame)
        held = len(self._outbox)
        if held >= QUEUE_LIMIT or (held and self._outbox_bytes + size > self._outbox_limit):
            self.overflowed()
            return
        self._outbox.append(frame)
        self._outbox_bytes += size
        self._written.clear()
        self._wake.set()

    async def flush(self, timeout: float) -> None:  # noqa: ASYNC109
        """Wait (at most ``timeout`` seconds) until what is queued has been written."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._written.wait(), timeout)

    def _drop_outbox(self) -> None:
        self._outbox.clear()
        self._outbox_bytes = 0
        self._written.set()

    async def _write(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            while self._outbox:
                frame = self._outbox.popleft()
                self._outbox_bytes -= len(frame)
                send = self._send
                if send is None:
                    continue
                try:
                    await send(frame)
                except Exception:  # noqa: BLE001 - the socket closed under us: the reader
                    # detaches it
                    log.debug("tswire: a frame for %s was lost with its socket", self.client_id)
            self._written.set()

    # ------------------------------------------------------------ daemon calls

    async def call(self, method: str, params: dict[str, Any] | None = None) -> Any:
        """A JSON-RPC method of the in-process session (the rooms without a typed port)."""
        return await self.bridge.call(method, params or {})

    async def start(self, version: str) -> dict[str, Any]:
        """``server.hello`` on the bridge, then the agents observed through the port."""
        result = await self.bridge.hello(self.client_id, self.client_type, version)
        self._subscription = self.agents.subscribe(
            AgentFeed(self), name=f"tswire:{self.client_id}", max_pending=QUEUE_LIMIT
        )
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
        record = await self.agents.get(agent_id)
        pending = await self.agents.pending_permissions(record.id)
        return await self.describe(as_json(record), [as_json(p) for p in pending])

    async def describe(
        self, record: dict[str, Any], pending: list[dict[str, Any]]
    ) -> tuple[AgentSnapshot, ProjectPlacement]:
        """The snapshot and placement of a record (JSON) with its pending requests."""
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
            found = await timeline.load(self.agents, agent_id)
            self.indexes[agent_id] = found
            while len(self.indexes) > MAX_INDEXES:
                self.indexes.popitem(last=False)
        else:
            self.indexes.move_to_end(agent_id)
        return found

    # ----------------------------------------------------------- notifications

    async def _on_notification(self, method: str, params: dict[str, Any]) -> None:
        """A notification of a stream the session follows (workspaces, terminals, …)."""
        for listener in self.listeners:
            await listener(method, params)
