"""One client connection: its trust, its allowlist, its calls and its bounded outbound queue.

A transport creates a :class:`Session` per accepted connection through
:meth:`paseo_hookspecs.transport.TransportHost.open_session` (the RPC server), feeds it every
inbound frame with :meth:`Session.receive`, awaits :meth:`Session.run` (which writes outbound
frames through the transport's :class:`~paseo_hookspecs.transport.Channel`) and calls
:meth:`Session.connection_lost` when the peer goes away: a
:class:`~paseo_hookspecs.transport.SessionHandle`.

Isolation: every outbound frame goes through this session's own queue, drained by its own
writer task, or by the call task that made an answer when nothing else is being written (no
task switch per answer). When the queue is empty, nothing is being written and the channel is
an :class:`~paseo_hookspecs.transport.ImmediateChannel` whose connection takes the frame
without waiting, the frame is written at once and never queued. A client that stops reading
blocks only that task; when its queue reaches ``outbound_queue`` frames or ``outbound_bytes``
bytes, the queue is dropped and replaced by one ``server.resync`` notification, and if the
client still has not read that one by the next overflow the connection is closed with
:data:`CLOSE_SLOW_CONSUMER`. The bytes queued on all sessions together are bounded too
(``outbound_bytes_total``): past it the host sheds the largest queues first
(:meth:`SessionHost.make_room`). Memory per connection and in total stays bounded in bytes,
whatever the size of the answers.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import sys
import time
from collections import deque
from collections.abc import Awaitable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from paseo_hookspecs.errors import AccessDenied, NotFound, PaseoError
from paseo_hookspecs.transport import Channel, ImmediateChannel, Observed, SessionLimits

from paseo.rpc import eager
from paseo.rpc.admission import CallBudget
from paseo.rpc.close_codes import (
    CLOSE_CODES,
    CLOSE_GOING_AWAY,
    CLOSE_HELLO_TIMEOUT,
    CLOSE_IDLE,
    CLOSE_SLOW_CONSUMER,
    CLOSE_TOO_BIG,
    CLOSE_UNAUTHORIZED,
    CLOSE_UNSUPPORTED_DATA,
)
from paseo.rpc.dispatch import (
    HELLO,
    Call,
    Frame,
    Rejection,
    decode_frame,
    encode_error,
    encode_notification,
    invoke,
)
from paseo.rpc.errors import HelloRequired, ShuttingDown
from paseo.rpc.models import ResyncEvent
from paseo.rpc.trust import is_local_client

if TYPE_CHECKING:
    from paseo_hookspecs.agents import Agents
    from paseo_hookspecs.context import DaemonContext

    from paseo.rpc.dispatch import MethodTable
    from paseo.rpc.session_agents import SessionAgents

log = logging.getLogger("paseo.rpc")

__all__ = [
    "CLOSE_CODES",
    "CLOSE_GOING_AWAY",
    "CLOSE_HELLO_TIMEOUT",
    "CLOSE_IDLE",
    "CLOSE_SLOW_CONSUMER",
    "CLOSE_TOO_BIG",
    "CLOSE_UNAUTHORIZED",
    "CLOSE_UNSUPPORTED_DATA",
    "CallContext",
    "Session",
    "SessionHost",
]
"""The close codes live in :mod:`paseo.rpc.close_codes`; they are named here too, where
transports and tests have always found them."""

SESSION_STREAM = "session"
"""The per-connection stream (``server.resync`` and ``RpcContext.notify`` pushes)."""


class SessionHost(Protocol):
    """What a session needs of the server it belongs to (the RPC server implements it)."""

    @property
    def methods(self) -> MethodTable:
        """Every registered method (the session's allowlist is computed from it)."""

    @property
    def accepting(self) -> bool:
        """``False`` once shutdown began: new calls are answered ``shutting_down``."""

    @property
    def context(self) -> DaemonContext:
        """The daemon, as method handlers see it (``RpcContext.daemon``)."""

    def session_ended(self, session: Session) -> None:
        """Forget ``session``: its connection is gone."""

    def stream_position(self, name: str) -> tuple[frozenset[str], int] | None:
        """The session kinds allowed on stream ``name`` and its current ``seq``; ``None`` when
        no such stream is registered."""

    def make_room(self, size: int, limit: int) -> None:
        """Shed the largest outbound queues (:meth:`Session.shed`) until ``size`` more bytes
        fit under ``limit`` bytes queued across every session, or nothing is left to shed."""

    def outbound_changed(self, delta: int) -> None:
        """Count ``delta`` bytes more (or fewer) queued on some session."""


class _Outbound:
    __slots__ = ("request_id", "resync", "size", "stream", "text")

    def __init__(
        self,
        text: Frame,
        request_id: Any = None,
        stream: str | None = None,
        *,
        resync: bool = False,
    ) -> None:
        self.text = text
        # What the frame really occupies (a non-ASCII str takes 2 or 4 bytes a character); a
        # shared frame counts whole on every queue that holds it.
        self.size = sys.getsizeof(text) if isinstance(text, str) else text.size
        self.request_id = request_id
        self.stream = stream
        self.resync = resync


class CallContext:
    """The :class:`paseo_hookspecs.context.RpcContext` handed to method handlers."""

    __slots__ = ("session",)

    def __init__(self, session: Session) -> None:
        self.session = session

    @property
    def daemon(self) -> DaemonContext:
        return self.session.server.context

    @property
    def server(self) -> SessionHost:
        """The server the call arrived through (the daemon bench's plugin publishes on it)."""
        return self.session.server

    @property
    def session_kind(self) -> str:
        return self.session.kind

    @property
    def client_id(self) -> str:
        return self.session.client_id

    @property
    def trusted_local(self) -> bool:
        session = self.session
        observed = session.observed
        if session.kind != "local" or observed.origin:
            return False  # a remote credential, or a page in a browser
        # The peer as observed (a forwarded address counts only behind a trusted proxy).
        return is_local_client(
            unix_socket=observed.unix_socket, client_address=observed.client_address
        )

    async def notify(self, method: str, params: dict[str, Any]) -> None:
        self.session.push(method, params)

    def subscribe(self, streams: Sequence[str]) -> dict[str, int]:
        return self.session.subscribe(streams)

    def unsubscribe(self, streams: Sequence[str]) -> list[str]:
        return self.session.unsubscribe(streams)


class Session:
    """See the module docstring."""

    _ids = itertools.count(1)

    def __init__(
        self,
        server: SessionHost,
        *,
        kind: str,
        channel: Channel,
        observed: Observed,
        limits: SessionLimits,
    ) -> None:
        self.id = next(self._ids)
        self.server = server
        self.kind = kind
        self.channel = channel
        self._send_now = channel.send_now if isinstance(channel, ImmediateChannel) else None
        self.observed = observed
        self.limits = limits
        self.allowed = server.methods.allowed_for(kind)
        self.client_id = ""
        self.client_type = ""
        self.hello_done = False
        self.subscriptions: set[str] = set()
        self.opened_at = time.monotonic()
        self._context = CallContext(self)
        self._queue: deque[_Outbound] = deque()
        self.queued_bytes = 0
        """Bytes of the frames queued or being written (counted on the host too)."""
        self._wake = asyncio.Event()
        self._writing = False
        """A task is in :meth:`_drain`: frames queued meanwhile go out from it."""
        self._answering = False
        """A call task is writing for the session (it is not busy with its call any more)."""
        self._resync_pending = False
        self._session_seq: dict[str, int] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._budget = CallBudget(limits)
        self._last_inbound = time.monotonic()
        self._closing: tuple[int, str] | None = None
        self._closer: asyncio.Task[None] | None = None
        self._flushed = asyncio.Event()
        self._closed = asyncio.Event()
        self._port_calls = 0
        """Calls in flight through :attr:`agents` (bounded with the frames' calls)."""
        self._agents: SessionAgents | None = None

    # ------------------------------------------------------------- agent port

    @property
    def agents(self) -> Agents:
        """The agent port with this session's access (:mod:`paseo.rpc.session_agents`)."""
        if self._agents is None:
            # Imported by the first session that reaches the agent port (a plugin's handler):
            # a daemon no client has used yet never loads it.
            from paseo.rpc.session_agents import SessionAgents

            self._agents = SessionAgents(self.server.context.agents, self)
        return self._agents

    def admit_port_call(self) -> PaseoError | None:
        if self._closing is not None:
            return ShuttingDown("the session is closed")
        self._last_inbound = now = time.monotonic()  # a call, as a frame is: not idle
        error = self._admit(now, hello=False)
        if error is None:
            self._port_calls += 1
        return error

    def port_call_done(self) -> None:
        self._port_calls -= 1

    def stream_access(self, name: str) -> frozenset[str] | None:
        found = self.server.stream_position(name)
        return None if found is None else found[0]

    # ------------------------------------------------------------------ inbound

    def receive(self, frame: str | bytes) -> None:
        """Handle one inbound frame; never blocks (calls run in their own tasks, whose first
        step runs at once: a call that waits for nothing is answered before this returns; an
        ``immediate`` method runs inline, with no task at all)."""
        self._last_inbound = now = time.monotonic()
        if self._closing is not None:
            return
        if isinstance(frame, bytes):
            self.close(CLOSE_UNSUPPORTED_DATA, CLOSE_CODES[CLOSE_UNSUPPORTED_DATA])
            return
        decoded = decode_frame(frame)
        if isinstance(decoded, Rejection):
            if not decoded.notification:
                self._answer(encode_error(decoded.id, decoded.error), decoded.id)
            return
        error = self._admit(now, hello=decoded.method == HELLO)
        if error is not None:
            if not decoded.notification:
                self._answer(encode_error(decoded.id, error), decoded.id)
            return
        entry = self.server.methods.get(decoded.method)
        rest: Awaitable[Frame | None] | None = None
        if entry is not None and entry.immediate:
            # Answered from memory: inline, no task (paseo.rpc.eager.inline).
            done, value = eager.inline(
                invoke(self.server.methods, self.allowed, decoded, self._context)
            )
            if done:
                if value is not None:
                    self._answer(value, decoded.id)
                return
            rest = value  # it suspended after all: a call task carries on with it
        # Eager: a call that needs to wait for nothing is answered before the next frame is
        # read, without a task switch (see paseo.rpc.eager).
        task = eager.start(asyncio.get_running_loop(), self._run_call(decoded, rest))
        if not task.done():
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    def _answer(self, frame: Frame, request_id: Any) -> None:
        """Send an answer made without a call task: at once, or queued for the writer task."""
        if not self._write_now(frame):
            self._enqueue(_Outbound(frame, request_id))

    def _admit(self, now: float, *, hello: bool) -> PaseoError | None:
        if not self.server.accepting:
            return ShuttingDown("the daemon is shutting down")
        if not self.hello_done and not hello:
            return HelloRequired("call server.hello first")
        return self._budget.take(now, len(self._tasks) + self._port_calls)

    async def _run_call(self, call: Call, started: Awaitable[Frame | None] | None) -> None:
        """Answer ``call``; ``started`` is the rest of an immediate call that suspended."""
        try:
            if started is None:
                started = invoke(self.server.methods, self.allowed, call, self._context)
            answer = await started
        except asyncio.CancelledError:
            # Cancelled by shutdown (the connection is still open: say why) or by the
            # connection ending (enqueueing is then a no-op).
            if not call.notification and call.id is not None:
                self._enqueue(
                    _Outbound(
                        encode_error(
                            call.id, ShuttingDown("the daemon shut down before answering")
                        ),
                        call.id,
                    )
                )
            raise
        if answer is None or self._write_now(answer):
            return
        self._enqueue(_Outbound(answer, call.id), wake=False)
        if self._writing:
            return  # the task writing now writes this answer too, in order
        # The answer goes out from this task when nothing else is being written: no wake-up
        # of the writer task per call. A client that does not read blocks this task only.
        self._answering = True
        try:
            await self._drain()
        except Exception:  # noqa: BLE001 - a send failure means the connection is gone; the
            # writer task meets the same failure and ends the flush.
            self._wake.set()
        finally:
            self._answering = False

    def mark_hello(self, client_id: str, client_type: str) -> None:
        self.hello_done = True
        self.client_id = client_id
        self.client_type = client_type

    # ----------------------------------------------------------------- outbound

    def subscribe(self, streams: Sequence[str]) -> dict[str, int]:
        """Deliver ``streams`` to this connection; each stream's current ``seq``. All or none:
        ``not_found`` for an unknown stream, ``access_denied`` for one this kind may not read."""
        positions: dict[str, int] = {}
        for name in streams:
            found = self.server.stream_position(name)
            if found is None:
                raise NotFound(f"no stream named {name!r}", data={"stream": name})
            access, seq = found
            if self.kind not in access:
                raise AccessDenied(f"this session may not subscribe to {name!r}")
            positions[name] = seq
        self.subscriptions.update(positions)
        return positions

    def unsubscribe(self, streams: Sequence[str]) -> list[str]:
        """Stop delivering ``streams``; the ones that were subscribed."""
        removed = sorted(set(streams) & self.subscriptions)
        self.subscriptions.difference_update(streams)
        return removed

    def push(self, method: str, params: dict[str, Any]) -> None:
        """Push a notification to this connection only, numbered on its own stream."""
        stream = str(params.get("stream") or SESSION_STREAM)
        seq = self._session_seq.get(stream, 0) + 1
        self._session_seq[stream] = seq
        payload = {**params, "stream": stream, "seq": seq}
        frame = encode_notification(method, payload)
        if not self._write_now(frame):
            self._enqueue(_Outbound(frame, stream=stream))

    def deliver(self, stream: str, text: str) -> None:
        """Queue an already-encoded notification of a published ``stream``."""
        if not self._write_now(text):
            self._enqueue(_Outbound(text, stream=stream))

    def _write_now(self, text: Frame) -> bool:
        """Write ``text`` without queueing it, if nothing is queued or being written (so the
        order holds) and the channel takes it without waiting; ``False`` to queue it."""
        send_now = self._send_now
        if send_now is None or self._queue or self._writing or self._closing is not None:
            return False
        return send_now(text if isinstance(text, str) else text.text())

    def _enqueue(self, item: _Outbound, *, wake: bool = True) -> None:
        if self._closing is not None:
            return
        limits = self.limits
        if self._queue and (
            len(self._queue) >= limits.outbound_queue
            or self.queued_bytes + item.size > limits.outbound_bytes
        ):
            self._overflow()
            if self._closing is not None:
                return
        self.server.make_room(item.size, limits.outbound_bytes_total)
        if self._closing is not None:
            return
        self._queue.append(item)
        self._count(item.size)
        if wake:
            self._wake.set()

    def _count(self, delta: int) -> None:
        self.queued_bytes += delta
        self.server.outbound_changed(delta)

    def _drop_queue(self) -> None:
        self._count(-sum(item.size for item in self._queue))
        self._queue.clear()

    def shed(self) -> None:
        """Drop this session's queue for the host's total bound (a resync, or the close)."""
        if self._closing is None and self._queue:
            self._overflow()

    def _overflow(self) -> None:
        if self._resync_pending:
            log.warning(
                "session %s (%s) did not read its messages; closing",
                self.id,
                self.client_id or "no hello",
            )
            self.close(CLOSE_SLOW_CONSUMER, CLOSE_CODES[CLOSE_SLOW_CONSUMER])
            return
        dropped_ids = [i.request_id for i in self._queue if i.request_id is not None]
        streams = sorted({i.stream for i in self._queue if i.stream is not None})
        dropped_bytes = self.queued_bytes
        self._drop_queue()
        seq = self._session_seq.get(SESSION_STREAM, 0) + 1
        self._session_seq[SESSION_STREAM] = seq
        event = ResyncEvent(
            stream=SESSION_STREAM,
            seq=seq,
            reason="overflow",
            streams=streams,
            droppedRequestIds=dropped_ids,
        )
        notice = _Outbound(encode_notification("server.resync", event), resync=True)
        self._queue.append(notice)
        self._count(notice.size)
        self._resync_pending = True
        log.info(
            "session %s fell behind: dropped %d answers and events of %s (%d bytes)",
            self.id,
            len(dropped_ids),
            streams,
            dropped_bytes,
        )

    async def run(self) -> None:
        """Write queued frames until the session is closed; returns once it is."""
        loop = asyncio.get_running_loop()
        writer = loop.create_task(self._write_loop())
        watchdog = loop.create_task(self._watch_timeouts())
        try:
            await self._closed.wait()
        finally:
            for task in (writer, watchdog, self._closer):
                if task is not None:
                    task.cancel()
            for task in (writer, watchdog):
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task

    async def _drain(self) -> None:
        """Write the queued frames in order, unless another task is writing them already."""
        if self._writing:
            return
        self._writing = True
        try:
            while self._queue:
                item = self._queue.popleft()
                text = item.text
                try:
                    # A shared frame is copied only for the time it is written.
                    await self.channel.send(text if isinstance(text, str) else text.text())
                finally:
                    # Counted until written: the frame is held until then.
                    self._count(-item.size)
                if item.resync:
                    # The client read up to the drop; a later overflow gets a new notice.
                    self._resync_pending = False
        finally:
            self._writing = False
        if self._closing is not None:
            self._wake.set()  # the writer task confirms the flush

    async def _write_loop(self) -> None:
        try:
            while True:
                await self._wake.wait()
                self._wake.clear()
                await self._drain()
                if self._closing is not None and not self._writing and not self._queue:
                    self._flushed.set()
                    return
        except asyncio.CancelledError:
            raise
        except Exception:  # noqa: BLE001 - any send failure means the connection is gone;
            # the transport notices too and ends the session.
            self._flushed.set()

    async def _watch_timeouts(self) -> None:
        await asyncio.sleep(self.limits.hello_timeout)
        if not self.hello_done:
            self.close(CLOSE_HELLO_TIMEOUT, CLOSE_CODES[CLOSE_HELLO_TIMEOUT])
            return
        while self._closing is None:
            idle = time.monotonic() - self._last_inbound
            busy = len(self._tasks) - self._answering + self._port_calls
            observing = self._agents is not None and self._agents.observing
            if idle >= self.limits.idle_timeout and not (self.subscriptions or observing or busy):
                self.close(CLOSE_IDLE, CLOSE_CODES[CLOSE_IDLE])
                return
            await asyncio.sleep(max(1.0, self.limits.idle_timeout - idle))

    # ------------------------------------------------------------------ closing

    def close(self, code: int, reason: str, *, flush_timeout: float = 2.0) -> None:
        """Close with ``code`` once what is queued is written (at most ``flush_timeout``).

        A slow-consumer close drops the queue and closes at once: the queue is exactly what
        the client failed to read.
        """
        if self._closing is not None:
            return
        self._closing = (code, reason)
        if code == CLOSE_SLOW_CONSUMER:
            self._drop_queue()
            flush_timeout = 0.0
        self._wake.set()
        self._closer = asyncio.get_running_loop().create_task(
            self._close_after_flush(code, reason, flush_timeout)
        )

    async def _close_after_flush(self, code: int, reason: str, flush_for: float) -> None:
        if flush_for > 0:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._flushed.wait(), flush_for)
        with contextlib.suppress(Exception):
            await self.channel.close(code, reason)
        self._closed.set()

    def connection_lost(self) -> None:
        """The transport saw the connection end: cancel calls, stop writing, leave the
        server."""
        if self._closing is None:
            self._closing = (CLOSE_GOING_AWAY, "connection lost")
        self._drop_queue()
        for task in list(self._tasks):
            task.cancel()
        if self._agents is not None:
            self._agents.close()
        self._closed.set()
        self.server.session_ended(self)

    @property
    def closed(self) -> bool:
        return self._closed.is_set()

    @property
    def in_flight(self) -> int:
        return len(self._tasks)

    async def drain_calls(self) -> None:
        """Wait for the calls in flight (the caller bounds the wait); a call task only writing
        answers to a client that does not read is not one."""
        while len(self._tasks) > self._answering:
            await asyncio.wait(list(self._tasks), return_when=asyncio.FIRST_COMPLETED)

    def fail_calls(self) -> None:
        """Cancel calls still running at shutdown; their callers get ``shutting_down``."""
        for task in list(self._tasks):
            task.cancel()
