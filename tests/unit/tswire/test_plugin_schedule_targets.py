"""A schedule whose target a plugin offers (the loops plugin's ``loop``) has no TypeScript
shape: ``schedule/list`` leaves it out, and a verb naming it answers with an error, never a
frame the TypeScript client's schema would reject."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from paseo_tswire import dispatch
from paseo_tswire.envelope import session_frame, validate_outbound
from paseo_tswire.models.wire import Wire


def _schedule(schedule_id: str, target: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": schedule_id,
        "name": None,
        "prompt": "p",
        "cadence": {"type": "cron", "expression": "0 9 * * 1"},
        "target": target,
        "status": "active",
        "createdAt": "2026-12-01T00:00:00.000Z",
        "updatedAt": "2026-12-01T00:00:00.000Z",
        "nextRunAt": "2026-12-07T09:00:00.000Z",
        "lastRunAt": None,
        "pausedAt": None,
        "expiresAt": None,
        "maxRuns": None,
        "runs": [],
    }


AGENT = _schedule("aaaa1111", {"type": "agent", "agentId": "b7e984a1-e23f-41dc-8116-c535596d433d"})
LOOP = _schedule("bbbb2222", {"type": "loop", "config": {"cwd": "/w", "verifyPrompt": "v"}})


class Daemon:
    def __init__(self, answers: dict[str, Any]) -> None:
        self.answers = answers
        self.frames: list[dict[str, Any]] = []

    async def call(self, method: str, params: dict[str, Any] | None = None) -> Any:
        return self.answers[method]

    async def push(self, type_: str, payload: Wire) -> None:
        frame = json.loads(session_frame(type_, payload))
        validate_outbound(frame)
        self.frames.append(frame["message"])


def _run(daemon: Daemon, body: dict[str, Any]) -> dict[str, Any]:
    daemon.frames.clear()
    asyncio.run(dispatch.handle(daemon, body))  # type: ignore[arg-type]
    (frame,) = daemon.frames
    payload: dict[str, Any] = frame["payload"]
    return payload


def test_a_loop_target_schedule_is_left_out_or_refused_in_words() -> None:
    daemon = Daemon(
        {
            "schedule.list": {"schedules": [AGENT, LOOP], "quarantined": []},
            "schedule.inspect": {"schedule": LOOP},
            "schedule.pause": {"schedule": {**LOOP, "status": "paused"}},
        }
    )
    listed = _run(daemon, {"type": "schedule/list", "requestId": "r1"})
    assert [s["id"] for s in listed["schedules"]] == [AGENT["id"]]
    for verb in ("inspect", "pause"):
        answer = _run(
            daemon, {"type": f"schedule/{verb}", "requestId": "r2", "scheduleId": LOOP["id"]}
        )
        assert answer["schedule"] is None
        assert "'loop' target" in answer["error"]
        assert f"paseo schedule inspect {LOOP['id']}" in answer["error"]
