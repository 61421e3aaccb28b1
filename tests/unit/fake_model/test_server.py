"""The fake model server over real HTTP: routes, wire formats, recording, streaming, lifecycle."""

from __future__ import annotations

import asyncio
import gzip
import http.client
import json
import socket
from collections.abc import Iterator
from typing import Any

import pytest
from helpers.waiting import wait_for

from paseo.testing.fake_model import FakeModelServer, RefusingProxy

BASH_TOOL = {
    "name": "Bash",
    "input_schema": {"type": "object", "properties": {"command": {"type": "string"}}},
}
EXEC_TOOL = {
    "type": "function",
    "name": "exec_command",
    "parameters": {"type": "object", "properties": {"cmd": {"type": "string"}}},
}


@pytest.fixture
def fake() -> Iterator[FakeModelServer]:
    with FakeModelServer() as server:
        yield server


def post(
    fake: FakeModelServer,
    path: str,
    body: Any,
    headers: dict[str, str] | None = None,
) -> tuple[int, bytes, dict[str, str]]:
    conn = http.client.HTTPConnection(fake.host, fake.port, timeout=10)
    try:
        conn.request(
            "POST",
            path,
            body=json.dumps(body).encode(),
            headers={"content-type": "application/json", **(headers or {})},
        )
        response = conn.getresponse()
        return response.status, response.read(), dict(response.getheaders())
    finally:
        conn.close()


def sse(data: bytes) -> list[tuple[str | None, Any]]:
    """Parse an SSE body into (event name, decoded data) pairs."""
    events: list[tuple[str | None, Any]] = []
    for block in data.decode().split("\n\n"):
        if not block.strip():
            continue
        name = None
        payload = ""
        for line in block.split("\n"):
            if line.startswith("event: "):
                name = line[len("event: ") :]
            elif line.startswith("data: "):
                payload = line[len("data: ") :]
        events.append((name, payload if payload == "[DONE]" else json.loads(payload)))
    return events


def anthropic_body(prompt: Any, *, stream: bool = True, tools: bool = True) -> dict[str, Any]:
    return {
        "model": "claude-test",
        "max_tokens": 100,
        "stream": stream,
        "tools": [BASH_TOOL] if tools else [],
        "messages": [{"role": "user", "content": prompt}],
    }


def test_anthropic_stream_text_thinking_and_tool_use(fake: FakeModelServer) -> None:
    status, data, headers = post(
        fake,
        "/v1/messages?beta=true",
        anthropic_body("[[think:hmm]] [[reply:on it]] [[shell:echo hi]]"),
    )
    assert status == 200
    assert headers["content-type"] == "text/event-stream"
    events = sse(data)
    names = [name for name, _ in events]
    assert names[0] == "message_start"
    assert names[-2:] == ["message_delta", "message_stop"]
    starts = [d["content_block"] for n, d in events if n == "content_block_start"]
    assert [b["type"] for b in starts] == ["thinking", "text", "tool_use"]
    assert starts[2]["name"] == "Bash"
    deltas = [d["delta"] for n, d in events if n == "content_block_delta"]
    text = "".join(d["text"] for d in deltas if d["type"] == "text_delta")
    assert text == "on it"
    args = "".join(d["partial_json"] for d in deltas if d["type"] == "input_json_delta")
    assert json.loads(args) == {"command": "echo hi"}
    message_delta = dict(events)["message_delta"]
    assert message_delta["delta"]["stop_reason"] == "tool_use"
    assert message_delta["usage"]["output_tokens"] > 0

    (record,) = fake.model_requests()
    assert (record.api, record.path, record.query) == ("anthropic", "/v1/messages", "beta=true")
    assert record.prompt == "[[think:hmm]] [[reply:on it]] [[shell:echo hi]]"
    assert record.json["model"] == "claude-test"
    assert record.tool_names == ["Bash"]
    assert record.outcome == "complete"


def test_anthropic_prompt_is_the_last_real_user_text(fake: FakeModelServer) -> None:
    body = anthropic_body("ignored")
    body["messages"] = [
        {"role": "user", "content": "[[reply:old]]"},
        {"role": "assistant", "content": [{"type": "text", "text": "old"}]},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "<system-reminder>\n[[error:500]]\n</system-reminder>"},
                {"type": "text", "text": "[Request interrupted by user]"},
                {"type": "text", "text": "[[reply:new]]"},
            ],
        },
        {"role": "system", "content": "appended context"},
    ]
    body["stream"] = False
    status, data, _ = post(fake, "/v1/messages", body)
    assert status == 200
    message = json.loads(data)
    assert message["content"] == [{"type": "text", "text": "new"}]
    assert message["stop_reason"] == "end_turn"


def test_anthropic_tool_result_is_quoted(fake: FakeModelServer) -> None:
    body = anthropic_body("x", stream=False)
    body["messages"] = [
        {"role": "user", "content": "[[shell:ls]]"},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {}}],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "t1",
                    "content": [{"type": "text", "text": "file-a\nfile-b"}],
                }
            ],
        },
    ]
    _, data, _ = post(fake, "/v1/messages", body)
    assert json.loads(data)["content"][0]["text"] == "tool said: file-a\nfile-b"
    assert fake.model_requests()[0].tool_results == ("file-a\nfile-b",)


def test_anthropic_error_shape(fake: FakeModelServer) -> None:
    status, data, _ = post(fake, "/v1/messages", anthropic_body("[[error:529]]"))
    assert status == 529
    assert json.loads(data) == {
        "type": "error",
        "error": {"type": "overloaded_error", "message": "fake model error 529"},
    }


def test_side_request_gets_structured_json(fake: FakeModelServer) -> None:
    body = anthropic_body("<session>[[slow:100]]</session> name it", tools=False, stream=False)
    body["output_config"] = {
        "format": {"type": "json_schema", "schema": {"properties": {"title": {"type": "string"}}}}
    }
    status, data, _ = post(fake, "/v1/messages", body)
    assert status == 200
    assert json.loads(json.loads(data)["content"][0]["text"]) == {"title": "ok"}


def test_count_tokens_models_and_probes(fake: FakeModelServer) -> None:
    status, data, _ = post(fake, "/v1/messages/count_tokens", {"messages": []})
    assert status == 200
    assert json.loads(data)["input_tokens"] > 0
    conn = http.client.HTTPConnection(fake.host, fake.port, timeout=10)
    try:
        conn.request("GET", "/v1/models")
        models = json.loads(conn.getresponse().read())
        assert {m["id"] for m in models["data"]} >= {"gpt-5.5", "claude-sonnet-4-6"}
        conn.request("GET", "/v1/models/claude-x")
        assert json.loads(conn.getresponse().read())["id"] == "claude-x"
        conn.request("HEAD", "/")
        head = conn.getresponse()
        assert (head.status, head.read()) == (200, b"")
        conn.request("GET", "/nope")
        missing = conn.getresponse()
        assert missing.status == 404
        missing.read()
    finally:
        conn.close()
    assert [r.api for r in fake.requests] == [
        "count_tokens",
        "models",
        "models",
        "probe",
        "unknown",
    ]
    assert fake.model_requests() == []


def responses_body(prompt: str, **extra: Any) -> dict[str, Any]:
    return {
        "model": "gpt-5.5",
        "stream": True,
        "tools": [EXEC_TOOL, {"type": "custom", "name": "apply_patch"}],
        "input": [
            {
                "type": "message",
                "role": "developer",
                "content": [{"type": "input_text", "text": "sys"}],
            },
            {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": prompt}],
            },
        ],
        **extra,
    }


def test_responses_stream_text_and_function_call(fake: FakeModelServer) -> None:
    status, data, _ = post(fake, "/v1/responses", responses_body("[[reply:hey]] [[shell:pwd]]"))
    assert status == 200
    events = sse(data)
    assert events[0][0] == "response.created"
    assert events[-1][0] == "response.completed"
    assert all(name == payload["type"] for name, payload in events)
    text = "".join(p["delta"] for n, p in events if n == "response.output_text.delta")
    assert text == "hey"
    done = [p["item"] for n, p in events if n == "response.output_item.done"]
    assert [item["type"] for item in done] == ["message", "function_call"]
    assert done[1]["name"] == "exec_command"
    assert json.loads(done[1]["arguments"]) == {"cmd": "pwd"}
    completed = events[-1][1]["response"]
    assert completed["usage"]["total_tokens"] > 0
    assert [item["type"] for item in completed["output"]] == ["message", "function_call"]


def test_responses_freeform_apply_patch_and_tool_output(fake: FakeModelServer) -> None:
    _, data, _ = post(fake, "/v1/responses", responses_body("[[write:a.txt:hi]]"))
    done = [p["item"] for n, p in sse(data) if n == "response.output_item.done"]
    assert [(i["type"], i["name"]) for i in done if i["type"] != "message"] == [
        ("custom_tool_call", "apply_patch")
    ]
    body = responses_body("[[write:a.txt:hi]]")
    body["input"] += [
        {"type": "custom_tool_call", "call_id": "c1", "name": "apply_patch", "input": "..."},
        {"type": "custom_tool_call_output", "call_id": "c1", "output": "Success. Updated a.txt"},
    ]
    body["stream"] = False
    _, data, _ = post(fake, "/v1/responses", body)
    output = json.loads(data)["output"]
    assert output[0]["content"][0]["text"] == "tool said: Success. Updated a.txt"


def test_responses_error_shape(fake: FakeModelServer) -> None:
    status, data, _ = post(fake, "/v1/responses", responses_body("[[error:429:slow down]]"))
    assert status == 429
    assert json.loads(data)["error"]["message"] == "slow down"


def test_chat_completions_stream_and_tool_messages(fake: FakeModelServer) -> None:
    body: dict[str, Any] = {
        "model": "gpt",
        "stream": True,
        "stream_options": {"include_usage": True},
        "tools": [{"type": "function", "function": {"name": "bash", "parameters": {}}}],
        "messages": [{"role": "user", "content": "[[think:t]] [[shell:ls]]"}],
    }
    _, data, _ = post(fake, "/v1/chat/completions", body)
    events = [payload for _, payload in sse(data)]
    assert events[-1] == "[DONE]"
    chunks = events[:-1]
    calls = [c["choices"][0]["delta"].get("tool_calls") for c in chunks if c["choices"]]
    calls = [c for c in calls if c]
    assert calls[0][0]["function"]["name"] == "bash"
    assert json.loads(calls[1][0]["function"]["arguments"]) == {"command": "ls"}
    finishes = [c["choices"][0]["finish_reason"] for c in chunks if c["choices"]]
    assert finishes[-1] == "tool_calls"
    assert chunks[-1]["usage"]["total_tokens"] > 0

    body["stream"] = False
    body["messages"] += [
        {"role": "assistant", "tool_calls": [{"id": "c", "type": "function"}]},
        {"role": "tool", "tool_call_id": "c", "content": "a.txt"},
    ]
    _, data, _ = post(fake, "/v1/chat/completions", body)
    choice = json.loads(data)["choices"][0]
    assert (choice["message"]["content"], choice["finish_reason"]) == ("tool said: a.txt", "stop")


def test_keep_alive_chunked_and_gzip_request_bodies(fake: FakeModelServer) -> None:
    conn = http.client.HTTPConnection(fake.host, fake.port, timeout=10)
    try:
        body = json.dumps(anthropic_body("[[reply:one]]", stream=False)).encode()
        conn.request(
            "POST",
            "/v1/messages",
            body=iter([body[:10], body[10:]]),
            headers={"content-type": "application/json"},
            encode_chunked=True,
        )
        first = conn.getresponse()
        assert json.loads(first.read())["content"][0]["text"] == "one"
        zipped = gzip.compress(json.dumps(anthropic_body("[[reply:two]]", stream=False)).encode())
        conn.request(
            "POST",
            "/v1/messages",
            body=zipped,
            headers={"content-type": "application/json", "content-encoding": "gzip"},
        )
        second = conn.getresponse()
        assert json.loads(second.read())["content"][0]["text"] == "two"
    finally:
        conn.close()
    assert [r.prompt for r in fake.model_requests()] == ["[[reply:one]]", "[[reply:two]]"]


def test_malformed_request_gets_400(fake: FakeModelServer) -> None:
    with socket.create_connection((fake.host, fake.port), timeout=10) as sock:
        sock.sendall(b"NONSENSE\r\n\r\n")
        reply = sock.recv(4096)
    assert reply.startswith(b"HTTP/1.1 400")


def test_slow_stream_records_a_client_disconnect(fake: FakeModelServer) -> None:
    conn = http.client.HTTPConnection(fake.host, fake.port, timeout=10)
    conn.request(
        "POST",
        "/v1/messages",
        body=json.dumps(anthropic_body("[[slow:200:0.05]]")).encode(),
        headers={"content-type": "application/json"},
    )
    response = conn.getresponse()
    assert response.status == 200
    assert b"message_start" in response.read1(4096)
    conn.close()
    wait_for(
        lambda: fake.model_requests()[0].outcome == "disconnected",
        timeout=10,
        what="the fake to notice the disconnect",
    )


def test_clear_and_stop_with_a_stream_in_flight() -> None:
    fake = FakeModelServer()
    fake.start_in_thread()
    conn = http.client.HTTPConnection(fake.host, fake.port, timeout=10)
    try:
        conn.request(
            "POST",
            "/v1/messages",
            body=json.dumps(anthropic_body("[[slow:1000:1]]")).encode(),
            headers={"content-type": "application/json"},
        )
        conn.getresponse()
        fake.stop_thread()
    finally:
        conn.close()
    assert len(fake.requests) == 1
    fake.clear()
    assert fake.requests == []


def test_async_lifecycle_on_the_callers_loop() -> None:
    async def scenario() -> str:
        async with FakeModelServer() as fake:
            reader, writer = await asyncio.open_connection(fake.host, fake.port)
            body = json.dumps(anthropic_body("[[reply:async]]", stream=False)).encode()
            writer.write(
                b"POST /v1/messages HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
                + f"Content-Length: {len(body)}\r\n\r\n".encode()
                + body
            )
            await writer.drain()
            data = await asyncio.wait_for(reader.read(), timeout=10)
            writer.close()
            payload = data.split(b"\r\n\r\n", 1)[1]
            return str(json.loads(payload)["content"][0]["text"])

    assert asyncio.run(scenario()) == "async"


def test_refusing_proxy_records_connect_and_plain_requests() -> None:
    with RefusingProxy() as proxy:
        conn = http.client.HTTPConnection(proxy.host, proxy.port, timeout=10)
        conn.set_tunnel("api.example.com", 443)
        with pytest.raises(OSError, match="403"):
            conn.connect()
        conn.close()
        plain = http.client.HTTPConnection(proxy.host, proxy.port, timeout=10)
        plain.request("GET", "http://example.org/x")
        assert plain.getresponse().status == 403
        plain.close()
        assert proxy.attempts == ["CONNECT api.example.com:443", "GET http://example.org/x"]
        env = proxy.proxy_env()
        assert env["HTTPS_PROXY"] == proxy.url
        assert "127.0.0.1" in env["NO_PROXY"]
