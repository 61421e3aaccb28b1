"""A real Claude Code parent drives a real Codex child through the injected MCP server: the
child is created on another provider in the mode that matches the parent's (Claude's
``bypassPermissions`` is Codex's ``full-access``), runs its turn against the fake model, and the
parent's ``wait_for_agent`` returns the child's reply to the parent's model.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from e2e.daemon.harness import TURN_TIMEOUT, RealDaemon, poll, provider_settings, timeline

from paseo.testing.fake_model import FakeModelServer

REPLY = "codex child reporting"


def test_a_claude_parent_waits_for_a_codex_child_in_the_mapped_mode(
    daemon: RealDaemon, fake: FakeModelServer, tmp_path: Path
) -> None:
    claude = provider_settings("claude", fake, tmp_path / "programs")
    # As root Claude Code runs in bypassPermissions only with this; MCP tools are offered
    # directly (not behind ToolSearch), as the scripted model expects.
    claude["env"]["IS_SANDBOX"] = "1"
    claude["env"]["ENABLE_TOOL_SEARCH"] = "false"
    codex = provider_settings("codex", fake, tmp_path / "programs")
    daemon.configure({"claude": claude, "codex": codex})
    daemon.start()
    work = tmp_path / "work"
    work.mkdir()
    request = {
        "provider": "codex",
        "initialPrompt": f"[[reply:{REPLY}]]",
        "title": "codex-child",
        "background": True,
    }
    with daemon.client() as client:

        def wait(agent_id: str) -> None:
            client.call(
                "agent.wait",
                {"agentId": agent_id, "timeout": TURN_TIMEOUT},
                timeout=TURN_TIMEOUT + 10,
            )

        parent = client.call(
            "agent.create",
            {
                "provider": "claude",
                "cwd": str(work),
                "modeId": "bypassPermissions",
                "title": "parent",
                "initialPrompt": f"CALL_TOOL: create_agent :: {json.dumps(request)}",
            },
        )["agent"]
        wait(parent["id"])

        def children() -> list[dict[str, Any]]:
            found: list[dict[str, Any]] = client.call(
                "agent.list", {"labels": {"paseo.parent-agent-id": parent["id"]}}
            )["agents"]
            return found

        (child,) = poll(children, timeout=TURN_TIMEOUT, what="the Codex child")
        assert child["provider"] == "codex"
        assert child["config"]["modeId"] == "full-access"
        assert child["cwd"] == str(work)

        # The parent's next turn waits for the child through the tool; its reply comes back.
        call = json.dumps({"agentId": child["id"]})
        client.call(
            "agent.send", {"agentId": parent["id"], "text": f"CALL_TOOL: wait_for_agent :: {call}"}
        )
        wait(parent["id"])
        quoted = [
            entry["event"]["item"]["text"]
            for entry in timeline(client, parent["id"])
            if entry["event"].get("item", {}).get("type") == "assistant_message"
            and entry["event"]["item"]["text"].startswith("tool said:")
        ]
        # The parent's model saw wait_for_agent's answer: the child's reply.
        assert any(f'"lastMessage":"{REPLY}"' in text for text in quoted), quoted
        # That reply is the Codex child's own, from its turn against the model.
        replies = [
            entry["event"]["item"]["text"]
            for entry in timeline(client, child["id"])
            if entry["event"].get("item", {}).get("type") == "assistant_message"
        ]
        assert replies == [REPLY], replies
