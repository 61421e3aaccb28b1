"""Every file of the TypeScript-written fixture home loads and round-trips losslessly.

``tests/fixtures/ts_home`` is a small ``$PASEO_HOME`` shaped as TypeScript Paseo writes it (field
tables of the data model plus the server's Zod schemas). Each file maps to exactly one model;
a file the table does not cover fails the coverage test, so new fixtures cannot go unchecked.
"""

from __future__ import annotations

import json
from pathlib import Path, PurePosixPath
from typing import Any

import pytest
from paseo_hookspecs.records import (
    AgentRecord,
    ManagedProcessRecord,
    PluginSourcesFile,
    ProjectsFile,
    PushTokensFile,
    ScheduleRecord,
    WorkspaceLabelsFile,
    WorkspaceLabelTransaction,
    WorkspacesFile,
    agent_record_path,
    dump_record,
    managed_process_record_path,
    project_id_shape,
    schedule_record_path,
)
from pydantic import BaseModel

HOME = Path(__file__).resolve().parents[2] / "fixtures" / "ts_home"

# (glob relative to the home, model) — first match wins.
MODELS: list[tuple[str, type[BaseModel]]] = [
    ("agents/*/*.json", AgentRecord),
    ("schedules/*.json", ScheduleRecord),
    ("projects/projects.json", ProjectsFile),
    ("projects/workspaces.json", WorkspacesFile),
    ("projects/workspace-labels.json", WorkspaceLabelsFile),
    ("projects/workspace-labels.transaction.json", WorkspaceLabelTransaction),
    ("runtime/managed-processes/*.json", ManagedProcessRecord),
    ("plugins/sources.json", PluginSourcesFile),
    ("push-tokens.json", PushTokensFile),
]

# Files whose load is intentionally not lossless: push tokens drop non-string entries.
FILTERED = {"push-tokens.json"}


def _fixture_files() -> list[PurePosixPath]:
    return sorted(PurePosixPath(p.relative_to(HOME).as_posix()) for p in HOME.rglob("*.json"))


def _model_for(relative: PurePosixPath) -> type[BaseModel] | None:
    for pattern, model in MODELS:
        # Relative patterns match from the right; equal depth makes that a full match.
        if len(relative.parts) == len(PurePosixPath(pattern).parts) and relative.match(pattern):
            return model
    return None


def _read(relative: PurePosixPath) -> Any:
    return json.loads((HOME / relative).read_text(encoding="utf-8"))


FILES = _fixture_files()


def test_fixture_home_is_present_and_covers_every_record_kind() -> None:
    assert FILES, f"no fixtures under {HOME}"
    covered = {_model_for(f) for f in FILES}
    assert covered == {model for _, model in MODELS}


@pytest.mark.parametrize("relative", FILES, ids=str)
def test_every_fixture_file_has_a_model(relative: PurePosixPath) -> None:
    assert _model_for(relative) is not None, f"no model registered for {relative}"


@pytest.mark.parametrize("relative", FILES, ids=str)
def test_fixture_round_trips_losslessly(relative: PurePosixPath) -> None:
    model = _model_for(relative)
    assert model is not None
    raw = _read(relative)
    loaded = model.model_validate(raw)
    dumped = dump_record(loaded)
    if str(relative) in FILTERED:
        assert dump_record(model.model_validate(dumped)) == dumped
    else:
        assert dumped == raw
    # Through JSON text too, as a store driver would write and re-read it.
    assert dump_record(model.model_validate_json(json.dumps(dumped))) == dumped


@pytest.mark.parametrize("relative", FILES, ids=str)
def test_fixture_loads_from_json_text(relative: PurePosixPath) -> None:
    model = _model_for(relative)
    assert model is not None
    text = (HOME / relative).read_text(encoding="utf-8")
    assert dump_record(model.model_validate_json(text)) == dump_record(
        model.model_validate(json.loads(text))
    )


def test_agent_files_live_under_their_sanitized_cwd() -> None:
    agent_files = [f for f in FILES if f.parts[0] == "agents"]
    assert len(agent_files) >= 4
    for relative in agent_files:
        record = AgentRecord.model_validate(_read(relative))
        assert agent_record_path(record.id, record.cwd) == relative


def test_schedule_and_process_files_are_named_by_id() -> None:
    for relative in FILES:
        if relative.parts[0] == "schedules":
            assert (
                schedule_record_path(ScheduleRecord.model_validate(_read(relative)).id) == relative
            )
        if relative.parts[:2] == ("runtime", "managed-processes"):
            record = ManagedProcessRecord.model_validate(_read(relative))
            assert managed_process_record_path(record.id) == relative


def test_push_tokens_fixture_filters_non_string_entries() -> None:
    raw = _read(PurePosixPath("push-tokens.json"))
    assert any(not isinstance(t, str) for t in raw["tokens"])
    tokens = PushTokensFile.model_validate(raw).tokens
    assert tokens == [t for t in raw["tokens"] if isinstance(t, str)]
    assert len(tokens) == 2


def test_registry_foreign_keys_resolve() -> None:
    projects = ProjectsFile.model_validate(_read(PurePosixPath("projects/projects.json"))).root
    workspaces = WorkspacesFile.model_validate(
        _read(PurePosixPath("projects/workspaces.json"))
    ).root
    project_ids = {p.projectId for p in projects}
    workspace_ids = {w.workspaceId for w in workspaces}
    assert all(w.projectId in project_ids for w in workspaces)
    for relative in FILES:
        if relative.parts[0] == "agents":
            record = AgentRecord.model_validate(_read(relative))
            assert record.workspaceId is None or record.workspaceId in workspace_ids


def test_fixture_home_exercises_the_interesting_shapes() -> None:
    """Guards the fixture set itself, so nobody trims away a case the round-trip relies on."""
    agents = [AgentRecord.model_validate(_read(f)) for f in FILES if f.parts[0] == "agents"]
    feature_types = {f.type for a in agents for f in a.features or []}
    assert feature_types == {"toggle", "select"}
    assert any(a.archivedAt for a in agents)
    assert any(a.persistence and a.persistence.nativeHandle is not None for a in agents)
    assert any(a.attentionReason for a in agents)
    assert any(a.model_extra for a in agents), "expected newer-writer fields in some agent"

    schedules = [
        ScheduleRecord.model_validate(_read(f)) for f in FILES if f.parts[0] == "schedules"
    ]
    assert {s.cadence.type for s in schedules} == {"cron", "every"}
    assert {s.target.type for s in schedules} == {"agent", "new-agent"}
    assert any(s.runs for s in schedules)

    projects = ProjectsFile.model_validate(_read(PurePosixPath("projects/projects.json"))).root
    assert {project_id_shape(p.projectId) for p in projects} == {"opaque", "remote", "path"}
    assert any(p.archivedAt for p in projects)

    workspaces = WorkspacesFile.model_validate(
        _read(PurePosixPath("projects/workspaces.json"))
    ).root
    assert {w.kind for w in workspaces} == {"local_checkout", "worktree", "directory"}
    assert any(w.worktreeRoot and w.cwd != w.worktreeRoot for w in workspaces)
    assert any(w.pinnedAt for w in workspaces)
    assert any(w.labels for w in workspaces)
    assert any(w.untrustedSource for w in workspaces)
