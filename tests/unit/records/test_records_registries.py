"""Project and workspace registries: legacy ids, required-nullable fields, defaults."""

from __future__ import annotations

from typing import Any

import pytest
from paseo_hookspecs.records import (
    ProjectRecord,
    ProjectsFile,
    WorkspaceRecord,
    WorkspacesFile,
    dump_record,
    new_workspace_id,
)
from pydantic import ValidationError


def project(**overrides: Any) -> dict[str, Any]:
    raw: dict[str, Any] = {
        "projectId": "prj_8f3a2b1c9d0e4f57",
        "rootPath": "/Users/alice/code/api",
        "kind": "git",
        "displayName": "api",
        "projectKey": "remote:github.com/acme/api",
        "customName": None,
        "customIconRevision": None,
        "createdAt": "2026-05-01T06:58:11.000Z",
        "updatedAt": "2026-05-01T06:58:11.000Z",
        "archivedAt": None,
    }
    raw.update(overrides)
    return raw


def workspace(**overrides: Any) -> dict[str, Any]:
    raw: dict[str, Any] = {
        "workspaceId": "wks_4c1e9a7b2d6f3e80",
        "projectId": "prj_8f3a2b1c9d0e4f57",
        "cwd": "/Users/alice/code/api",
        "kind": "local_checkout",
        "displayName": "main",
        "title": None,
        "branch": "main",
        "worktreeRoot": "/Users/alice/code/api",
        "baseBranch": None,
        "isPaseoOwnedWorktree": False,
        "mainRepoRoot": None,
        "createdAt": "2026-05-01T06:58:11.000Z",
        "updatedAt": "2026-05-01T06:58:11.000Z",
        "archivedAt": None,
        "autoArchivedChangeRequestUrl": None,
        "pinnedAt": None,
    }
    raw.update(overrides)
    return raw


@pytest.mark.parametrize(
    "project_id",
    [
        "prj_0123456789abcdef",
        "remote:github.com/acme/api",
        "remote:gitlab.example.com/group/sub/repo",
        "/Users/alice/notes",
        "C:\\Users\\bob\\src\\tool",
    ],
)
def test_legacy_and_opaque_project_ids_are_readable(project_id: str) -> None:
    raw = project(projectId=project_id)
    record = ProjectRecord.model_validate(raw)
    assert record.projectId == project_id
    assert dump_record(record) == raw


def test_project_archived_at_is_required_and_nullable() -> None:
    raw = project()
    del raw["archivedAt"]
    with pytest.raises(ValidationError):
        ProjectRecord.model_validate(raw)
    record = ProjectRecord.model_validate(project(archivedAt="2026-05-02T00:00:00.000Z"))
    assert record.archivedAt == "2026-05-02T00:00:00.000Z"


def test_project_compat_fields_default_to_null_and_are_written() -> None:
    raw = project()
    for field in ("projectKey", "customName", "customIconRevision"):
        del raw[field]
    dumped = dump_record(ProjectRecord.model_validate(raw))
    assert dumped == project(projectKey=None)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("kind", "svn"),
        ("projectId", ""),
        ("projectId", None),
        ("displayName", 3),
        ("archivedAt", False),
        ("customName", 1),
    ],
)
def test_invalid_project_is_rejected(field: str, value: Any) -> None:
    with pytest.raises(ValidationError):
        ProjectRecord.model_validate(project(**{field: value}))


def test_projects_file_round_trips_and_rejects_non_lists() -> None:
    raw = [project(), project(projectId="remote:github.com/acme/web", archivedAt="x")]
    assert dump_record(ProjectsFile.model_validate(raw)) == raw
    assert dump_record(ProjectsFile.model_validate([])) == []
    with pytest.raises(ValidationError):
        ProjectsFile.model_validate({"projects": raw})


@pytest.mark.parametrize("kind", ["local_checkout", "worktree", "directory"])
def test_each_workspace_kind(kind: str) -> None:
    raw = workspace(kind=kind)
    assert dump_record(WorkspaceRecord.model_validate(raw)).get("kind") == kind


def test_subproject_in_worktree_keeps_cwd_and_worktree_root_apart() -> None:
    raw = workspace(
        workspaceId=new_workspace_id(),
        cwd="/Users/alice/.paseo/worktrees/api/fix/web",
        kind="worktree",
        worktreeRoot="/Users/alice/.paseo/worktrees/api/fix",
        mainRepoRoot="/Users/alice/code/api",
        baseBranch="origin/main",
        isPaseoOwnedWorktree=True,
        labels=["Review"],
        pinnedAt="2026-05-03T00:00:00.000Z",
        untrustedSource={
            "kind": "change_request",
            "forge": "github",
            "number": 482,
            "headRepository": "contributor/api",
        },
    )
    record = WorkspaceRecord.model_validate(raw)
    assert record.cwd != record.worktreeRoot
    assert record.untrustedSource is not None
    assert record.untrustedSource.number == 482
    assert dump_record(record) == raw


def test_workspace_defaults_match_the_typescript_writer() -> None:
    raw = {
        "workspaceId": "/Users/alice/code/api",
        "projectId": "remote:github.com/acme/api",
        "cwd": "/Users/alice/code/api",
        "kind": "local_checkout",
        "displayName": "main",
        "createdAt": "2026-05-01T06:58:11.000Z",
        "updatedAt": "2026-05-01T06:58:11.000Z",
        "archivedAt": None,
    }
    dumped = dump_record(WorkspaceRecord.model_validate(raw))
    assert dumped == {
        **raw,
        "title": None,
        "branch": None,
        "worktreeRoot": None,
        "baseBranch": None,
        "isPaseoOwnedWorktree": False,
        "mainRepoRoot": None,
        "autoArchivedChangeRequestUrl": None,
        "pinnedAt": None,
    }
    assert "labels" not in dumped
    assert "untrustedSource" not in dumped


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("kind", "checkout"),
        ("archivedAt", ...),
        ("labels", None),
        ("labels", ["ok", 3]),
        ("untrustedSource", None),
        (
            "untrustedSource",
            {"kind": "fork", "forge": "github", "number": 1, "headRepository": "x"},
        ),
        (
            "untrustedSource",
            {"kind": "change_request", "forge": "github", "number": 0, "headRepository": "x"},
        ),
        ("isPaseoOwnedWorktree", None),
        ("isPaseoOwnedWorktree", "false"),
        ("workspaceId", ""),
    ],
)
def test_invalid_workspace_is_rejected(field: str, value: Any) -> None:
    raw = workspace()
    if value is ...:
        del raw[field]
    else:
        raw[field] = value
    with pytest.raises(ValidationError):
        WorkspaceRecord.model_validate(raw)


def test_unknown_workspace_fields_are_kept() -> None:
    raw = workspace(
        members=[{"agentId": "a"}],
        untrustedSource={
            "kind": "change_request",
            "forge": "github",
            "number": 7,
            "headRepository": "x/y",
            "headRef": "feature",
        },
    )
    assert dump_record(WorkspacesFile.model_validate([raw])) == [raw]


def test_updated_copy_writes_the_updated_fields() -> None:
    """Store drivers update records with ``model_copy(update=...)``; updates must be written."""
    raw = project()
    del raw["customName"]
    record = ProjectRecord.model_validate(raw)
    updated = record.model_copy(
        update={"customName": "API", "archivedAt": "2026-05-09T00:00:00.000Z"}
    )
    assert dump_record(updated) == project(customName="API", archivedAt="2026-05-09T00:00:00.000Z")
    assert dump_record(record) == project()
