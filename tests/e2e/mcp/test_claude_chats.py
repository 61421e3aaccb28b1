"""The real Claude Code, mentioned in a chat room, answers through its injected MCP server's
``chat_post`` (a tool the chat plugin contributes): the post lands in the room, authored by
the agent the token identifies.

A person posts ``@<agent id>`` and, on the next line, the scripted model's instruction
(``CALL_TOOL: chat_post :: {...}``); the mention prompts the idle agent with the message, its
model calls the tool, and the daemon's chat service records the post.
"""

from __future__ import annotations

import json
from pathlib import Path

from e2e.daemon.harness import TURN_TIMEOUT, RealDaemon, poll, provider_settings, timeline

from paseo.testing.fake_model import FakeModelServer


def test_claude_posts_in_a_room_with_chat_post(
    daemon: RealDaemon, fake: FakeModelServer, tmp_path: Path
) -> None:
    settings = provider_settings("claude", fake, tmp_path / "programs")
    # MCP tools ask for permission in Claude Code's default mode; as root bypass needs this.
    settings["env"]["IS_SANDBOX"] = "1"
    # Claude Code defers MCP tools behind ToolSearch by default; the scripted model calls the
    # tool directly, as a model that was shown it would.
    settings["env"]["ENABLE_TOOL_SEARCH"] = "false"
    daemon.configure({"claude": settings})
    daemon.start()
    work = tmp_path / "work"
    work.mkdir()
    with daemon.client() as client:
        agent = client.call(
            "agent.create",
            {
                "provider": "claude",
                "cwd": str(work),
                "modeId": "bypassPermissions",
                "title": "poster",
            },
        )["agent"]
        client.call("chat.create", {"name": "standup"})
        post = {"room": "standup", "body": "hello from claude"}
        client.call(
            "chat.post",
            {
                "room": "standup",
                "body": f"@{agent['id']} say hello\nCALL_TOOL: chat_post :: {json.dumps(post)}",
            },
        )

        def posted() -> list[dict[str, str]]:
            messages = client.call("chat.read", {"room": "standup"})["messages"]
            return [m for m in messages if m["authorAgentId"] == agent["id"]]

        (message,) = poll(posted, timeout=TURN_TIMEOUT, what="the agent's chat_post")
        assert message["body"] == "hello from claude"
        # The tool's answer reached the model, which quotes it.
        client.call(
            "agent.wait",
            {"agentId": agent["id"], "timeout": TURN_TIMEOUT},
            timeout=TURN_TIMEOUT + 10,
        )
        quoted = [
            json.dumps(entry["event"])
            for entry in timeline(client, agent["id"])
            if "tool said:" in json.dumps(entry["event"])
        ]
        assert quoted
        assert message["id"] in quoted[0], quoted
