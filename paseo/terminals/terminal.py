"""One live terminal: its program on a PTY, its screen model, its output stream and activity.

Back-pressure, from the program to the clients:

* The PTY is read only as fast as the screen model digests it (every byte must reach the
  screen for ``capture`` to be right). The model is fed in :data:`SLICE` byte slices and the
  reader yields to the event loop after each, so a busy terminal takes turns with every other
  client and terminal (a few milliseconds at a time) rather than holding the loop, and still
  runs at the model's full speed when nothing else is waiting. A flooding program is then
  blocked by the kernel on its full PTY buffer: nothing accumulates in the daemon.
* What was read is coalesced for :data:`FLUSH_INTERVAL` and published in chunks of at most
  :data:`FRAME_BYTES`, so a connection's bounded frame queue is bounded in bytes too. The
  buffer between reads and publication is bounded (:data:`PENDING_LIMIT`): should reading ever
  outrun publication, the oldest bytes are dropped and the next ``terminal.output`` says how
  many (``dropped``), and the client re-subscribes for a fresh snapshot. A connection that
  stops reading gets the transport's ``server.resync`` (then is closed), never slowing the
  terminal or other subscribers.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from paseo.terminals.models import TerminalInfo, TerminalState
from paseo.terminals.pty import PtyProcess
from paseo.terminals.screen import ScreenModel

log = logging.getLogger("paseo.terminals")

SLICE = 2048
"""Bytes fed to the screen model between yields to the event loop."""

PENDING_LIMIT = 256 * 1024
"""Output bytes waiting for publication before the oldest are dropped."""

FRAME_BYTES = 16 * 1024
"""Largest ``terminal.output`` chunk (before base64)."""

FLUSH_INTERVAL = 0.02
"""Seconds between publications of one terminal's output (coalescing small writes)."""

ACTIVITY_WINDOW = 2.0
"""Output within this many seconds makes a terminal (and its workspace) active."""

DRAIN_TIMEOUT = 2.0
"""How long an exited program's last output may take to be read."""


@dataclass(frozen=True)
class TerminalSpec:
    """What a terminal was started as."""

    terminal_id: str
    workspace_id: str | None
    profile_id: str | None
    name: str
    cwd: str
    created_at: str


Output = Callable[["Terminal", int, bytes, int], None]
"""``output(terminal, offset, data, dropped)``: publish a chunk."""


class Terminal:
    """See the module docstring. ``changed`` hears activity and state changes, ``output`` each
    chunk to publish, ``exited`` (awaited) the end once the session is reaped."""

    def __init__(
        self,
        spec: TerminalSpec,
        process: PtyProcess,
        *,
        columns: int,
        rows: int,
        scrollback: int,
        scrollback_bytes: int | None = None,
        output: Output,
        changed: Callable[[Terminal], None],
        exited: Callable[[Terminal], Awaitable[None]],
    ) -> None:
        self.spec = spec
        self.process = process
        self.screen = ScreenModel(
            columns,
            rows,
            scrollback=scrollback,
            scrollback_bytes=scrollback_bytes,
            reply=self._reply,
        )
        self.state: TerminalState = "running"
        self.exit_code: int | None = None
        self.signal: int | None = None
        self.active = False
        self.record_id: str | None = None
        self.offset = 0
        """Output bytes produced so far (published, pending or dropped)."""
        self._output = output
        self._changed = changed
        self._exited = exited
        self._pending = bytearray()
        self._pending_dropped = 0
        self._flush_handle: asyncio.TimerHandle | None = None
        self._last_output = 0.0
        self._activity_handle: asyncio.TimerHandle | None = None
        self._readable = asyncio.Event()
        self.done = asyncio.Event()
        """Set once the program ended, its session is reaped and ``exited`` returned."""
        self._task: asyncio.Task[None] | None = None

    @property
    def terminal_id(self) -> str:
        return self.spec.terminal_id

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run())

    def info(self) -> TerminalInfo:
        columns, rows = self.screen.size
        return TerminalInfo(
            terminalId=self.spec.terminal_id,
            workspaceId=self.spec.workspace_id,
            profileId=self.spec.profile_id,
            title=self.screen.title or self.spec.name,
            cwd=self.spec.cwd,
            command=self.process.argv,
            pid=self.process.pid,
            columns=columns,
            rows=rows,
            state=self.state,
            exitCode=self.exit_code,
            signal=self.signal,
            active=self.active,
            outputBytes=self.offset,
            createdAt=self.spec.created_at,
        )

    # ------------------------------------------------------------------ input

    def write(self, data: bytes) -> None:
        self.process.write(data)

    def _reply(self, data: str) -> None:
        # The emulator answering the program's queries (cursor position and the like).
        if self.state == "running":
            self.process.write(data.encode())

    def resize(self, columns: int, rows: int) -> None:
        self.screen.resize(columns, rows)
        self.process.resize(columns, rows)

    # ------------------------------------------------------------------ output

    async def _run(self) -> None:
        pump = asyncio.get_running_loop().create_task(self._pump())
        try:
            code = await self.process.wait()
            # Background jobs may still hold the PTY open: the session goes with its leader.
            await self.process.reap()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(pump), DRAIN_TIMEOUT)
        finally:
            pump.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await pump
            self.process.close()
        self._flush()
        if self._flush_handle is not None:
            self._flush_handle.cancel()
        if self._activity_handle is not None:
            self._activity_handle.cancel()
        self.state = "exited"
        self.active = False
        self.exit_code = code if code >= 0 else None
        self.signal = -code if code < 0 else None
        try:
            await self._exited(self)
        finally:
            self.done.set()

    async def _pump(self) -> None:
        loop = asyncio.get_running_loop()
        loop.add_reader(self.process.master, self._readable.set)
        while True:
            await self._readable.wait()
            self._readable.clear()
            data = self.process.read()
            if data is None:
                return
            for start in range(0, len(data), SLICE):
                piece = data[start : start + SLICE]
                self.screen.feed(piece)
                self._queue(piece)
                # Let every other ready callback (other clients' calls) run in between.
                await asyncio.sleep(0)

    def _queue(self, data: bytes) -> None:
        self.offset += len(data)
        self._pending += data
        overflow = len(self._pending) - PENDING_LIMIT
        if overflow > 0:
            del self._pending[:overflow]
            self._pending_dropped += overflow
        if self._flush_handle is None:
            self._flush_handle = asyncio.get_running_loop().call_later(
                FLUSH_INTERVAL, self._flush_tick
            )
        self._mark_active()

    def _flush_tick(self) -> None:
        self._flush_handle = None
        self._flush()

    def _take(self, limit: int) -> tuple[int, bytes, int] | None:
        """The oldest pending chunk as ``(offset, data, dropped_before)``."""
        if not self._pending:
            return None
        data = bytes(self._pending[:limit])
        del self._pending[:limit]
        offset = self.offset - len(self._pending) - len(data)
        dropped, self._pending_dropped = self._pending_dropped, 0
        return offset, data, dropped

    def _flush(self) -> None:
        """Publish everything pending, in chunks of at most :data:`FRAME_BYTES`."""
        while (chunk := self._take(FRAME_BYTES)) is not None:
            self._output(self, *chunk)

    # ---------------------------------------------------------------- activity

    def _mark_active(self) -> None:
        self._last_output = time.monotonic()
        if self.active:
            return
        self.active = True
        self._changed(self)
        self._activity_handle = asyncio.get_running_loop().call_later(
            ACTIVITY_WINDOW, self._check_idle
        )

    def _check_idle(self) -> None:
        remaining = ACTIVITY_WINDOW - (time.monotonic() - self._last_output)
        if remaining > 0:
            self._activity_handle = asyncio.get_running_loop().call_later(
                remaining, self._check_idle
            )
            return
        self._activity_handle = None
        self.active = False
        self._changed(self)
