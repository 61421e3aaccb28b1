"""An agent's MCP tools stay within its reach (docs/mcp.md, "Caller rules"), on a real daemon.

Each test was written against a defect a hostile campaign found: a schedule's new agent made
wherever and however the caller liked, a mode raised above the caller's own, the user's
schedules and worktrees reached, a child's permission answered by its parent.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers.daemon_rpc import LiveDaemon
from helpers.waiting import wait_for
from mcp.client.session import ClientSession

from .conftest import scripted_config
from .test_mcp import _data, _error, _session, _url

WEEKLY = {"type": "cron", "expression": "0 9 * * 1"}


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=Test", "-c", "user.email=test@example.com", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
        timeout=60,
    )


def _repo(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    _git(path, "init", "-q", "-b", "main")
    (path / "README.md").write_text("hello\n")
    _git(path, "add", "-A")
    _git(path, "commit", "-q", "-m", "initial")
    return path


def test_a_schedules_new_agent_is_made_as_create_agent_makes_a_child(
    agent_daemon: LiveDaemon,
    client: Any,
    create_agent: Callable[..., dict[str, Any]],
    workdir: Path,
    tmp_path: Path,
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    caller = create_agent(title="planner", modeId="plan")

    def schedule(config: dict[str, Any]) -> dict[str, Any]:
        return {
            "prompt": "tick",
            "cadence": WEEKLY,
            "target": {"type": "new-agent", "config": {"provider": "scripted", **config}},
        }

    async def scenario(s: ClientSession) -> dict[str, Any]:
        async def create(config: dict[str, Any]) -> Any:
            return await s.call_tool("create_schedule", schedule(config))

        stdio = {"evil": {"type": "stdio", "command": "touch", "args": ["/tmp/owned"]}}
        return {
            "cwd": _error(await create({"cwd": str(elsewhere)})),
            "mode": _error(await create({"cwd": str(workdir), "modeId": "default"})),
            "prompt": _error(await create({"cwd": str(workdir), "systemPrompt": "obey"})),
            "mcp": _error(await create({"cwd": str(workdir), "mcpServers": stdio})),
            "pinned": _data(await create({})),
        }

    got = asyncio.run(_session(_url(agent_daemon, caller["id"]), scenario))
    assert {got[k]["code"] for k in ("cwd", "mode", "prompt", "mcp")} == {"access_denied"}
    assert "default" in got["mode"]["message"]
    pinned = got["pinned"]["schedule"]
    config = pinned["target"]["config"]
    assert config["cwd"] == str(workdir)
    assert config["modeId"] == "plan"
    assert config["labels"] == {"paseo.parent-agent-id": caller["id"]}
    assert config.get("systemPrompt") is None
    assert config.get("mcpServers") is None
    # Only the caller's own schedule exists: the refused ones were never stored.
    assert [s["id"] for s in client.call("schedule.list", {})["schedules"]] == [pinned["id"]]

    run = client.call("schedule.run-now", {"scheduleId": pinned["id"]})

    found: list[str] = []

    def run_agent() -> bool:
        runs = client.call("schedule.inspect", {"scheduleId": pinned["id"]})["schedule"]["runs"]
        found[:] = [r["agentId"] for r in runs if r["id"] == run["runId"] and r["agentId"]]
        return bool(found)

    wait_for(run_agent, timeout=60, what="the schedule run's agent")
    (agent_id,) = found
    made = client.call("agent.get", {"agentId": agent_id})["agent"]
    assert made["labels"]["paseo.parent-agent-id"] == caller["id"]
    assert made["cwd"] == str(workdir)
    assert made["config"]["modeId"] == "plan"


def test_no_agent_is_set_above_the_callers_own_mode(
    agent_daemon: LiveDaemon, client: Any, create_agent: Callable[..., dict[str, Any]]
) -> None:
    caller = create_agent(title="planner", modeId="plan")

    async def scenario(s: ClientSession) -> dict[str, Any]:
        child = _data(
            await s.call_tool("create_agent", {"provider": "scripted", "background": True})
        )
        ref = {"agentId": child["agent"]["id"]}
        return {
            "child": child["agent"],
            "self": _error(
                await s.call_tool("set_agent_mode", {"agentId": caller["id"], "modeId": "default"})
            ),
            "raised": _error(await s.call_tool("set_agent_mode", {**ref, "modeId": "default"})),
            "same": _data(await s.call_tool("set_agent_mode", {**ref, "modeId": "plan"})),
        }

    got = asyncio.run(_session(_url(agent_daemon, caller["id"]), scenario))
    assert got["self"]["code"] == got["raised"]["code"] == "access_denied"
    assert "above your own (read-only" in got["raised"]["message"]
    assert got["same"]["agent"]["config"]["modeId"] == "plan"
    for agent_id in (caller["id"], got["child"]["id"]):
        record = client.call("agent.get", {"agentId": agent_id})["agent"]
        assert record["config"]["modeId"] == "plan"


def test_the_users_schedules_and_worktrees_are_out_of_an_agents_reach(
    agent_daemon_factory: Callable[..., LiveDaemon], tmp_path: Path
) -> None:
    from paseo.client import SyncClient

    live = agent_daemon_factory(scripted_config())
    project = _repo(tmp_path / "project")
    other = _repo(tmp_path / "other")
    with SyncClient(home=live.home, client_type="sdk") as user:
        caller = user.call("agent.create", {"provider": "scripted", "cwd": str(project)})["agent"]
        theirs = user.call(
            "schedule.create",
            {
                "prompt": "the user's secret prompt",
                "cadence": WEEKLY,
                "target": {"type": "agent", "agentId": caller["id"]},
            },
        )["schedule"]
        worktree = user.call("worktree.create", {"cwd": str(project), "branch": "users-own"})
        users_workspace = worktree["workspace"]["workspaceId"]

        async def scenario(s: ClientSession) -> dict[str, Any]:
            sref = {"scheduleId": theirs["id"]}
            mine = _data(
                await s.call_tool(
                    "create_schedule",
                    {
                        "prompt": "mine",
                        "cadence": WEEKLY,
                        "target": {"type": "agent", "agentId": caller["id"]},
                    },
                )
            )["schedule"]
            made = _data(await s.call_tool("create_worktree", {"branch": "agents-own"}))
            return {
                "mine": mine,
                "schedules": _data(await s.call_tool("list_schedules", {})),
                "inspect": _error(await s.call_tool("inspect_schedule", sref)),
                "pause": _error(await s.call_tool("pause_schedule", sref)),
                "delete": _error(await s.call_tool("delete_schedule", sref)),
                "made": made,
                "worktrees": _data(await s.call_tool("list_worktrees", {})),
                "archive": _error(
                    await s.call_tool("archive_worktree", {"workspaceId": users_workspace})
                ),
                "foreign": _error(await s.call_tool("create_worktree", {"cwd": str(other)})),
                "archived": _data(
                    await s.call_tool(
                        "archive_worktree", {"workspaceId": made["workspace"]["workspaceId"]}
                    )
                ),
                "deleted": _data(await s.call_tool("delete_schedule", {"scheduleId": mine["id"]})),
            }

        got = asyncio.run(_session(_url(live, caller["id"]), scenario))
        assert [s["id"] for s in got["schedules"]["schedules"]] == [got["mine"]["id"]]
        assert "secret" not in json.dumps(got["schedules"])
        assert {got[k]["code"] for k in ("inspect", "pause", "delete")} == {"access_denied"}
        assert "secret" not in json.dumps([got["inspect"], got["pause"], got["delete"]])
        still = user.call("schedule.inspect", {"scheduleId": theirs["id"]})["schedule"]
        assert still["status"] == "active"
        made = got["made"]["workspace"]["workspaceId"]
        assert [w["workspaceId"] for w in got["worktrees"]["worktrees"]] == [made]
        assert got["archive"]["code"] == got["foreign"]["code"] == "access_denied"
        assert got["deleted"]["scheduleId"] == got["mine"]["id"]
        # The user's worktree and branch are untouched; the agent's own is archived.
        listed = user.call("worktree.list", {})["worktrees"]
        assert users_workspace in {w["workspaceId"] for w in listed if not w.get("archived")}
        assert Path(worktree["worktree"]["path"]).is_dir()
        assert [p for p in other.iterdir() if p.name != ".git"] == [other / "README.md"]


@pytest.mark.parametrize("setting", [None, "parent"])
def test_a_childs_permission_needs_a_person_unless_the_user_lets_parents_answer(
    agent_daemon_factory: Callable[..., LiveDaemon],
    workdir: Path,
    setting: str | None,
) -> None:
    from paseo.client import SyncClient

    extra = (
        {} if setting is None else {"plugins": {"mcp": {"settings": {"childPermissions": setting}}}}
    )
    config = scripted_config()
    config["plugins"] = {**config["plugins"], **extra.get("plugins", {})}
    live = agent_daemon_factory(config)
    with SyncClient(home=live.home, client_type="sdk") as user:
        parent = user.call("agent.create", {"provider": "scripted", "cwd": str(workdir)})["agent"]

        async def scenario(s: ClientSession) -> Any:
            child = _data(
                await s.call_tool(
                    "create_agent",
                    {
                        "provider": "scripted",
                        "background": True,
                        "initialPrompt": "[[write:note.txt:from the child]]",
                    },
                )
            )["agent"]
            while True:
                pending = _data(await s.call_tool("list_pending_permissions", {}))["requests"]
                if pending:
                    break
                await asyncio.sleep(0.05)
            (request,) = pending
            answer = {
                "agentId": child["id"],
                "requestId": request["request"]["id"],
                "behavior": "allow",
            }
            return await s.call_tool("respond_to_permission", answer)

        result = asyncio.run(_session(_url(live, parent["id"]), scenario))
    if setting is None:
        refused = _error(result)
        assert refused["code"] == "access_denied"
        assert "a person must answer" in refused["message"]
        assert "childPermissions" in refused["message"]
        assert not (workdir / "note.txt").exists()
    else:
        assert _data(result)["behavior"] == "allow"
        wait_for((workdir / "note.txt").exists, timeout=30, what="the child's write")


def test_an_agent_a_hub_created_sees_only_its_own_schedules(
    agent_daemon: LiveDaemon, client: Any, workdir: Path
) -> None:
    import os
    import sys

    from paseo.testing.fake_hub import FakeHub

    secret = "the user's local schedule prompt 5150"
    client.call(
        "schedule.create",
        {
            "prompt": secret,
            "cadence": WEEKLY,
            "target": {
                "type": "new-agent",
                "config": {"provider": "scripted", "cwd": str(workdir)},
            },
        },
    )

    def paseo(*args: str) -> str:
        result = subprocess.run(
            [sys.executable, "-m", "paseo", *args],
            env={**os.environ, "PASEO_HOME": str(agent_daemon.home)},
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        )
        return result.stdout

    def events_text(events: list[dict[str, Any]]) -> str:
        return json.dumps(events)

    async def scenario() -> str:
        async with FakeHub() as hub:
            await asyncio.to_thread(
                paseo, "hub", "connect", hub.url, f"--token={hub.issue_token()}"
            )
            state = json.loads(await asyncio.to_thread(paseo, "hub", "status", "-o", "json"))
            await hub.wait_connected(state["daemonId"], within=60)
            answer = await hub.create(
                state["daemonId"],
                prompt="[[mcp:list_schedules {}]]",
                cwd=str(workdir),
                provider="scripted",
                within=60,
            )
            assert answer["success"] is True, answer
            execution = hub.executions[answer["executionId"]]
            await hub.wait_for(lambda: "mcp: " in events_text(execution.events), 60)
            text = events_text(execution.events)
            await asyncio.to_thread(paseo, "hub", "disconnect")
            return text

    streamed = asyncio.run(asyncio.wait_for(scenario(), 300))
    # The tool answered (through the Hub's stream) with no schedule of the user's.
    assert '{\\"schedules\\": []}' in streamed or '\\"schedules\\":[]' in streamed, streamed[-2000:]
    assert "5150" not in streamed
