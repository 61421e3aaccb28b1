"""Agent program processes: their own process group, kept stderr, and guaranteed reaping.

This is the kernel's implementation of :mod:`paseo_hookspecs.process`. Every provider starts
its agent program through the :class:`AgentProcessLauncher` it is handed. The program runs
in a new session (so it and every child it forks share one process group), its stdout is a
line stream for the provider's protocol, its stderr is drained into a bounded ring buffer for
error messages, and :meth:`AgentProcess.terminate` kills the whole group and waits for it, so
nothing is orphaned when an agent stops, is archived or deleted, or the daemon shuts down.

npm launchers are Node wrappers around native binaries: killing only the wrapper would orphan
the real program, which is why the group is the unit. Some programs go further and start
helpers detached, in a group of their own (``claude-agent-acp`` does this with the Claude CLI).
Every process inherits its parent's environment, so each agent process is tagged with a unique
:data:`TAG_VARIABLE`; after the group is killed, whatever still carries the tag is killed too.

A launcher is built with its :class:`ProcessTracker` (the agent service's records each live
process durably, so a daemon that crashed leaves records the next daemon uses to kill orphaned
groups at boot); a launcher without one (tests, probes outside a daemon) tracks nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import secrets
import signal
from collections import deque
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from paseo.processes import wait_group_gone

log = logging.getLogger("paseo.agents.process")

LINE_LIMIT = 64 * 1024 * 1024
"""Largest protocol line accepted from an agent (tool outputs can be big)."""

STDERR_KEEP = 64 * 1024
"""Bytes of stderr kept per process for diagnosis."""

GROUP_EXIT_TIMEOUT = 5.0
"""How long closing waits for the members of a killed process group to be gone."""

TAG_VARIABLE = "PASEO_PROCESS_TAG"
"""Environment variable carrying an agent process tree's unique tag."""


def kill_tagged(tag: str, grace: float = 2.0) -> int:
    """SIGKILL every process whose environment carries ``tag`` and wait up to ``grace`` seconds
    for them to go. Blocking (reads /proc): call it in a thread. Returns how many were found."""
    import psutil

    victims: list[psutil.Process] = []
    for candidate in psutil.process_iter():
        # Processes of other users, or ones that exit while we look, are not ours to judge.
        with contextlib.suppress(psutil.Error, OSError):
            if candidate.environ().get(TAG_VARIABLE) == tag:
                victims.append(candidate)
    for victim in victims:
        with contextlib.suppress(psutil.Error):
            victim.kill()
    psutil.wait_procs(victims, timeout=grace)
    return len(victims)


class ProcessTracker(Protocol):
    """Durably records live agent processes (implemented by the agent service)."""

    async def started(self, process: AgentProcess) -> None:
        """``process`` is running; record it before the provider talks to it."""

    async def exited(self, process: AgentProcess) -> None:
        """``process`` and its group are gone; forget it."""


class AgentProcess:
    """A running agent program (:class:`paseo_hookspecs.process.AgentProcess`). Create with
    :meth:`AgentProcessLauncher.launch`."""

    def __init__(
        self,
        process: asyncio.subprocess.Process,
        argv: Sequence[str],
        *,
        provider: str,
        agent_id: str | None,
        tag: str,
        tracker: ProcessTracker | None,
    ) -> None:
        self._process = process
        self._tracker = tracker
        self.tag = tag
        self.argv = list(argv)
        self.provider = provider
        self.agent_id = agent_id
        self.record_id: str | None = None
        self._stderr: deque[bytes] = deque()
        self._stderr_size = 0
        self._stderr_task = asyncio.create_task(self._drain_stderr())
        self._write_lock = asyncio.Lock()
        self._terminating: asyncio.Task[None] | None = None

    @property
    def pid(self) -> int:
        return self._process.pid

    @property
    def returncode(self) -> int | None:
        return self._process.returncode

    @property
    def stdout(self) -> asyncio.StreamReader:
        assert self._process.stdout is not None
        return self._process.stdout

    async def _drain_stderr(self) -> None:
        stream = self._process.stderr
        if stream is None:
            return
        while chunk := await stream.read(4096):
            self._stderr.append(chunk)
            self._stderr_size += len(chunk)
            while self._stderr_size > STDERR_KEEP and len(self._stderr) > 1:
                self._stderr_size -= len(self._stderr.popleft())

    def stderr_tail(self, limit: int = 4000) -> str:
        """The last ``limit`` characters of what the program wrote to stderr."""
        return b"".join(self._stderr).decode("utf-8", "replace")[-limit:]

    async def write_line(self, message: Mapping[str, Any] | str) -> None:
        """Send one line (a JSON object or raw text) to the program's stdin.

        Raises ``BrokenPipeError``/``ConnectionResetError`` when the program is gone.
        """
        stdin = self._process.stdin
        if stdin is None or stdin.is_closing():
            raise BrokenPipeError("the agent program's stdin is closed")
        text = message if isinstance(message, str) else json.dumps(message, ensure_ascii=False)
        async with self._write_lock:
            stdin.write(text.encode("utf-8") + b"\n")
            await stdin.drain()

    async def read_line(self) -> bytes | None:
        """The next stdout line without its newline, or ``None`` at end of stream."""
        try:
            line = await self.stdout.readline()
        except ValueError:
            # A line beyond LINE_LIMIT: skip what was buffered rather than wedge the reader.
            log.warning("agent %s sent an oversized line; skipped", self.agent_id)
            return b""
        if not line:
            return None
        return line.rstrip(b"\r\n")

    def close_stdin(self) -> None:
        stdin = self._process.stdin
        if stdin is not None and not stdin.is_closing():
            stdin.close()

    async def wait(self) -> int:
        return await self._process.wait()

    def _signal_group(self, sig: signal.Signals) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, sig)

    async def terminate(self, grace: float = 3.0) -> int:
        """Close stdin, SIGTERM the group, SIGKILL it after ``grace`` seconds, kill tagged
        processes that left the group, and reap.

        Idempotent and safe to call concurrently: every caller returns only once the whole
        tree is gone, with the program's real exit code.
        """
        if self._terminating is None:
            self._terminating = asyncio.ensure_future(self._terminate(grace))
        await asyncio.shield(self._terminating)
        code = self._process.returncode
        return code if code is not None else -1

    async def _terminate(self, grace: float) -> None:
        self.close_stdin()
        if self._process.returncode is None:
            self._signal_group(signal.SIGTERM)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._process.wait(), grace)
        # Children of the group may outlive the leader (e.g. a native binary behind an npm
        # launcher): always finish the group off, then anything that escaped it.
        self._signal_group(signal.SIGKILL)
        await self._process.wait()
        strays = await asyncio.to_thread(kill_tagged, self.tag)
        if strays:
            log.debug("killed %d process(es) that left agent %s's group", strays, self.agent_id)
        if not await asyncio.to_thread(wait_group_gone, self.pid, GROUP_EXIT_TIMEOUT):
            log.warning("process group %s of agent %s outlived SIGKILL", self.pid, self.agent_id)
        with contextlib.suppress(asyncio.CancelledError, TimeoutError):
            await asyncio.wait_for(self._stderr_task, 1.0)
        if self._tracker is not None:
            try:
                await self._tracker.exited(self)
            except Exception:
                log.exception("could not forget process record of pid %s", self.pid)


class AgentProcessLauncher:
    """The kernel's :class:`paseo_hookspecs.process.ProcessLauncher`: every process it starts
    reports to ``tracker`` (``None``: nothing is recorded, for tests and tools)."""

    def __init__(self, tracker: ProcessTracker | None = None) -> None:
        self._tracker = tracker

    async def launch(
        self,
        argv: Sequence[str],
        *,
        cwd: str,
        env: Mapping[str, str],
        provider: str,
        agent_id: str | None = None,
        inherit_env: bool = True,
    ) -> AgentProcess:
        """Start ``argv`` in its own process group with piped stdio.

        ``env`` is layered over the daemon's environment (unless ``inherit_env`` is false).
        Raises ``FileNotFoundError`` when the program does not exist and
        ``NotADirectoryError`` / ``FileNotFoundError`` for a bad ``cwd``; providers turn those
        into ``Unavailable``.
        """
        full_env = dict(os.environ) if inherit_env else {}
        full_env.update(env)
        tag = secrets.token_hex(12)
        full_env[TAG_VARIABLE] = tag
        process = await asyncio.create_subprocess_exec(
            *argv,
            cwd=cwd,
            env=full_env,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
            limit=LINE_LIMIT,
        )
        child = AgentProcess(
            process, argv, provider=provider, agent_id=agent_id, tag=tag, tracker=self._tracker
        )
        if self._tracker is not None:
            try:
                await self._tracker.started(child)
            except Exception:
                # Without a durable record a crash could orphan the process: refuse to run it.
                await child.terminate(grace=0.5)
                raise
        return child
