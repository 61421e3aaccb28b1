"""``list_commands_request`` and ``resume_agent_request`` over the TypeScript protocol, with the
real Claude Code behind the fake model server.

An agent runs one turn; its slash commands are what Claude Code's ``initialize`` answer
listed; a draft (no agent yet) lists none. Its persistence handle then resumes it: archived,
the agent holding the conversation is restored and started again; once deleted, the same
handle imports the conversation as a new agent whose timeline holds the first turn.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from e2e.daemon.harness import TURN_TIMEOUT, provider_settings
from e2e.tswire.client import TsClient
from e2e.tswire.conftest import TsDaemon

from paseo.testing.fake_model import FakeModelServer, RefusingProxy

pytestmark = pytest.mark.e2e

TURN = TURN_TIMEOUT


def test_commands_and_resume_over_the_typescript_protocol(
    tmp_path: Path, fake: FakeModelServer, proxy: RefusingProxy
) -> None:
    daemon = TsDaemon(tmp_path / "d", proxy)
    daemon.write_config({"claude": provider_settings("claude", fake, tmp_path / "programs")})
    daemon.start()
    work = tmp_path / "work"
    work.mkdir()
    try:
        with TsClient(socket_path=daemon.socket_path) as cli:
            cli.hello("cid_requests")
            created = cli.request(
                "create_agent_request",
                ("status", "agent_created", "agent_create_failed"),
                timeout=TURN,
                config={"provider": "claude", "cwd": str(work), "modeId": "default"},
                initialPrompt="[[reply:first turn]]",
            )
            assert created["status"] == "agent_created", created
            agent_id = created["agent"]["id"]
            done = cli.request(
                "wait_for_finish_request",
                "wait_for_finish_response",
                timeout=TURN,
                agentId=agent_id,
            )
            assert done["lastMessage"] == "first turn"

            # Slash commands: what the running Claude Code reported, described.
            listed = cli.request(
                "list_commands_request", "list_commands_response", agentId=agent_id
            )
            assert listed["error"] is None, listed
            names = [c["name"] for c in listed["commands"]]
            assert names, listed
            assert "compact" in names
            assert all(not n.startswith("/") for n in names)
            assert any(c["description"] for c in listed["commands"])
            # A draft has no program to ask: none, and no error.
            draft = cli.request(
                "list_commands_request",
                "list_commands_response",
                agentId="__new_agent__",
                draftConfig={"provider": "claude", "cwd": str(work)},
            )
            assert (draft["commands"], draft["error"]) == ([], None)
            unknown = cli.request(
                "list_commands_request", "list_commands_response", agentId="nobody"
            )
            assert unknown["commands"] == []
            assert "nobody" in unknown["error"]
            # Claude Code offers no provider features.
            features = cli.request(
                "list_provider_features_request",
                "list_provider_features_response",
                draftConfig={"provider": "claude", "cwd": str(work)},
            )
            assert (features["features"], features.get("error")) == ([], None)

            fetched = cli.request("fetch_agent_request", "fetch_agent_response", agentId=agent_id)
            handle = fetched["agent"]["persistence"]
            assert handle["provider"] == "claude"
            assert handle["sessionId"]

            # The agent holding the conversation, archived: restored and started again.
            cli.request("archive_agent_request", "agent_archived", agentId=agent_id)
            resumed = cli.request(
                "resume_agent_request", ("status", "agent_resumed"), timeout=TURN, handle=handle
            )
            assert resumed["agentId"] == agent_id
            assert resumed["agent"].get("archivedAt") is None
            assert resumed["agent"]["persistence"]["sessionId"] == handle["sessionId"]

            # Deleted: the same handle imports the conversation as a new agent, with history.
            cli.request("delete_agent_request", "agent_deleted", agentId=agent_id)
            imported = cli.request(
                "resume_agent_request",
                ("status", "agent_resumed"),
                timeout=TURN,
                handle=handle,
                overrides={"cwd": str(work)},
            )
            new_id = imported["agentId"]
            assert new_id != agent_id
            assert imported["agent"]["persistence"]["sessionId"] == handle["sessionId"]
            timeline = cli.request(
                "fetch_agent_timeline_request",
                "fetch_agent_timeline_response",
                agentId=new_id,
                direction="tail",
                limit=0,
                projection="canonical",
            )
            texts = [e["item"].get("text") for e in timeline["entries"]]
            assert "first turn" in texts, texts

            # No handle, or no directory to resume in: an rpc_error, never silence.
            refused = cli.request("resume_agent_request", ("status", "agent_resumed"), handle=None)
            assert (refused["__type"], refused["code"]) == ("rpc_error", "handler_error")
            nowhere = cli.request(
                "resume_agent_request",
                ("status", "agent_resumed"),
                handle={"provider": "claude", "sessionId": "s"},
            )
            assert "cwd" in nowhere["error"]
    finally:
        daemon.cleanup()
