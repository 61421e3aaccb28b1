"""Our clients through the relay with an offer URL (``--host``/``PASEO_HOST``), against
``paseo relay serve``'s routing and a daemon stand-in doing the responder's part; what the
relay forwards is recorded, to see it carries no plaintext after the handshake."""

from __future__ import annotations

import asyncio
import base64
import threading
from collections.abc import Iterator
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

import pytest
from helpers.relay_standin import DaemonStandIn
from nacl.public import PrivateKey
from paseo_hookspecs.connectors import ConnectorError
from paseo_hookspecs.errors import Unavailable
from paseo_relay import e2ee
from paseo_relay.connector import open_tunnel
from paseo_relay.offer import Offer, encode_offer_url
from paseo_relay.relay_http import start_relay
from paseo_relay.relay_server import Relay
from websockets.asyncio.server import ServerConnection

SERVER_ID = "srv_standin"
SECRET = "SECRET-MARKER-0123456789"


class RecordingRelay(Relay):
    """Keeps every frame it forwards (a capture between the relay and its peers)."""

    def __init__(self) -> None:
        super().__init__()
        self.forwarded: list[str | bytes] = []

    async def _send(self, ws: ServerConnection, frame: str | bytes) -> None:
        self.forwarded.append(frame)
        await super()._send(ws, frame)


@dataclass
class Harness:
    endpoint: str
    key: PrivateKey
    relay: RecordingRelay
    standin: DaemonStandIn
    loop: asyncio.AbstractEventLoop

    def offer(self, key_b64: str | None = None) -> str:
        public = key_b64 or e2ee.export_public_key(self.key.public_key)
        return encode_offer_url(Offer(SERVER_ID, public, self.endpoint))


@pytest.fixture
def harness() -> Iterator[Harness]:
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()

    def run(coro: Any) -> Any:
        future: Future[Any] = asyncio.run_coroutine_threadsafe(coro, loop)
        return future.result(30)

    relay = RecordingRelay()
    key = PrivateKey.generate()

    async def up() -> tuple[Any, DaemonStandIn, str]:
        server, _ = await start_relay("127.0.0.1", 0, relay=relay)
        endpoint = f"127.0.0.1:{server.sockets[0].getsockname()[1]}"
        standin = DaemonStandIn(endpoint, SERVER_ID, key)
        await standin.start()
        await asyncio.wait_for(standin.attached.wait(), 10)
        return server, standin, endpoint

    server, standin, endpoint = run(up())
    try:
        yield Harness(endpoint, key, relay, standin, loop)
    finally:

        async def down() -> None:
            await standin.stop()
            server.close()
            await asyncio.wait_for(server.wait_closed(), 10)

        run(down())
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        loop.close()


CONTROL = ('{"type":"sync"', '{"type":"connected"', '{"type":"disconnected"', '{"type":"pong"')


def _no_plaintext_after_the_handshake(forwarded: list[str | bytes]) -> None:
    # The relay's own control messages to the daemon are metadata it knows anyway.
    forwarded = [f for f in forwarded if not (isinstance(f, str) and f.startswith(CONTROL))]
    handshake = [f for f in forwarded if isinstance(f, str) and f.startswith("{")]
    assert handshake, "no handshake frame was forwarded"
    assert all('"e2ee_' in f for f in handshake)
    boxes = [f for f in forwarded if f not in handshake]
    assert boxes
    for frame in boxes:
        assert isinstance(frame, str)
        assert len(base64.b64decode(frame)) >= e2ee.OVERHEAD
        assert SECRET not in frame
        assert "server.ping" not in frame


def test_the_async_client_speaks_json_rpc_through_the_relay(harness: Harness) -> None:
    from paseo.client import PaseoClient

    async def main() -> None:
        async with PaseoClient(harness.offer()) as client:
            assert client.hello is not None
            assert client.hello.serverId == SERVER_ID
            assert (await client.ping(SECRET)).data == SECRET
            assert not client.reconnect

    asyncio.run(asyncio.wait_for(main(), 60))
    methods = [r["method"] for r in harness.standin.requests]
    assert methods == ["server.hello", "server.ping"]
    # No token travels through the relay: the offer's key is the credential.
    _no_plaintext_after_the_handshake(harness.relay.forwarded)


def test_the_light_client_and_paseo_host_reach_the_daemon(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    from paseo.client.light import LightClient

    monkeypatch.setenv("PASEO_HOST", harness.offer())
    with LightClient() as client:
        assert client.hello["serverId"] == SERVER_ID
        assert client.call("server.ping", {"data": SECRET})["data"] == SECRET
    _no_plaintext_after_the_handshake(harness.relay.forwarded)


def test_a_tampered_offer_fails_cleanly(harness: Harness) -> None:
    from paseo.client.light import LightClient

    wrong = e2ee.export_public_key(PrivateKey.generate().public_key)
    with pytest.raises(Unavailable) as failed:
        LightClient(harness.offer(wrong), request_timeout=20)
    assert str(failed.value) == "Failed to connect via relay offer: Server disconnected"
    assert harness.standin.failures == ["Decryption failed"]


def test_no_daemon_attached_times_out() -> None:
    async def main() -> None:
        server, _ = await start_relay("127.0.0.1", 0)
        endpoint = f"127.0.0.1:{server.sockets[0].getsockname()[1]}"
        key = e2ee.export_public_key(PrivateKey.generate().public_key)
        try:
            with pytest.raises(ConnectorError) as failed:
                await open_tunnel(encode_offer_url(Offer("srv_x", key, endpoint)), timeout=1.5)
            assert str(failed.value) == "Failed to connect via relay offer: Connection timed out"
        finally:
            server.close()
            await server.wait_closed()

    asyncio.run(asyncio.wait_for(main(), 30))


def test_a_relay_that_is_not_there_is_said_plainly(unused_tcp_port: int) -> None:
    key = e2ee.export_public_key(PrivateKey.generate().public_key)
    url = encode_offer_url(Offer("srv_x", key, f"127.0.0.1:{unused_tcp_port}"))

    async def main() -> None:
        with pytest.raises(ConnectorError) as failed:
            await open_tunnel(url, timeout=5)
        assert str(failed.value).startswith("Failed to connect via relay offer: ")
        assert "refused" in str(failed.value).lower()

    asyncio.run(asyncio.wait_for(main(), 30))


@pytest.fixture
def unused_tcp_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_the_cli_says_what_failed_without_a_traceback(run_paseo, unused_tcp_port: int) -> None:
    key = e2ee.export_public_key(PrivateKey.generate().public_key)
    dead = encode_offer_url(Offer("srv_x", key, f"127.0.0.1:{unused_tcp_port}"))
    for host in (dead, "https://app.paseo.sh/#offer=bm90IGpzb24"):
        result = run_paseo("ls", "--host", host)
        assert result.returncode != 0
        assert "Failed to connect via relay offer: " in result.stderr, result.stderr
        assert "Traceback" not in result.stderr
