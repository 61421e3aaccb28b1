"""``chat/*`` and ``loop/*`` over the TypeScript protocol, on a real daemon: every frame the
client receives is checked against the outbound models (``client.py``), and the answers and
refusals are those of the wire reference (``rpc_error`` with ``requestType`` and the
TypeScript code). Loop workers are the ``scripted`` test provider, each loop one iteration."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from e2e.daemon.harness import TURN_TIMEOUT, poll
from e2e.tswire.client import TsClient
from e2e.tswire.conftest import TsDaemon

from paseo.testing.fake_model import RefusingProxy

pytestmark = pytest.mark.e2e

SCRIPTED_PLUGIN = Path(__file__).resolve().parents[2] / "integration" / "agents" / "scripted_agent"
LOOP_TIMEOUT = TURN_TIMEOUT * 2


def test_chat_rooms_over_the_typescript_protocol(ts_daemon: TsDaemon) -> None:
    with (
        TsClient(socket_path=ts_daemon.socket_path) as cli,
        TsClient(socket_path=ts_daemon.socket_path) as agent,
    ):
        cli.hello("cid_chat")
        agent.hello("cid_chat_agent")
        created = cli.request(
            "chat/create", "chat/create/response", name="wire-room", purpose="wire capture"
        )
        assert created["__type"] == "chat/create/response"
        assert created["error"] is None
        room = created["room"]
        assert (room["name"], room["purpose"], room["messageCount"]) == (
            "wire-room",
            "wire capture",
            0,
        )
        assert room["lastMessageAt"] is None

        taken = cli.request("chat/create", "chat/create/response", name="WIRE-ROOM")
        assert taken == {
            "__type": "rpc_error",
            "requestId": taken["requestId"],
            "requestType": "chat/create",
            "error": "Chat room already exists with name: WIRE-ROOM",
            "code": "chat_room_name_taken",
        }

        posted = cli.request(
            "chat/post",
            "chat/post/response",
            room="wire-room",
            body="hello @everyone",
            authorAgentId="manual",
        )
        first = posted["message"]
        assert (first["roomId"], first["authorAgentId"], first["body"]) == (
            room["id"],
            "manual",
            "hello @everyone",
        )
        assert first["mentionAgentIds"] == ["everyone"]
        assert first["replyToMessageId"] is None

        orphan = cli.request(
            "chat/post", "chat/post/response", room="wire-room", body="x", replyToMessageId="nope"
        )
        assert (orphan["__type"], orphan["requestType"], orphan["code"]) == (
            "rpc_error",
            "chat/post",
            "chat_message_not_found",
        )
        assert orphan["error"] == "Reply target not found: nope"

        # A waiter after the first message is answered by the next post (another client's).
        cli.session(
            {
                "type": "chat/wait",
                "requestId": "wait-1",
                "room": "wire-room",
                "afterMessageId": first["id"],
                "timeoutMs": 30_000,
            }
        )
        reply = agent.request(
            "chat/post",
            "chat/post/response",
            room=room["id"],
            body="a reply",
            authorAgentId="agent-1",
            replyToMessageId=first["id"],
        )["message"]
        assert reply["replyToMessageId"] == first["id"]
        woken = cli.wait_for(
            lambda m: m["type"] == "chat/wait/response" and m["payload"]["requestId"] == "wait-1"
        )
        assert woken["payload"]["timedOut"] is False
        assert [m["id"] for m in woken["payload"]["messages"]] == [reply["id"]]

        quiet = cli.request(
            "chat/wait",
            "chat/wait/response",
            room="wire-room",
            afterMessageId=reply["id"],
            timeoutMs=200,
        )
        assert (quiet["messages"], quiet["timedOut"], quiet["error"]) == ([], True, None)

        read = cli.request("chat/read", "chat/read/response", room="wire-room", limit=5)
        assert [m["id"] for m in read["messages"]] == [first["id"], reply["id"]]
        by_agent = cli.request(
            "chat/read", "chat/read/response", room="wire-room", authorAgentId="agent-1"
        )
        assert [m["id"] for m in by_agent["messages"]] == [reply["id"]]

        inspected = cli.request("chat/inspect", "chat/inspect/response", room="WIRE-room")
        assert inspected["room"]["id"] == room["id"]
        assert inspected["room"]["messageCount"] == 2
        assert inspected["room"]["lastMessageAt"] == reply["createdAt"]
        listed = cli.request("chat/list", "chat/list/response")
        assert [r["id"] for r in listed["rooms"]] == [room["id"]]

        deleted = cli.request("chat/delete", "chat/delete/response", room="wire-room")
        assert deleted["room"]["id"] == room["id"]
        gone = cli.request("chat/inspect", "chat/inspect/response", room="wire-room")
        assert (gone["__type"], gone["requestType"], gone["code"], gone["error"]) == (
            "rpc_error",
            "chat/inspect",
            "chat_room_not_found",
            "Chat room not found: wire-room",
        )


def _inspect(client: TsClient, loop_id: str) -> dict[str, Any]:
    answer = client.request("loop/inspect", "loop/inspect/response", id=loop_id)
    assert answer["__type"] == "loop/inspect/response", answer
    loop: dict[str, Any] = answer["loop"]
    return loop


def test_loops_over_the_typescript_protocol(tmp_path: Path, proxy: RefusingProxy) -> None:
    daemon = TsDaemon(tmp_path / "d", proxy)
    daemon.write_config(plugins={"scripted": {"source": "directory", "path": str(SCRIPTED_PLUGIN)}})
    daemon.start()
    work = tmp_path / "work"
    work.mkdir()
    try:
        with TsClient(socket_path=daemon.socket_path) as cli:
            cli.hello("cid_loops")
            refused = cli.request(
                "loop/run", "loop/run/response", prompt="x", cwd=str(work), provider="scripted"
            )
            assert refused == {
                "__type": "rpc_error",
                "requestId": refused["requestId"],
                "requestType": "loop/run",
                "error": "Loop requires --verify or at least one --verify-check",
                "code": "loop_request_failed",
            }

            # A check that passes after the first iteration ends the loop succeeded.
            ran = cli.request(
                "loop/run",
                "loop/run/response",
                prompt="say hi",
                cwd=str(work),
                provider="scripted",
                verifyChecks=["true"],
                name="passing",
                maxIterations=1,
            )
            assert ran["__type"] == "loop/run/response", ran
            passing = ran["loop"]
            assert (passing["status"], passing["verifyChecks"], passing["provider"]) == (
                "running",
                ["true"],
                "scripted",
            )

            def passed() -> dict[str, Any] | None:
                loop = _inspect(cli, passing["id"])
                return loop if loop["status"] != "running" else None

            done = poll(passed, timeout=LOOP_TIMEOUT, what="the passing loop")
            assert done["status"] == "succeeded"
            (only,) = done["iterations"]
            assert (only["status"], only["workerOutcome"]) == ("succeeded", "completed")
            assert [(c["command"], c["exitCode"], c["passed"]) for c in only["verifyChecks"]] == [
                ("true", 0, True)
            ]

            # A check that fails: after iteration 1 the loop sleeps, and is stopped there.
            ran = cli.request(
                "loop/run",
                "loop/run/response",
                prompt="say hi",
                cwd=str(work),
                provider="scripted",
                verifyChecks=["test -f never.txt"],
                name="failing",
                sleepMs=600_000,
                maxIterations=3,
            )
            failing = ran["loop"]

            def asleep() -> dict[str, Any] | None:
                loop = _inspect(cli, failing["id"])
                iterations = loop["iterations"]
                return loop if iterations and iterations[0]["status"] != "running" else None

            slept = poll(asleep, timeout=LOOP_TIMEOUT, what="the failing loop's first iteration")
            assert slept["status"] == "running"
            (first,) = slept["iterations"]
            assert first["status"] == "failed"
            assert first["failureReason"] == "Verify check failed: test -f never.txt"
            assert first["verifyChecks"][0]["passed"] is False
            ended = [e for e in slept["logs"] if e["text"].startswith("Iteration 1 failed")]
            assert [e["level"] for e in ended] == ["error"]

            listed = cli.request("loop/list", "loop/list/response")
            assert {(e["id"], e["status"]) for e in listed["loops"]} == {
                (passing["id"], "succeeded"),
                (failing["id"], "running"),
            }
            logs = cli.request("loop/logs", "loop/logs/response", id="failing", afterSeq=1)
            assert logs["loop"]["id"] == failing["id"]
            assert logs["entries"]
            assert all(e["seq"] > 1 for e in logs["entries"])
            assert logs["nextCursor"] == logs["loop"]["nextLogSeq"]

            stopped = cli.request("loop/stop", "loop/stop/response", id=failing["id"])
            assert stopped["__type"] == "loop/stop/response", stopped
            assert stopped["loop"]["status"] == "stopped"
            assert stopped["loop"]["iterations"][0]["status"] == "failed"
            assert _inspect(cli, failing["id"])["status"] == "stopped"

            missing = cli.request("loop/inspect", "loop/inspect/response", id="nope")
            assert (missing["__type"], missing["requestType"], missing["code"]) == (
                "rpc_error",
                "loop/inspect",
                "loop_request_failed",
            )
    finally:
        daemon.cleanup()
