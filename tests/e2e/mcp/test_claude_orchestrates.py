"""The real Claude Code, launched by the daemon, drives Paseo through its injected MCP server.

The fake model scripts the parent's turn (``CALL_TOOL: create_agent :: {...}``): Claude Code
calls the tool over streamable HTTP with its capability token, the daemon starts a child (a
real Claude Code too), waits for its turn, and the tool result (the child's reply) comes back
to the parent's model, which quotes it. With ``notifyOnFinish`` the parent is then prompted
with a ``<paseo-system>`` notice.
"""

from __future__ import annotations

import json
from pathlib import Path

from e2e.daemon.harness import TURN_TIMEOUT, RealDaemon, poll, provider_settings, timeline

from paseo.testing.fake_model import FakeModelServer


def test_claude_creates_waits_for_and_is_notified_of_a_child(
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
    request = {
        "provider": "claude",
        "initialPrompt": "[[reply:the child says hi]]",
        "title": "child",
        "notifyOnFinish": True,
    }
    with daemon.client() as client:
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
        client.call(
            "agent.wait",
            {"agentId": parent["id"], "timeout": TURN_TIMEOUT},
            timeout=TURN_TIMEOUT + 10,
        )

        def events() -> list[str]:
            return [json.dumps(entry["event"]) for entry in timeline(client, parent["id"])]

        # The tool result reached the parent's model, which quotes it: the child's reply.
        quoted = [e for e in events() if "tool said:" in e]
        assert quoted, events()
        assert "the child says hi" in quoted[0]
        children = client.call("agent.list", {"labels": {"paseo.parent-agent-id": parent["id"]}})[
            "agents"
        ]
        assert [child["title"] for child in children] == ["child"]
        child = children[0]
        assert child["cwd"] == str(work)

        def notice() -> str | None:
            # The prompt itself (a user message), not the model's "ok: ..." answer to it.
            found = [e for e in events() if "<paseo-system>" in e and "ok:" not in e]
            return found[0] if found else None

        text = poll(notice, timeout=TURN_TIMEOUT, what="the parent's <paseo-system> notice")
        assert child["id"] in text
        assert "finished its turn" in text
