"""One supervised service process: its own process group, a bounded log, a TCP health check.

The status goes ``starting`` (spawned, its port not accepting yet) → ``running`` (a TCP
connect to its port succeeded) → ``exited`` (exit 0, or stopped by Paseo) or ``failed``
(any other exit, with the code). The log keeps the tail of the combined stdout/stderr, at most
:data:`LOG_LIMIT` characters, addressed by a running offset so a follower can ask for "what
came after N" without the daemon keeping more.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections import deque
from collections.abc import Awaitable, Callable, Mapping

from paseo.processes import REAP_TIMEOUT, wait_group_gone

LOG_LIMIT = 256 * 1024
"""Characters of a service's output kept (the tail)."""

STOP_GRACE = 5.0
"""Seconds a stopped service gets between SIGTERM and SIGKILL of its group."""

HEALTH_INTERVAL = 0.2

DRAIN_TIMEOUT = 2.0
"""Seconds an exited service's last output may take to reach the log."""


class BoundedLog:
    """The tail of a stream of text, at most ``limit`` characters, with absolute offsets."""

    def __init__(self, limit: int = LOG_LIMIT) -> None:
        self._limit = limit
        self._chunks: deque[str] = deque()
        self._size = 0
        self.end = 0
        """Offset just past the last character ever written."""

    def write(self, text: str) -> None:
        self._chunks.append(text)
        self._size += len(text)
        self.end += len(text)
        while self._size > self._limit and self._chunks:
            head = self._chunks.popleft()
            excess = self._size - self._limit
            if len(head) > excess:
                self._chunks.appendleft(head[excess:])
                self._size -= excess
            else:
                self._size -= len(head)

    def since(self, offset: int) -> str:
        """The text after ``offset`` still kept (all that is kept when it fell off)."""
        text = "".join(self._chunks)
        start = self.end - len(text)
        return text[max(0, offset - start) :]


class ServiceProcess:
    """A running (or finished) service; see the module docstring."""

    def __init__(
        self,
        process: asyncio.subprocess.Process,
        *,
        port: int,
        log: BoundedLog,
        on_change: Callable[[], None],
        on_exit: Callable[[ServiceProcess], Awaitable[None]],
    ) -> None:
        self.process = process
        self.port = port
        self.log = log
        self.status = "starting"
        self.exit_code: int | None = None
        self.stopping = False
        self._on_change = on_change
        self._on_exit = on_exit
        self._tasks = [
            asyncio.create_task(self._pump(), name=f"service-log-{process.pid}"),
            asyncio.create_task(self._health(), name=f"service-health-{process.pid}"),
        ]
        self.done = asyncio.create_task(self._wait(), name=f"service-wait-{process.pid}")

    @property
    def pid(self) -> int:
        return self.process.pid

    @classmethod
    async def spawn(
        cls,
        command: str,
        *,
        cwd: str,
        env: Mapping[str, str],
        port: int,
        log: BoundedLog,
        on_change: Callable[[], None],
        on_exit: Callable[[ServiceProcess], Awaitable[None]],
    ) -> ServiceProcess:
        # A new session makes the shell the leader of its own group: stopping or reaping the
        # service kills everything it started, not just the shell.
        process = await asyncio.create_subprocess_exec(
            "/bin/sh",
            "-c",
            command,
            cwd=cwd,
            env={**os.environ, **env},
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,
        )
        return cls(process, port=port, log=log, on_change=on_change, on_exit=on_exit)

    async def _pump(self) -> None:
        stream = self.process.stdout
        if stream is None:
            return
        while chunk := await stream.read(4096):
            self.log.write(chunk.decode("utf-8", "replace"))

    async def _health(self) -> None:
        while self.process.returncode is None:
            try:
                _reader, writer = await asyncio.wait_for(
                    asyncio.open_connection("127.0.0.1", self.port), 2.0
                )
            except (OSError, TimeoutError):
                await asyncio.sleep(HEALTH_INTERVAL)
                continue
            writer.close()
            with contextlib.suppress(OSError):
                await writer.wait_closed()
            if self.process.returncode is None and self.status == "starting":
                self.status = "running"
                self._on_change()
            return

    async def _wait(self) -> None:
        code = await self.process.wait()
        # The shell may be gone while what it started still runs in the group.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)
        await asyncio.to_thread(wait_group_gone, self.process.pid, REAP_TIMEOUT)
        # The group is gone, so the pipe ends: let the log take what was still in it.
        await asyncio.wait(self._tasks[:1], timeout=DRAIN_TIMEOUT)
        for task in self._tasks:
            task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.gather(*self._tasks, return_exceptions=True)
        self.exit_code = code
        self.status = "exited" if code == 0 or self.stopping else "failed"
        self._on_change()
        await self._on_exit(self)

    async def stop(self) -> None:
        """SIGTERM the group, SIGKILL it after :data:`STOP_GRACE`; wait until it is reaped."""
        self.stopping = True
        if self.process.returncode is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.process.pid, signal.SIGTERM)
            try:
                await asyncio.wait_for(asyncio.shield(self.process.wait()), STOP_GRACE)
            except TimeoutError:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(self.process.pid, signal.SIGKILL)
        await asyncio.shield(self.done)
