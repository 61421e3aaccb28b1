"""A TypeScript client that stops reading costs the daemon a bounded number of bytes: the
bridge's queue of notifications is bounded by the session's ``outbound_bytes``, not only by a
count of messages, and past the bound the client is dropped (it reconnects and refetches)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from paseo_hookspecs.transport import Observed, SessionLimits
from paseo_tswire.bridge import QUEUE_LIMIT, RpcBridge
from paseo_tswire.connection import ClientSession
from unit.tswire.harness import IdleHost


def _frame(size: int) -> str:
    return json.dumps({"jsonrpc": "2.0", "method": "agent.event", "params": {"t": "x" * size}})


def test_a_client_that_does_not_read_is_dropped_past_the_byte_bound() -> None:
    async def scenario() -> tuple[int, int]:
        stalled = asyncio.Event()
        overflows: list[int] = []

        async def notify(method: str, params: dict[str, Any]) -> None:
            await stalled.wait()  # the client never reads

        bridge = RpcBridge(
            IdleHost(),  # type: ignore[arg-type]
            kind="local",
            observed=Observed("tswire", True, None, None, None),
            limits=SessionLimits(outbound_bytes=4 << 20),
            notify=notify,
            on_overflow=lambda: overflows.append(1),
        )
        await asyncio.sleep(0)
        sent = 0
        # 256 KiB frames: 16 fit in 4 MiB, far fewer than the count bound.
        while not overflows and sent < QUEUE_LIMIT:
            await bridge.send(_frame(256 << 10))
            sent += 1
        stalled.set()
        await bridge.aclose()
        return sent, len(overflows)

    sent, overflows = asyncio.run(scenario())
    assert overflows == 1
    # The first frame is taken by the stalled delivery; 4 MiB of the rest are held, no more.
    assert sent <= 2 + (4 << 20) // (256 << 10)


def test_a_client_that_does_not_read_is_closed_past_the_outbox_byte_bound() -> None:
    """Every frame for a client waits in one outbox; a stalled socket costs at most the
    session's ``outbound_bytes`` of frames before the client is closed as too slow."""

    async def scenario() -> tuple[int, int]:
        stalled = asyncio.Event()
        closes: list[int] = []

        async def send(frame: str | bytes) -> None:
            await stalled.wait()  # the client never reads

        async def close() -> None:
            closes.append(1)

        session = ClientSession(
            IdleHost(),  # type: ignore[arg-type]
            client_id="cid",
            client_type="cli",
            kind="local",
            observed=Observed("tswire", True, None, None, None),
            limits=SessionLimits(outbound_bytes=4 << 20),
        )
        session.attach(send, close)
        queued = 0
        frame = _frame(256 << 10)
        while not closes and queued < 64:  # 16 MiB offered: four times the bound
            await session.raw(frame)
            queued += 1
            await asyncio.sleep(0)  # the writer takes the first frame and blocks on it
        stalled.set()
        await session.aclose()
        return queued, len(closes)

    queued, closes = asyncio.run(scenario())
    assert closes == 1
    # The first frame is taken by the stalled write; 4 MiB of the rest are held, no more.
    assert queued <= 2 + (4 << 20) // (256 << 10)
