"""Where the loop service keeps its loops: the store's plugin records, on both drivers.

An earlier home's ``loops/loops.json`` is moved into the store once (then kept as
``loops.json.migrated``), and a restart finds a loop where the last write left it: its
interrupted iteration runs again once, never twice.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, cast

import pytest
from paseo_hookspecs.agents import AgentCreate
from paseo_hookspecs.atomic import atomic_write_json
from paseo_hookspecs.interfaces.store import Store
from paseo_hookspecs.plugin_records import PluginRecordRepository
from paseo_loops.records import new_iteration, new_loop
from paseo_loops.service import LoopService
from paseo_loops.store import COLLECTION, NAMESPACE
from paseo_store_json import JsonStore
from paseo_store_sqlite.store import SqliteStore

DRIVERS: dict[str, Callable[[Path], Store]] = {"json": JsonStore, "sqlite": SqliteStore}


class Agents:
    """Records the workers a loop creates and the agents it stops; a created worker's turn
    never ends (each test ends first)."""

    def __init__(self) -> None:
        self.created: list[AgentCreate] = []
        self.stopped: list[str] = []
        self.seen = asyncio.Event()

    async def create(self, spec: AgentCreate) -> Any:
        self.created.append(spec)
        self.seen.set()
        await asyncio.Event().wait()

    async def stop(self, agent_id: str) -> None:
        self.stopped.append(agent_id)


@asynccontextmanager
async def _records(home: Path, driver: str) -> AsyncIterator[PluginRecordRepository]:
    await asyncio.to_thread(home.mkdir, parents=True, exist_ok=True)
    store = DRIVERS[driver](home)
    await store.open()
    try:
        assert store.plugin_records is not None
        yield store.plugin_records.collection(NAMESPACE, COLLECTION)
    finally:
        await store.close()


def _loop(cwd: Path, **fields: Any) -> dict[str, Any]:
    loop = new_loop(
        prompt="make it pass",
        cwd=str(cwd),
        name=None,
        provider="claude",
        model=None,
        verifier_provider=None,
        verifier_model=None,
        verify_prompt=None,
        verify_checks=["true"],
        archive=False,
        sleep_ms=0,
        max_iterations=3,
        max_time_ms=None,
    )
    loop.update(fields)
    return loop


def _interrupted(cwd: Path, *, rerun: bool) -> dict[str, Any]:
    """A running loop whose iteration 1 a daemon restart cut short."""
    loop = _loop(cwd)
    iteration = new_iteration(1)
    iteration["workerAgentId"] = "worker-before-restart"
    iteration["rerunAfterRestart"] = rerun
    loop["iterations"].append(iteration)
    loop["activeIteration"] = 1
    return loop


async def _stored(records: PluginRecordRepository, loop_id: str) -> dict[str, Any]:
    record = await records.get(loop_id)
    assert record is not None
    return record.value


@pytest.mark.parametrize("driver", sorted(DRIVERS))
def test_a_legacy_loops_file_moves_into_the_store_once(tmp_path: Path, driver: str) -> None:
    home = tmp_path / "home"
    legacy = home / "loops" / "loops.json"
    legacy.parent.mkdir(parents=True)
    done = _loop(tmp_path, status="succeeded", completedAt="2026-01-01T00:00:00.000Z")
    running = _interrupted(tmp_path, rerun=False)
    atomic_write_json(legacy, {"loops": [done, running]})
    original = legacy.read_bytes()

    async def scenario() -> None:
        agents = Agents()
        async with _records(home, driver) as records:
            service = LoopService(records, cast(Any, agents), legacy_home=home)
            await service.start()
            try:
                assert not legacy.exists()
                assert (home / "loops" / "loops.json.migrated").read_bytes() == original
                assert (await _stored(records, done["id"])) == done
                assert {loop["id"] for loop in service.list()} == {done["id"], running["id"]}
                # The running one resumed: its interrupted iteration runs again, once.
                await asyncio.wait_for(agents.seen.wait(), 30)
                resumed = await _stored(records, running["id"])
                assert resumed["iterations"][0]["rerunAfterRestart"] is True
                assert agents.stopped == ["worker-before-restart"]
            finally:
                await service.close()
        # A start after an old Paseo wrote loops.json again: only loops not stored move in,
        # a stored one is never replaced by the file's copy, and no earlier file is lost.
        stale = {**done, "status": "failed"}
        atomic_write_json(legacy, {"loops": [stale, _loop(tmp_path, status="stopped")]})
        async with _records(home, driver) as records:
            service = LoopService(records, cast(Any, Agents()), legacy_home=home)
            await service.start()
            try:
                assert (await _stored(records, done["id"]))["status"] == "succeeded"
                assert len(service.list()) == 3
            finally:
                await service.close()
        assert (home / "loops" / "loops.json.migrated").read_bytes() == original
        assert (home / "loops" / "loops.json.migrated.2").exists()
        assert not legacy.exists()

    asyncio.run(scenario())


def test_an_unreadable_legacy_file_is_set_aside_not_migrated(tmp_path: Path) -> None:
    home = tmp_path / "home"
    legacy = home / "loops" / "loops.json"
    legacy.parent.mkdir(parents=True)
    legacy.write_text("{not json")

    async def scenario() -> None:
        async with _records(home, "json") as records:
            service = LoopService(records, cast(Any, Agents()), legacy_home=home)
            await service.start()
            assert service.list() == []
            await service.close()

    asyncio.run(scenario())
    assert (home / "loops" / "loops.json.corrupt").read_text() == "{not json"
    assert not (home / "loops" / "loops.json.migrated").exists()


@pytest.mark.parametrize("driver", sorted(DRIVERS))
def test_an_iteration_interrupted_twice_fails_and_the_loop_goes_on(
    tmp_path: Path, driver: str
) -> None:
    home = tmp_path / "home"
    loop = _interrupted(tmp_path, rerun=True)

    async def scenario() -> None:
        agents = Agents()
        async with _records(home, driver) as records:
            await records.put(loop["id"], loop)
            service = LoopService(records, cast(Any, agents))
            await service.start()
            try:
                await asyncio.wait_for(agents.seen.wait(), 30)
                stored = await _stored(records, loop["id"])
                first, second = stored["iterations"]
                assert first["status"] == "failed"
                assert first["failureReason"] == "interrupted twice by a daemon restart"
                assert (second["index"], second["status"]) == (2, "running")
                assert stored["activeIteration"] == 2
                assert "Daemon restarted; resuming the loop." in [e["text"] for e in stored["logs"]]
            finally:
                await service.close()

    asyncio.run(scenario())


@pytest.mark.parametrize("driver", sorted(DRIVERS))
def test_each_loop_is_its_own_record(tmp_path: Path, driver: str) -> None:
    from paseo_loops.rpc import RunParams

    home = tmp_path / "home"

    async def scenario() -> None:
        agents = Agents()
        async with _records(home, driver) as records:
            service = LoopService(records, cast(Any, agents))
            await service.start()
            try:
                started = await service.run(
                    RunParams(prompt="p", cwd=str(tmp_path), verifyChecks=["true"])
                )
                await asyncio.wait_for(agents.seen.wait(), 30)
                stored = await _stored(records, started["id"])
                assert stored["status"] == "running"
                assert stored["iterations"][0]["status"] == "running"
                stopped = await service.stop(started["id"])
                assert stopped["status"] == "stopped"
                assert (await _stored(records, started["id"]))["status"] == "stopped"
            finally:
                await service.close()
        if driver == "json":
            path = home / "plugin-records" / NAMESPACE / COLLECTION / f"{started['id']}.json"
            assert json.loads(path.read_text())["value"]["status"] == "stopped"
            assert oct(os.stat(path).st_mode & 0o777) == "0o600"  # a prompt may be a secret
        assert not (home / "loops" / "loops.json").exists()

    asyncio.run(scenario())
