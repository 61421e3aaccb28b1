"""What a Hub create asks of the agent, carried out with the real Claude Code behind the fake
model server: the pre-approved MCP tool runs with no one answering, a tool outside the grant
asks a person, ``autoArchive`` archives the agent once its initial turn completes, and the
create's ``env`` reaches the program (also after the archived agent's session is resumed).
"""

from __future__ import annotations

import asyncio
import json
import stat
from pathlib import Path
from typing import Any

from e2e.daemon.harness import TURN_TIMEOUT, RealDaemon, poll, provider_settings, timeline

from paseo.testing.fake_hub import FakeHub
from paseo.testing.fake_model import FakeModelServer, RefusingProxy

from .test_hub_through_daemon import WITHIN, cli, event_types, status

PROBE = "from-the-hub-create-4711"


def _permission_events(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        e["event"]
        for e in entries
        if e["event"]["type"] in ("permission_requested", "permission_resolved")
    ]


def test_a_hub_create_preapproves_its_tools_archives_and_passes_its_env(
    daemon: RealDaemon, fake: FakeModelServer, proxy: RefusingProxy, tmp_path: Path
) -> None:
    settings = provider_settings("claude", fake, tmp_path / "programs")
    # Claude Code defers MCP tools behind ToolSearch by default; the scripted model calls the
    # tool directly, as a model that was shown it would.
    settings["env"]["ENABLE_TOOL_SEARCH"] = "false"
    daemon.configure({"claude": settings})
    daemon.start()
    work = tmp_path / "work"
    work.mkdir()
    finish = json.dumps({"status": "succeeded", "summary": "all done"})

    async def scenario() -> str:
        async with FakeHub() as hub:
            await cli(daemon, "hub", "connect", hub.url, f"--token={hub.issue_token()}")
            daemon_id = (await status(daemon))["daemonId"]
            await hub.wait_connected(daemon_id, within=WITHIN)
            # Claude Code's `default` mode asks before any MCP tool; the Hub's own archive on
            # finish is off, so an archive can only come from the daemon's autoArchive.
            answer = await hub.create(
                daemon_id,
                prompt=f"CALL_TOOL: finish_execution :: {finish}",
                cwd=str(work),
                modeId="default",
                env={"HUB_PROBE": PROBE},
                autoArchive=True,
                auto_archive=False,
                within=TURN_TIMEOUT,
            )
            assert answer["success"] is True, answer
            execution = hub.executions[answer["executionId"]]
            # The granted tool ran, and nobody answered a permission request.
            await hub.wait_for(lambda: execution.finish is not None, TURN_TIMEOUT)
            assert execution.finish == {"status": "succeeded", "summary": "all done"}
            await hub.wait_for(
                lambda: "turn_completed" in event_types(execution.events), TURN_TIMEOUT
            )
            assert execution.pending_control is None  # the Hub sent no archive
            return str(answer["agentId"])

    agent_id = asyncio.run(asyncio.wait_for(scenario(), 4 * TURN_TIMEOUT))

    with daemon.client() as client:
        # The permission the program asked for the granted tool was allowed by the daemon.
        asked = _permission_events(timeline(client, agent_id))
        requested = [e for e in asked if e["type"] == "permission_requested"]
        assert [e["request"]["toolName"] for e in requested] == ["mcp__hub__finish_execution"]
        resolved = [e for e in asked if e["type"] == "permission_resolved"]
        assert [e["requestId"] for e in resolved] == [requested[0]["request"]["id"]]

        # autoArchive: the initial turn completed, so the agent is archived.
        def archived() -> bool:
            return (
                client.call("agent.get", {"agentId": agent_id})["agent"].get("archivedAt")
                is not None
            )

        poll(archived, timeout=WITHIN, what="the Hub agent to be auto-archived")

        # The env is a secret: not in the record any client is sent, only in a 0600 file.
        record = client.call("agent.get", {"agentId": agent_id})
        assert PROBE not in json.dumps(record)
        stored = daemon.home / "agent-env" / f"{agent_id}.json"
        assert json.loads(stored.read_text()) == {"HUB_PROBE": PROBE}
        assert stat.S_IMODE(stored.stat().st_mode) == 0o600

        # A tool outside the grant asks a person; once allowed it shows the create's env
        # reached the program (its session resumed after the archive).
        command = json.dumps({"command": "echo probe=$HUB_PROBE"})
        client.call("agent.send", {"agentId": agent_id, "text": f"CALL_TOOL: Bash :: {command}"})

        def pending() -> list[dict[str, Any]]:
            found: list[dict[str, Any]] = client.call(
                "agent.permissions.list", {"agentId": agent_id}
            )["requests"]
            return found

        (request,) = poll(pending, timeout=TURN_TIMEOUT, what="Bash to ask for permission")
        assert request["request"]["toolName"] == "Bash"
        client.call(
            "agent.permissions.respond",
            {"agentId": agent_id, "requestId": request["request"]["id"], "behavior": "allow"},
        )
        client.call(
            "agent.wait", {"agentId": agent_id, "timeout": TURN_TIMEOUT}, timeout=TURN_TIMEOUT + 10
        )
        quoted = [
            json.dumps(e["event"])
            for e in timeline(client, agent_id)
            if "tool said:" in json.dumps(e["event"])
        ]
        assert any(f"probe={PROBE}" in text for text in quoted), quoted
