"""The chat and loop tools (contributed by their plugins through ``paseo_register_mcp_tools``)
on a real daemon, called as an agent calls them: the official ``mcp`` SDK client with the
agent's capability token, and a scripted agent's own ``[[mcp:…]]`` calls from its turn."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from helpers.daemon_rpc import LiveDaemon
from helpers.waiting import wait_for
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from paseo_mcp.plugin import state_dir
from paseo_mcp.tokens import CapabilityTokens


def _url(live: LiveDaemon, agent_id: str) -> str:
    token = CapabilityTokens.load(state_dir(live.home)).issue(agent_id)
    return f"{live.http}/mcp/agents?token={token}"


async def _session(url: str, action: Callable[[ClientSession], Any]) -> Any:
    async with asyncio.timeout(90):
        async with streamable_http_client(url) as (read, write), ClientSession(read, write) as s:
            await s.initialize()
            return await action(s)


async def _call(s: ClientSession, tool: str, arguments: dict[str, Any]) -> tuple[bool, Any]:
    """``(refused, data)``: the tool's answer, or its error's code when it refused."""
    result = await s.call_tool(tool, arguments)
    body = json.loads(result.content[0].text)
    return (True, body["error"]["code"]) if result.is_error else (False, body)


def _ok(answer: tuple[bool, Any]) -> Any:
    refused, data = answer
    assert not refused, data
    return data


def _refused(answer: tuple[bool, Any]) -> str:
    refused, code = answer
    assert refused, code
    assert isinstance(code, str)
    return code


def test_an_agent_chats_only_in_the_rooms_it_is_in(
    agent_daemon: LiveDaemon, client: Any, create_agent: Callable[..., dict[str, Any]]
) -> None:
    agent = create_agent(title="talker")
    stranger = create_agent(title="stranger")
    client.call("chat.create", {"name": "lobby"})
    client.call("chat.create", {"name": "private"})
    # A person invites the agent by mentioning it (which also prompts it).
    invite = client.call(
        "chat.post", {"room": "lobby", "body": f"welcome @{agent['id']}", "authorAgentId": "manual"}
    )["message"]

    async def scenario(s: ClientSession) -> dict[str, Any]:
        got: dict[str, Any] = {}
        got["list"] = _ok(await _call(s, "chat_list", {}))
        got["read"] = _ok(await _call(s, "chat_read", {"room": "lobby"}))
        got["post"] = _ok(
            await _call(
                s,
                "chat_post",
                {"room": "lobby", "body": "hi all", "replyToMessageId": invite["id"]},
            )
        )
        got["private"] = [
            _refused(await _call(s, tool, {"room": "private", **extra}))
            for tool, extra in (
                ("chat_inspect", {}),
                ("chat_read", {}),
                ("chat_wait", {"timeoutMs": 0}),
                ("chat_post", {"body": "let me in"}),
            )
        ]
        got["claimed"] = _refused(
            await _call(
                s, "chat_post", {"room": "lobby", "body": "x", "authorAgentId": stranger["id"]}
            )
        )
        got["stranger"] = _refused(
            await _call(s, "chat_post", {"room": "lobby", "body": f"come @{stranger['id']}"})
        )
        got["unknown"] = _refused(await _call(s, "chat_read", {"room": "nope"}))
        got["long_wait"] = _refused(
            await _call(s, "chat_wait", {"room": "lobby", "timeoutMs": 600_000})
        )
        got["waited"] = _ok(await _call(s, "chat_wait", {"room": "lobby", "timeoutMs": 100}))
        got["created"] = _ok(await _call(s, "chat_create", {"name": "mine"}))
        child = _ok(await _call(s, "create_agent", {"provider": "scripted", "background": True}))
        got["child"] = child["agent"]["id"]
        got["invited"] = _ok(
            await _call(s, "chat_post", {"room": "mine", "body": f"help @{got['child']}"})
        )
        return got

    got = asyncio.run(_session(_url(agent_daemon, agent["id"]), scenario))
    assert [room["name"] for room in got["list"]["rooms"]] == ["lobby"]
    assert [m["id"] for m in got["read"]["messages"]] == [invite["id"]]
    posted = got["post"]["message"]
    assert posted["authorAgentId"] == agent["id"]
    assert posted["replyToMessageId"] == invite["id"]
    assert got["private"] == ["access_denied"] * 4
    assert got["claimed"] == "invalid_params"
    assert got["stranger"] == "access_denied"
    assert got["unknown"] == "chat_room_not_found"
    assert got["long_wait"] == "invalid_params"
    assert got["waited"] == {"messages": [], "timedOut": True}
    assert got["created"]["room"]["createdByAgentId"] == agent["id"]
    assert got["invited"]["message"]["mentionAgentIds"] == [got["child"]]
    # What landed, as a person reads it: the agent's post, not the refused ones.
    lobby = client.call("chat.read", {"room": "lobby"})["messages"]
    assert [(m["authorAgentId"], m["body"]) for m in lobby] == [
        ("manual", f"welcome @{agent['id']}"),
        (agent["id"], "hi all"),
    ]
    assert [m["body"] for m in client.call("chat.read", {"room": "private"})["messages"]] == []


def test_a_loop_an_agent_starts_has_no_more_autonomy_than_the_agent(
    agent_daemon: LiveDaemon,
    client: Any,
    create_agent: Callable[..., dict[str, Any]],
    workdir: Path,
    tmp_path: Path,
) -> None:
    caller = create_agent(title="planner", modeId="plan")
    stranger = create_agent(title="stranger")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    bounded = {
        "prompt": "tidy up",
        "provider": "scripted",
        "verifyPrompt": "is it tidy?",
        "maxIterations": 2,
    }
    theirs = client.call(
        "loop.run",
        {
            "prompt": "p",
            "cwd": str(workdir),
            "verifyPrompt": "v",
            "maxIterations": 1,
            "sleepMs": 600_000,
        },
    )["loop"]

    async def as_caller(s: ClientSession) -> dict[str, Any]:
        got: dict[str, Any] = {}
        got["elsewhere"] = _refused(await _call(s, "loop_run", {**bounded, "cwd": str(elsewhere)}))
        got["checks"] = _refused(await _call(s, "loop_run", {**bounded, "verifyChecks": ["true"]}))
        got["unbounded"] = _refused(
            await _call(s, "loop_run", {"prompt": "x", "verifyPrompt": "v"})
        )
        got["run"] = _ok(await _call(s, "loop_run", {**bounded, "sleepMs": 600_000}))
        got["list"] = _ok(await _call(s, "loop_list", {}))
        got["theirs"] = [
            _refused(await _call(s, tool, {"id": theirs["id"]}))
            for tool in ("loop_inspect", "loop_logs", "loop_stop")
        ]
        got["unknown"] = _refused(await _call(s, "loop_inspect", {"id": "nope"}))
        return got

    got = asyncio.run(_session(_url(agent_daemon, caller["id"]), as_caller))
    assert got["elsewhere"] == "access_denied"
    assert got["checks"] == "access_denied"  # plan mode asks before commands
    assert got["unbounded"] == "invalid_params"
    assert got["theirs"] == ["access_denied"] * 3
    assert got["unknown"] == "not_found"
    loop = got["run"]["loop"]
    assert [item["id"] for item in got["list"]["loops"]] == [loop["id"]]
    assert loop["cwd"] == str(workdir)
    assert loop["startedByAgentId"] == caller["id"]
    assert loop["workerModeId"] == "plan"

    def worker_id() -> str | None:
        found = client.call("loop.inspect", {"id": loop["id"]})["loop"]["iterations"]
        return found[0]["workerAgentId"] if found else None

    worker = client.call(
        "agent.get", {"agentId": wait_for(worker_id, timeout=60, what="the loop's worker")}
    )["agent"]
    # In the caller's mode, and the caller's child (it reaches it with the agent tools).
    assert worker["config"]["modeId"] == "plan"
    assert worker["labels"]["paseo.parent-agent-id"] == caller["id"]
    assert worker["labels"]["paseo.loop-id"] == loop["id"]

    async def as_stranger(s: ClientSession) -> list[str]:
        return [
            _refused(await _call(s, tool, {"id": loop["id"]}))
            for tool in ("loop_inspect", "loop_logs", "loop_stop")
        ]

    assert (
        asyncio.run(_session(_url(agent_daemon, stranger["id"]), as_stranger))
        == ["access_denied"] * 3
    )

    async def stop(s: ClientSession) -> Any:
        return _ok(await _call(s, "loop_stop", {"id": loop["id"]}))

    stopped = asyncio.run(_session(_url(agent_daemon, caller["id"]), stop))
    assert stopped["loop"]["status"] == "stopped"
    client.call("loop.stop", {"id": theirs["id"]})


def test_a_loops_own_worker_may_not_start_loops(
    agent_daemon: LiveDaemon, client: Any, create_agent: Callable[..., dict[str, Any]]
) -> None:
    nested = {"prompt": "again", "verifyPrompt": "v", "maxIterations": 1}
    caller = create_agent(title="looper")

    async def start(s: ClientSession) -> Any:
        return _ok(
            await _call(
                s,
                "loop_run",
                {
                    # The worker (a scripted agent) calls loop_run itself, from its turn.
                    "prompt": f"[[mcp:loop_run {json.dumps(nested)}]]",
                    "provider": "scripted",
                    "verifyPrompt": "v",
                    "maxIterations": 1,
                },
            )
        )

    loop = asyncio.run(_session(_url(agent_daemon, caller["id"]), start))["loop"]

    def worker_id() -> str | None:
        found = client.call("loop.inspect", {"id": loop["id"]})["loop"]["iterations"]
        return found[0]["workerAgentId"] if found else None

    worker = wait_for(worker_id, timeout=60, what="the loop's worker")
    waited = client.call("agent.wait", {"agentId": worker, "timeout": 60}, timeout=70)
    reply = waited["lastMessage"] or ""
    assert reply.startswith("mcp: "), reply
    assert json.loads(reply.removeprefix("mcp: "))["error"]["code"] == "access_denied"
    assert "may not start loops" in reply
    assert [item["id"] for item in client.call("loop.list", {})["loops"]] == [loop["id"]]
    client.call("loop.stop", {"id": loop["id"]})
