"""Managed-process records: written while a process lives, used at boot to reap orphans."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import time
from pathlib import Path

import psutil
from paseo_hookspecs.records import ManagedProcessOwner, ManagedProcessRecord
from paseo_store_json import JsonStore

from paseo.agents.process import AgentProcessLauncher
from paseo.agents.tracker import ManagedProcessTracker, reconcile_orphans
from paseo.processes import process_identity


def _gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def _record(pid: int, identity_of: int) -> ManagedProcessRecord:
    return ManagedProcessRecord(
        id=f"rec{pid}",
        owner=ManagedProcessOwner(provider="test", kind="agent"),
        pid=pid,
        command="sh",
        args=[],
        metadata={"agentId": "a"},
        identity=process_identity(identity_of),
        createdAt="2026-01-01T00:00:00.000Z",
    )


def test_records_follow_the_process_lifetime(tmp_path: Path) -> None:
    async def scenario() -> None:
        store = JsonStore(tmp_path / "home")
        await store.open()
        tracker = ManagedProcessTracker(store.managed_processes)
        try:
            child = await AgentProcessLauncher(tracker).launch(
                ["sh", "-c", "echo ready; sleep 300"],
                cwd=str(tmp_path),
                env={},
                provider="test",
                agent_id="agent-1",
            )
            assert await child.read_line() == b"ready"
            [record] = await store.managed_processes.list()
            assert record.pid == child.pid
            assert record.metadata == {"agentId": "agent-1"}
            assert record.daemon is not None
            assert record.daemon.pid == os.getpid()
            assert tracker.live("agent-1") == [child]
            assert await tracker.terminate("agent-1") == 1
            assert await store.managed_processes.list() == []
        finally:
            await store.close()

    asyncio.run(asyncio.wait_for(scenario(), 30))


def test_boot_reaps_orphaned_groups_and_spares_reused_pids(tmp_path: Path) -> None:
    # A group whose leader still runs, and one whose leader died leaving a child behind.
    whole = subprocess.Popen(["sh", "-c", "sleep 300 & wait"], start_new_session=True)
    headless = subprocess.Popen(
        ["sh", "-c", "sleep 300 & echo $!; read line"],
        start_new_session=True,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    assert headless.stdout is not None
    assert headless.stdin is not None
    orphan = int(headless.stdout.readline())
    # An unrelated process whose pid a record names with another (older) process's identity.
    bystander = subprocess.Popen(["sleep", "300"], start_new_session=True)
    try:
        records = [
            _record(whole.pid, whole.pid),
            _record(headless.pid, headless.pid),
            _record(bystander.pid, os.getpid()),
        ]
        headless.stdin.close()  # the leader exits; its child lives on in the group
        headless.wait(10)
        deadline = time.monotonic() + 10
        while psutil.pid_exists(headless.pid) and time.monotonic() < deadline:
            time.sleep(0.02)

        async def scenario() -> list[str]:
            store = JsonStore(tmp_path / "home")
            await store.open()
            try:
                for record in records:
                    await store.managed_processes.put(record)
                report = await reconcile_orphans(store.managed_processes)
                assert await store.managed_processes.list() == []
                return report
            finally:
                await store.close()

        report = asyncio.run(asyncio.wait_for(scenario(), 30))
        whole.wait(10)
        assert _gone(orphan)
        assert not _gone(bystander.pid), report
        assert any("pid reused" in line for line in report)
    finally:
        for process in (whole, bystander):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait(10)
        with contextlib.suppress(ProcessLookupError):
            os.kill(orphan, signal.SIGKILL)
