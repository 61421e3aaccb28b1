"""Schedule record: cadence and target unions, runs, always-written nullable fields."""

from __future__ import annotations

from typing import Any

import pytest
from paseo_hookspecs.records import (
    AgentScheduleTarget,
    CronCadence,
    EveryCadence,
    NewAgentScheduleTarget,
    ScheduleRecord,
    ScheduleRun,
    dump_record,
)
from pydantic import ValidationError

AGENT_ID = "3b8f1c2e-7a4d-4e9b-9c61-2f0d5a8e7b14"


def schedule(**overrides: Any) -> dict[str, Any]:
    raw: dict[str, Any] = {
        "id": "3f9a0c12",
        "name": "Nightly",
        "prompt": "Audit dependencies.",
        "cadence": {"type": "cron", "expression": "0 2 * * *"},
        "target": {"type": "agent", "agentId": AGENT_ID},
        "status": "active",
        "createdAt": "2026-05-01T07:00:00.000Z",
        "updatedAt": "2026-05-01T07:00:00.000Z",
        "nextRunAt": "2026-05-02T00:00:00.000Z",
        "lastRunAt": None,
        "pausedAt": None,
        "expiresAt": None,
        "maxRuns": None,
        "runs": [],
    }
    raw.update(overrides)
    return raw


def run(**overrides: Any) -> dict[str, Any]:
    raw: dict[str, Any] = {
        "id": "run_1",
        "scheduledFor": "2026-05-02T00:00:00.000Z",
        "startedAt": "2026-05-02T00:00:00.300Z",
        "endedAt": None,
        "status": "running",
        "agentId": None,
        "output": None,
        "error": None,
    }
    raw.update(overrides)
    return raw


@pytest.mark.parametrize(
    ("cadence", "model"),
    [
        ({"type": "cron", "expression": "0 2 * * *"}, CronCadence),
        ({"type": "cron", "expression": "0 2 * * *", "timezone": "Europe/Berlin"}, CronCadence),
        ({"type": "every", "everyMs": 60000}, EveryCadence),
    ],
)
def test_cadence_branches(cadence: dict[str, Any], model: type) -> None:
    raw = schedule(cadence=cadence)
    record = ScheduleRecord.model_validate(raw)
    assert isinstance(record.cadence, model)
    assert dump_record(record) == raw


def test_target_branches() -> None:
    agent = ScheduleRecord.model_validate(schedule())
    assert isinstance(agent.target, AgentScheduleTarget)
    raw = schedule(
        target={
            "type": "new-agent",
            "config": {
                "provider": "codex",
                "cwd": "/srv/app",
                "model": "gpt-5-codex",
                "title": None,
                "archiveOnFinish": True,
                "isolation": "worktree",
                "providerOptions": {"sandbox": "read-only"},
                "mcpServers": {},
            },
        }
    )
    record = ScheduleRecord.model_validate(raw)
    assert isinstance(record.target, NewAgentScheduleTarget)
    assert record.target.config.isolation == "worktree"
    assert dump_record(record) == raw


@pytest.mark.parametrize(
    "cadence",
    [
        {"type": "hourly"},
        {"type": "cron"},
        {"type": "cron", "expression": "   "},
        {"type": "cron", "expression": "* * * * *", "timezone": None},
        {"type": "every", "everyMs": 0},
        {"type": "every", "everyMs": 1.5},
        {"type": "every", "everyMs": "60000"},
        {"expression": "* * * * *"},
    ],
)
def test_invalid_cadence_is_rejected(cadence: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        ScheduleRecord.model_validate(schedule(cadence=cadence))


@pytest.mark.parametrize(
    "target",
    [
        {"type": "agent", "agentId": "not-a-guid"},
        {"type": "agent"},
        {"type": "new-agent", "config": {"provider": "codex"}},
        {"type": "new-agent", "config": {"provider": "codex", "cwd": " "}},
        {"type": "new-agent", "config": {"provider": "codex", "cwd": "/x", "model": None}},
        {"type": "new-agent", "config": {"provider": "codex", "cwd": "/x", "isolation": "vm"}},
        {"type": "existing-agent", "agentId": AGENT_ID},
    ],
)
def test_invalid_target_is_rejected(target: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        ScheduleRecord.model_validate(schedule(target=target))


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("status", "running"),
        ("prompt", ""),
        ("maxRuns", 0),
        ("maxRuns", "3"),
        ("runs", None),
        ("name", 5),
    ],
)
def test_invalid_schedule_fields_are_rejected(field: str, value: Any) -> None:
    with pytest.raises(ValidationError):
        ScheduleRecord.model_validate(schedule(**{field: value}))


def test_runs_round_trip_with_each_status() -> None:
    raw = schedule(
        runs=[
            run(),
            run(
                id="run_2",
                status="succeeded",
                endedAt="2026-05-02T00:05:00.000Z",
                agentId=AGENT_ID,
                workspaceId="wks_4c1e9a7b2d6f3e80",
                output="done",
            ),
            run(id="run_3", status="failed", error="busy"),
        ]
    )
    assert dump_record(ScheduleRecord.model_validate(raw)) == raw


@pytest.mark.parametrize(
    ("field", "value"),
    [("status", "cancelled"), ("agentId", "nope"), ("startedAt", None)],
)
def test_invalid_run_is_rejected(field: str, value: Any) -> None:
    with pytest.raises(ValidationError):
        ScheduleRun.model_validate(run(**{field: value}))


def test_absent_nullable_fields_read_as_null_and_are_written() -> None:
    """The seed marks these optional; TypeScript requires and always writes them."""
    raw = {
        "id": "0c5d88ae",
        "prompt": "Post the changelog.",
        "cadence": {"type": "every", "everyMs": 3600000},
        "target": {"type": "agent", "agentId": AGENT_ID},
        "status": "paused",
        "createdAt": "2026-05-01T07:00:00.000Z",
        "updatedAt": "2026-05-01T07:00:00.000Z",
        "runs": [{"id": "r", "scheduledFor": "x", "startedAt": "y", "status": "running"}],
    }
    record = ScheduleRecord.model_validate(raw)
    dumped = dump_record(record)
    for field in ("name", "nextRunAt", "lastRunAt", "pausedAt", "expiresAt", "maxRuns"):
        assert dumped[field] is None
    assert dumped["runs"][0] == {
        "id": "r",
        "scheduledFor": "x",
        "startedAt": "y",
        "endedAt": None,
        "status": "running",
        "agentId": None,
        "output": None,
        "error": None,
    }
    assert dump_record(ScheduleRecord.model_validate(dumped)) == dumped


def test_unknown_fields_are_kept() -> None:
    raw = schedule(
        catchUp="skip",
        cadence={"type": "cron", "expression": "0 2 * * *", "jitterMs": 5000},
        runs=[run(costUsd=0.42)],
    )
    assert dump_record(ScheduleRecord.model_validate(raw)) == raw
