"""The documented answer (or close code) for every kind of bad frame, and the daemon keeps
serving other connections afterwards."""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
from typing import Any

import pytest
from helpers.daemon_rpc import LiveDaemon, answer, error_code, hello, open_ws, rpc
from websockets.exceptions import ConnectionClosed


async def _still_serving(daemon: LiveDaemon) -> None:
    ws = await open_ws(daemon.url, daemon.credential)
    try:
        await hello(ws, "bystander")
        reply = await rpc(ws, 1, "server.ping", {"data": "still here"})
        assert reply["result"]["data"] == "still here"
    finally:
        await ws.close()


def test_hello_is_required_first(daemon: LiveDaemon) -> None:
    async def run() -> None:
        ws = await open_ws(daemon.url, daemon.credential)
        try:
            reply = await rpc(ws, 1, "server.status")
            assert error_code(reply) == "hello_required"
            await hello(ws)
            reply = await rpc(ws, 2, "server.status")
            assert reply["result"]["pid"] == daemon.pid
            again = await rpc(ws, 3, "server.hello", {"clientId": "x"})
            assert error_code(again) == "invalid_request"
        finally:
            await ws.close()

    asyncio.run(run())


@pytest.mark.parametrize(
    ("frame", "code", "jsonrpc"),
    [
        ('{"jsonrpc":"2.0","id":7,"method":"no.such"}', "method_not_found", -32601),
        (
            '{"jsonrpc":"2.0","id":7,"method":"server.ping","params":{"data":5}}',
            "invalid_params",
            -32602,
        ),
        ('{"jsonrpc":"2.0","id":7,"method":"server.ping","params":[1]}', "invalid_params", -32602),
        (
            '{"jsonrpc":"2.0","id":7,"method":"server.subscribe","params":{"streams":["nope"]}}',
            "not_found",
            -32000,
        ),
        ("{not json", "parse_error", -32700),
        ("[1, 2]", "invalid_request", -32600),
        ('"a string"', "invalid_request", -32600),
        ('{"jsonrpc":"1.0","id":7,"method":"server.ping"}', "invalid_request", -32600),
        ('{"jsonrpc":"2.0","id":true,"method":"server.ping"}', "invalid_request", -32600),
    ],
)
def test_bad_frames_get_documented_errors(
    daemon: LiveDaemon, frame: str, code: str, jsonrpc: int
) -> None:
    async def run() -> dict[str, Any]:
        ws = await open_ws(daemon.url, daemon.credential)
        try:
            await hello(ws)
            await ws.send(frame)
            reply = json.loads(await asyncio.wait_for(ws.recv(), 10))
            # The connection stays usable after an error answer.
            assert "result" in await rpc(ws, 99, "server.ping", {})
            return reply
        finally:
            await ws.close()

    reply = asyncio.run(run())
    assert reply["error"]["data"]["code"] == code
    assert reply["error"]["code"] == jsonrpc
    assert reply["error"]["message"]


def test_binary_frame_closes_with_1003(daemon: LiveDaemon) -> None:
    async def run() -> int | None:
        ws = await open_ws(daemon.url, daemon.credential)
        await hello(ws)
        await ws.send(b"\x00\x01binary")
        with pytest.raises(ConnectionClosed):
            await asyncio.wait_for(ws.recv(), 10)
        await _still_serving(daemon)
        return ws.close_code

    assert asyncio.run(run()) == 1003


def test_oversized_frame_closes_with_1009(daemon: LiveDaemon) -> None:
    async def run() -> int | None:
        ws = await open_ws(daemon.url, daemon.credential, max_size=None)
        await hello(ws)
        big = json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "server.ping",
                "params": {"data": "x" * (2 * 1024 * 1024)},
            }
        )
        with contextlib.suppress(ConnectionClosed):  # the close may already race the send
            await ws.send(big)
        with pytest.raises(ConnectionClosed):
            await asyncio.wait_for(ws.recv(), 10)
        await _still_serving(daemon)
        return ws.close_code

    assert asyncio.run(run()) == 1009


def test_client_notifications_get_no_answer(daemon: LiveDaemon) -> None:
    async def run() -> None:
        ws = await open_ws(daemon.url, daemon.credential)
        try:
            await hello(ws)
            await ws.send('{"jsonrpc":"2.0","method":"no.such"}')
            await ws.send('{"jsonrpc":"2.0","method":"server.ping"}')
            # The next answer is the one to this request, not to the notifications.
            reply = await rpc(ws, 5, "server.ping", {"data": "after"})
            assert reply["result"]["data"] == "after"
        finally:
            await ws.close()

    asyncio.run(run())


def _random_frame(rng: random.Random) -> str:
    choices = [
        lambda: "".join(chr(rng.randrange(32, 0x2FFF)) for _ in range(rng.randrange(0, 60))),
        lambda: json.dumps(rng.choice([None, 1, "x", [], {}, [1, {"a": 2}], 1.5])),
        lambda: json.dumps(
            {
                "jsonrpc": "2.0",
                "id": rng.randrange(10**6),
                "method": rng.choice(
                    ["server.ping", "server.status", "config.get", "server.subscribe", "x", ""]
                ),
                "params": rng.choice(
                    [{}, {"data": "d"}, {"path": 3}, [], "p", None, {"streams": ["config", 7]}]
                ),
            }
        ),
        lambda: "[" * rng.randrange(1, 5000),
        lambda: '{"jsonrpc":"2.0","id":' + "9" * rng.randrange(1, 6000) + "}",
    ]
    return rng.choice(choices)()


def test_fuzz_burst_leaves_the_daemon_serving(daemon: LiveDaemon) -> None:
    rng = random.Random(1234)
    frames = [_random_frame(rng) for _ in range(400)]

    async def run() -> None:
        ws = await open_ws(daemon.url, daemon.credential, max_size=None)
        await hello(ws)
        for frame in frames:
            await ws.send(frame)
        # A final marker request: everything before it has been read by the daemon.
        await ws.send('{"jsonrpc":"2.0","id":"end","method":"server.ping"}')
        reply = await answer(ws, "end", within=30)
        assert "result" in reply or error_code(reply) == "rate_limited"
        await ws.close()
        await _still_serving(daemon)

    asyncio.run(run())
