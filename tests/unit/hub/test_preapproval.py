"""Pre-approval over the agent port: a Hub-owned agent's request for exactly a granted tool is
allowed at once, whatever the provider; any other request, and any agent no Hub owns, waits
for a person."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.hub_agents import Agents, run, service
from paseo_hookspecs.agents import AgentCreate
from paseo_hub.agents import HubAgents
from paseo_hub.models import HubAgentCreate, HubOwner, PreapprovedTool
from paseo_hub.preapproval import PreApprover

from paseo.testing.fake_hub import FakeHub

GRANTED = "mcp__hub__finish_execution"


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "paseo-home"
    path.mkdir()
    return path


def _spec(execution_id: str = "e1") -> HubAgentCreate:
    return HubAgentCreate(
        owner=HubOwner(daemonId="d1", executionId=execution_id),
        provider="claude",
        cwd="/repo",
        prompt="p",
        messageId=f"hub-{execution_id}",
        mcpServers={"hub": {"type": "http", "url": "http://127.0.0.1:1/mcp"}},
        preapprovedTools=(PreapprovedTool(server="hub", tool="finish_execution"),),
    )


def test_only_the_granted_tool_of_an_owned_agent_is_allowed() -> None:
    async def body() -> None:
        agents = Agents()
        subscription = agents.subscribe(PreApprover(agents), name="hub.preapproval")  # type: ignore[arg-type]
        owned = await HubAgents(agents, agents.providers).create_owned(_spec())  # type: ignore[arg-type]
        granted = await agents.ask(owned.id, GRANTED)
        other = await agents.ask(owned.id, "Bash")
        lookalike = await agents.ask(owned.id, "mcp__hub__finish_execution_now")
        assert [(a, r, x.behavior) for a, r, x in agents.answers] == [(owned.id, granted, "allow")]
        assert {r.id for r in await agents.pending_permissions(owned.id)} == {other, lookalike}

        # The same tool name asked for by an agent no Hub owns (even one claiming grants).
        local = await agents.create(
            AgentCreate(provider="claude", cwd="/w", recordFields={"hubToolPolicy": [GRANTED]})
        )
        asked = await agents.ask(local.id, GRANTED)
        assert [r.id for r in await agents.pending_permissions(local.id)] == [asked]
        subscription.close()

    run(body())


def test_grants_are_read_from_the_record_after_a_restart() -> None:
    async def body() -> None:
        agents = Agents()
        owned = await HubAgents(agents, agents.providers).create_owned(_spec())  # type: ignore[arg-type]
        agents.restart()  # a new daemon: this observer never saw the agent's record change
        agents.subscribe(PreApprover(agents), name="hub.preapproval")  # type: ignore[arg-type]
        await agents.ensure_session(owned.id)
        request = await agents.ask(owned.id, GRANTED)
        assert [(a, r) for a, r, _ in agents.answers] == [(owned.id, request)]

    run(body())


def test_a_request_answered_meanwhile_is_no_failure() -> None:
    async def body() -> None:
        agents = Agents()
        owned = await HubAgents(agents, agents.providers).create_owned(_spec())  # type: ignore[arg-type]
        # Two approvers (e.g. a second subscriber): the second answer finds nothing pending.
        agents.subscribe(PreApprover(agents), name="a")  # type: ignore[arg-type]
        agents.subscribe(PreApprover(agents), name="b")  # type: ignore[arg-type]
        await agents.ask(owned.id, GRANTED)
        assert len(agents.answers) == 1
        assert await agents.pending_permissions(owned.id) == []

    run(body())


def test_the_plugin_pre_approves_while_no_hub_is_connected(home: Path) -> None:
    """paseo_startup subscribes the approver whatever the relationship's state."""
    from paseo_hub import plugin

    from .test_local_surface import Context

    async def body() -> None:
        agents = Agents()
        plugin.paseo_startup(context=Context(home, agents))  # type: ignore[arg-type]
        try:
            owned = await HubAgents(agents, agents.providers).create_owned(_spec())  # type: ignore[arg-type]
            request = await agents.ask(owned.id, GRANTED)
            assert [r for _, r, _ in agents.answers] == [request]
        finally:
            service = plugin.RUNTIME.service
            plugin.paseo_shutdown(context=Context(home, agents))  # type: ignore[arg-type]
            assert agents.subscribers == []  # both subscriptions closed at shutdown
            assert service is not None
            await service.stop()

    run(body())


def test_a_hub_execution_finishing_through_its_granted_tool_asks_no_one(home: Path) -> None:
    async def body() -> None:
        async with FakeHub() as hub:
            agents = Agents()
            agents.subscribe(PreApprover(agents), name="hub.preapproval")  # type: ignore[arg-type]
            hub_service = service(home, agents)
            status = await hub_service.connect(hub.url, hub.issue_token())
            assert status.daemonId is not None
            await hub.wait_connected(status.daemonId)
            answer = await hub.create(status.daemonId, prompt="p", cwd="/repo")
            request = await agents.ask(answer["agentId"], GRANTED)
            assert [(a, r) for a, r, _ in agents.answers] == [(answer["agentId"], request)]
            execution = hub.executions[answer["executionId"]]
            await hub.wait_for(
                lambda: [e["type"] for e in execution.events][-2:]
                == ["permission_requested", "permission_resolved"]
            )
            await hub_service.stop()

    run(body())
