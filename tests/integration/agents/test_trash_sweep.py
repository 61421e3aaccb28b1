"""The automatic sweep through the real daemon, on the real clock: tombstones and the sweep
marker are written into the store while the daemon is stopped, dated so that the outcome does
not depend on how long anything takes.

Each start runs a maintenance pass (no agent is working at boot): it first drains the cleanup
queue, so a queued item seeded with the state proves the pass ran, and then sweeps only when the
last successful sweep is more than a day old, purging only tombstones past their retention.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from helpers.daemon_rpc import stop_daemon
from helpers.waiting import wait_for
from paseo_hookspecs.records import AgentRecord, CleanupItem
from paseo_store_json import JsonStore

from paseo.client import SyncClient
from paseo.testing.store_conformance import agent_data
from paseo.trash.service import iso


def _seed(home: Path, workdir: Path, *, last_sweep: datetime) -> dict[str, str]:
    """An expired tombstone, a young one, a purged agent whose cleanup is still queued (with
    its run directory on disk), and the last sweep at ``last_sweep``."""
    now = datetime.now(UTC)
    ids: dict[str, str] = {}

    async def write() -> None:
        store = JsonStore(home)
        await store.open()
        try:
            for name, age in (("expired", 40), ("young", 1), ("queued", 50)):
                data = agent_data(cwd=str(workdir), title=name, lastStatus="closed")
                await store.agents.insert(AgentRecord.model_validate(data))
                deleted = iso(now - timedelta(days=age))
                await store.agents.update(data["id"], {"deletedAt": deleted})
                ids[name] = data["id"]
            queued = ids["queued"]
            item = CleanupItem(
                id=f"cln_{queued}",
                agentId=queued,
                deletedAt=iso(now - timedelta(days=50)),
                createdAt=iso(now),
                roots=[f"agent-runs/{queued}"],
            )
            assert await store.trash.purge(queued, deleted_at=item.deletedAt, item=item)
            await store.trash.record_sweep(iso(last_sweep))
        finally:
            await store.close()

    asyncio.run(write())
    (home / "agent-runs" / ids["queued"]).mkdir(parents=True)
    return ids


def _trashed(client: Any) -> list[str]:
    return sorted(entry["agent"]["title"] for entry in client.call("trash.list", {})["agents"])


def test_the_daily_bound_then_the_retention(
    agent_daemon_factory: Callable[..., Any], paseo_home: Path, workdir: Path
) -> None:
    paseo_home.mkdir(parents=True, exist_ok=True)
    ids = _seed(paseo_home, workdir, last_sweep=datetime.now(UTC) - timedelta(hours=1))
    live = agent_daemon_factory()
    with SyncClient(home=live.home, client_type="sdk") as client:
        wait_for(
            lambda: client.call("trash.list", {})["cleanup"] == [],
            timeout=30,
            what="the boot maintenance pass to drain the queue",
        )
        assert not (paseo_home / "agent-runs" / ids["queued"]).exists()
        # Swept an hour ago: the expired tombstone waits for tomorrow's sweep.
        assert _trashed(client) == ["expired", "young"]
    assert stop_daemon(live.home).returncode == 0

    # The last sweep now more than a day old: the next boot sweeps the expired one only.
    aged = datetime.now(UTC) - timedelta(hours=25)

    async def age_marker() -> None:
        store = JsonStore(paseo_home)
        await store.open()
        try:
            await store.trash.record_sweep(iso(aged))
        finally:
            await store.close()

    asyncio.run(age_marker())
    live = agent_daemon_factory()
    with SyncClient(home=live.home, client_type="sdk") as client:
        def swept() -> bool:
            listing = client.call("trash.list", {})
            # The marker is written once the whole pass finished, after the purge.
            return datetime.fromisoformat(listing["lastSweepAt"]) > aged

        wait_for(swept, timeout=30, what="the sweep to finish")
        assert _trashed(client) == ["young"]
