"""Pi's RPC framing: JSON objects, one per ``\\n``-terminated line, on the program's stdio.

Commands carry an ``id`` and are answered by one ``{"type": "response", "id": …}`` record;
everything else on stdout is an event (events never carry an ``id``). The launcher's
``read_line`` splits on ``\\n`` only, which is what Pi requires (JSON strings may hold U+2028).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from paseo_hookspecs.process import AgentProcess

log = logging.getLogger("paseo_pi.rpc")

EventHandler = Callable[[dict[str, Any]], Awaitable[None]]
ClosedHandler = Callable[[], Awaitable[None]]


class PiGone(Exception):
    """The Pi process ended (or its stdin closed) before answering."""


class PiRefused(Exception):
    """Pi answered a command with ``success: false``; the message is Pi's ``error``."""


class PiConnection:
    """Commands and events over one Pi process; the reader starts at construction."""

    def __init__(
        self, process: AgentProcess, on_event: EventHandler, on_closed: ClosedHandler
    ) -> None:
        self._process = process
        self._on_event = on_event
        self._on_closed = on_closed
        self._ids = itertools.count(1)
        self._waiting: dict[str, asyncio.Future[Any]] = {}
        self.closed = False
        self._reader = asyncio.create_task(self._read(), name="pi-rpc-reader")

    async def request(self, kind: str, within: float, **fields: Any) -> Any:
        """Send command ``kind`` and return its response's ``data``.

        Raises ``PiRefused`` (Pi said no), ``PiGone`` (the process ended) or ``TimeoutError``.
        """
        if self.closed:
            raise PiGone("the Pi process has exited")
        ident = f"paseo-{next(self._ids)}"
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._waiting[ident] = future
        try:
            try:
                await self._process.write_line({"id": ident, "type": kind, **fields})
            except (BrokenPipeError, ConnectionResetError) as exc:
                raise PiGone("the Pi process has exited") from exc
            return await asyncio.wait_for(future, within)
        finally:
            self._waiting.pop(ident, None)

    async def _read(self) -> None:
        try:
            while True:
                line = await self._process.read_line()
                if line is None:
                    break
                if not line.strip():
                    continue
                try:
                    record = json.loads(line)
                except ValueError:
                    log.debug("pi wrote a line that is not JSON: %.200r", line)
                    continue
                if not isinstance(record, dict):
                    continue
                if record.get("type") == "response":
                    self._answer(record)
                else:
                    try:
                        await self._on_event(record)
                    except Exception:  # one bad event must not stop the reader
                        log.exception("handling a pi %s event failed", record.get("type"))
        finally:
            self.closed = True
            for future in self._waiting.values():
                if not future.done():
                    future.set_exception(PiGone("the Pi process has exited"))
            with contextlib.suppress(Exception):
                await self._on_closed()

    def _answer(self, record: dict[str, Any]) -> None:
        future = self._waiting.get(str(record.get("id")))
        if future is None or future.done():
            return
        if record.get("success") is False:
            future.set_exception(PiRefused(str(record.get("error") or "refused")))
        else:
            future.set_result(record.get("data"))

    async def stop(self) -> None:
        """Stop reading (the process is terminated by its owner)."""
        if asyncio.current_task() is self._reader:
            return
        self._reader.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._reader
