"""Agent record: fields, the feature union, nullability rules and forward compatibility."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from paseo_hookspecs.records import (
    AgentFeatureSelect,
    AgentFeatureToggle,
    AgentRecord,
    PersistenceHandle,
    dump_record,
    new_agent_id,
)
from pydantic import ValidationError

AGENT_ID = "3b8f1c2e-7a4d-4e9b-9c61-2f0d5a8e7b14"


def minimal() -> dict[str, Any]:
    return {
        "id": AGENT_ID,
        "provider": "claude",
        "cwd": "/Users/alice/code/api",
        "createdAt": "2026-05-04T08:12:03.417Z",
        "updatedAt": "2026-05-04T08:12:03.417Z",
        "labels": {},
        "lastStatus": "idle",
    }


def full() -> dict[str, Any]:
    return {
        **minimal(),
        "workspaceId": "wks_4c1e9a7b2d6f3e80",
        "lastActivityAt": "2026-05-04T08:20:00.000Z",
        "lastUserMessageAt": None,
        "title": None,
        "labels": {"paseo.parent-agent-id": "c91e4a07-5d2b-4f3a-8e16-7b9d0c4f2a85"},
        "lastModeId": "plan",
        "config": {"modeId": "plan", "featureValues": {"fast": True}, "mcpServers": None},
        "runtimeInfo": {"provider": "claude", "sessionId": None},
        "features": [
            {"type": "toggle", "id": "fast", "label": "Fast", "value": True},
            {
                "type": "select",
                "id": "effort",
                "label": "Effort",
                "value": None,
                "options": [{"id": "low", "label": "Low", "isDefault": True}],
            },
        ],
        "persistence": {"provider": "claude", "sessionId": "s1", "nativeHandle": None},
        "lastError": None,
        "requiresAttention": True,
        "attentionReason": "permission",
        "attentionTimestamp": "2026-05-04T08:20:00.000Z",
        "internal": False,
        "archivedAt": None,
    }


def test_minimal_record_round_trips_and_defaults() -> None:
    raw = minimal()
    record = AgentRecord.model_validate(raw)
    assert dump_record(record) == raw
    assert record.workspaceId is None
    assert record.config is None
    assert record.features is None


def test_full_record_round_trips_with_explicit_nulls() -> None:
    raw = full()
    assert dump_record(AgentRecord.model_validate(raw)) == raw


def test_labels_and_last_status_default_and_are_always_written() -> None:
    raw = minimal()
    del raw["labels"]
    del raw["lastStatus"]
    record = AgentRecord.model_validate(raw)
    assert record.labels == {}
    assert record.lastStatus == "closed"
    dumped = dump_record(record)
    assert dumped["labels"] == {}
    assert dumped["lastStatus"] == "closed"


def test_constructed_record_writes_only_what_was_given() -> None:
    record = AgentRecord(
        id=new_agent_id(),
        provider="codex",
        cwd="/srv/app",
        createdAt="2026-05-04T08:12:03.417Z",
        updatedAt="2026-05-04T08:12:03.417Z",
        archivedAt=None,
    )
    dumped = dump_record(record)
    assert set(dumped) == {
        "id",
        "provider",
        "cwd",
        "createdAt",
        "updatedAt",
        "labels",
        "lastStatus",
        "archivedAt",
    }
    assert dumped["archivedAt"] is None


def test_assigned_field_is_written() -> None:
    record = AgentRecord.model_validate(minimal())
    record.archivedAt = "2026-05-05T00:00:00.000Z"
    assert dump_record(record)["archivedAt"] == "2026-05-05T00:00:00.000Z"


def test_feature_union_selects_each_branch() -> None:
    record = AgentRecord.model_validate(full())
    assert record.features is not None
    toggle, select = record.features
    assert isinstance(toggle, AgentFeatureToggle)
    assert toggle.value is True
    assert isinstance(select, AgentFeatureSelect)
    assert select.value is None
    assert select.options[0].isDefault is True


@pytest.mark.parametrize(
    "feature",
    [
        {"type": "slider", "id": "x", "label": "X", "value": 1},
        {"type": "toggle", "id": "x", "label": "X", "value": "yes"},
        {"type": "select", "id": "x", "label": "X", "value": "a"},
        {"id": "x", "label": "X", "value": True},
    ],
    ids=["unknown-type", "toggle-non-bool", "select-without-options", "no-discriminator"],
)
def test_invalid_feature_is_rejected(feature: dict[str, Any]) -> None:
    raw = minimal()
    raw["features"] = [feature]
    with pytest.raises(ValidationError):
        AgentRecord.model_validate(raw)


def test_unknown_fields_are_kept_at_every_level() -> None:
    raw = full()
    raw["owner"] = {"kind": "daemon", "executionId": "x1"}
    raw["queuedPrompts"] = [{"id": "q", "prompt": "hi", "queuedAt": "2026-05-04T08:20:00.000Z"}]
    raw["config"]["toolPolicy"] = {"preapproved": []}
    raw["features"][0]["unavailableReason"] = "needs login"
    raw["features"][1]["options"][0]["tier"] = "fast"
    raw["persistence"]["checkpoint"] = 7
    record = AgentRecord.model_validate(raw)
    assert record.model_extra == {"owner": raw["owner"], "queuedPrompts": raw["queuedPrompts"]}
    assert dump_record(record) == raw


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("id", 7),
        ("cwd", None),
        ("createdAt", 1714810323),
        ("lastStatus", "sleeping"),
        ("attentionReason", "bored"),
        ("labels", {"a": 1}),
        ("labels", None),
        ("requiresAttention", "true"),
        ("internal", 1),
        ("features", {"type": "toggle"}),
        ("runtimeInfo", {"sessionId": "s"}),
        ("persistence", {"provider": "claude"}),
        ("config", "plan"),
    ],
)
def test_wrong_types_and_bad_enums_are_rejected(field: str, value: Any) -> None:
    raw = full()
    raw[field] = value
    with pytest.raises(ValidationError):
        AgentRecord.model_validate(raw)


@pytest.mark.parametrize("field", ["id", "provider", "cwd", "createdAt", "updatedAt"])
def test_required_fields_are_required(field: str) -> None:
    raw = minimal()
    del raw[field]
    with pytest.raises(ValidationError):
        AgentRecord.model_validate(raw)


@pytest.mark.parametrize(
    "field",
    ["workspaceId", "lastActivityAt", "runtimeInfo", "features", "requiresAttention", "internal"],
)
def test_optional_but_not_nullable_fields_reject_null(field: str) -> None:
    raw = minimal()
    raw[field] = None
    with pytest.raises(ValidationError, match="may be omitted but not null"):
        AgentRecord.model_validate(raw)


@pytest.mark.parametrize(
    "field",
    [
        "lastUserMessageAt",
        "title",
        "lastModeId",
        "config",
        "persistence",
        "lastError",
        "attentionReason",
        "attentionTimestamp",
        "archivedAt",
    ],
)
def test_nullable_fields_accept_null_and_keep_it(field: str) -> None:
    raw = minimal()
    raw[field] = None
    assert dump_record(AgentRecord.model_validate(raw)) == raw


def test_runtime_info_extra_may_be_omitted_but_not_null() -> None:
    raw = full()
    raw["runtimeInfo"]["extra"] = None
    with pytest.raises(ValidationError):
        AgentRecord.model_validate(raw)


@pytest.mark.parametrize(
    "handle",
    ["thread_019a3f2c", {"resumeToken": "t", "dir": "-Users-a"}, ["a", 1], 42, None],
)
def test_native_handle_accepts_any_json(handle: Any) -> None:
    raw = {"provider": "codex", "sessionId": "s", "nativeHandle": handle}
    assert dump_record(PersistenceHandle.model_validate(raw)) == raw


def test_absent_native_handle_stays_absent() -> None:
    raw = {"provider": "codex", "sessionId": "s"}
    assert dump_record(PersistenceHandle.model_validate(raw)) == raw


def test_load_does_not_mutate_input() -> None:
    raw = full()
    before = copy.deepcopy(raw)
    AgentRecord.model_validate(raw)
    assert raw == before
