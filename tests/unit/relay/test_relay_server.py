"""``paseo relay serve``'s routing, against raw WebSocket clients playing the daemon (control
and data sockets) and the apps, as the Cloudflare relay behaves (docs/relay.md)."""

from __future__ import annotations

import asyncio
import http.client
import json
import re
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import pytest
from paseo_relay.relay_http import start_relay
from paseo_relay.relay_server import Relay, RelayLimits
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

BOUND = 10.0
"""Every wait of these tests is bounded by this."""


@asynccontextmanager
async def relay_on_loopback(limits: RelayLimits | None = None) -> AsyncIterator[tuple[str, Relay]]:
    server, relay = await start_relay("127.0.0.1", 0, limits)
    port = server.sockets[0].getsockname()[1]
    try:
        yield f"127.0.0.1:{port}", relay
    finally:
        server.close()
        await asyncio.wait_for(server.wait_closed(), BOUND)


def ws_url(endpoint: str, role: str, connection_id: str | None = None, sid: str = "srv_a") -> str:
    url = f"ws://{endpoint}/ws?serverId={sid}&role={role}&v=2"
    return url + (f"&connectionId={connection_id}" if connection_id else "")


async def recv_json(ws: ClientConnection) -> dict[str, Any]:
    frame = await asyncio.wait_for(ws.recv(), BOUND)
    assert isinstance(frame, str)
    parsed = json.loads(frame)
    assert isinstance(parsed, dict)
    return parsed


async def closed_with(ws: ClientConnection) -> tuple[int | None, str | None]:
    try:
        while True:
            await asyncio.wait_for(ws.recv(), BOUND)
    except ConnectionClosed:
        pass
    assert ws.close_code is not None
    return ws.close_code, ws.close_reason


def run(test: Callable[[], Awaitable[None]]) -> None:
    asyncio.run(asyncio.wait_for(test(), 60))


def _http(endpoint: str, path: str, headers: dict[str, str] | None = None) -> tuple[int, str, str]:
    host, port = endpoint.rsplit(":", 1)
    conn = http.client.HTTPConnection(host, int(port), timeout=BOUND)
    try:
        conn.request("GET", path, headers=headers or {})
        response = conn.getresponse()
        return response.status, response.getheader("Content-Type") or "", response.read().decode()
    finally:
        conn.close()


def test_the_http_surface_answers_as_the_worker() -> None:
    async def main() -> None:
        async with relay_on_loopback() as (endpoint, _):
            ask = asyncio.to_thread
            status, kind, body = await ask(_http, endpoint, "/health")
            assert (status, kind, json.loads(body)) == (200, "application/json", {"status": "ok"})
            assert (await ask(_http, endpoint, "/elsewhere"))[0] == 404
            assert (await ask(_http, endpoint, "/ws?role=server&v=2"))[0] == 400
            assert (await ask(_http, endpoint, "/ws?serverId=s&v=2"))[0] == 400
            assert (await ask(_http, endpoint, "/ws?serverId=s&role=client&v=3"))[0] == 400
            assert (await ask(_http, endpoint, "/ws?serverId=s&role=client&v=2"))[0] == 426

    run(main)


def test_control_hears_sync_connected_and_disconnected_and_pongs() -> None:
    async def main() -> None:
        async with (
            relay_on_loopback() as (endpoint, _),
            connect(ws_url(endpoint, "server")) as control,
        ):
            assert await recv_json(control) == {"type": "sync", "connectionIds": []}
            await control.send('{"type":"ping","ts":1}')
            pong = await recv_json(control)
            assert pong["type"] == "pong"
            assert isinstance(pong["ts"], int)
            async with connect(ws_url(endpoint, "client")):
                joined = await recv_json(control)
                assert joined["type"] == "connected"
                assert re.fullmatch(r"conn_[0-9a-f]{16}", joined["connectionId"])
            left = await recv_json(control)
            assert left == {"type": "disconnected", "connectionId": joined["connectionId"]}

    run(main)


def test_client_frames_wait_for_the_data_socket_then_flow_verbatim_both_ways() -> None:
    async def main() -> None:
        async with (
            relay_on_loopback() as (endpoint, _),
            connect(ws_url(endpoint, "server")) as control,
        ):
            await recv_json(control)
            async with connect(ws_url(endpoint, "client")) as client:
                cid = (await recv_json(control))["connectionId"]
                await client.send('{"type":"e2ee_hello","key":"k"}')
                await client.send(b"\x00\xffbinary")
                async with connect(ws_url(endpoint, "server", cid)) as data:
                    assert await asyncio.wait_for(data.recv(), BOUND) == (
                        '{"type":"e2ee_hello","key":"k"}'
                    )
                    assert await asyncio.wait_for(data.recv(), BOUND) == b"\x00\xffbinary"
                    await data.send('{"type":"e2ee_ready"}')
                    assert await asyncio.wait_for(client.recv(), BOUND) == '{"type":"e2ee_ready"}'
                    await client.send("c2s")
                    assert await asyncio.wait_for(data.recv(), BOUND) == "c2s"
                    await data.send(b"s2c")
                    assert await asyncio.wait_for(client.recv(), BOUND) == b"s2c"

    run(main)


def test_the_last_client_leaving_closes_the_data_socket_1001() -> None:
    async def main() -> None:
        async with (
            relay_on_loopback() as (endpoint, relay),
            connect(ws_url(endpoint, "server")) as control,
        ):
            await recv_json(control)
            client = await connect(ws_url(endpoint, "client"))
            cid = (await recv_json(control))["connectionId"]
            async with connect(ws_url(endpoint, "server", cid)) as data:
                await client.close()
                assert await closed_with(data) == (1001, "Client disconnected")
            assert await recv_json(control) == {"type": "disconnected", "connectionId": cid}
            # Nothing of the connection is kept once its sockets are gone.
            session = relay.sessions[("2", "srv_a")]
            assert (session.clients, session.data, session.pending) == ({}, {}, {})

    run(main)


def test_the_data_socket_closing_closes_its_clients_1012() -> None:
    async def main() -> None:
        async with (
            relay_on_loopback() as (endpoint, _),
            connect(ws_url(endpoint, "server")) as control,
        ):
            await recv_json(control)
            async with connect(ws_url(endpoint, "client")) as client:
                cid = (await recv_json(control))["connectionId"]
                data = await connect(ws_url(endpoint, "server", cid))
                await data.close()
                assert await closed_with(client) == (1012, "Server disconnected")

    run(main)


def test_a_new_control_or_data_socket_replaces_the_old_1008() -> None:
    async def main() -> None:
        async with relay_on_loopback() as (endpoint, _):
            old = await connect(ws_url(endpoint, "server"))
            await recv_json(old)
            async with connect(ws_url(endpoint, "client")) as client:
                cid = (await recv_json(old))["connectionId"]
                async with connect(ws_url(endpoint, "server")) as control:
                    assert await closed_with(old) == (1008, "Replaced by new connection")
                    # A new control hears the connections already there.
                    assert await recv_json(control) == {"type": "sync", "connectionIds": [cid]}
                    first = await connect(ws_url(endpoint, "server", cid))
                    async with connect(ws_url(endpoint, "server", cid)) as second:
                        assert await closed_with(first) == (1008, "Replaced by new connection")
                        # The client stays: only the current data socket's end closes it.
                        await client.send("still here")
                        assert await asyncio.wait_for(second.recv(), BOUND) == "still here"

    run(main)


def test_a_control_that_opens_no_data_socket_is_nudged_then_closed_1011() -> None:
    async def main() -> None:
        limits = RelayLimits(resync_after=0.1, unresponsive_after=0.1)
        async with (
            relay_on_loopback(limits) as (endpoint, _),
            connect(ws_url(endpoint, "server")) as control,
        ):
            await recv_json(control)
            async with connect(ws_url(endpoint, "client")):
                cid = (await recv_json(control))["connectionId"]
                assert await recv_json(control) == {"type": "sync", "connectionIds": [cid]}
                assert await closed_with(control) == (1011, "Control unresponsive")

    run(main)


def test_at_most_200_client_frames_are_kept_per_connection_the_newest() -> None:
    async def main() -> None:
        async with (
            relay_on_loopback() as (endpoint, relay),
            connect(ws_url(endpoint, "server")) as control,
        ):
            await recv_json(control)
            async with connect(ws_url(endpoint, "client")) as client:
                cid = (await recv_json(control))["connectionId"]
                for i in range(250):
                    await client.send(str(i))
                await client.send("last")
                async with connect(ws_url(endpoint, "server", cid)) as data:
                    got = [await asyncio.wait_for(data.recv(), BOUND) for _ in range(200)]
                    assert got == [str(i) for i in range(51, 250)] + ["last"]
                    assert relay.pending_total == 0

    run(main)


def test_kept_frames_are_bounded_in_bytes_and_in_total() -> None:
    async def main() -> None:
        limits = RelayLimits(pending_bytes=3000, pending_total_bytes=5000)
        async with (
            relay_on_loopback(limits) as (endpoint, relay),
            connect(ws_url(endpoint, "client")) as first,
        ):
            for _ in range(10):
                await first.send("x" * 1000)
            await first.send("ping")  # ordered behind the others: they were all read
            await first.ping()
            assert relay.pending_total <= 3000
            async with connect(ws_url(endpoint, "client")) as second:
                for _ in range(3):
                    await second.send("y" * 1000)
                # The relay's whole budget is spent: the client is closed, not starved.
                assert await closed_with(second) == (1013, "Relay buffer full")
            assert relay.pending_total <= 5000

    run(main)


def test_an_oversized_frame_closes_its_socket_1009() -> None:
    async def main() -> None:
        async with (
            relay_on_loopback(RelayLimits(max_frame=1024)) as (endpoint, _),
            connect(ws_url(endpoint, "client"), max_size=None) as client,
        ):
            await client.send("z" * 2048)
            assert (await closed_with(client))[0] == 1009

    run(main)


def test_servers_and_connections_are_counted() -> None:
    async def main() -> None:
        limits = RelayLimits(max_connections_per_server=1, max_servers=1)
        async with (
            relay_on_loopback(limits) as (endpoint, _),
            connect(ws_url(endpoint, "client")),
        ):
            with pytest.raises(InvalidStatus) as refused:
                await connect(ws_url(endpoint, "client"))
            assert refused.value.response.status_code == 503
            with pytest.raises(InvalidStatus) as other:
                await connect(ws_url(endpoint, "server", sid="srv_b"))
            assert other.value.response.status_code == 503

    run(main)


def test_a_slow_reader_cannot_grow_the_relay() -> None:
    """The client never reads; the daemon pushes 64 KiB frames. The relay stops reading the
    daemon (backpressure) instead of buffering, then closes the stalled client."""
    chunk = b"\x01" * (64 << 10)

    async def main() -> None:
        limits = RelayLimits(send_timeout=1.0, close_timeout=0.5)
        async with (
            relay_on_loopback(limits) as (endpoint, relay),
            connect(ws_url(endpoint, "server")) as control,
        ):
            await recv_json(control)
            # max_queue=1: the stalled client's library stops reading its TCP socket too.
            client = await connect(ws_url(endpoint, "client"), max_queue=1)
            cid = (await recv_json(control))["connectionId"]
            async with connect(ws_url(endpoint, "server", cid)) as data:
                sent = 0
                peak = 0

                async def push() -> None:
                    nonlocal sent
                    try:
                        while sent < (512 << 20):
                            await data.send(chunk)
                            sent += len(chunk)
                    except ConnectionClosed:
                        return
                    raise AssertionError("the relay took 512 MiB from a stalled connection")

                pusher = asyncio.create_task(push())
                while not pusher.done():
                    peak = max(peak, relay.buffered_bytes())
                    await asyncio.sleep(0.01)
                await pusher
                assert data.close_code == 1001
                # What the kernel's socket buffers hold is theirs; the relay itself held
                # at most its write limit and the frame being written.
                assert peak <= (64 << 10) + 2 * len(chunk)
                assert sent < (512 << 20)
            await client.close()

    run(main)


def test_legacy_v1_forwards_between_the_two_roles() -> None:
    async def main() -> None:
        async with relay_on_loopback() as (endpoint, _):
            base = f"ws://{endpoint}/ws?serverId=srv_old"
            async with (
                connect(base + "&role=server") as server,
                connect(base + "&role=client&v=1") as client,
            ):
                await client.send("up")
                assert await asyncio.wait_for(server.recv(), BOUND) == "up"
                await server.send(b"down")
                assert await asyncio.wait_for(client.recv(), BOUND) == b"down"

    run(main)


def test_control_ignores_what_is_not_a_ping() -> None:
    async def main() -> None:
        async with (
            relay_on_loopback() as (endpoint, _),
            connect(ws_url(endpoint, "server")) as control,
        ):
            await recv_json(control)
            for junk in (b"\x00\xff", "not json", "[]", '{"type":"pong"}', '{"type":1}'):
                await control.send(junk)
            await control.send('{"type":"ping"}')
            # The only answer is the ping's: nothing else was taken for one.
            assert (await recv_json(control))["type"] == "pong"

    run(main)
