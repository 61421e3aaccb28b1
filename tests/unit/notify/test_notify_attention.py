"""Which sinks hear an attention event, and what the notification says."""

from __future__ import annotations

import asyncio
from typing import Any

from paseo_hookspecs.errors import NotFound
from paseo_hookspecs.events import PermissionRequest
from paseo_hookspecs.records import AgentRecord
from paseo_notify.delivery import SinkWorker
from paseo_notify.plugin import NotifyPlugin

NOW = "2026-12-02T00:00:00Z"


class Agents:
    """The three reads the plugin makes of the agent port, over fixed records."""

    def __init__(self, records: list[AgentRecord]) -> None:
        self.records = {r.id: r for r in records}

    async def get(self, agent: str) -> AgentRecord:
        if agent not in self.records:
            raise NotFound(f"no agent {agent}")
        return self.records[agent]

    async def last_reply(self, agent_id: str) -> str | None:
        return "done " * 100

    async def pending_permissions(self, agent_id: str) -> list[PermissionRequest]:
        return [PermissionRequest(id="r1", title="Run make test", toolName="Bash")]


def _record(agent_id: str, **fields: Any) -> AgentRecord:
    return AgentRecord.model_validate(
        {"id": agent_id, "provider": "claude", "cwd": "/w", "createdAt": NOW, "updatedAt": NOW}
        | fields
    )


def _sink(name: str, events: set[str], got: list[dict[str, Any]]) -> SinkWorker:
    async def deliver(payload: dict[str, Any]) -> None:
        got.append(payload)

    worker = SinkWorker(name, "command", frozenset(events), deliver, 0, 0.01, 10)
    # Not started: what is offered stays queued, so the test reads what each sink was given.
    worker.offer = got.append  # type: ignore[method-assign]
    return worker


def test_each_sink_hears_the_events_it_wants_about_non_internal_agents() -> None:
    plugin = NotifyPlugin()
    finished: list[dict[str, Any]] = []
    permission: list[dict[str, Any]] = []
    plugin.workers = [
        _sink("f", {"finished"}, finished),
        _sink("p", {"permission", "budget"}, permission),
    ]
    agents: Any = Agents(
        [_record("a1", title="fix it", lastStatus="idle", workspaceId="w1"),
         _record("i1", internal=True)]
    )  # fmt: skip

    async def body() -> None:
        for agent_id, reason in [("a1", "finished"), ("a1", "permission"), ("a1", "error"),
                                 ("i1", "finished"), ("gone", "finished")]:  # fmt: skip
            await plugin.attention(agents, "srv", agent_id, reason, NOW)

    asyncio.run(asyncio.wait_for(body(), 10))
    assert [p["agentId"] for p in finished] == ["a1"]
    note = finished[0]
    assert note["title"] == "fix it"
    assert note["status"] == "idle"
    assert note["workspace"] == {"id": "w1", "cwd": "/w"}
    assert note["serverId"] == "srv"
    assert len(note["summary"]) == 280
    assert note["summary"].endswith("…")
    assert [p["summary"] for p in permission] == ["Bash: Run make test"]
