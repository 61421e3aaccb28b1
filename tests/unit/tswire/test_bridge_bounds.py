"""A TypeScript client that stops reading costs the daemon a bounded number of bytes: the
bridge's queue of notifications is bounded by the session's ``outbound_bytes``, not only by a
count of messages, and past the bound the client is dropped (it reconnects and refetches)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from paseo_hookspecs.transport import Observed, SessionLimits
from paseo_tswire.bridge import QUEUE_LIMIT, RpcBridge
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
