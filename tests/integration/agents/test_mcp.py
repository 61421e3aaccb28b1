"""The MCP server for agents on a real daemon, driven by the official ``mcp`` SDK client.

The caller is a scripted agent; its token is derived the way the plugin derives it (from the
key it wrote at start-up in its state directory), exactly what its injected
``mcpServers.paseo`` URL carries.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx2
import pytest
from helpers.daemon_rpc import LiveDaemon
from helpers.waiting import wait_for
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from paseo_hookspecs.errors import PaseoError
from paseo_mcp.plugin import state_dir
from paseo_mcp.tokens import CapabilityTokens
from paseo_mcp.tools import TOOLS

from .conftest import scripted_config

VOICE_ONLY = {"speak"}
ALL_TOOLS = {tool.name for tool in TOOLS} - VOICE_ONLY
"""The catalog's own tools an agent is offered outside voice mode."""
CONTRIBUTED = {
    *(f"chat_{verb}" for verb in ("create", "list", "inspect", "post", "read", "wait")),
    *(f"loop_{verb}" for verb in ("run", "list", "inspect", "logs", "stop")),
}
"""The tools the built-in chat and loops plugins contribute (paseo_register_mcp_tools)."""


def _url(live: LiveDaemon, agent_id: str) -> str:
    token = CapabilityTokens.load(state_dir(live.home)).issue(agent_id)
    return f"{live.http}/mcp/agents?token={token}"


async def _session(url: str, action: Callable[[ClientSession], Any]) -> Any:
    async with asyncio.timeout(60):
        async with streamable_http_client(url) as (read, write), ClientSession(read, write) as s:
            await s.initialize()
            return await action(s)


def _data(result: Any) -> dict[str, Any]:
    assert not result.is_error, result.content
    data: dict[str, Any] = json.loads(result.content[0].text)
    return data


def _error(result: Any) -> dict[str, Any]:
    assert result.is_error, result.content
    error: dict[str, Any] = json.loads(result.content[0].text)["error"]
    return error


def test_an_agent_lists_and_calls_its_tools(
    agent_daemon: LiveDaemon, create_agent: Callable[..., dict[str, Any]], workdir: Path
) -> None:
    parent = create_agent(title="parent")
    other = create_agent(title="stranger")

    async def scenario(s: ClientSession) -> dict[str, Any]:
        listed = {tool.name for tool in (await s.list_tools()).tools}
        created = _data(
            await s.call_tool(
                "create_agent",
                {"provider": "scripted", "initialPrompt": "hello child", "title": "child"},
            )
        )
        child = created["agent"]
        waited = _data(await s.call_tool("wait_for_agent", {"agentId": child["id"]}))
        mine = _data(await s.call_tool("list_agents", {}))
        status = _data(await s.call_tool("get_agent_status", {"agentId": child["id"]}))
        sent = _data(
            await s.call_tool("send_agent_prompt", {"agentId": child["id"], "prompt": "again"})
        )
        again = _data(await s.call_tool("wait_for_agent", {"agentId": child["id"]}))
        activity = _data(await s.call_tool("get_agent_activity", {"agentId": child["id"]}))
        updated = _data(
            await s.call_tool(
                "update_agent", {"agentId": child["id"], "labels": {"role": "helper"}}
            )
        )
        foreign = _error(await s.call_tool("get_agent_status", {"agentId": other["id"]}))
        invalid = _error(await s.call_tool("wait_for_agent", {"agentId": "x", "timeout": 99}))
        providers = _data(await s.call_tool("list_providers", {}))
        models = _data(await s.call_tool("list_models", {"provider": "scripted"}))
        pending = _data(await s.call_tool("list_pending_permissions", {}))
        schedules = _data(await s.call_tool("list_schedules", {}))
        killed = _data(await s.call_tool("kill_agent", {"agentId": child["id"]}))
        archived = _data(await s.call_tool("archive_agent", {"agentId": child["id"]}))
        return {
            "listed": listed,
            "child": child,
            "created": created,
            "waited": waited,
            "mine": mine,
            "status": status,
            "sent": sent,
            "again": again,
            "activity": activity,
            "updated": updated,
            "foreign": foreign,
            "invalid": invalid,
            "providers": providers,
            "models": models,
            "pending": pending,
            "schedules": schedules,
            "killed": killed,
            "archived": archived,
        }

    got = asyncio.run(_session(_url(agent_daemon, parent["id"]), scenario))
    assert got["listed"] == ALL_TOOLS | CONTRIBUTED
    child = got["child"]
    assert child["labels"]["paseo.parent-agent-id"] == parent["id"]
    assert child["cwd"] == str(workdir)
    assert got["created"]["wait"]["lastMessage"] == "echo: hello child"
    assert got["waited"]["lastMessage"] == "echo: hello child"
    assert [a["id"] for a in got["mine"]["agents"]] == [child["id"]]
    assert got["status"]["agent"]["id"] == child["id"]
    assert got["sent"]["accepted"] is True
    assert got["again"]["lastMessage"] == "echo: again"
    assert got["activity"]["entries"]
    assert got["updated"]["agent"]["labels"]["role"] == "helper"
    assert got["foreign"]["code"] == "access_denied"
    assert got["invalid"]["code"] == "invalid_params"
    assert "scripted" in {p["id"] for p in got["providers"]["providers"]}
    assert got["models"]["providerId"] == "scripted"
    assert got["pending"]["requests"] == []
    assert got["schedules"]["schedules"] == []
    assert got["killed"]["agent"]["id"] == child["id"]
    assert got["archived"]["agent"]["archivedAt"]


def test_requests_without_a_valid_token_are_refused(
    agent_daemon: LiveDaemon, create_agent: Callable[..., dict[str, Any]]
) -> None:
    agent = create_agent()
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    headers = {"Accept": "application/json, text/event-stream"}
    base = f"{agent_daemon.http}/mcp/agents"
    forged = CapabilityTokens(b"not-the-key").issue(agent["id"])
    with httpx2.Client(timeout=10) as http:
        for url in (base, f"{base}?token={forged}", f"{base}?token={agent['id']}.00"):
            assert http.post(url, json=body, headers=headers).status_code == 401
        unknown = CapabilityTokens.load(state_dir(agent_daemon.home)).issue("agt_missing")
        assert http.post(f"{base}?token={unknown}", json=body, headers=headers).status_code == 401
        # Same screening as /ws: a foreign Host is refused before the token is looked at.
        good = _url(agent_daemon, agent["id"])
        foreign = {**headers, "Host": "evil.example"}
        assert http.post(good, json=body, headers=foreign).status_code == 403
        # The WebSocket routes are untouched.
        assert http.get(f"{agent_daemon.http}/api/health").json()["ok"] is True


@pytest.mark.parametrize("disabled", [["kill_agent", "create_schedule", "chat_post"]])
def test_disabled_tools_leave_the_catalog(
    agent_daemon_factory: Callable[..., LiveDaemon],
    workdir: Path,
    disabled: list[str],
) -> None:
    config = scripted_config(
        {"agents": {"providers": {"scripted": {"paseoTools": {"disabledTools": disabled}}}}}
    )
    live = agent_daemon_factory(config)
    from paseo.client import SyncClient

    with SyncClient(home=live.home, client_type="sdk") as connected:
        agent = connected.call("agent.create", {"provider": "scripted", "cwd": str(workdir)})

    async def scenario(s: ClientSession) -> tuple[set[str], dict[str, Any]]:
        listed = {tool.name for tool in (await s.list_tools()).tools}
        refused = _error(await s.call_tool("kill_agent", {"agentId": agent["agent"]["id"]}))
        return listed, refused

    listed, refused = asyncio.run(_session(_url(live, agent["agent"]["id"]), scenario))
    assert listed == (ALL_TOOLS | CONTRIBUTED) - set(disabled)
    assert refused["code"] == "not_found"


def _wait(client: Any, agent_id: str) -> dict[str, Any]:
    result: dict[str, Any] = client.call(
        "agent.wait", {"agentId": agent_id, "timeout": 60}, timeout=70
    )
    return result


def test_an_agent_creates_and_waits_for_a_child_through_the_injected_server(
    client: Any, create_agent: Callable[..., dict[str, Any]], workdir: Path
) -> None:
    request = {"provider": "scripted", "initialPrompt": "hi from the parent", "title": "kid"}
    parent = create_agent(initialPrompt=f"[[mcp:create_agent {json.dumps(request)}]]")
    reply = _wait(client, parent["id"])["lastMessage"]
    assert reply.startswith("mcp: "), reply
    created = json.loads(reply.removeprefix("mcp: "))
    assert created["wait"]["lastMessage"] == "echo: hi from the parent"
    child = client.call("agent.get", {"agentId": created["agent"]["id"]})["agent"]
    assert child["labels"]["paseo.parent-agent-id"] == parent["id"]
    assert child["cwd"] == str(workdir)
    # The token reached the session only: the stored records carry no MCP server.
    stored = client.call("agent.get", {"agentId": parent["id"]})["agent"]
    assert "paseo" not in ((stored.get("config") or {}).get("mcpServers") or {})
    assert "token" not in json.dumps(stored)


def test_inject_into_agents_false_injects_nothing(
    agent_daemon_factory: Callable[..., LiveDaemon], workdir: Path
) -> None:
    from paseo.client import SyncClient

    live = agent_daemon_factory(scripted_config({"daemon": {"mcp": {"injectIntoAgents": False}}}))
    prompt = '[[mcp:list_agents {"includeArchived": false}]]'
    with SyncClient(home=live.home, client_type="sdk") as connected:
        agent = connected.call(
            "agent.create", {"provider": "scripted", "cwd": str(workdir), "initialPrompt": prompt}
        )["agent"]
        assert _wait(connected, agent["id"])["lastMessage"] == "mcp: none"


def test_notify_on_finish_prompts_the_parent_after_its_own_turn(
    client: Any, create_agent: Callable[..., dict[str, Any]]
) -> None:
    request = {
        "provider": "scripted",
        "initialPrompt": "child work",
        "title": "worker",
        "background": True,
        "notifyOnFinish": True,
    }
    parent = create_agent(initialPrompt=f"[[mcp:create_agent {json.dumps(request)}]]")
    first = _wait(client, parent["id"])["lastMessage"]
    child_id = json.loads(first.removeprefix("mcp: "))["agent"]["id"]

    def system_prompts() -> list[str]:
        entries = client.call("agent.timeline", {"agentId": parent["id"], "limit": 100})
        events = [json.dumps(e["event"]) for e in entries["entries"]]
        # The prompt itself (a user message), not the scripted agent's echo of it.
        return [e for e in events if "<paseo-system>" in e and "echo:" not in e]

    # The notice follows the child's end and the parent's first turn (bounded in time, not in
    # polls: on a loaded machine the child's turn can take a while).
    wait_for(system_prompts, timeout=60, what="the parent's <paseo-system> notice")
    (text,) = system_prompts()
    assert child_id in text
    assert "finished its turn" in text
    # Delivered once: the parent's answering turn ends without a second notice.
    assert "echo: <paseo-system>" in _wait(client, parent["id"])["lastMessage"]
    assert len(system_prompts()) == 1


@pytest.mark.parametrize(
    "env",
    [{"PASEO_MCP": "false"}, {"PASEO_DISABLE_PLUGINS": "mcp"}],
    ids=["PASEO_MCP", "disabled-plugin"],
)
def test_no_mcp_serves_nothing_and_injects_nothing(
    agent_daemon_factory: Callable[..., LiveDaemon], workdir: Path, env: dict[str, str]
) -> None:
    from paseo.client import SyncClient

    live = agent_daemon_factory(env=env)
    with SyncClient(home=live.home, client_type="sdk") as connected:
        agent = connected.call(
            "agent.create",
            {
                "provider": "scripted",
                "cwd": str(workdir),
                "initialPrompt": "[[mcp:list_agents {}]]",
            },
        )["agent"]
        assert _wait(connected, agent["id"])["lastMessage"] == "mcp: none"
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    # Without a mount the request reaches the WebSocket server, which reads only GET.
    token = CapabilityTokens(b"any key").issue(agent["id"])
    with httpx2.Client(timeout=10) as http, pytest.raises(httpx2.RemoteProtocolError):
        http.post(f"{live.http}/mcp/agents?token={token}", json=body)


async def _until_captured(s: ClientSession, ref: dict[str, str], text: str) -> None:
    """Capture until ``text`` shows (bounded by the session's own 60 s timeout)."""
    while True:
        result = await s.call_tool("capture_terminal", ref)
        if any(text in line for line in json.loads(result.content[0].text).get("lines", [])):
            return
        await asyncio.sleep(0.05)


def test_terminals_of_another_workspace_are_out_of_reach(
    agent_daemon: LiveDaemon,
    client: Any,
    create_agent: Callable[..., dict[str, Any]],
    tmp_path: Path,
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    caller = create_agent(title="terminal-caller")
    stranger = client.call("terminal.create", {"cwd": str(elsewhere)})["terminal"]

    async def scenario(s: ClientSession) -> dict[str, Any]:
        ref = {"terminalId": stranger["terminalId"]}
        return {
            "listed": _data(await s.call_tool("list_terminals", {})),
            "capture": _error(await s.call_tool("capture_terminal", ref)),
            "keys": _error(await s.call_tool("send_terminal_keys", {**ref, "keys": ["x"]})),
            "kill": _error(await s.call_tool("kill_terminal", ref)),
        }

    got = asyncio.run(_session(_url(agent_daemon, caller["id"]), scenario))
    assert got["listed"]["terminals"] == []
    assert {got[k]["code"] for k in ("capture", "keys", "kill")} == {"access_denied"}
    still = client.call("terminal.list", {})["terminals"]
    assert [t["terminalId"] for t in still] == [stranger["terminalId"]]


def test_every_tool_answers_with_data_or_a_stable_code(
    agent_daemon: LiveDaemon,
    client: Any,
    create_agent: Callable[..., dict[str, Any]],
    workdir: Path,
) -> None:
    # A parent answers its child's permissions only when the user allows it (by default a
    # person must): allowed here, so the answer reaches the (missing) request.
    settings = {"plugins": {"mcp": {"settings": {"childPermissions": "parent"}}}}
    assert client.config_patch(settings).applied == ["plugins.mcp.settings.childPermissions"]
    parent = create_agent(title="caller")

    async def scenario(s: ClientSession) -> dict[str, tuple[bool, Any]]:
        answers: dict[str, tuple[bool, Any]] = {}

        async def call(tool: str, arguments: dict[str, Any]) -> Any:
            result = await s.call_tool(tool, arguments)
            body = json.loads(result.content[0].text)
            answers[tool] = (result.is_error, body["error"]["code"] if result.is_error else body)
            return body

        child = (await call("create_agent", {"provider": "scripted", "background": True}))["agent"][
            "id"
        ]
        ref = {"agentId": child}
        await call("wait_for_agent", ref)
        await call("send_agent_prompt", {**ref, "prompt": "[[slow:30]] busy"})
        await call("cancel_agent", ref)
        await call("get_agent_status", ref)
        await call("list_agents", {})
        await call("get_agent_activity", {**ref, "limit": 5})
        await call("update_agent", {**ref, "title": "renamed"})
        await call("set_agent_mode", {**ref, "modeId": "plan"})
        await call("list_pending_permissions", {})
        await call("respond_to_permission", {**ref, "requestId": "none", "behavior": "deny"})
        schedule = await call(
            "create_schedule",
            {
                "prompt": "tick",
                "cadence": {"type": "cron", "expression": "0 9 * * 1"},
                "target": {"type": "agent", "agentId": child},
            },
        )
        sref = {"scheduleId": schedule["schedule"]["id"]}
        await call("list_schedules", {})
        await call("inspect_schedule", sref)
        await call("pause_schedule", sref)
        await call("resume_schedule", sref)
        await call("delete_schedule", sref)
        await call("list_worktrees", {})
        await call("create_worktree", {})  # the caller's directory is no git repository
        await call("archive_worktree", {"workspaceId": "wks_missing"})
        terminal = (await call("create_terminal", {}))["terminal"]
        tref = {"terminalId": terminal["terminalId"]}
        await call("send_terminal_keys", {**tref, "keys": ["echo mcp-$((6*7))", "Enter"]})
        await _until_captured(s, tref, "mcp-42")
        await call("capture_terminal", {**tref, "start": -5})
        await call("list_terminals", {})
        await call("kill_terminal", tref)
        await call("list_providers", {})
        await call("list_models", {"provider": "scripted"})
        await call("kill_agent", ref)
        await call("archive_agent", ref)
        return answers

    answers = asyncio.run(_session(_url(agent_daemon, parent["id"]), scenario))
    assert set(answers) == ALL_TOOLS
    refused = {tool: code for tool, (error, code) in answers.items() if error}
    assert refused.keys() <= {"respond_to_permission", "create_worktree", "archive_worktree"}, (
        refused
    )
    assert refused["respond_to_permission"] == "not_found"
    assert refused["archive_worktree"] == "not_found"
    assert answers["set_agent_mode"][1]["agent"]["config"]["modeId"] == "plan"
    # Terminals open in the caller's workspace, and what was typed ran there.
    created = answers["create_terminal"][1]["terminal"]
    assert created["workspaceId"] == parent["workspaceId"]
    assert created["cwd"] == str(workdir)
    assert any("mcp-42" in line for line in answers["capture_terminal"][1]["lines"])
    listed = answers["list_terminals"][1]["terminals"]
    assert [t["terminalId"] for t in listed] == [created["terminalId"]]


def test_caller_scope_widens_reach_as_the_user_allows(
    agent_daemon_factory: Callable[..., LiveDaemon], workdir: Path, tmp_path: Path
) -> None:
    from paseo_hookspecs.errors import PaseoError

    from paseo.client import SyncClient

    live = agent_daemon_factory(scripted_config({"daemon": {"mcp": {"callerScope": "workspace"}}}))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    with SyncClient(home=live.home, client_type="sdk") as connected:

        def create(cwd: Path, title: str) -> dict[str, Any]:
            body = {"provider": "scripted", "cwd": str(cwd), "title": title}
            agent: dict[str, Any] = connected.call("agent.create", body)["agent"]
            return agent

        caller = create(workdir, "caller")
        neighbour = create(workdir, "neighbour")
        stranger = create(elsewhere, "stranger")

        async def scenario(s: ClientSession) -> dict[str, Any]:
            return {
                "listed": _data(await s.call_tool("list_agents", {})),
                "neighbour": await s.call_tool("get_agent_status", {"agentId": neighbour["id"]}),
                "stranger": _error(
                    await s.call_tool("get_agent_status", {"agentId": stranger["id"]})
                ),
            }

        got = asyncio.run(_session(_url(live, caller["id"]), scenario))
        assert {a["id"] for a in got["listed"]["agents"]} == {caller["id"], neighbour["id"]}
        assert _data(got["neighbour"])["agent"]["id"] == neighbour["id"]
        assert got["stranger"]["code"] == "access_denied"
        assert "callerScope" in got["stranger"]["message"]

        # A value start-up would refuse is refused; `all` applies without a restart.
        with pytest.raises(PaseoError) as refused:
            connected.config_patch({"daemon": {"mcp": {"callerScope": "everyone"}}})
        assert refused.value.code == "invalid_config"
        # The setting moved into the plugin's section; the old path is still accepted.
        assert "plugins.mcp.settings.callerScope" in refused.value.message
        applied = connected.config_patch({"daemon": {"mcp": {"callerScope": "all"}}})
        assert applied.applied == ["plugins.mcp.settings.callerScope"]

    async def widened(s: ClientSession) -> dict[str, Any]:
        return {
            "listed": _data(await s.call_tool("list_agents", {})),
            "stranger": _data(await s.call_tool("get_agent_status", {"agentId": stranger["id"]})),
        }

    got = asyncio.run(_session(_url(live, caller["id"]), widened))
    assert {a["id"] for a in got["listed"]["agents"]} >= {
        caller["id"],
        neighbour["id"],
        stranger["id"],
    }
    assert got["stranger"]["agent"]["id"] == stranger["id"]


def test_speak_is_offered_only_while_voice_mode_is_attached(
    agent_daemon: LiveDaemon, client: Any, create_agent: Callable[..., dict[str, Any]]
) -> None:
    agent = create_agent(title="talker")
    url = _url(agent_daemon, agent["id"])
    heard: list[dict[str, Any]] = []
    client.on("voice.output", lambda method, event: heard.append(event))

    async def scenario(s: ClientSession) -> tuple[set[str], Any]:
        listed = {tool.name for tool in (await s.list_tools()).tools}
        return listed, await s.call_tool("speak", {"text": "hello there"})

    listed, refused = asyncio.run(_session(url, scenario))
    assert "speak" not in listed
    assert _error(refused)["code"] == "not_found"

    voice = client.call("voice.start", {"agentId": agent["id"]}, timeout=60)
    # A reconnecting client resumes its session by id; a second session is refused.
    resumed = client.call("voice.start", {"voiceId": voice["voiceId"]})
    assert (resumed["voiceId"], resumed["agentId"]) == (voice["voiceId"], agent["id"])
    with pytest.raises(PaseoError) as second:
        client.call("voice.start", {"agentId": agent["id"]})
    assert second.value.code == "conflict"
    listed, spoken = asyncio.run(_session(url, scenario))
    assert listed == ALL_TOOLS | CONTRIBUTED | VOICE_ONLY
    said = _data(spoken)
    assert said["voiceId"] == voice["voiceId"]
    assert said["chunks"] >= 1
    wait_for(lambda: len(heard) >= said["chunks"], timeout=30, what="the voice.output pieces")
    assert heard[0]["text"] == "hello there"
    assert heard[-1]["final"] is True
    assert all(event["speechId"] == said["speechId"] for event in heard)

    assert client.call("voice.stop", {"voiceId": voice["voiceId"]})["stopped"] is True
    listed, refused = asyncio.run(_session(url, scenario))
    assert "speak" not in listed
    assert _error(refused)["code"] == "not_found"


def test_tokens_stop_working_after_a_restart(
    agent_daemon_factory: Callable[..., LiveDaemon], workdir: Path
) -> None:
    from helpers.daemon_rpc import stop_daemon

    from paseo.client import SyncClient

    live = agent_daemon_factory(scripted_config())
    with SyncClient(home=live.home, client_type="sdk") as connected:
        agent = connected.call("agent.create", {"provider": "scripted", "cwd": str(workdir)})
    agent_id = agent["agent"]["id"]
    token = CapabilityTokens.load(state_dir(live.home)).issue(agent_id)
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    headers = {"Accept": "application/json, text/event-stream"}
    with httpx2.Client(timeout=10) as http:
        before = http.post(f"{live.http}/mcp/agents?token={token}", json=body, headers=headers)
    assert before.status_code != 401
    stop_daemon(live.home)
    again = agent_daemon_factory(scripted_config())
    with httpx2.Client(timeout=10) as http:
        stale = http.post(f"{again.http}/mcp/agents?token={token}", json=body, headers=headers)
        fresh = http.post(_url(again, agent_id), json=body, headers=headers)
    assert stale.status_code == 401
    assert fresh.status_code != 401
