"""The agent record's write-behind, on the real JSON store."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from paseo_hookspecs.errors import StorageError
from paseo_hookspecs.records import AgentRecord
from paseo_store_json import FileOps, JsonStore

from paseo.agents import record_writer
from paseo.agents.record_writer import RecordWriter

AGENT = "aaaa1111-0000-4000-8000-000000000002"
STAMP = "2026-01-01T00:00:00.000Z"


def _record() -> AgentRecord:
    return AgentRecord.model_validate(
        {
            "id": AGENT,
            "provider": "claude",
            "cwd": "/srv/app",
            "workspaceId": "wks_0000000000000001",
            "createdAt": STAMP,
            "updatedAt": STAMP,
            "labels": {},
            "lastStatus": "idle",
        }
    )


class CountingOps(FileOps):
    """Real file operations that count the record writes and can fail the next one."""

    def __init__(self) -> None:
        super().__init__()
        self.writes = 0
        self.fail_next = False

    def write_bytes(self, path: Path, data: bytes) -> None:
        if path.name == f"{AGENT}.json":
            self.writes += 1
            if self.fail_next:
                self.fail_next = False
                raise OSError(28, "No space left on device (injected)", str(path))
        super().write_bytes(path, data)


def _on_disk(home: Path) -> dict[str, Any]:
    (path,) = home.glob(f"agents/*/{AGENT}.json")
    data: dict[str, Any] = json.loads(path.read_text())
    return data


def _run(home: Path, body: Any) -> CountingOps:
    ops = CountingOps()

    async def main() -> None:
        store = JsonStore(home, file_ops=ops)
        await store.open()
        try:
            assert await store.agents.insert(_record())
            ops.writes = 0
            await asyncio.wait_for(body(store, ops), 30)
        finally:
            await store.close()

    asyncio.run(main())
    return ops


def test_deferred_changes_merge_into_one_write_published_once_durable(tmp_path: Path) -> None:
    async def body(store: JsonStore, ops: CountingOps) -> None:
        published: list[AgentRecord] = []
        saved = asyncio.Event()

        def on_saved(record: AgentRecord) -> None:
            published.append(record)
            saved.set()

        loop = asyncio.get_running_loop()
        writer = RecordWriter(AGENT, store.agents, on_saved)
        staged_at = loop.time()
        writer.stage({"lastStatus": "running"}, urgent=False)
        writer.stage({"lastStatus": "idle", "requiresAttention": True}, urgent=False)
        assert ops.writes == 0  # nothing written before the deferral ends
        await asyncio.wait_for(saved.wait(), 10)
        # A lower bound only: the write cannot start before the deferral timer fires.
        assert loop.time() - staged_at >= record_writer.DEFER / 2
        await asyncio.sleep(0)
        assert ops.writes == 1
        assert [r.lastStatus for r in published] == ["idle"]
        assert _on_disk(tmp_path)["requiresAttention"] is True

    _run(tmp_path, body)


def test_flush_writes_at_once_and_reports_failures(tmp_path: Path) -> None:
    async def body(store: JsonStore, ops: CountingOps) -> None:
        writer = RecordWriter(AGENT, store.agents, lambda _record: None)
        writer.stage({"title": "deferred"}, urgent=False)
        writer.stage({"lastStatus": "running"})  # urgent: starts the round now
        await writer.flush()
        assert ops.writes == 1
        assert _on_disk(tmp_path)["title"] == "deferred"
        ops.fail_next = True
        writer.stage({"title": "lost"})
        with pytest.raises(StorageError):
            await writer.flush()
        assert _on_disk(tmp_path)["title"] == "deferred"
        # The writer carries on after a failed round.
        writer.stage({"title": "kept"})
        await writer.flush()
        assert _on_disk(tmp_path)["title"] == "kept"

    _run(tmp_path, body)


def test_a_deleted_agent_is_no_error(tmp_path: Path) -> None:
    async def body(store: JsonStore, ops: CountingOps) -> None:
        writer = RecordWriter(AGENT, store.agents, lambda _record: None)
        await store.agents.delete(AGENT)
        writer.stage({"lastStatus": "closed"})
        await writer.flush()  # NotFound: nothing left to keep, nothing raised

    _run(tmp_path, body)
