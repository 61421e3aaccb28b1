"""The routing of ``paseo relay serve``: the Cloudflare relay's Durable Object
(``packages/relay/src/cloudflare-adapter.ts``), one :class:`Session` per serverId, in one
process. It forwards frames as they came and never sees a key (docs/relay.md, "Threat model").

v2 (what every current client speaks) has three socket kinds per serverId:

- the daemon's **control** socket (``role=server``, no connectionId): one per serverId, a new
  one replaces the old (1008); it hears ``sync`` on open, then ``connected``/``disconnected``
  per client, and a ``ping`` is answered with ``pong``;
- one **data** socket per connectionId (``role=server&connectionId=…``), replaced the same way;
  on open it receives what the clients sent before it (at most :attr:`RelayLimits.pending_frames`
  frames and :attr:`RelayLimits.pending_bytes` bytes per connection);
- **client** sockets (``role=client``), given ``conn_`` + 16 hex; several may share an id.

The last client socket of an id closing closes its data socket (1001 "Client disconnected") and
tells control ``disconnected``; the data socket closing closes its clients (1012 "Server
disconnected"). A client whose data socket has not opened 10 s after ``connected`` makes the
relay re-send ``sync``; 5 s later it closes control (1011 "Control unresponsive"), so a stuck
daemon reconnects. v1 (legacy: one socket per role, everything forwarded to the other role) is
kept because the Worker still accepts it.

Memory is bounded by construction: a socket's frames are read one at a time and forwarded with
backpressure (the next frame is not read until the target's write buffer drained, up to
:attr:`RelayLimits.send_timeout`, after which the slow target is closed 1013), frames are at
most :attr:`RelayLimits.max_frame` bytes, the buffered frames are capped per connection and in
total, and the sockets per server and in all are counted (:meth:`Relay.admit`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import secrets
import time
from collections import deque
from collections.abc import Coroutine, Iterable
from dataclasses import dataclass, field
from typing import Any

from websockets.asyncio.server import ServerConnection
from websockets.exceptions import ConnectionClosed

log = logging.getLogger("paseo_relay.server")

Frame = str | bytes

REPLACED = (1008, "Replaced by new connection")
CLIENT_GONE = (1001, "Client disconnected")
SERVER_GONE = (1012, "Server disconnected")
CONTROL_STUCK = (1011, "Control unresponsive")
SLOW_CONSUMER = (1013, "Slow consumer")
BUFFER_FULL = (1013, "Relay buffer full")


@dataclass(frozen=True)
class RelayLimits:
    """The bounds of one relay process (``paseo relay serve`` options)."""

    max_frame: int = 4 << 20
    """Largest frame accepted from any socket, in bytes (larger closes it, 1009)."""
    max_sockets: int = 4096
    """Open sockets of every kind, in all."""
    max_servers: int = 1024
    """Distinct serverIds with any socket open."""
    max_connections_per_server: int = 64
    """Client connectionIds (and so data sockets) per serverId."""
    max_sockets_per_connection: int = 8
    """Client sockets sharing one connectionId."""
    pending_frames: int = 200
    """Client frames kept per connection until its data socket opens (the oldest go first)."""
    pending_bytes: int = 4 << 20
    """The same, in bytes."""
    pending_total_bytes: int = 64 << 20
    """All connections' kept frames together; past it a client's frame closes it (1013)."""
    send_timeout: float = 30.0
    """How long a target may take to accept a forwarded frame before it is closed (1013)."""
    resync_after: float = 10.0
    unresponsive_after: float = 5.0
    close_timeout: float = 2.0
    """A closing handshake the peer does not finish is cut after this (never awaited inline)."""


def new_connection_id() -> str:
    return "conn_" + secrets.token_hex(8)


def _size(frame: Frame) -> int:
    return len(frame.encode("utf-8")) if isinstance(frame, str) else len(frame)


@dataclass
class _Pending:
    frames: deque[tuple[Frame, int]] = field(default_factory=deque)
    size: int = 0


class Session:
    """The sockets of one serverId for one protocol version."""

    def __init__(self, key: tuple[str, str]) -> None:
        self.key = key
        self.control: ServerConnection | None = None
        self.data: dict[str, ServerConnection] = {}
        self.clients: dict[str, set[ServerConnection]] = {}
        self.pending: dict[str, _Pending] = {}
        self.nudges: dict[str, asyncio.Task[None]] = {}
        self.flushing: set[str] = set()
        """Connections whose kept frames are being sent: new frames queue behind them."""
        self.legacy: dict[str, ServerConnection] = {}  # v1: role -> socket

    def connection_ids(self) -> list[str]:
        return [cid for cid, sockets in self.clients.items() if sockets]

    def empty(self) -> bool:
        return not (self.control or self.data or self.clients or self.legacy)


class Relay:
    """Every session of this process; :meth:`handle` serves one accepted socket."""

    def __init__(self, limits: RelayLimits | None = None) -> None:
        self.limits = limits or RelayLimits()
        self.sessions: dict[tuple[str, str], Session] = {}
        self.sockets = 0
        self.pending_total = 0
        self._tasks: set[asyncio.Task[None]] = set()

    # -------------------------------------------------------------- admission

    def admit(self, version: str, server_id: str, role: str, connection_id: str) -> str | None:
        """Why a socket with these parameters is refused (HTTP 503), or ``None``."""
        limits = self.limits
        if self.sockets >= limits.max_sockets:
            return "Relay at capacity"
        session = self.sessions.get((version, server_id))
        if session is None:
            return "Relay at capacity" if len(self.sessions) >= limits.max_servers else None
        if version != "2":
            return None
        if role == "client" and not connection_id:
            if len(session.connection_ids()) >= limits.max_connections_per_server:
                return "Too many connections for this server"
        elif role == "client":
            sockets = session.clients.get(connection_id, set())
            if len(sockets) >= limits.max_sockets_per_connection:
                return "Too many sockets for this connection"
            if not sockets and len(session.connection_ids()) >= limits.max_connections_per_server:
                return "Too many connections for this server"
        elif (
            connection_id
            and connection_id not in session.data
            and len(session.data) >= limits.max_connections_per_server
        ):
            return "Too many connections for this server"
        return None

    # -------------------------------------------------------------- stats

    def buffered_bytes(self) -> int:
        """What this relay holds for its sockets: kept client frames and write buffers (how a
        test sees that a slow reader cannot grow the relay)."""
        total = self.pending_total
        for session in self.sessions.values():
            for ws in self._all(session):
                transport = ws.transport
                if transport is not None:
                    total += transport.get_write_buffer_size()
        return total

    @staticmethod
    def _all(session: Session) -> Iterable[ServerConnection]:
        if session.control is not None:
            yield session.control
        yield from session.data.values()
        for sockets in session.clients.values():
            yield from sockets
        yield from session.legacy.values()

    # -------------------------------------------------------------- plumbing

    def _spawn(self, coro: Coroutine[Any, Any, None]) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def close(self, ws: ServerConnection, code: tuple[int, str]) -> None:
        """Close ``ws`` in the background: a peer that never answers the Close frame costs
        :attr:`RelayLimits.close_timeout`, never a blocked handler."""
        self._spawn(self._close(ws, code))

    async def _close(self, ws: ServerConnection, code: tuple[int, str]) -> None:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(ws.close(*code), self.limits.close_timeout)
        if ws.transport is not None:
            ws.transport.abort()

    async def _send(self, ws: ServerConnection, frame: Frame) -> None:
        """Forward ``frame``; a target that does not drain in time is closed (1013)."""
        try:
            await asyncio.wait_for(ws.send(frame), self.limits.send_timeout)
        except TimeoutError:
            log.info("closing a socket that stopped reading")
            self.close(ws, SLOW_CONSUMER)
        except ConnectionClosed:
            pass

    async def _send_all(self, targets: Iterable[ServerConnection], frame: Frame) -> None:
        targets = list(targets)
        if len(targets) == 1:
            await self._send(targets[0], frame)
        elif targets:
            await asyncio.gather(*(self._send(ws, frame) for ws in targets))

    def _notify_control(self, session: Session, message: dict[str, object]) -> None:
        control = session.control
        if control is not None:
            self._spawn(self._send(control, json.dumps(message, separators=(",", ":"))))

    # -------------------------------------------------------------- serving

    async def handle(
        self, ws: ServerConnection, version: str, server_id: str, role: str, connection_id: str
    ) -> None:
        """Serve one socket until it closes (the parameters were checked by the HTTP layer)."""
        self.sockets += 1
        key = (version, server_id)
        session = self.sessions.get(key)
        if session is None:
            session = self.sessions[key] = Session(key)
        try:
            if version != "2":
                await self._serve_legacy(session, ws, role)
            elif role == "client":
                await self._serve_client(session, ws, connection_id or new_connection_id())
            elif connection_id:
                await self._serve_data(session, ws, connection_id)
            else:
                await self._serve_control(session, ws)
        finally:
            self.sockets -= 1
            if session.empty() and self.sessions.get(key) is session:
                for task in session.nudges.values():
                    task.cancel()
                del self.sessions[key]

    async def _serve_control(self, session: Session, ws: ServerConnection) -> None:
        if session.control is not None:
            self.close(session.control, REPLACED)
        session.control = ws
        try:
            sync = {"type": "sync", "connectionIds": session.connection_ids()}
            await self._send(ws, json.dumps(sync, separators=(",", ":")))
            async for message in ws:
                if isinstance(message, str) and _is_ping(message):
                    pong = {"type": "pong", "ts": int(time.time() * 1000)}
                    await self._send(ws, json.dumps(pong, separators=(",", ":")))
        except ConnectionClosed:
            pass
        finally:
            if session.control is ws:
                session.control = None

    async def _serve_data(self, session: Session, ws: ServerConnection, cid: str) -> None:
        previous = session.data.get(cid)
        if previous is not None:
            self.close(previous, REPLACED)
        session.data[cid] = ws
        try:
            await self._flush(session, cid, ws)
            async for message in ws:
                await self._send_all(session.clients.get(cid, ()), message)
        except ConnectionClosed:
            pass
        finally:
            # Only the current data socket's end closes the clients: a replaced one going
            # away says nothing about the connection.
            if session.data.get(cid) is ws:
                del session.data[cid]
                for client in list(session.clients.get(cid, ())):
                    self.close(client, SERVER_GONE)

    async def _serve_client(self, session: Session, ws: ServerConnection, cid: str) -> None:
        session.clients.setdefault(cid, set()).add(ws)
        self._notify_control(session, {"type": "connected", "connectionId": cid})
        if cid not in session.nudges:
            session.nudges[cid] = asyncio.ensure_future(self._nudge(session, cid))
        try:
            async for message in ws:
                target = session.data.get(cid)
                if target is not None and cid not in session.flushing:
                    await self._send(target, message)
                elif not self._keep(session, cid, message):
                    # Awaited: the handler returning first would close it 1000.
                    await self._close(ws, BUFFER_FULL)
                    break
        except ConnectionClosed:
            pass
        finally:
            sockets = session.clients.get(cid, set())
            sockets.discard(ws)
            if not sockets:
                session.clients.pop(cid, None)
                self._drop_pending(session, cid)
                nudge = session.nudges.pop(cid, None)
                if nudge is not None:
                    nudge.cancel()
                data = session.data.pop(cid, None)
                if data is not None:
                    self.close(data, CLIENT_GONE)
                self._notify_control(session, {"type": "disconnected", "connectionId": cid})

    async def _nudge(self, session: Session, cid: str) -> None:
        """Re-send ``sync`` when no data socket came for ``cid``, then reset a stuck control."""
        try:
            await asyncio.sleep(self.limits.resync_after)
            if not session.clients.get(cid) or cid in session.data:
                return
            self._notify_control(
                session, {"type": "sync", "connectionIds": session.connection_ids()}
            )
            await asyncio.sleep(self.limits.unresponsive_after)
            if not session.clients.get(cid) or cid in session.data:
                return
            if session.control is not None:
                self.close(session.control, CONTROL_STUCK)
        finally:
            if session.nudges.get(cid) is asyncio.current_task():
                del session.nudges[cid]

    async def _serve_legacy(self, session: Session, ws: ServerConnection, role: str) -> None:
        previous = session.legacy.get(role)
        if previous is not None:
            self.close(previous, REPLACED)
        session.legacy[role] = ws
        other = "client" if role == "server" else "server"
        try:
            async for message in ws:
                target = session.legacy.get(other)
                if target is not None:
                    await self._send(target, message)
        except ConnectionClosed:
            pass
        finally:
            if session.legacy.get(role) is ws:
                del session.legacy[role]

    # -------------------------------------------------------------- the kept frames

    def _keep(self, session: Session, cid: str, frame: Frame) -> bool:
        """Keep a client frame until the data socket opens; ``False`` when the relay's total
        budget is spent (the client is then closed rather than silently losing frames)."""
        limits = self.limits
        size = _size(frame)
        if self.pending_total + size > limits.pending_total_bytes:
            return False
        pending = session.pending.setdefault(cid, _Pending())
        pending.frames.append((frame, size))
        pending.size += size
        self.pending_total += size
        # As the Worker: past the per-connection bound the oldest frames go.
        while len(pending.frames) > limits.pending_frames or pending.size > limits.pending_bytes:
            _, dropped = pending.frames.popleft()
            pending.size -= dropped
            self.pending_total -= dropped
        return True

    def _drop_pending(self, session: Session, cid: str) -> None:
        pending = session.pending.pop(cid, None)
        if pending is not None:
            self.pending_total -= pending.size

    async def _flush(self, session: Session, cid: str, ws: ServerConnection) -> None:
        session.flushing.add(cid)
        try:
            pending = session.pending.get(cid)
            while pending is not None and pending.frames and session.data.get(cid) is ws:
                frame, size = pending.frames.popleft()
                pending.size -= size
                self.pending_total -= size
                await self._send(ws, frame)
            if pending is not None and not pending.frames and session.pending.get(cid) is pending:
                del session.pending[cid]
        finally:
            session.flushing.discard(cid)


def _is_ping(message: str) -> bool:
    try:
        parsed = json.loads(message)
    except ValueError:
        return False
    return isinstance(parsed, dict) and parsed.get("type") == "ping"
