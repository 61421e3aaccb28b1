"""The contract's line-framed JSON-RPC peer, against a real child program over stdio."""

from __future__ import annotations

import asyncio
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from paseo_hookspecs.stdio_rpc import INTERNAL_ERROR, ConnectionLost, RpcError, StdioJsonRpc
from paseo_hookspecs.turns import TurnLedger

from paseo.agents.process import AgentProcessLauncher

# The child answers "echo" (notifying first), fails "fail", asks the client a question (id 0) on
# "ask", reports any answer it gets as an "answered" notification, exits on "exit"; every line
# it reads is also logged to stderr.
PROGRAM = textwrap.dedent(
    """
    import json, sys
    def send(message):
        sys.stdout.write(json.dumps(message) + "\\n")
        sys.stdout.flush()
    for line in sys.stdin:
        message = json.loads(line)
        sys.stderr.write(line)
        sys.stderr.flush()
        method = message.get("method")
        if method == "echo":
            send({"method": "progress", "params": {"n": 1}})
            send({"id": message["id"], "result": message["params"]})
        elif method == "fail":
            send({"id": message["id"], "error": {"code": 7, "message": "no", "data": {"x": 1}}})
        elif method == "ask":
            send({"id": 0, "method": "question", "params": {}})
        elif method == "exit":
            sys.exit(0)
        elif "id" in message and "method" not in message:
            send({"method": "answered", "params": {"reply": message}})
    """
)


def _run(body: Any, tmp_path: Path) -> None:
    async def main() -> None:
        process = await AgentProcessLauncher().launch(
            [sys.executable, "-c", PROGRAM], cwd=str(tmp_path), env={}, provider="test"
        )
        try:
            await asyncio.wait_for(body(process), 20)
        finally:
            await process.terminate(grace=1.0)

    asyncio.run(main())


def test_requests_notifications_and_requests_back(tmp_path: Path) -> None:
    async def body(process: Any) -> None:
        notes: asyncio.Queue[tuple[str, dict[str, Any]]] = asyncio.Queue()
        asked: asyncio.Queue[Any] = asyncio.Queue()
        closed = asyncio.Event()

        async def on_request(request_id: Any, method: str, params: dict[str, Any]) -> None:
            asked.put_nowait(request_id)

        async def on_notification(method: str, params: dict[str, Any]) -> None:
            notes.put_nowait((method, params))

        async def on_closed() -> None:
            closed.set()

        rpc = StdioJsonRpc(
            process,
            on_request=on_request,
            on_notification=on_notification,
            on_closed=on_closed,
            jsonrpc_field=False,
        )
        rpc.start()
        assert await rpc.request("echo", {"a": 1}, timeout=10) == {"a": 1}
        assert notes.get_nowait() == ("progress", {"n": 1})
        with pytest.raises(RpcError) as failed:
            await rpc.request("fail", {}, timeout=10)
        assert (failed.value.code, failed.value.describe()) == (7, 'no: {"x": 1}')
        await rpc.notify("ask", {})
        assert await asked.get() == 0  # id 0 is a request id like any other
        await rpc.respond(0, {"ok": True})
        assert await notes.get() == ("answered", {"reply": {"id": 0, "result": {"ok": True}}})
        # Codex's dialect carries no "jsonrpc" member.
        assert '"jsonrpc"' not in process.stderr_tail()
        exit_request = asyncio.ensure_future(rpc.request("exit", {}, timeout=10))
        with pytest.raises(ConnectionLost):
            await exit_request
        await asyncio.wait_for(closed.wait(), 10)
        assert rpc.closed
        with pytest.raises(ConnectionLost):
            await rpc.notify("echo", {})

    _run(body, tmp_path)


def test_a_failing_request_handler_answers_with_an_error(tmp_path: Path) -> None:
    async def body(process: Any) -> None:
        notes: asyncio.Queue[tuple[str, dict[str, Any]]] = asyncio.Queue()

        async def on_request(request_id: Any, method: str, params: dict[str, Any]) -> None:
            raise RuntimeError("handler bug")

        async def on_notification(method: str, params: dict[str, Any]) -> None:
            notes.put_nowait((method, params))

        async def ignore() -> None:
            return None

        rpc = StdioJsonRpc(
            process, on_request=on_request, on_notification=on_notification, on_closed=ignore
        )
        rpc.start()
        await rpc.notify("ask", {})
        error = {"code": INTERNAL_ERROR, "message": "handler bug"}
        reply = {"jsonrpc": "2.0", "id": 0, "error": error}
        assert await notes.get() == ("answered", {"reply": reply})
        await rpc.stop()
        assert rpc.closed

    _run(body, tmp_path)


def test_a_turn_ends_once_and_the_next_waits_for_its_end() -> None:
    turns = TurnLedger()
    first = turns.begin()
    assert first.number == 1
    assert turns.finish(first) is first
    assert turns.finish(first) is None  # a second end of the same turn is stale
    assert turns.active  # not settled yet: its end is being delivered
    turns.settle(first)
    assert first.done.is_set()
    assert not turns.active
    second = turns.begin()
    assert second.number == 2
    assert turns.finish(first) is None
    assert turns.finish() is second
