"""The ``opencode serve`` a provider shares between its sessions (one for all agents without
variables of their own, one per distinct per-agent environment: see
``OpenCodeProvider._shared``).

Leases: every session (and a model listing) holds one while it needs the server; the first
lease starts it, the last release stops it, so closing every OpenCode agent leaves no
process. The server is started through the kernel's launcher (own
process group, tracked durably: a daemon that crashed has it killed at the next boot, and the
daemon's stop reaps it with every other tracked process). It listens on 127.0.0.1 at a free
port with basic auth: user ``opencode``, a random password per start
(``OPENCODE_SERVER_PASSWORD``). If it dies, the next :meth:`SharedServer.client` starts a new
one (``generation`` tells sessions to subscribe again).
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import socket
from collections.abc import Mapping, Sequence

from paseo_hookspecs.errors import Unavailable
from paseo_hookspecs.process import AgentProcess, ProcessLauncher

from .http import OpenCodeClient

AGENT_ID = "PASEO_AGENT_ID"
"""Set per agent by the kernel; a server serves several agents, so it never carries one."""
READY_TIMEOUT = 90.0
"""Seconds ``opencode serve`` may take to answer (a 150 MB binary on a loaded machine)."""


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class SharedServer:
    """See the module docstring."""

    def __init__(self, provider_id: str, argv: Sequence[str], install_hint: str) -> None:
        self._provider = provider_id
        self._argv = list(argv)
        self._hint = install_hint
        self._lock = asyncio.Lock()
        self._leases = 0
        self._process: AgentProcess | None = None
        self._client: OpenCodeClient | None = None
        self.generation = 0
        self._drainer: asyncio.Task[None] | None = None

    @property
    def process(self) -> AgentProcess | None:
        return self._process

    def acquire(self) -> None:
        self._leases += 1

    @property
    def leased(self) -> bool:
        """Whether a session (or a listing) holds the server."""
        return self._leases > 0

    async def release(self) -> None:
        async with self._lock:
            self._leases = max(0, self._leases - 1)
            if self._leases == 0:
                await self._stop()

    async def client(
        self,
        launcher: ProcessLauncher,
        env: Mapping[str, str],
        cwd: str,
        *,
        stale: OpenCodeClient | None = None,
    ) -> OpenCodeClient:
        """The running server's client, starting (or restarting) it when needed. ``stale`` is
        a client that could not connect: its server is gone even if its exit is not yet
        reaped, so it is replaced."""
        async with self._lock:
            process, current = self._process, self._client
            alive = process is not None and process.returncode is None
            if alive and current is not None and current is not stale:
                return current
            await self._stop()
            return await self._start(launcher, env, cwd)

    async def _start(
        self, launcher: ProcessLauncher, env: Mapping[str, str], cwd: str
    ) -> OpenCodeClient:
        port, password = free_port(), secrets.token_urlsafe(24)
        argv = [*self._argv, "serve", "--hostname", "127.0.0.1", "--port", str(port)]
        server_env = {k: v for k, v in env.items() if k != AGENT_ID}
        server_env["OPENCODE_SERVER_PASSWORD"] = password
        try:
            process = await launcher.launch(
                argv, cwd=cwd, env=server_env, provider=self._provider, agent_id=None
            )
        except (FileNotFoundError, PermissionError, NotADirectoryError) as exc:
            raise Unavailable(f"cannot run OpenCode {argv[0]!r}: {exc}. {self._hint}") from exc
        self._process = process
        client = OpenCodeClient(port, password)
        try:
            await self._wait_ready(process, client)
        except BaseException:
            await self._stop()
            raise
        self._client = client
        self.generation += 1
        return client

    async def _wait_ready(self, process: AgentProcess, client: OpenCodeClient) -> None:
        # The server says so on stdout once it listens; reading it also keeps the pipe drained.
        async def listening() -> None:
            while True:
                line = await process.read_line()
                if line is None:
                    raise ConnectionError("exited")
                if b"listening on" in line:
                    return

        try:
            await asyncio.wait_for(listening(), READY_TIMEOUT)
            await client.call("GET", "/global/health", within=READY_TIMEOUT)
        except (ConnectionError, OSError, TimeoutError) as exc:
            tail = process.stderr_tail(2000).strip() or "(none)"
            raise Unavailable(
                f"`opencode serve` did not start ({exc or 'timed out'}); its error output: {tail}"
            ) from None
        self._drainer = asyncio.create_task(self._drain(process), name="opencode-stdout")

    async def _drain(self, process: AgentProcess) -> None:
        with contextlib.suppress(Exception):
            while await process.read_line() is not None:
                pass

    async def _stop(self) -> None:
        process, self._process, self._client = self._process, None, None
        if process is not None:
            await process.terminate()
