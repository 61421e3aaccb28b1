"""The trash service on both real store drivers, with the clock injected (no waiting).

The agent service's side is a stand-in that says whether agents are working and records what
was readmitted: what these tests drive is the trash (its store transactions, the retention and
daily bounds, the cleanup queue), not the agents.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from paseo_hookspecs.interfaces.store import Store
from paseo_hookspecs.records import AgentRecord, CleanupItem, TimelineEntry, dump_record
from paseo_hookspecs.store import AgentFilter

from paseo.config.models import PaseoConfig
from paseo.config.resolution import resolve
from paseo.config.resolved import ResolvedConfig
from paseo.plugins.drivers import load_driver
from paseo.testing.store_conformance import agent_data, timeline_entry_data
from paseo.trash.cleanup import RUNS_DIR
from paseo.trash.service import TrashService, iso

START = datetime(2026, 3, 1, tzinfo=UTC)


class Clock:
    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> None:
        self.now += timedelta(**delta)


class Config:
    def __init__(self, home: Path, days: int | None = None) -> None:
        raw: dict[str, Any] = {"agents": {"trashRetentionDays": days}} if days else {}
        self._resolved = resolve(PaseoConfig.model_validate(raw), {}, home=home)

    @property
    def resolved(self) -> ResolvedConfig:
        return self._resolved


class Agents:
    """Working when ``busy_for`` is positive: each check of work uses one up."""

    def __init__(self) -> None:
        self.busy_checks = 0
        self.readmitted: list[str] = []
        self.cleaned_up: list[str] = []

    def working(self) -> bool:
        if self.busy_checks > 0:
            self.busy_checks -= 1
            return True
        return False

    def readmit(self, record: AgentRecord) -> None:
        self.readmitted.append(record.id)

    async def purged(self, agent_id: str) -> None:
        self.cleaned_up.append(agent_id)


Body = Callable[[Store, TrashService, Clock, Agents, Path], Awaitable[None]]


def _run(driver: str, tmp_path: Path, body: Body, *, days: int | None = None) -> None:
    home = tmp_path / "home"
    home.mkdir()

    async def main() -> None:
        store: Store = load_driver("paseo.store", driver)(home, None)
        await store.open()
        clock, agents = Clock(), Agents()
        trash = TrashService(
            store=store,
            config=Config(home, days),
            agents=agents,
            home=home,
            clock=clock,
            batch_size=2,
        )
        try:
            await asyncio.wait_for(body(store, trash, clock, agents, home), 60)
        finally:
            await store.close()

    asyncio.run(main())


async def _tombstone(store: Store, home: Path, deleted: datetime, n: int = 0) -> str:
    data = agent_data(created_at=iso(START + timedelta(seconds=n)))
    await store.agents.insert(AgentRecord.model_validate(data))
    await store.timeline.append([TimelineEntry.model_validate(timeline_entry_data(data["id"], 0))])
    await store.agents.update(data["id"], {"deletedAt": iso(deleted)})
    runs = home / RUNS_DIR / data["id"]
    runs.mkdir(parents=True)
    (runs / "state.json").write_text("{}")
    return str(data["id"])


DRIVERS = pytest.mark.parametrize("driver", ["json", "sqlite"])


@DRIVERS
def test_restore_brings_back_record_and_timeline(driver: str, tmp_path: Path) -> None:
    async def body(store: Store, trash: TrashService, clock: Clock, agents: Agents, home: Path):
        agent_id = await _tombstone(store, home, START)
        before = await store.agents.get(agent_id)
        [entry] = await trash.entries()
        assert entry.purge_after == START + timedelta(days=30)
        restored = await trash.restore(agent_id[:8])
        assert agents.readmitted == [agent_id]
        assert restored.deletedAt is None
        assert before is not None
        assert restored.model_dump(exclude={"deletedAt"}) == before.model_dump(
            exclude={"deletedAt"}
        )
        assert [e.seq for e in await store.timeline.read(agent_id)] == [0]
        assert await trash.entries() == []
        assert [a.id for a in (await store.agents.list()).items] == [agent_id]

    _run(driver, tmp_path, body)


@DRIVERS
def test_purge_waits_for_retention_idle_agents_and_the_daily_bound(
    driver: str, tmp_path: Path
) -> None:
    async def body(store: Store, trash: TrashService, clock: Clock, agents: Agents, home: Path):
        old = await _tombstone(store, home, START, 0)
        young = await _tombstone(store, home, START + timedelta(days=10), 1)
        # Not expired yet: a sweep runs (and counts) but removes nothing.
        report = await trash.maintain()
        assert report is not None
        assert report.purged == []
        assert await store.trash.last_sweep() == iso(START)
        # Past the old one's retention, but within a day of the last sweep: nothing happens.
        clock.now = START + timedelta(hours=23)
        assert (await trash.maintain()).purged == []  # type: ignore[union-attr]
        clock.now = START + timedelta(days=31)
        # Agents at work: no purge at all, and the sweep is not counted.
        agents.busy_checks = 1
        assert await trash.maintain() is None
        assert {e.record.id for e in await trash.entries()} == {old, young}
        report = await trash.maintain()
        assert report is not None
        assert report.purged == [old]
        assert report.cleaned == 1
        assert agents.cleaned_up == [old]
        assert await store.agents.get(old) is None
        assert await store.timeline.read(old) == []
        assert not (home / RUNS_DIR / old).exists()
        assert await store.trash.queued() == []
        assert await store.trash.last_sweep() == iso(clock.now)
        # The young one expires 9 days later; the day bound counts from the last sweep.
        clock.advance(days=9, hours=1)
        assert [r.purged for r in [await trash.maintain()] if r] == [[young]]

    _run(driver, tmp_path, body)


@DRIVERS
def test_a_sweep_cut_short_by_work_resumes_and_only_then_counts(
    driver: str, tmp_path: Path
) -> None:
    async def body(store: Store, trash: TrashService, clock: Clock, agents: Agents, home: Path):
        ids = [await _tombstone(store, home, START, n) for n in range(5)]
        clock.advance(days=40)
        # Batches of 2: the first check passes, the drain's passes, then work begins before
        # the second batch.
        original = agents.working
        calls = {"n": 0}

        def working() -> bool:
            calls["n"] += 1
            return calls["n"] == 4 or original()

        agents.working = working  # type: ignore[method-assign]
        report = await trash.maintain()
        assert report is not None
        assert report.complete is False
        first = report.purged
        assert len(first) == 2
        assert await store.trash.last_sweep() is None
        report = await trash.maintain()
        assert report is not None
        assert report.complete
        assert sorted(report.purged) == sorted(set(ids) - set(first))
        assert await trash.entries() == []
        assert await store.trash.last_sweep() == iso(clock.now)
        assert os.listdir(home / RUNS_DIR) == []

    _run(driver, tmp_path, body, days=15)


@DRIVERS
def test_a_failed_cleanup_stays_queued_and_is_retried(driver: str, tmp_path: Path) -> None:
    async def body(store: Store, trash: TrashService, clock: Clock, agents: Agents, home: Path):
        agent_id = await _tombstone(store, home, START)
        # The run directory cannot be reached: its parent is a file.
        runs = home / RUNS_DIR
        for child in runs.iterdir():
            for inner in child.iterdir():
                inner.unlink()
            child.rmdir()
        runs.rmdir()
        runs.write_text("in the way")
        report = await trash.empty()
        assert report.purged == [agent_id]
        assert report.failed == 1
        [item] = await store.trash.queued()
        assert item.agentId == agent_id
        assert item.attempts == 1
        assert item.lastError
        # Still failing: one more attempt recorded, still queued.
        clock.advance(minutes=10)
        assert (await trash.maintain()).failed == 1  # type: ignore[union-attr]
        [item] = await store.trash.queued()
        assert item.attempts == 2
        assert agents.cleaned_up == []
        # Fixed: the next idle pass finishes it.
        runs.unlink()
        report = await trash.maintain()
        assert report is not None
        assert report.cleaned == 1
        assert agents.cleaned_up == [agent_id]
        assert await store.trash.queued() == []

    _run(driver, tmp_path, body)


@DRIVERS
def test_cleanup_never_follows_a_link_out_of_the_home(driver: str, tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "main.py").write_text("print('mine')\n")

    async def body(store: Store, trash: TrashService, clock: Clock, agents: Agents, home: Path):
        agent_id = await _tombstone(store, home, START)
        run_dir = home / RUNS_DIR / agent_id
        (run_dir / "project").symlink_to(project)
        report = await trash.empty([agent_id])
        assert report.cleaned == 1
        assert not run_dir.exists()
        assert (project / "main.py").read_text() == "print('mine')\n"

    _run(driver, tmp_path, body)


@DRIVERS
def test_a_queued_item_whose_id_is_owned_again_is_retired_untouched(
    driver: str, tmp_path: Path
) -> None:
    """A crash after the purge committed leaves the item queued; if the id names an agent again
    by the time the queue is drained, its files are that agent's and are left alone."""

    async def body(store: Store, trash: TrashService, clock: Clock, agents: Agents, home: Path):
        agent_id = await _tombstone(store, home, START)
        record = await store.agents.get(agent_id)
        assert record is not None
        item = CleanupItem(
            id="cln_x",
            agentId=agent_id,
            deletedAt=iso(START),
            createdAt=iso(START),
            roots=[f"{RUNS_DIR}/{agent_id}"],
        )
        assert await store.trash.purge(agent_id, deleted_at=iso(START), item=item)
        data = dump_record(record)
        del data["deletedAt"]
        await store.agents.insert(AgentRecord.model_validate(data))
        report = await trash.maintain()
        assert report is not None
        assert report.cleaned == 0
        assert agents.cleaned_up == []
        assert await store.trash.queued() == []
        assert (home / RUNS_DIR / agent_id / "state.json").exists()
        assert [a.id for a in (await store.agents.list(AgentFilter())).items] == [agent_id]

    _run(driver, tmp_path, body)
