"""``workspace.status``: one notification per change of a workspace's derived status, however
many rechecks a burst of agent or terminal changes asks for."""

from __future__ import annotations

import asyncio
from typing import Any

from paseo.workspaces.status import StatusWatch


def test_a_burst_of_rechecks_is_one_pass_and_one_notification_per_change() -> None:
    running: set[str] = set()
    published: list[tuple[str, dict[str, Any]]] = []
    passes = 0

    def derive() -> set[str]:
        nonlocal passes
        passes += 1
        return set(running)

    async def scenario() -> None:
        watch = StatusWatch(derive, lambda method, payload: published.append((method, payload)))
        running.update({"w1", "w2"})
        for _ in range(100):  # a hundred agent events in a row
            watch.recheck()
        await asyncio.sleep(0)  # the loop runs the one scheduled pass
        assert passes == 1
        running.discard("w1")
        watch.recheck()
        await asyncio.sleep(0)
        watch.recheck()  # nothing changed since: nothing announced
        await asyncio.sleep(0)
        watch.stop()

    asyncio.run(scenario())
    assert published == [
        ("workspace.status", {"workspaceId": "w1", "status": "running"}),
        ("workspace.status", {"workspaceId": "w2", "status": "running"}),
        ("workspace.status", {"workspaceId": "w1", "status": "idle"}),
    ]
    assert passes == 3
