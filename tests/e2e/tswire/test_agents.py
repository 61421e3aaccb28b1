"""Agent flows over the TypeScript protocol with the real Claude Code behind the fake model.

One test, few real turns: a CLI-like client creates an agent with a first prompt and waits; an
app-like client holds the agent list subscription and reads ``agent_update`` pushes; the
``agent_stream`` pushes carry dense ``seq`` numbers that match the fetched timeline; a dropped
push is filled with an ``after`` fetch; a write needs permission (request push, snapshot,
answer, resolved push); the setters, fetch by title and prefix, refresh, cancel, a reattach by
clientId, archive and delete; finally ``shutdown_server_request`` stops the daemon.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

import pytest
from e2e.daemon.harness import TURN_TIMEOUT, poll, provider_settings
from e2e.tswire.client import TsClient
from e2e.tswire.conftest import TsDaemon

from paseo.testing.fake_model import FakeModelServer, RefusingProxy

pytestmark = pytest.mark.e2e

TURN = TURN_TIMEOUT


def timeline_items(client: TsClient, agent_id: str) -> list[dict[str, Any]]:
    """``agent_stream`` pushes of timeline items for ``agent_id`` received so far."""
    return [
        m["payload"]
        for m in client.messages("agent_stream")
        if m["payload"]["agentId"] == agent_id and m["payload"]["event"]["type"] == "timeline"
    ]


def test_agent_flows_over_the_typescript_protocol(
    tmp_path: Path, fake: FakeModelServer, proxy: RefusingProxy
) -> None:
    daemon = TsDaemon(tmp_path / "d", proxy)
    daemon.write_config({"claude": provider_settings("claude", fake, tmp_path / "programs")})
    daemon.start()
    work = tmp_path / "work"
    work.mkdir()
    try:
        with (
            TsClient(socket_path=daemon.socket_path) as cli,
            TsClient(socket_path=daemon.socket_path) as app,
        ):
            cli.hello("cid_cli")
            app.hello("cid_app", client_type="mobile")
            listed = app.request(
                "fetch_agents_request",
                "fetch_agents_response",
                scope="active",
                subscribe={},
                page={"limit": 200},
            )
            assert listed["subscriptionId"]
            sidebar = app.request(
                "fetch_workspaces_request", "fetch_workspaces_response", subscribe={}
            )
            assert sidebar["entries"] == []

            # create → status:agent_created, then wait_for_finish.
            created = cli.request(
                "create_agent_request",
                ("status", "agent_created", "agent_create_failed"),
                timeout=TURN,
                config={
                    "provider": "claude",
                    "cwd": str(work),
                    "modeId": "default",
                    "title": "main",
                },
                initialPrompt="[[reply:hello from the typescript side]]",
                labels={"via": "ts"},
            )
            assert created["status"] == "agent_created", created
            agent = created["agent"]
            agent_id = agent["id"]
            assert (agent["provider"], agent["cwd"], agent["title"]) == (
                "claude",
                str(work),
                "main",
            )
            assert agent["labels"] == {"via": "ts"}
            assert any(m["id"] == "default" for m in agent["availableModes"])
            done = cli.request(
                "wait_for_finish_request",
                "wait_for_finish_response",
                timeout=TURN,
                agentId=agent_id,
            )
            assert (done["status"], done["lastMessage"]) == (
                "idle",
                "hello from the typescript side",
            )
            assert done["final"]["status"] == "idle"

            # The app saw the agent arrive.
            upsert = app.wait_for(
                lambda m: m["type"] == "agent_update" and m["payload"]["kind"] == "upsert"
            )
            assert upsert["payload"]["agent"]["id"] == agent_id
            assert upsert["payload"]["project"]["checkout"]["cwd"] == str(work)

            # Stream seqs are dense over timeline items and agree with the fetched timeline.
            poll(
                lambda: (
                    any(
                        p["event"]["item"]["type"] == "assistant_message"
                        for p in timeline_items(cli, agent_id)
                    )
                    or cli_pump(cli)
                ),
                timeout=TURN,
                what="the streamed reply",
            )
            streamed = timeline_items(cli, agent_id)
            seqs = [p["seq"] for p in streamed]
            assert seqs == list(range(seqs[0], seqs[0] + len(seqs)))
            canonical = cli.request(
                "fetch_agent_timeline_request",
                "fetch_agent_timeline_response",
                agentId=agent_id,
                direction="tail",
                limit=0,
                projection="canonical",
            )
            by_seq = {e["seqStart"]: e["item"] for e in canonical["entries"]}
            assert [e["seqStart"] for e in canonical["entries"]] == list(range(1, len(by_seq) + 1))
            for push in streamed:
                assert push["epoch"] == canonical["epoch"]
                assert by_seq[push["seq"]] == push["event"]["item"]
            projected = cli.request(
                "fetch_agent_timeline_request",
                "fetch_agent_timeline_response",
                agentId=agent_id,
                direction="tail",
                limit=0,
                projection="projected",
            )
            kinds = [e["item"]["type"] for e in projected["entries"]]
            assert kinds[0] == "user_message"
            replies = [e for e in projected["entries"] if e["item"]["type"] == "assistant_message"]
            assert replies[-1]["item"]["text"] == "hello from the typescript side"
            end = projected["endCursor"]
            assert end == {"epoch": canonical["epoch"], "seq": canonical["window"]["maxSeq"]}

            # A write that needs permission: request push, snapshot, answer, resolved push.
            sent = cli.request(
                "send_agent_message_request",
                "send_agent_message_response",
                agentId="main",
                text="[[write:allowed.txt:from-ts]]",
            )
            assert sent["accepted"] is True
            asking = cli.request(
                "wait_for_finish_request",
                "wait_for_finish_response",
                timeout=TURN,
                agentId=agent_id,
            )
            assert asking.get("status") == "permission", asking
            pending = asking["final"]["pendingPermissions"]
            assert len(pending) == 1
            assert pending[0]["provider"] == "claude"
            # The app's sidebar shows the workspace waiting for input.
            waiting = app.wait_for(
                lambda m: (
                    m["type"] == "workspace_update"
                    and m["payload"]["kind"] == "upsert"
                    and m["payload"]["workspace"]["status"] == "needs_input"
                ),
                timeout=TURN,
            )
            assert waiting["payload"]["workspace"]["workspaceDirectory"] == str(work)
            pushed = cli.wait_for(lambda m: m["type"] == "agent_permission_request")
            assert pushed["payload"]["request"]["id"] == pending[0]["id"]
            cli.session(
                {
                    "type": "agent_permission_response",
                    "agentId": agent_id,
                    "requestId": pending[0]["id"],
                    "response": {"behavior": "allow"},
                }
            )
            resolved = cli.wait_for(
                lambda m: m["type"] == "agent_permission_resolved", timeout=TURN
            )
            assert resolved["payload"]["resolution"]["behavior"] == "allow"
            after = cli.request(
                "wait_for_finish_request",
                "wait_for_finish_response",
                timeout=TURN,
                agentId=agent_id,
            )
            assert after["status"] == "idle"
            assert (work / "allowed.txt").read_text().strip() == "from-ts"

            # A dropped agent_stream push is filled by an `after` fetch from the last seq held.
            streamed = timeline_items(cli, agent_id)
            held = [p for p in streamed if p["seq"] <= end["seq"]]
            dropped = streamed[len(held)]
            gap = cli.request(
                "fetch_agent_timeline_request",
                "fetch_agent_timeline_response",
                agentId=agent_id,
                direction="after",
                cursor={"epoch": end["epoch"], "seq": end["seq"]},
                limit=0,
                projection="canonical",
            )
            assert (gap["reset"], gap["gap"], gap["hasOlder"]) == (False, False, True)
            assert gap["entries"][0]["seqStart"] == dropped["seq"] == end["seq"] + 1
            assert gap["entries"][0]["item"] == dropped["event"]["item"]
            assert gap["entries"][-1]["seqEnd"] == gap["window"]["maxSeq"]

            # Setters, fetch by title and prefix.
            for type_, fields in (
                ("set_agent_mode_request", {"modeId": "acceptEdits"}),
                ("update_agent_request", {"name": "renamed", "labels": {"via": "ts", "k": "v"}}),
            ):
                reply = cli.request(
                    type_, type_.replace("_request", "_response"), agentId=agent_id, **fields
                )
                assert (reply["accepted"], reply["error"]) == (True, None), reply
            fetched = cli.request("fetch_agent_request", "fetch_agent_response", agentId="renamed")
            assert fetched["agent"]["id"] == agent_id
            assert fetched["agent"]["currentModeId"] == "acceptEdits"
            assert fetched["agent"]["labels"] == {"via": "ts", "k": "v"}
            by_prefix = cli.request(
                "fetch_agent_request", "fetch_agent_response", agentId=agent_id[:8]
            )
            assert by_prefix["agent"]["id"] == agent_id
            assert by_prefix["project"]["projectName"]

            # Refresh (restart and resume the session) and cancel.
            refreshed = cli.request(
                "refresh_agent_request",
                ("status", "agent_refreshed"),
                timeout=TURN,
                agentId=agent_id,
            )
            assert refreshed["agentId"] == agent_id
            canceled = cli.request(
                "cancel_agent_request", "cancel_agent_response", agentId=agent_id
            )
            assert canceled["agent"]["id"] == agent_id

        # Reattach: the app comes back with its clientId within 90 s and keeps its subscription.
        with (
            TsClient(socket_path=daemon.socket_path) as app,
            TsClient(socket_path=daemon.socket_path) as cli,
        ):
            app.hello("cid_app", client_type="mobile")
            cli.hello("cid_cli")
            archived = cli.request("archive_agent_request", "agent_archived", agentId=agent_id)
            assert archived["archivedAt"]
            update = app.wait_for(
                lambda m: (
                    m["type"] == "agent_update"
                    and m["payload"].get("agent", {}).get("archivedAt") is not None
                )
            )
            assert update["payload"]["agent"]["id"] == agent_id
            active = cli.request("fetch_agents_request", "fetch_agents_response", scope="active")
            assert active["entries"] == []
            everything = cli.request(
                "fetch_agents_request", "fetch_agents_response", filter={"includeArchived": True}
            )
            assert [e["agent"]["id"] for e in everything["entries"]] == [agent_id]
            deleted = cli.request("delete_agent_request", "agent_deleted", agentId=agent_id)
            assert deleted["agentId"] == agent_id
            removed = app.wait_for(
                lambda m: m["type"] == "agent_update" and m["payload"]["kind"] == "remove"
            )
            assert removed["payload"]["agentId"] == agent_id

            # Shutdown: answered, then the daemon stops.
            stopping = cli.request("shutdown_server_request", ("status", "shutdown_requested"))
            assert stopping["clientId"] == "cid_cli"
        poll(
            lambda: not (daemon.home / "paseo.pid").exists(), timeout=60, what="the daemon to stop"
        )
        daemon.pid = None
    finally:
        daemon.cleanup()


def cli_pump(client: TsClient) -> bool:
    """Read one more frame (pushes arrive while the test waits); never itself a success."""
    with contextlib.suppress(TimeoutError):
        client.receive(timeout=1)
    return False
