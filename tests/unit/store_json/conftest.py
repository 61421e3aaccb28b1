"""Fixtures of the json store tests: record factories and a failure-injecting ``FileOps``."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from paseo_hookspecs.records import (
    AgentRecord,
    ProjectRecord,
    ScheduleRecord,
    TimelineEntry,
    WorkspaceRecord,
)
from paseo_store_json import FileOps

STAMP = "2026-05-01T10:00:00.000Z"


class FailingOps(FileOps):
    """Real file operations, except that chosen calls raise ``OSError``.

    ``fail(kind, name, times=n, after=k)`` makes the ``k+1``-th to ``k+n``-th ``kind``
    (``write``/``remove``/``append``/``sync``) call on a file named ``name`` fail before
    touching it.
    """

    def __init__(self) -> None:
        super().__init__()
        self._rules: list[dict[str, Any]] = []
        self.calls: list[tuple[str, str]] = []

    def fail(self, kind: str, name: str, *, times: int = 1, after: int = 0) -> None:
        self._rules.append({"kind": kind, "name": name, "times": times, "skip": after})

    def _check(self, kind: str, path: Path) -> None:
        self.calls.append((kind, path.name))
        for rule in self._rules:
            if rule["kind"] != kind or rule["name"] != path.name or rule["times"] == 0:
                continue
            if rule["skip"]:
                rule["skip"] -= 1
                continue
            rule["times"] -= 1
            raise OSError(28, "No space left on device (injected)", str(path))

    def write_bytes(self, path: Path, data: bytes) -> None:
        self._check("write", path)
        super().write_bytes(path, data)

    def remove(self, path: Path) -> bool:
        self._check("remove", path)
        return super().remove(path)

    def append(self, path: Path, data: bytes, committed_size: int) -> int:
        self._check("append", path)
        return super().append(path, data, committed_size)

    def sync(self, files: Sequence[Path], directories: Sequence[Path]) -> None:
        for path in files:
            self._check("sync", path)
        super().sync(files, directories)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """An empty state root for one store."""
    path = tmp_path / "home"
    path.mkdir()
    return path


@pytest.fixture
def make_agent() -> Callable[..., AgentRecord]:
    def make(agent_id: str, **fields: Any) -> AgentRecord:
        data: dict[str, Any] = {
            "id": agent_id,
            "provider": "claude",
            "cwd": "/Users/alice/code/api",
            "workspaceId": "wks_0000000000000001",
            "createdAt": STAMP,
            "updatedAt": STAMP,
            "labels": {},
            "lastStatus": "idle",
        }
        data.update(fields)
        return AgentRecord.model_validate(data)

    return make


@pytest.fixture
def make_schedule() -> Callable[..., ScheduleRecord]:
    def make(schedule_id: str, **fields: Any) -> ScheduleRecord:
        data: dict[str, Any] = {
            "id": schedule_id,
            "name": None,
            "prompt": "check the build",
            "cadence": {"type": "cron", "expression": "0 9 * * *"},
            "target": {"type": "agent", "agentId": "3b8f1c2e-7a4d-4e9b-9c61-2f0d5a8e7b14"},
            "status": "active",
            "createdAt": STAMP,
            "updatedAt": STAMP,
            "runs": [],
        }
        data.update(fields)
        return ScheduleRecord.model_validate(data)

    return make


@pytest.fixture
def make_project() -> Callable[..., ProjectRecord]:
    def make(project_id: str, root: str, **fields: Any) -> ProjectRecord:
        data: dict[str, Any] = {
            "projectId": project_id,
            "rootPath": root,
            "kind": "git",
            "displayName": Path(root).name,
            "createdAt": STAMP,
            "updatedAt": STAMP,
            "archivedAt": None,
        }
        data.update(fields)
        return ProjectRecord.model_validate(data)

    return make


@pytest.fixture
def make_workspace() -> Callable[..., WorkspaceRecord]:
    def make(workspace_id: str, **fields: Any) -> WorkspaceRecord:
        data: dict[str, Any] = {
            "workspaceId": workspace_id,
            "projectId": "prj_0000000000000001",
            "cwd": f"/Users/alice/code/{workspace_id}",
            "kind": "directory",
            "displayName": workspace_id,
            "createdAt": STAMP,
            "updatedAt": STAMP,
            "archivedAt": None,
        }
        data.update(fields)
        return WorkspaceRecord.model_validate(data)

    return make


@pytest.fixture
def make_entry() -> Callable[..., TimelineEntry]:
    def make(agent_id: str, seq: int, **event: Any) -> TimelineEntry:
        return TimelineEntry.model_validate(
            {
                "agentId": agent_id,
                "seq": seq,
                "epoch": "ep1",
                "timestamp": STAMP,
                "event": {"type": "assistant_message", "text": f"m{seq}", **event},
            }
        )

    return make


@pytest.fixture
def ops() -> FailingOps:
    """File operations that fail where a test says (see :class:`FailingOps`)."""
    return FailingOps()
