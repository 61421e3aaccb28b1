"""A transport host for unit tests of the tswire plugin: each session it opens runs until its
connection is lost, and does nothing else (the kernel behind it is not what these tests drive)."""

from __future__ import annotations

import asyncio
from typing import Any

from paseo_hookspecs.transport import Channel, Observed, SessionLimits
from paseo_tswire.connection import ClientSession


class IdleAgents:
    """An agent port with no agents; subscriptions are accepted and never deliver."""

    def subscribe(self, observer: Any, *, name: str, max_pending: int = 1024) -> Any:
        return _Closed()


class _Closed:
    def close(self) -> None:
        return None


class IdleSession:
    """The host's session as the bridge uses it: it runs until the connection is lost."""

    def __init__(self) -> None:
        self.lost = asyncio.Event()
        self.agents = IdleAgents()

    def receive(self, frame: str | bytes) -> None:
        return None

    async def run(self) -> None:
        await self.lost.wait()

    def connection_lost(self) -> None:
        self.lost.set()


class IdleHost:
    def open_session(
        self, *, kind: str, channel: Channel, observed: Observed, limits: SessionLimits
    ) -> IdleSession:
        return IdleSession()


def client_session(cls: type[ClientSession] = ClientSession) -> Any:
    """A local CLI client's session on an :class:`IdleHost` (call inside a running loop)."""
    return cls(
        IdleHost(),  # type: ignore[arg-type]
        client_id="cid",
        client_type="cli",
        kind="local",
        observed=Observed("tswire", True, None, None, None),
        limits=SessionLimits(),
    )
