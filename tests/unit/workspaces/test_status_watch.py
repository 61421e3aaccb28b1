"""``workspace.status``: one notification per change of a workspace's derived status, however
many rechecks a burst of agent or terminal changes asks for."""

from __future__ import annotations

import asyncio
from typing import Any

from paseo.workspaces.status import StatusWatch


def test_a_burst_of_rechecks_is_one_pass_and_one_notification_per_change() -> None:
    running: set[str] = set()
    published: list[tuple[str, dict[str, Any]]] = []
    passes = 0

    def derive() -> set[str]:
        nonlocal passes
        passes += 1
        return set(running)

    async def scenario() -> None:
        watch = StatusWatch(derive, lambda method, payload: published.append((method, payload)))
        running.update({"w1", "w2"})
        for _ in range(100):  # a hundred agent events in a row
            watch.recheck()
        await asyncio.sleep(0)  # the loop runs the one scheduled pass
        assert passes == 1
        running.discard("w1")
        watch.recheck()
        await asyncio.sleep(0)
        watch.recheck()  # nothing changed since: nothing announced
        await asyncio.sleep(0)
        watch.stop()

    asyncio.run(scenario())
    assert published == [
        ("workspace.status", {"workspaceId": "w1", "status": "running"}),
        ("workspace.status", {"workspaceId": "w2", "status": "running"}),
        ("workspace.status", {"workspaceId": "w1", "status": "idle"}),
    ]
    assert passes == 3


def _record(agent_id: str, status: str, workspace: str | None, *, internal: bool = False) -> Any:
    from paseo_hookspecs.records import AgentRecord

    fields: dict[str, Any] = {
        "id": agent_id,
        "provider": "p",
        "cwd": "/w",
        "createdAt": "2026-01-01T00:00:00+00:00",
        "updatedAt": "2026-01-01T00:00:00+00:00",
        "lastStatus": status,
        "workspaceId": workspace,
    }
    if internal:
        fields["internal"] = True
    return AgentRecord.model_validate(fields)


def test_agent_records_and_terminal_activity_make_workspaces_run() -> None:
    from paseo_hookspecs.agents import RecordChange

    from paseo.workspaces.status import RunningWork, WorkspaceActivity

    published: list[tuple[str, dict[str, Any]]] = []
    work = RunningWork()

    async def scenario() -> None:
        watch = StatusWatch(
            work.running, lambda method, payload: published.append((method, payload))
        )
        activity = WorkspaceActivity(work, watch)
        await activity.on_record(
            RecordChange(kind="updated", record=_record("a1", "running", "w1"))
        )
        await asyncio.sleep(0)
        # An internal agent's turn counts, but its own change asks for no pass.
        await activity.on_record(
            RecordChange(kind="updated", record=_record("i1", "running", "w2", internal=True))
        )
        await asyncio.sleep(0)
        assert work.running() == {"w1", "w2"}
        activity.terminals({"w3"})
        await asyncio.sleep(0)
        await activity.on_record(
            RecordChange(kind="deleted", record=_record("a1", "running", "w1"))
        )
        activity.terminals(set())
        await asyncio.sleep(0)
        watch.stop()

    asyncio.run(scenario())
    assert published == [
        ("workspace.status", {"workspaceId": "w1", "status": "running"}),
        ("workspace.status", {"workspaceId": "w2", "status": "running"}),
        ("workspace.status", {"workspaceId": "w3", "status": "running"}),
        ("workspace.status", {"workspaceId": "w1", "status": "idle"}),
        ("workspace.status", {"workspaceId": "w3", "status": "idle"}),
    ]
