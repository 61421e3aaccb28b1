"""The direct WebSocket to the Hub: dial, serve, reconnect, or stop for good on revocation.

Authentication is the two upgrade headers only. WebSocket pings detect a dead Hub (it sends
none of its own). Every failure is retried with bounded exponential backoff and jitter — a
refused upgrade (HTTP 5xx), a timeout, ``4001 replaced`` (another socket of ours won), ``1001``
(the Hub restarts), a reset — except revocation: an upgrade refused with 401/403 or a close
with 4403 ends the link and the relationship.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import random
from collections.abc import Callable
from typing import Any, Protocol

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from paseo_hub import wire
from paseo_hub.executions import Executions
from paseo_hub.relationship import Relationship, sanitize_reason
from paseo_hub.session import HubSession
from paseo_hub.settings import HubSettings

log = logging.getLogger("paseo.hub")

OUTBOX = 10_000
"""Frames queued for a socket that is not draining; further ones are dropped (logged)."""
STOP_GRACE = 5.0
"""Seconds a closing socket waits for the Hub's close frame, and ``stop`` for the link task
(``PASEO_HUB_CLOSE_TIMEOUT`` overrides it)."""


def stop_grace() -> float:
    """:data:`STOP_GRACE`, or ``PASEO_HUB_CLOSE_TIMEOUT`` from the daemon's environment when it
    is a positive number (a test of a Hub that stops answering need not wait out the default)."""
    try:
        value = float(os.environ.get("PASEO_HUB_CLOSE_TIMEOUT") or STOP_GRACE)
    except ValueError:
        return STOP_GRACE
    return value if value > 0 else STOP_GRACE


def backoff_delay(
    attempt: int, initial: float, maximum: float, rand: Callable[[], float] = random.random
) -> float:
    """Delay before reconnect ``attempt`` (0-based): the capped exponential step, jittered
    over its upper half so a fleet of daemons does not reconnect in lockstep."""
    cap = min(maximum, initial * 2.0 ** min(attempt, 32))
    return cap / 2 + rand() * cap / 2


class LinkListener(Protocol):
    def link_state(self, state: str, error: str | None) -> None:
        """``connected`` or ``reconnecting`` (with why)."""

    async def link_revoked(self, reason: str) -> None:
        """The Hub revoked the relationship; the link has stopped for good."""


class HubLink:
    """One relationship's socket loop (see the module docstring)."""

    def __init__(
        self,
        relationship: Relationship,
        settings: HubSettings,
        executions: Executions,
        listener: LinkListener,
        user_agent: str,
    ) -> None:
        assert relationship.transport is not None
        self._url = relationship.transport.webSocketUrl
        self._headers = {
            "Authorization": f"Bearer {relationship.secret}",
            "X-Paseo-Daemon-Id": relationship.relationship.daemonId,
        }
        self._settings = settings
        self._executions = executions
        self._listener = listener
        self._user_agent = user_agent
        self._outbox: asyncio.Queue[str] | None = None
        self._ws: ClientConnection | None = None
        self._reconnect = True
        self._stopped = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self.attempts = 0
        """Dial attempts so far (tests and status read it)."""

    @property
    def connected(self) -> bool:
        return self._ws is not None

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run())

    def send(self, message: dict[str, Any]) -> None:
        """Queue ``message`` on the current socket; dropped when there is none."""
        if self._outbox is not None:
            _put(self._outbox, message)

    def stop_reconnecting(self) -> None:
        """Disconnect has begun: keep serving the open socket (the Hub may send ``interrupt``
        and wait for the answer before it confirms the revocation), never dial again, and take
        the 4403 that follows as expected rather than as a revocation."""
        self._reconnect = False

    async def stop(self) -> None:
        self._reconnect = False
        self._stopped.set()
        ws = self._ws
        grace = stop_grace()
        if ws is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(ws.close(1000, "daemon disconnected"), grace)
        task = self._task
        if task is not None and not task.done():
            done, _ = await asyncio.wait({task}, timeout=grace)
            if not done:
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)

    async def _run(self) -> None:
        failures = 0
        while self._reconnect and not self._stopped.is_set():
            try:
                served, error = await self._attempt()
            except Exception as exc:
                # A link task that died silently would leave the status saying "connected".
                log.warning("the Hub link failed; reconnecting: %s", _brief(exc))
                log.debug("the Hub link's failure", exc_info=True)
                served, error = False, f"the Hub link failed ({_brief(exc)})"
            if error is None or not self._reconnect or self._stopped.is_set():
                return
            if served:
                failures = 0  # the socket was up: a new drop starts a fresh backoff
            self._listener.link_state("reconnecting", error)
            settings = self._settings
            delay = backoff_delay(failures, settings.backoffInitial, settings.backoffMax)
            failures += 1
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stopped.wait(), delay)

    async def _attempt(self) -> tuple[bool, str | None]:
        """One dial: whether a socket was served, and why it ended (``None``: the link must
        end for good)."""
        self.attempts += 1
        settings = self._settings
        try:
            ws = await connect(
                self._url,
                additional_headers=self._headers,
                user_agent_header=self._user_agent,
                open_timeout=settings.openTimeout,
                ping_interval=settings.pingInterval,
                ping_timeout=settings.pingTimeout,
                close_timeout=stop_grace(),
                max_size=settings.maxFrameBytes,
                compression=None,
            )
        except InvalidStatus as exc:
            status = exc.response.status_code
            if status in (401, 403):
                if self._reconnect:
                    await self._listener.link_revoked(
                        f"the Hub refused the daemon credential (HTTP {status})"
                    )
                return False, None
            return False, f"the Hub refused the socket (HTTP {status})"
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 (any dial failure is retried, never fatal)
            return False, f"cannot open the Hub socket: {str(exc) or type(exc).__name__}"
        self._listener.link_state("connected", None)
        code, reason = await self._serve(ws)
        if code == wire.CLOSE_REVOKED:
            if self._reconnect:
                await self._listener.link_revoked(
                    f"the Hub closed the socket with 4403 ({sanitize_reason(reason)})"
                )
            return True, None
        detail = f" {sanitize_reason(reason)}" if reason else ""
        return True, f"the Hub socket closed ({code}{detail})"

    async def _serve(self, ws: ClientConnection) -> tuple[int, str]:
        outbox: asyncio.Queue[str] = asyncio.Queue(maxsize=OUTBOX)
        session = HubSession(self._executions, lambda message: _put(outbox, message))
        self._outbox, self._ws = outbox, ws
        writer = asyncio.get_running_loop().create_task(_write(ws, outbox))
        try:
            async for frame in ws:
                try:
                    session.receive(frame)
                except Exception as exc:
                    # The session drops what it cannot take; this is the net under it, so a
                    # frame it did not foresee cannot end the task and leave the link looking
                    # connected while no frame is read any more.
                    log.warning("dropped a Hub frame the daemon failed on: %s", _brief(exc))
                    log.debug("the Hub frame's failure", exc_info=True)
        except ConnectionClosed:
            pass
        finally:
            if self._ws is ws:
                self._outbox, self._ws = None, None
            writer.cancel()
            # gather, not a suppressed await: a cancellation of this task must not be lost.
            await asyncio.gather(writer, return_exceptions=True)
        return ws.close_code or 1006, ws.close_reason or ""


def _brief(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {str(exc)[:200]}"


def _put(outbox: asyncio.Queue[str], message: dict[str, Any]) -> None:
    try:
        outbox.put_nowait(wire.envelope(message))
    except asyncio.QueueFull:
        log.warning("the Hub socket is not draining; dropped a %s frame", message.get("type"))


async def _write(ws: ClientConnection, outbox: asyncio.Queue[str]) -> None:
    while True:
        text = await outbox.get()
        try:
            await ws.send(text)
        except ConnectionClosed:
            return
