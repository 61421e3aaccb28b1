"""A program on a pseudo-terminal, in a session of its own, with guaranteed reaping.

The program is started with the PTY's slave side as its controlling terminal and as a session
leader (so its job-control groups and every child stay inside one session the daemon can kill
as a unit). The master side is read by the event loop without blocking; :meth:`write` queues
input and drains it as the PTY accepts it, so a program that stops reading never blocks the
daemon.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import fcntl
import logging
import os
import signal
import struct
import termios
from collections.abc import Callable, Mapping, Sequence

from paseo.processes import kill_session

log = logging.getLogger("paseo.terminals")

READ_CHUNK = 16 * 1024
"""Bytes read from the PTY per wake-up."""

INPUT_LIMIT = 1024 * 1024
"""Input bytes queued for a program that does not read them before writes are refused."""

HANGUP_GRACE = 1.0
"""How long a killed terminal's program may react to SIGHUP before the session is SIGKILLed."""


def _set_size(fd: int, columns: int, rows: int) -> None:
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))


def _session_on(slave: int) -> Callable[[], None]:
    """What the child runs between fork and exec: lead a new session whose controlling
    terminal is the PTY, so the shell gets job control and SIGWINCH.

    Done here rather than with ``start_new_session``: uvloop runs ``preexec_fn`` before its
    own ``setsid()`` and before stdio is in place, hence the explicit slave descriptor.
    """

    def run() -> None:
        os.setsid()
        fcntl.ioctl(slave, termios.TIOCSCTTY, 0)

    return run


class InputOverflow(Exception):
    """The program has not read :data:`INPUT_LIMIT` bytes of earlier input."""


class PtyProcess:
    """One started program; build it with :meth:`spawn`."""

    def __init__(self, process: asyncio.subprocess.Process, master: int, argv: list[str]) -> None:
        self._process = process
        self.master = master
        self.argv = argv
        self.pid = process.pid
        self._pending = bytearray()
        self._writing = False
        self._closed = False

    @classmethod
    async def spawn(
        cls,
        argv: Sequence[str],
        *,
        cwd: str,
        env: Mapping[str, str],
        columns: int,
        rows: int,
    ) -> PtyProcess:
        """Start ``argv`` in ``cwd`` on a new PTY of ``columns`` x ``rows``.

        Raises ``OSError`` (``FileNotFoundError`` for a missing program) when it cannot start.
        """
        master, slave = os.openpty()
        try:
            _set_size(master, columns, rows)
            process = await asyncio.create_subprocess_exec(
                *argv,
                stdin=slave,
                stdout=slave,
                stderr=slave,
                cwd=cwd,
                env=dict(env),
                preexec_fn=_session_on(slave),
            )
        except BaseException:
            os.close(master)
            os.close(slave)
            raise
        os.close(slave)
        os.set_blocking(master, False)
        return cls(process, master, list(argv))

    @property
    def returncode(self) -> int | None:
        return self._process.returncode

    async def wait(self) -> int:
        """The leader's exit status (negative: killed by that signal)."""
        return await self._process.wait()

    def read(self) -> bytes | None:
        """What the program wrote so far (``b""``: nothing yet); ``None`` once the PTY is
        closed (every process holding the slave side exited)."""
        try:
            return os.read(self.master, READ_CHUNK)
        except BlockingIOError:
            return b""
        except OSError as exc:
            # Linux answers EIO on the master once the last slave descriptor is closed.
            if exc.errno in (errno.EIO, errno.EBADF):
                return None
            raise

    def write(self, data: bytes) -> None:
        """Queue ``data`` as keyboard input; raises :class:`InputOverflow` when the program
        left too much earlier input unread."""
        if self._closed:
            return
        if len(self._pending) + len(data) > INPUT_LIMIT:
            raise InputOverflow(f"the program has {len(self._pending)} bytes of input unread")
        self._pending += data
        self._drain()

    def _drain(self) -> None:
        while self._pending and not self._closed:
            try:
                written = os.write(self.master, self._pending)
            except BlockingIOError:
                break
            except OSError:
                self._pending.clear()
                break
            del self._pending[:written]
        loop = asyncio.get_running_loop()
        if self._pending and not self._writing and not self._closed:
            loop.add_writer(self.master, self._drain)
            self._writing = True
        elif not self._pending and self._writing:
            loop.remove_writer(self.master)
            self._writing = False

    def resize(self, columns: int, rows: int) -> None:
        """Set the window size; the kernel sends SIGWINCH to the foreground group, and the
        leader is told too in case it runs without job control."""
        if self._closed:
            return
        _set_size(self.master, columns, rows)
        if self.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGWINCH)

    async def kill(self, grace: float = HANGUP_GRACE) -> None:
        """Hang up (SIGHUP to the session's groups, as closing a terminal does), then SIGKILL
        whatever is left of the session after ``grace`` seconds, and wait until it is gone."""
        if self.returncode is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.pid, signal.SIGHUP)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.wait(), grace)
        await self.reap()

    async def reap(self) -> None:
        """Make sure nothing of the session is left (its leader may have exited while
        children live on), then wait for the leader."""
        await asyncio.to_thread(kill_session, self.pid)
        await self.wait()

    def close(self) -> None:
        """Release the master side (the program, if still running, gets a hang-up)."""
        if self._closed:
            return
        self._closed = True
        loop = asyncio.get_running_loop()
        if self._writing:
            loop.remove_writer(self.master)
            self._writing = False
        loop.remove_reader(self.master)
        os.close(self.master)
