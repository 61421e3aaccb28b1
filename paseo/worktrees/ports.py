"""The service port a worktree's commands receive as ``PASEO_PORT``.

``worktrees.servicePorts`` in config.json chooses how: ``range`` takes the first port of the
inclusive range that no other worktree holds and that can be bound on 127.0.0.1 right now;
``portScript`` runs an executable that prints one TCP port (it receives the worktree's
``PASEO_*`` environment). Without a policy the operating system picks a free port.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
from collections.abc import Mapping

from paseo_hookspecs.errors import Unavailable

from paseo.config.models import ServicePortsConfig

PORT_SCRIPT_TIMEOUT = 30.0


def _bindable(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _ephemeral() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _from_range(text: str, taken: set[int]) -> int:
    start_text, _, end_text = text.partition("-")
    for port in range(int(start_text), int(end_text) + 1):
        if port not in taken and _bindable(port):
            return port
    raise Unavailable(f"no free port left in worktrees.servicePorts.range {text}")


async def _from_script(script: str, env: Mapping[str, str], cwd: str) -> int:
    process = await asyncio.create_subprocess_exec(
        "/bin/sh",
        "-c",
        script,
        cwd=cwd,
        env={**os.environ, **env},
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        start_new_session=True,
    )
    try:
        out, err = await asyncio.wait_for(process.communicate(), PORT_SCRIPT_TIMEOUT)
    except TimeoutError:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        await process.wait()
        raise Unavailable(f"the port script timed out after {PORT_SCRIPT_TIMEOUT:g}s") from None
    text = out.decode("utf-8", "replace").strip()
    if process.returncode != 0 or not text.isdigit() or not 0 < int(text) < 65536:
        detail = err.decode("utf-8", "replace").strip() or text or f"exit {process.returncode}"
        raise Unavailable(f"the port script did not print a TCP port: {detail}")
    return int(text)


async def allocate_port(
    policy: ServicePortsConfig | None,
    *,
    taken: set[int],
    env: Mapping[str, str],
    cwd: str,
) -> int:
    """A port for a new worktree (see the module docstring)."""
    if policy is not None and policy.portScript:
        return await _from_script(policy.portScript, env, cwd)
    if policy is not None and policy.range:
        return await asyncio.to_thread(_from_range, policy.range, taken)
    return await asyncio.to_thread(_ephemeral)
