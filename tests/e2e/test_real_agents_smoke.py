"""The real agent programs, driven directly through their daemon-grade protocols, against the fake.

These prove that the fake model server and the hermetic environments work with the pinned
programs, and they pin down the protocol facts written in ``docs/testing.md`` (message shapes,
permission round trips, interrupts, resume). One test per program; each runs a text turn, a
shell turn whose permission request the test grants (so the command really runs), an
interrupted slow turn, and a resume in a fresh process. Outbound traffic goes to a refusing
proxy, which must see nothing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from helpers.agents_env import (
    AgentProcess,
    agent_binary,
    claude_agent_acp_env,
    claude_code_env,
    codex_env,
)
from helpers.waiting import wait_for

from paseo.testing.fake_model import FakeModelServer, RefusingProxy

pytestmark = pytest.mark.e2e

# Start-up includes loading a ~400 MB native binary: generous on a loaded 2-core machine.
START_TIMEOUT = 90.0
TURN_TIMEOUT = 60.0
SHELL = "echo from-the-shell > ran.txt; cat ran.txt"


# --- Claude Code: -p with stream-json on stdio ---------------------------------------------

CLAUDE_ARGS = (
    "-p",
    "--input-format",
    "stream-json",
    "--output-format",
    "stream-json",
    "--verbose",
    "--permission-prompt-tool",
    "stdio",
    # Raw stream events (token-level deltas), as a daemon wants them.
    "--include-partial-messages",
)


def claude_user(text: str) -> dict[str, Any]:
    return {
        "type": "user",
        "message": {"role": "user", "content": text},
        "parent_tool_use_id": None,
        "session_id": "",
    }


def claude_initialize(agent: AgentProcess, request_id: str) -> dict[str, Any]:
    agent.send(
        {"type": "control_request", "request_id": request_id, "request": {"subtype": "initialize"}}
    )
    return agent.read_until(
        lambda m: (
            m.get("type") == "control_response" and m["response"].get("request_id") == request_id
        ),
        timeout=START_TIMEOUT,
        what="the initialize control_response",
    )


def is_result(message: dict[str, Any]) -> bool:
    return message.get("type") == "result"


def test_claude_code_stream_json(
    fake: FakeModelServer, proxy: RefusingProxy, tmp_path: Path, workdir: Path
) -> None:
    env = claude_code_env(fake.url, tmp_path, proxy_env=proxy.proxy_env())
    argv = [str(agent_binary("claude")), *CLAUDE_ARGS]
    with AgentProcess(argv, env=env, cwd=workdir, stderr_path=tmp_path / "claude.err") as agent:
        init = claude_initialize(agent, "init-1")
        assert init["response"]["subtype"] == "success"

        agent.send(claude_user("hello [[reply:hi there]]"))
        result = agent.read_until(is_result, timeout=TURN_TIMEOUT, what="the first result")
        assert (result["subtype"], result["is_error"], result["result"]) == (
            "success",
            False,
            "hi there",
        )
        session_id = result["session_id"]
        system_init = next(m for m in agent.messages if m.get("subtype") == "init")
        assert system_init["session_id"] == session_id
        assert "Bash" in system_init["tools"]

        agent.send(claude_user(f"[[shell:{SHELL}]]"))
        request = agent.read_until(
            lambda m: m.get("type") == "control_request" or is_result(m),
            timeout=TURN_TIMEOUT,
            what="the can_use_tool request",
        )
        assert request["type"] == "control_request"
        assert request["request"]["subtype"] == "can_use_tool"
        assert request["request"]["tool_name"] == "Bash"
        assert request["request"]["input"]["command"] == SHELL
        agent.send(
            {
                "type": "control_response",
                "response": {
                    "subtype": "success",
                    "request_id": request["request_id"],
                    "response": {"behavior": "allow", "updatedInput": request["request"]["input"]},
                },
            }
        )
        result = agent.read_until(is_result, timeout=TURN_TIMEOUT, what="the shell turn's result")
        assert result["result"] == "tool said: from-the-shell"
        assert (workdir / "ran.txt").read_text().strip() == "from-the-shell"

        agent.send(claude_user("[[slow:200]]"))
        agent.read_until(
            lambda m: (
                m.get("type") == "stream_event"
                and m["event"].get("delta", {}).get("type") == "text_delta"
            ),
            timeout=TURN_TIMEOUT,
            what="the first streamed text delta",
        )
        agent.send(
            {"type": "control_request", "request_id": "stop-1", "request": {"subtype": "interrupt"}}
        )
        result = agent.read_until(is_result, timeout=TURN_TIMEOUT, what="the interrupted result")
        assert (result["subtype"], result["is_error"]) == ("error_during_execution", True)
        # Closing stdin ends the process; its exit code reflects the last result (an error).
        agent.close_stdin()
        assert agent.wait() == 1

    # The interrupt really cut the model stream (the fake notices at its next chunk).
    slow = next(r for r in fake.model_requests() if r.prompt == "[[slow:200]]")
    wait_for(lambda: slow.outcome == "disconnected", timeout=10, what="the stream to be cut")

    # Resume in a new process: the whole history goes back to the model.
    resumed_argv = [*argv, "--resume", session_id]
    with AgentProcess(
        resumed_argv, env=env, cwd=workdir, stderr_path=tmp_path / "claude-resumed.err"
    ) as agent:
        claude_initialize(agent, "init-2")
        agent.send(claude_user("after resume"))
        result = agent.read_until(is_result, timeout=TURN_TIMEOUT, what="the resumed result")
        assert (result["result"], result["session_id"]) == ("ok: after resume", session_id)
    history = fake.model_requests()[-1].json["messages"]
    assert any(m["role"] == "assistant" and "hi there" in str(m["content"]) for m in history)
    assert all(r.headers.get("x-api-key") for r in fake.model_requests())


# --- Codex: app-server, JSON-RPC without the "jsonrpc" field ------------------------------


class CodexRpc:
    """Minimal client for ``codex app-server`` (ids are ours; server requests use its own)."""

    def __init__(self, agent: AgentProcess) -> None:
        self.agent = agent
        self.next_id = 1

    def request(self, method: str, params: dict[str, Any], timeout: float = TURN_TIMEOUT) -> Any:
        request_id = self.next_id
        self.next_id += 1
        self.agent.send({"id": request_id, "method": method, "params": params})
        reply = self.agent.read_until(
            lambda m: m.get("id") == request_id and "method" not in m,
            timeout=timeout,
            what=f"the reply to {method}",
        )
        assert "error" not in reply, reply
        return reply["result"]

    def start(self) -> None:
        self.request(
            "initialize", {"clientInfo": {"name": "paseo-tests", "version": "0"}}, START_TIMEOUT
        )
        self.agent.send({"method": "initialized"})

    def turn(self, thread_id: str, text: str) -> str:
        result = self.request(
            "turn/start", {"threadId": thread_id, "input": [{"type": "text", "text": text}]}
        )
        return str(result["turn"]["id"])

    def completed(self) -> dict[str, Any]:
        message = self.agent.read_until(
            lambda m: m.get("method") == "turn/completed",
            timeout=TURN_TIMEOUT,
            what="turn/completed",
        )
        return dict(message["params"]["turn"])


def agent_text(turn: dict[str, Any]) -> str:
    return "".join(item["text"] for item in turn["items"] if item["type"] == "agentMessage")


def test_codex_app_server(
    fake: FakeModelServer, proxy: RefusingProxy, tmp_path: Path, workdir: Path
) -> None:
    env = codex_env(fake.url, tmp_path, proxy_env=proxy.proxy_env())
    argv = [str(agent_binary("codex")), "app-server"]
    with AgentProcess(argv, env=env, cwd=workdir, stderr_path=tmp_path / "codex.err") as agent:
        rpc = CodexRpc(agent)
        rpc.start()
        thread = rpc.request(
            "thread/start",
            {"cwd": str(workdir), "approvalPolicy": "untrusted", "sandbox": "workspace-write"},
        )["thread"]
        thread_id = thread["id"]

        rpc.turn(thread_id, "hello [[reply:hi there]]")
        turn = rpc.completed()
        assert (turn["status"], agent_text(turn)) == ("completed", "hi there")

        rpc.turn(thread_id, f"[[shell:{SHELL}]]")
        approval = agent.read_until(
            lambda m: (
                m.get("method") == "item/commandExecution/requestApproval"
                or m.get("method") == "turn/completed"
            ),
            timeout=TURN_TIMEOUT,
            what="the command approval request",
        )
        assert approval["method"] == "item/commandExecution/requestApproval"
        assert SHELL in approval["params"]["command"]
        # The server's request ids start at 0: an id of 0 is a real id.
        agent.send({"id": approval["id"], "result": {"decision": "accept"}})
        turn = rpc.completed()
        assert turn["status"] == "completed"
        assert "from-the-shell" in agent_text(turn)
        assert (workdir / "ran.txt").read_text().strip() == "from-the-shell"
        executed = [
            m["params"]["item"]
            for m in agent.messages
            if m.get("method") == "item/completed"
            and m["params"]["item"]["type"] == "commandExecution"
        ]
        assert executed[0]["exitCode"] == 0

        turn_id = rpc.turn(thread_id, "[[slow:200]]")
        agent.read_until(
            lambda m: m.get("method") == "item/agentMessage/delta",
            timeout=TURN_TIMEOUT,
            what="the first text delta",
        )
        rpc.request("turn/interrupt", {"threadId": thread_id, "turnId": turn_id})
        assert rpc.completed()["status"] == "interrupted"
        slow = next(r for r in fake.model_requests() if r.prompt == "[[slow:200]]")
        wait_for(lambda: slow.outcome == "disconnected", timeout=10, what="the stream to be cut")

    with AgentProcess(argv, env=env, cwd=workdir, stderr_path=tmp_path / "codex2.err") as agent:
        rpc = CodexRpc(agent)
        rpc.start()
        resumed = rpc.request("thread/resume", {"threadId": thread_id})["thread"]
        assert resumed["id"] == thread_id
        rpc.turn(thread_id, "after resume")
        assert agent_text(rpc.completed()) == "ok: after resume"
    history = fake.model_requests()[-1].json["input"]
    assert any(item.get("type") == "function_call_output" for item in history)
    assert all(r.path == "/v1/responses" for r in fake.model_requests())


# --- claude-agent-acp: ACP (JSON-RPC 2.0) on stdio ----------------------------------------


class AcpRpc:
    """Minimal ACP client: our requests, plus the agent's requests answered by the test."""

    def __init__(self, agent: AgentProcess) -> None:
        self.agent = agent
        self.next_id = 1

    def send_request(self, method: str, params: dict[str, Any]) -> int:
        request_id = self.next_id
        self.next_id += 1
        self.agent.send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        return request_id

    def reply_to(self, request_id: int, what: str, timeout: float = TURN_TIMEOUT) -> Any:
        reply = self.agent.read_until(
            lambda m: m.get("id") == request_id and "method" not in m, timeout=timeout, what=what
        )
        assert "error" not in reply, reply
        return reply["result"]

    def request(self, method: str, params: dict[str, Any], timeout: float = TURN_TIMEOUT) -> Any:
        return self.reply_to(self.send_request(method, params), f"the reply to {method}", timeout)

    def start(self) -> dict[str, Any]:
        capabilities = {"fs": {"readTextFile": False, "writeTextFile": False}, "terminal": False}
        return dict(
            self.request(
                "initialize",
                {"protocolVersion": 1, "clientCapabilities": capabilities},
                START_TIMEOUT,
            )
        )

    def prompt(self, session_id: str, text: str) -> int:
        return self.send_request(
            "session/prompt",
            {"sessionId": session_id, "prompt": [{"type": "text", "text": text}]},
        )


def session_updates(agent: AgentProcess, kind: str) -> list[dict[str, Any]]:
    return [
        m["params"]["update"]
        for m in agent.messages
        if m.get("method") == "session/update"
        and m["params"]["update"].get("sessionUpdate") == kind
    ]


def test_claude_agent_acp(
    fake: FakeModelServer, proxy: RefusingProxy, tmp_path: Path, workdir: Path
) -> None:
    env = claude_agent_acp_env(fake.url, tmp_path, proxy_env=proxy.proxy_env())
    argv = [str(agent_binary("claude-agent-acp"))]
    with AgentProcess(argv, env=env, cwd=workdir, stderr_path=tmp_path / "acp.err") as agent:
        rpc = AcpRpc(agent)
        init = rpc.start()
        assert init["agentCapabilities"]["loadSession"] is True
        session = rpc.request("session/new", {"cwd": str(workdir), "mcpServers": []}, START_TIMEOUT)
        session_id = session["sessionId"]
        # The adapter starts in its own "auto" mode, which decides permissions itself;
        # "default" asks the client.
        assert session["modes"]["currentModeId"] == "auto"
        rpc.request("session/set_mode", {"sessionId": session_id, "modeId": "default"})

        result = rpc.reply_to(rpc.prompt(session_id, "hello [[reply:hi there]]"), "prompt 1")
        assert result["stopReason"] == "end_turn"
        chunks = session_updates(agent, "agent_message_chunk")
        assert "".join(c["content"]["text"] for c in chunks) == "hi there"

        prompt_id = rpc.prompt(session_id, f"[[shell:{SHELL}]]")
        permission = agent.read_until(
            lambda m: m.get("method") == "session/request_permission" or m.get("id") == prompt_id,
            timeout=TURN_TIMEOUT,
            what="the permission request",
        )
        assert permission.get("method") == "session/request_permission"
        assert permission["params"]["toolCall"]["rawInput"]["command"] == SHELL
        option = next(o for o in permission["params"]["options"] if o["kind"] == "allow_once")
        agent.send(
            {
                "jsonrpc": "2.0",
                "id": permission["id"],
                "result": {"outcome": {"outcome": "selected", "optionId": option["optionId"]}},
            }
        )
        assert rpc.reply_to(prompt_id, "prompt 2")["stopReason"] == "end_turn"
        assert (workdir / "ran.txt").read_text().strip() == "from-the-shell"
        updates = session_updates(agent, "tool_call_update")
        assert any(u.get("status") == "completed" for u in updates)

        prompt_id = rpc.prompt(session_id, "[[slow:200]]")
        agent.read_until(
            lambda m: (
                m.get("method") == "session/update"
                and m["params"]["update"].get("content", {}).get("text") == "chunk 1"
            ),
            timeout=TURN_TIMEOUT,
            what="the first slow chunk",
        )
        agent.send(
            {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": session_id}}
        )
        assert rpc.reply_to(prompt_id, "the cancelled prompt")["stopReason"] == "cancelled"
        slow = next(r for r in fake.model_requests() if r.prompt == "[[slow:200]]")
        wait_for(lambda: slow.outcome == "disconnected", timeout=10, what="the stream to be cut")

    with AgentProcess(argv, env=env, cwd=workdir, stderr_path=tmp_path / "acp2.err") as agent:
        rpc = AcpRpc(agent)
        rpc.start()
        rpc.request(
            "session/load",
            {"sessionId": session_id, "cwd": str(workdir), "mcpServers": []},
            START_TIMEOUT,
        )
        # session/load replays the history as session/update notifications first.
        replayed = session_updates(agent, "user_message_chunk")
        assert replayed[0]["content"]["text"] == "hello [[reply:hi there]]"
        result = rpc.reply_to(rpc.prompt(session_id, "after load"), "prompt after load")
        assert result["stopReason"] == "end_turn"
    # Title generation is a side request without tools; the fake answered it with JSON.
    assert any(not r.tool_names for r in fake.model_requests())
