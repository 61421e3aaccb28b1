"""Per-connection bounds: a stalled reader, the connection cap, the hello timeout."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable

import pytest
from helpers.daemon_rpc import LiveDaemon, hello, open_ws, rpc
from websockets.exceptions import ConnectionClosed, InvalidStatus

LIMITS = {"outboundQueue": 20, "maxConnections": 4, "helloTimeout": 1.0}


@pytest.fixture
def limited(daemon_factory: Callable[..., LiveDaemon]) -> LiveDaemon:
    return daemon_factory({"plugins": {"websocket": {"settings": LIMITS}}})


def test_slow_client_does_not_delay_a_fast_one(limited: LiveDaemon) -> None:
    payload = "y" * 60_000

    async def run() -> tuple[set[str], int | None]:
        slow = await open_ws(limited.url, limited.credential, max_queue=1)
        await hello(slow, "slow")
        fast = await open_ws(limited.url, limited.credential)
        await hello(fast, "fast")
        # The slow client asks for ~18 MB of answers and never reads them.
        for i in range(300):
            await slow.send(
                json.dumps(
                    {
                        "jsonrpc": "2.0",
                        "id": i,
                        "method": "server.ping",
                        "params": {"data": payload},
                    }
                )
            )
        # Meanwhile the fast client's round trips keep completing (each bounded).
        for i in range(50):
            reply = await asyncio.wait_for(rpc(fast, 1000 + i, "server.ping", {"data": "f"}), 5)
            assert reply["result"]["data"] == "f"
        await fast.close()
        # When the slow client finally reads, it learns it fell behind: a resync notice, or
        # (having overflowed again) the slow-consumer close.
        seen: set[str] = set()
        try:
            async with asyncio.timeout(30):
                while True:
                    frame = json.loads(await slow.recv())
                    seen.add(frame.get("method") or "answer")
        except (ConnectionClosed, TimeoutError):
            pass
        return seen, slow.close_code

    seen, code = asyncio.run(run())
    assert "server.resync" in seen or code in (4008, 1006), (seen, code)


def test_connections_beyond_the_cap_are_refused_with_503(limited: LiveDaemon) -> None:
    async def run() -> int:
        open_ = [await open_ws(limited.url, limited.credential) for _ in range(4)]
        for ws in open_:
            await hello(ws)
        try:
            await open_ws(limited.url, limited.credential)
        except InvalidStatus as exc:
            return exc.response.status_code
        finally:
            for ws in open_:
                await ws.close()
        return 101

    assert asyncio.run(run()) == 503


def test_no_hello_closes_with_4001(limited: LiveDaemon) -> None:
    async def run() -> int | None:
        ws = await open_ws(limited.url, limited.credential)
        with pytest.raises(ConnectionClosed):
            await asyncio.wait_for(ws.recv(), 15)
        return ws.close_code

    assert asyncio.run(run()) == 4001
