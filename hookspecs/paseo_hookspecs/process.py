"""How a provider runs its agent program: the launcher the kernel hands it, and the process.

Providers never start agent programs themselves. The kernel passes a :class:`ProcessLauncher`
to :meth:`~paseo_hookspecs.interfaces.agent.AgentProvider.create_session`,
:meth:`~paseo_hookspecs.interfaces.agent.AgentProvider.resume_session` and the listings that may
need a process (``list_models`` / ``list_modes``); the provider calls
:meth:`ProcessLauncher.launch` and talks to the :class:`AgentProcess` it gets back over stdio.
The launcher guarantees what no provider should have to get right on its own:

- the program runs in a **process group of its own**, so the whole tree (an npm launcher and
  the native binary behind it) is one unit;
- its environment carries ``PASEO_AGENT_ID`` (from ``SessionConfig.env``, passed as ``env``)
  and a unique tag, so helpers that leave the group (``setsid``) can still be found;
- its **stderr is kept**, bounded, for error messages (:meth:`AgentProcess.stderr_tail`);
- it is **tracked durably** before ``launch`` returns: if the daemon crashes, the next daemon
  kills what is left of the group at boot;
- :meth:`AgentProcess.terminate` is **bounded** and returns only once the group and every
  tagged escapee is gone.

Implement a provider against these Protocols only; tests and third-party suites get the
kernel's launcher from ``paseo.testing.provider_conformance``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol


class AgentProcess(Protocol):
    """One running agent program with piped stdio (see the module docstring)."""

    @property
    def pid(self) -> int:
        """The program's pid, which is also its process group id."""

    @property
    def returncode(self) -> int | None:
        """The exit code once the program has exited and been reaped."""

    @property
    def argv(self) -> list[str]:
        """The command line it was started with."""

    @property
    def provider(self) -> str:
        """The provider id it runs for."""

    @property
    def agent_id(self) -> str | None:
        """The agent it serves (``None`` for a probe such as a model listing)."""

    async def read_line(self) -> bytes | None:
        """The next stdout line without its newline, or ``None`` at end of stream. A line over
        the launcher's limit (64 MiB) is skipped and read as ``b""``."""

    async def write_line(self, message: Mapping[str, Any] | str) -> None:
        """Send one line (a JSON object, or raw text) to stdin. Raises ``BrokenPipeError`` /
        ``ConnectionResetError`` when the program is gone."""

    def close_stdin(self) -> None:
        """Close stdin (many programs exit cleanly on end of input)."""

    async def wait(self) -> int:
        """Wait for the program itself to exit; its exit code."""

    def stderr_tail(self, limit: int = 4000) -> str:
        """The last ``limit`` characters the program wrote to stderr."""

    async def terminate(self, grace: float = 3.0) -> int:
        """Close stdin, SIGTERM the group, SIGKILL it after ``grace`` seconds, kill tagged
        processes that left it, reap, and forget the durable record. Idempotent and safe to
        call concurrently; every caller returns once the whole tree is gone, with the exit
        code (``-1`` when unknown)."""


class ProcessLauncher(Protocol):
    """Starts agent programs under the guarantees of the module docstring.

    Implement and register: providers do not implement this, they receive it. A provider's
    session start looks like::

        async def create_session(self, config, sink, launcher):
            try:
                process = await launcher.launch(
                    ["my-agent", "--stdio"], cwd=config.cwd, env=config.env,
                    provider=self.id, agent_id=config.agentId,
                )
            except OSError as exc:
                raise Unavailable(f"cannot run my-agent: {exc}; install it") from exc
            return MySession(process, sink)
    """

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
        """Start ``argv`` in ``cwd`` with ``env`` layered over the daemon's environment (or
        alone, when ``inherit_env`` is false) and return once it is durably tracked.

        Raises ``FileNotFoundError`` / ``PermissionError`` when the program cannot be run and
        ``NotADirectoryError`` / ``FileNotFoundError`` for a bad ``cwd`` (providers turn those
        into ``Unavailable`` saying what to install or fix); raises the tracker's error, having
        killed the process, when it cannot be recorded.
        """


__all__ = ["AgentProcess", "ProcessLauncher"]
