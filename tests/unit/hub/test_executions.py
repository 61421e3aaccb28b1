"""Hub executions over the real socket: creates, reconciliation, resume intents, control,
validation, and the Hub session's allowlist and owned-agents-only view."""

from __future__ import annotations

import asyncio
import json
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from helpers.hub_agents import Agents, run, service, write_keypair
from paseo_hub.intents import FILE_NAME as INTENTS
from paseo_hub.service import HubService

from paseo.testing.fake_hub import FakeHub


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "paseo-home"
    path.mkdir()
    return path


async def connected(hub: FakeHub, home: Path, agents: Agents) -> tuple[HubService, str]:
    hub_service = service(home, agents)
    status = await hub_service.connect(hub.url, hub.issue_token())
    assert status.state == "connected"
    assert status.daemonId is not None
    await hub.wait_connected(status.daemonId)
    return hub_service, status.daemonId


async def restarted(hub: FakeHub, home: Path, agents: Agents, old: HubService) -> HubService:
    """The daemon was killed: the service is gone, agents lost their runtimes."""
    await old.stop()
    agents.restart()
    new = service(home, agents)
    await new.start()
    return new


def test_a_create_answers_every_key_and_streams_events_in_order(home: Path) -> None:
    async def body() -> None:
        async with FakeHub() as hub:
            agents = Agents()
            hub_service, daemon_id = await connected(hub, home, agents)
            worktree = {"type": "branch-off", "newBranch": "hub/x", "base": "main"}
            answer = await hub.create(
                daemon_id,
                prompt="fix it",
                cwd="/repo",
                model="opus",
                modeId="default",
                env={"PASEO_HUB_CONFIG_JSON": "{}"},
                worktree=worktree,
                providerOptions={"x": 1},
            )
            assert set(answer) == {
                "requestId", "executionId", "agentId", "agent", "success", "error",
                "toolPolicyApplied",
            }
            assert answer["success"] is True
            assert answer["error"] is None
            assert answer["toolPolicyApplied"] is True
            assert answer["agent"]["status"] == "running"
            agent = agents.agents[answer["agentId"]]
            # The owner and the grants are in the record before it is first stored; the env
            # travels beside it.
            assert agent.owner == {
                "kind": "daemon", "daemonId": daemon_id, "executionId": answer["executionId"]
            }
            assert (await agents.get(agent.id)).model_extra["owner"] == agent.owner
            assert set(agent.spec.mcpServers) == {"hub"}
            assert agent.grants == ["mcp__hub__finish_execution"]
            assert agent.spec.worktree is not None
            assert agent.spec.worktree.model_dump() == worktree
            assert agent.spec.cwd == "/repo"
            assert agent.spec.env == {"PASEO_HUB_CONFIG_JSON": "{}"}
            assert "PASEO_HUB_CONFIG_JSON" not in json.dumps(
                (await agents.get(agent.id)).model_dump(mode="json")
            )
            assert (agent.spec.model, agent.spec.modeId) == ("opus", "default")
            assert agent.spec.labels == {"paseo.hub/execution": answer["executionId"]}
            execution = hub.executions[answer["executionId"]]
            await agents.finish_turn(agent.id)
            await hub.wait_for(lambda: len(execution.events) == 5)
            assert [e["type"] for e in execution.events] == [
                "thread_started", "turn_started", "timeline", "timeline", "turn_completed"
            ]
            await hub.wait_for(lambda: execution.agent and execution.agent["status"] == "idle")
            assert hub.violations == []
            await hub_service.stop()

    run(body())


def test_duplicate_and_replayed_creates_resolve_to_the_same_agent(home: Path) -> None:
    async def body() -> None:
        async with FakeHub() as hub:
            agents = Agents()
            hub_service, daemon_id = await connected(hub, home, agents)
            answer = await hub.create(daemon_id, prompt="p", cwd="/repo")
            execution = hub.executions[answer["executionId"]]
            again = await hub.create(
                daemon_id, prompt="p", cwd="/repo", execution_id=answer["executionId"]
            )
            assert again["agentId"] == answer["agentId"]
            hub.drop_next()  # the replayed create's answer is lost once
            hub.close_socket(daemon_id)
            await hub.wait_for(lambda: execution.create_attempts == 3 and not hub.drops_pending)
            assert len(execution.responses) == 2
            await hub.wait_connected(daemon_id, after=1)
            hub.close_socket(daemon_id)
            await hub.wait_for(lambda: len(execution.responses) == 3)
            assert {r["agentId"] for r in execution.responses} == {answer["agentId"]}
            assert execution.responses[-1]["agent"]["status"] == "running"
            assert len(agents.agents) == 1
            assert len(agents.agents[answer["agentId"]].prompts) == 1  # no second turn
            assert agents.reloads == []
            await hub_service.stop()

    run(body())


def test_a_turn_interrupted_by_a_restart_is_replayed_exactly_once(home: Path) -> None:
    async def body() -> None:
        async with FakeHub() as hub:
            agents = Agents()
            hub_service, daemon_id = await connected(hub, home, agents)
            answer = await hub.create(daemon_id, prompt="long task", cwd="/repo")
            execution = hub.executions[answer["executionId"]]
            agent = agents.agents[answer["agentId"]]
            intents = json.loads((home / INTENTS).read_text())["intents"]
            assert intents[answer["executionId"]]["prompt"] == "long task"
            hub_service = await restarted(hub, home, agents, hub_service)
            await hub.wait_for(lambda: len(execution.responses) == 2)
            replayed = execution.responses[-1]
            assert replayed["agentId"] == agent.id
            assert replayed["agent"]["status"] == "running"  # never "closed"
            assert agents.reloads == [agent.id]
            # The replay repeats the prompt under its own message id (the kernel does not
            # send a repeated one again).
            message_id = f"hub-{execution.execution_id}"
            assert agent.prompts == [
                ("long task", message_id), ("long task", f"{message_id}.replay")
            ]
            hub_service = await restarted(hub, home, agents, hub_service)
            await hub.wait_for(lambda: len(execution.responses) == 3)
            assert execution.responses[-1]["agent"]["status"] == "idle"
            assert len(agent.prompts) == 2  # the replay happened once, even after a 2nd kill
            assert not (home / INTENTS).exists()
            assert execution.state == "running"
            await hub_service.stop()

    run(body())


def test_a_graceful_shutdown_keeps_the_resume_intent(home: Path) -> None:
    async def body() -> None:
        async with FakeHub() as hub:
            agents = Agents()
            hub_service, daemon_id = await connected(hub, home, agents)
            answer = await hub.create(daemon_id, prompt="p", cwd="/repo")
            hub_service.detach()  # paseo_shutdown, before the kernel stops the agents
            await agents.interrupt(answer["agentId"])
            await hub_service.flush()
            assert (home / INTENTS).exists()
            execution = hub.executions[answer["executionId"]]
            hub_service = await restarted(hub, home, agents, hub_service)
            await hub.wait_for(lambda: len(execution.responses) == 2)
            assert execution.responses[-1]["agent"]["status"] == "running"
            assert len(agents.agents[answer["agentId"]].prompts) == 2
            await hub_service.stop()

    run(body())


def test_a_completed_turn_disarms_its_resume_intent(home: Path) -> None:
    async def body() -> None:
        async with FakeHub() as hub:
            agents = Agents()
            hub_service, daemon_id = await connected(hub, home, agents)
            answer = await hub.create(daemon_id, prompt="p", cwd="/repo")
            await agents.finish_turn(answer["agentId"])
            await hub_service.flush()
            assert not (home / INTENTS).exists()
            execution = hub.executions[answer["executionId"]]
            hub_service = await restarted(hub, home, agents, hub_service)
            await hub.wait_for(lambda: len(execution.responses) == 2)
            assert execution.responses[-1]["agent"]["status"] == "idle"
            assert len(agents.agents[answer["agentId"]].prompts) == 1
            await hub_service.stop()

    run(body())


def test_auto_archive_follows_the_initial_turn_only_when_it_completes(home: Path) -> None:
    async def body() -> None:
        async with FakeHub() as hub:
            agents = Agents()
            hub_service, daemon_id = await connected(hub, home, agents)
            # The Hub's own archive-on-finish is off: only the daemon may archive here.
            options = {"autoArchive": True, "auto_archive": False}
            done = await hub.create(daemon_id, prompt="p", cwd="/repo", **options)
            canceled = await hub.create(daemon_id, prompt="q", cwd="/repo", **options)
            plain = await hub.create(daemon_id, prompt="r", cwd="/repo", auto_archive=False)
            stored = json.loads((home / INTENTS).read_text())["intents"]
            assert stored[done["executionId"]]["autoArchive"] is True
            await agents.finish_turn(done["agentId"])
            await agents.interrupt(canceled["agentId"])
            await agents.finish_turn(plain["agentId"])
            await hub_service.flush()
            assert agents.agents[done["agentId"]].archived
            assert not agents.agents[canceled["agentId"]].archived
            assert not agents.agents[plain["agentId"]].archived
            await hub_service.stop()

    run(body())


def test_auto_archive_holds_for_the_turn_replayed_after_a_restart(home: Path) -> None:
    async def body() -> None:
        async with FakeHub() as hub:
            agents = Agents()
            hub_service, daemon_id = await connected(hub, home, agents)
            answer = await hub.create(
                daemon_id, prompt="p", cwd="/repo", autoArchive=True, auto_archive=False
            )
            execution = hub.executions[answer["executionId"]]
            hub_service = await restarted(hub, home, agents, hub_service)
            await hub.wait_for(lambda: len(execution.responses) == 2)
            agent = agents.agents[answer["agentId"]]
            assert len(agent.prompts) == 2
            assert not agent.archived
            await agents.finish_turn(agent.id)
            await hub_service.flush()
            assert agent.archived
            await hub_service.stop()

    run(body())


def _mcp(url: str, token: str | None, call: dict[str, Any]) -> tuple[int, Any]:
    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    request = urllib.request.Request(url, json.dumps(call).encode(), headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            raw = response.read()
            return response.status, json.loads(raw) if raw else None
    except urllib.error.HTTPError as exc:
        return exc.code, None


def test_finishing_through_the_hub_mcp_server_archives_the_agent(home: Path) -> None:
    async def body() -> None:
        async with FakeHub() as hub:
            agents = Agents()
            hub_service, daemon_id = await connected(hub, home, agents)
            answer = await hub.create(daemon_id, prompt="p", cwd="/repo")
            agent = agents.agents[answer["agentId"]]
            assert agent.spec is not None
            server = agent.spec.mcpServers["hub"]
            token = server["headers"]["Authorization"].split(" ", 1)[1]
            assert (await asyncio.to_thread(_mcp, server["url"], "wrong", {}))[0] == 401
            init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}
            status, reply = await asyncio.to_thread(_mcp, server["url"], token, init)
            assert status == 200
            assert reply["result"]["capabilities"] == {"tools": {}}
            listed = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
            _, tools = await asyncio.to_thread(_mcp, server["url"], token, listed)
            assert [t["name"] for t in tools["result"]["tools"]] == ["finish_execution"]
            finish = {
                "jsonrpc": "2.0",
                "id": 3,
                "method": "tools/call",
                "params": {"name": "finish_execution", "arguments": {"summary": "done"}},
            }
            status, _ = await asyncio.to_thread(_mcp, server["url"], token, finish)
            assert status == 200
            execution = hub.executions[answer["executionId"]]
            await hub.wait_for(lambda: execution.pending_control is None and agent.archived)
            assert execution.state == "finished"
            assert execution.finish == {"summary": "done"}
            await hub_service.stop()

    run(body())


def test_control_is_idempotent_and_missing_executions_succeed(home: Path) -> None:
    async def body() -> None:
        async with FakeHub() as hub:
            agents = Agents()
            hub_service, daemon_id = await connected(hub, home, agents)
            answer = await hub.create(daemon_id, prompt="p", cwd="/repo")
            execution_id, agent_id = answer["executionId"], answer["agentId"]
            for action in ("interrupt", "interrupt", "archive", "archive", "interrupt"):
                reply = await hub.control(daemon_id, execution_id, action)
                assert reply == {
                    "requestId": reply["requestId"],
                    "executionId": execution_id,
                    "action": action,
                    "success": True,
                    "error": None,
                }
            assert agents.agents[agent_id].archived
            missing = await hub.control(daemon_id, "no-such-execution", "archive")
            assert missing["success"] is True
            assert not (home / INTENTS).exists()
            assert hub.violations == []
            await hub_service.stop()

    run(body())


def test_validate_is_always_answered(home: Path) -> None:
    async def body() -> None:
        async with FakeHub() as hub:
            hub_service, daemon_id = await connected(hub, home, Agents())
            good = await hub.validate(daemon_id, "claude", model="opus")
            assert (good["valid"], good["issues"], good["error"]) == (True, [], None)
            bad = await hub.validate(daemon_id, "nope")
            assert bad["valid"] is False
            assert bad["issues"] == [{"path": "provider", "message": "unknown provider"}]
            await hub_service.stop()

    run(body())


def test_failed_creates_answer_structured_errors(home: Path) -> None:
    async def body() -> None:
        async with FakeHub() as hub:
            agents = Agents()
            hub_service, daemon_id = await connected(hub, home, agents)
            unknown = await hub.create(daemon_id, prompt="p", cwd="/repo", provider="nope")
            assert unknown["success"] is False
            assert (unknown["agentId"], unknown["agent"]) == (None, None)
            error = {"code": "create_failed", "message": "unknown provider 'nope'"}
            assert unknown["error"] == error
            foreign = await hub.create(
                daemon_id,
                prompt="p",
                cwd="/repo",
                toolPolicy={"preapproved": [{"kind": "mcp", "server": "evil", "tool": "x"}]},
            )
            assert foreign["error"]["code"] == "tool_policy_unsupported"
            assert foreign["error"]["provider"] == "claude"
            assert "evil" in foreign["error"]["message"]
            assert agents.agents == {}
            assert not (home / INTENTS).exists()
            assert hub.violations == []
            await hub_service.stop()

    run(body())


def test_local_agents_never_reach_the_hub(home: Path) -> None:
    async def body() -> None:
        async with FakeHub() as hub:
            agents = Agents()
            hub_service, daemon_id = await connected(hub, home, agents)
            local = await agents.local_agent()
            answer = await hub.create(daemon_id, prompt="p", cwd="/repo")
            await agents.finish_turn(local.id)
            await agents.finish_turn(answer["agentId"])
            execution = hub.executions[answer["executionId"]]
            await hub.wait_for(lambda: any(e["type"] == "turn_completed" for e in execution.events))
            messages = hub.daemons[daemon_id].messages
            assert messages
            for message in messages:
                payload: dict[str, Any] = message["payload"]
                assert payload.get("agentId") in (None, answer["agentId"])
                assert local.id not in json.dumps(message)
            await hub_service.stop()

    run(body())


def test_bad_frames_are_ignored_or_refused_and_never_stop_the_socket(home: Path) -> None:
    async def body() -> None:
        async with FakeHub() as hub:
            hub_service, daemon_id = await connected(hub, home, Agents())
            junk = (
                "not json",
                "[1,2]",
                '{"type":"hello"}',
                '{"type":"session"}',
                '{"type":"session","message":{"type":7}}',
                '{"type":"session","message":[]}',
            )
            for text in junk:
                hub.send_raw(daemon_id, text)
            hub.send_binary(daemon_id, b"\x00\xff")
            hub.send_message(daemon_id, {"type": "some.event.without.request.id"})
            for probe in ("daemon.get_status.request", "send_agent_message_request", "hello"):
                denied = await hub.request(daemon_id, {"type": probe})
                assert denied == {
                    "requestId": denied["requestId"],
                    "requestType": probe,
                    "error": f"Session is not authorized for {probe}",
                    "code": "access_denied",
                    "rpcError": True,
                }
            invalid = await hub.request(
                daemon_id, {"type": "hub.execution.agent.create.request", "executionId": "e"}
            )
            assert invalid["rpcError"] is True
            assert invalid["code"] == "invalid_request"
            control = await hub.request(
                daemon_id,
                {"type": "hub.execution.control.request", "executionId": "e", "action": "rm"},
            )
            assert control["code"] == "invalid_request"
            answer = await hub.create(daemon_id, prompt="still works", cwd="/repo")
            assert answer["success"] is True
            assert hub.daemons[daemon_id].generation == 1
            assert hub_service.status().state == "connected"
            assert hub.violations == []
            await hub_service.stop()

    run(body())


def test_paseo_shutdown_stops_observing_before_the_kernel_stops_the_agents(home: Path) -> None:
    """The kernel calls ``paseo_shutdown`` before it stops agents: the turns the shutdown then
    cancels must keep their resume intents, so the plugin must not see their cancellation."""
    from paseo_hub import plugin

    from .test_local_surface import Context

    async def body() -> None:
        async with FakeHub() as hub:
            agents = Agents()
            write_keypair(home)
            plugin.paseo_startup(context=Context(home, agents))  # type: ignore[arg-type]
            hub_service = plugin.RUNTIME.service
            assert hub_service is not None
            status = await hub_service.connect(hub.url, hub.issue_token())
            assert status.daemonId is not None
            await hub.wait_connected(status.daemonId)
            answer = await hub.create(status.daemonId, prompt="p", cwd="/repo")
            plugin.paseo_shutdown(context=Context(home, agents))  # type: ignore[arg-type]
            assert agents.subscribers == []  # at once, not in a task that runs later
            await agents.interrupt(answer["agentId"])  # the kernel stops its agents
            await hub_service.stop()
            assert json.loads((home / INTENTS).read_text())["intents"][answer["executionId"]]

    run(body())


def test_leftover_temporary_files_are_swept_before_startup_returns(home: Path) -> None:
    """The sweep of what a killed write left runs in ``paseo_startup`` itself: run later, in
    the start task, it raced the first ``hub.connect`` and deleted its temporary file (the
    rename then failed with FileNotFoundError)."""
    from paseo_hub import plugin

    from .test_local_surface import Context

    home.mkdir(parents=True, exist_ok=True)
    leftover = home / ".hub-relationship.json.0123456789ab.tmp"
    leftover.write_text("{}")

    async def body() -> None:
        plugin.paseo_startup(context=Context(home, Agents()))  # type: ignore[arg-type]
        try:
            assert not leftover.exists()  # before the start task ever ran
        finally:
            plugin.paseo_shutdown(context=Context(home, Agents()))  # type: ignore[arg-type]
            await asyncio.sleep(0)

    run(body())


def test_record_changes_delivered_late_do_not_disarm_a_running_turn(home: Path) -> None:
    """Observers are behind the agents: the session's first ``idle``, from before the initial
    turn, may arrive after the create was answered. It must not end that turn's intent."""

    async def body() -> None:
        async with FakeHub() as hub:
            agents = Agents()
            hub_service, daemon_id = await connected(hub, home, agents)
            agents.hold()
            answer = await hub.create(daemon_id, prompt="p", cwd="/repo")
            await agents.release()
            await hub_service.flush()
            assert answer["executionId"] in json.loads((home / INTENTS).read_text())["intents"]
            await agents.finish_turn(answer["agentId"])
            await hub_service.flush()
            assert not (home / INTENTS).exists()
            await hub_service.stop()

    run(body())


def test_after_lost_facts_the_hub_is_resynchronised(home: Path) -> None:
    async def body() -> None:
        async with FakeHub() as hub:
            agents = Agents()
            hub_service, daemon_id = await connected(hub, home, agents)
            answer = await hub.create(daemon_id, prompt="p", cwd="/repo")
            execution = hub.executions[answer["executionId"]]
            agents.hold()
            await agents.finish_turn(answer["agentId"])  # the observer never hears of it
            await agents.release(lost=True)
            await hub_service.flush()
            await hub.wait_for(lambda: execution.agent and execution.agent["status"] == "idle")
            # The resync disarms the intent in a write of its own, spawned as the status
            # went out: wait for it.
            await hub_service.flush()
            assert not (home / INTENTS).exists()  # the turn ended while nobody was told
            await hub_service.stop()

    run(body())
