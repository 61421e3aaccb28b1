"""A client that never reads asks for large answers: the daemon's memory stays bounded in
bytes (per connection and in total), the client is told to resync or is closed with 4008."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

from helpers.daemon_rpc import LiveDaemon
from helpers.hostile import HogOutcome, icon_hog, memory_kib, project_with_icon

OUTBOUND_BYTES = 4 << 20
OUTBOUND_TOTAL = 8 << 20
REQUESTS = 200
"""~280 MiB of answers (1 MiB icons, base64): what an unbounded queue would keep per client."""


def test_a_never_reading_client_keeps_daemon_memory_bounded(
    daemon_factory: Callable[..., LiveDaemon], tmp_path: Path
) -> None:
    settings = {"outboundBytes": OUTBOUND_BYTES, "outboundBytesTotal": OUTBOUND_TOTAL}
    live = daemon_factory({"plugins": {"websocket": {"settings": settings}}})
    root = tmp_path / "project"
    root.mkdir()

    async def run() -> tuple[list[HogOutcome], int]:
        project_id = await project_with_icon(live.url, live.credential, root)
        baseline = memory_kib(live.pid)["VmRSS"]
        # Two hogs at once: each is bounded, and so are both together.
        outcomes = await asyncio.gather(
            *(icon_hog(live.url, live.credential, project_id, REQUESTS, 100) for _ in range(2))
        )
        return list(outcomes), memory_kib(live.pid)["VmHWM"] - baseline

    outcomes, growth_kib = asyncio.run(run())
    for outcome in outcomes:
        assert outcome.resyncs >= 1 or outcome.close_code == 4008, outcome
    # The queues may hold 8 MiB; the rest is the calls in flight and allocator slack. Without
    # the byte bounds the peak grows by several hundred MiB.
    assert growth_kib < 64 * 1024, growth_kib
