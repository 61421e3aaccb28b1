"""Claude Code's stream-json control protocol: the framing, apart from the session's state.

Both sides send ``control_request`` lines and answer them with ``control_response`` lines
carrying the same ``request_id``; everything else on stdout is a stream message (``system``,
``stream_event``, ``assistant``, ``user``, ``result``) the session interprets.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import uuid
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from typing import Any

from paseo_hookspecs.process import AgentProcess

log = logging.getLogger("paseo_claude.session")


class ProcessExited(Exception):
    """Claude Code's stdout ended while Paseo was waiting for an answer."""


class ControlError(Exception):
    """Claude Code answered a control request with an error."""


@dataclass
class LaunchSpec:
    """What the provider decided: the argv, environment and starting state of one process."""

    provider_id: str
    argv: list[str]
    env: dict[str, str]
    session_id: str
    resumed: bool
    model: str | None
    mode_id: str
    thinking: str | None
    bypass_allowed: bool
    startup_timeout: float


class ControlChannel:
    """Paseo's control requests to one Claude Code process and its answers to Claude Code's."""

    def __init__(self, process: AgentProcess) -> None:
        self._process = process
        self._pending: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self.exited = False
        """Set by the reader once stdout ended: later requests fail with ProcessExited."""

    async def request(self, request: dict[str, Any], bound: float) -> dict[str, Any]:
        """Send a ``control_request`` and return its answer within ``bound`` seconds. Raises
        :class:`ProcessExited`, :class:`ControlError` or ``TimeoutError``."""
        if self.exited:
            raise ProcessExited()
        request_id = f"paseo-{uuid.uuid4().hex[:12]}"
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        try:
            try:
                await self._process.write_line(
                    {"type": "control_request", "request_id": request_id, "request": request}
                )
            except (BrokenPipeError, ConnectionResetError):
                raise ProcessExited() from None
            response = await asyncio.wait_for(future, bound)
        finally:
            self._pending.pop(request_id, None)
        if response.get("subtype") == "error":
            raise ControlError(str(response.get("error") or "unknown error"))
        return response

    def resolve(self, response: Any) -> None:
        """A ``control_response`` arrived: hand it to the request waiting for it."""
        if not isinstance(response, Mapping):
            return
        future = self._pending.get(str(response.get("request_id")))
        if future is not None and not future.done():
            future.set_result(dict(response))

    def fail_all(self) -> None:
        """The process is gone: every waiting request fails with :class:`ProcessExited`."""
        self.exited = True
        for future in self._pending.values():
            if not future.done():
                future.set_exception(ProcessExited())

    async def answer(self, request_id: str, response: dict[str, Any]) -> None:
        """Answer Claude Code's request ``request_id``; ``BrokenPipeError`` when it is gone."""
        await self._process.write_line(
            {
                "type": "control_response",
                "response": {"subtype": "success", "request_id": request_id, "response": response},
            }
        )

    async def refuse(self, request_id: str, error: str) -> None:
        """Refuse Claude Code's request ``request_id`` (nothing happens when it is gone)."""
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            await self._process.write_line(
                {
                    "type": "control_response",
                    "response": {"subtype": "error", "request_id": request_id, "error": error},
                }
            )


async def messages(process: AgentProcess) -> AsyncIterator[dict[str, Any]]:
    """The JSON objects Claude Code prints on stdout, until it ends (other lines are skipped)."""
    while (line := await process.read_line()) is not None:
        if not line.strip():
            continue
        try:
            message = json.loads(line)
        except ValueError:
            log.debug("claude printed a non-JSON line: %.200r", line)
            continue
        if isinstance(message, dict):
            yield message
