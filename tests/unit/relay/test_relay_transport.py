"""The daemon side of the relay in process: the handshake state machine of a data socket, the
routing of a channel by its first message, and the control loop under a reconnect storm.

The relay is a loopback websockets server written here; the host is a small
:class:`~paseo_hookspecs.channels.ChannelHost` that echoes what a channel carries (the kernel's
own serving is tested through a real daemon in tests/integration/relay_daemon).
"""

from __future__ import annotations

import asyncio
import gc
import json
import logging
import tracemalloc
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from nacl.public import PrivateKey
from paseo_hookspecs.channels import ChannelClosed, MessageChannel
from paseo_hookspecs.relay import RelayIdentity, RelaySettings
from paseo_hookspecs.transport import Admission, Observed, PeerFacts, SessionLimits
from paseo_relay import e2ee
from paseo_relay.transport import RelayTransport, relay_url
from paseo_relay.tunnel import RelayLimits
from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.exceptions import ConnectionClosed

from paseo.rpc.channels import serve_channel

WAIT = 10.0
DAEMON_KEY = PrivateKey.generate()


class EchoHost:
    """Serves each channel by echoing its messages; remembers every channel it served."""

    def __init__(self, endpoint: str) -> None:
        self.endpoint = endpoint
        self.served: asyncio.Queue[tuple[PeerFacts, str | bytes]] = asyncio.Queue()
        self.ended: asyncio.Queue[str] = asyncio.Queue()

    # RelayHost
    @property
    def relay_settings(self) -> RelaySettings:
        return RelaySettings(enabled=True, endpoint=self.endpoint, public_endpoint=self.endpoint)

    def relay_identity(self) -> RelayIdentity:
        return RelayIdentity("srv_test", bytes(DAEMON_KEY.public_key), bytes(DAEMON_KEY))

    # ChannelHost
    def register_channel_protocol(self, name: str, protocol: Any) -> None:
        raise AssertionError("not used")

    def unregister_channel_protocol(self, name: str) -> None:
        raise AssertionError("not used")

    async def serve_channel(
        self, channel: MessageChannel, facts: PeerFacts, *, limits: SessionLimits
    ) -> None:
        try:
            first = await channel.recv()
            await self.served.put((facts, first))
            await channel.send(f"echo:{first!s}")
            while True:
                message = await channel.recv()
                await channel.send(f"echo:{message!s}")
        except ChannelClosed:
            await self.ended.put("closed")

    # the rest of TransportHost is not used by the relay transport
    listen = "127.0.0.1:0"
    home = "/nonexistent"

    def config_section(self, plugin_id: str) -> None:
        return None


class Relay:
    """Accepts the daemon's sockets: control ones answered with a ``sync``, data ones queued."""

    def __init__(self, *, drop_control: bool = False) -> None:
        self.drop_control = drop_control
        self.controls: asyncio.Queue[ServerConnection] = asyncio.Queue()
        self.data: asyncio.Queue[ServerConnection] = asyncio.Queue()
        self.server: Server | None = None
        self.control_count = 0
        self._counted = asyncio.Condition()

    async def controls_counted(self, n: int) -> None:
        """Wait until ``n`` control sockets were accepted."""
        async with asyncio.timeout(120), self._counted:
            await self._counted.wait_for(lambda: self.control_count >= n)

    async def __aenter__(self) -> Relay:
        self.server = await serve(self._handle, "127.0.0.1", 0, ping_interval=None)
        return self

    async def __aexit__(self, *_exc: object) -> None:
        assert self.server is not None
        self.server.close()
        for connection in list(self.server.connections):
            connection.transport.abort()

    @property
    def endpoint(self) -> str:
        assert self.server is not None
        return f"127.0.0.1:{next(iter(self.server.sockets)).getsockname()[1]}"

    async def _handle(self, ws: ServerConnection) -> None:
        query = parse_qs(urlsplit(ws.request.path if ws.request else "").query)
        if "connectionId" in query:
            await self.data.put(ws)
        else:
            async with self._counted:
                self.control_count += 1
                self._counted.notify_all()
            await ws.recv()  # the daemon's first ping
            await ws.send(json.dumps({"type": "sync", "connectionIds": []}))
            if self.drop_control:
                ws.transport.abort()
                return
            await self.controls.put(ws)
        await ws.wait_closed()


async def _next(queue: asyncio.Queue[Any]) -> Any:
    return await asyncio.wait_for(queue.get(), WAIT)


class Client:
    def __init__(self, ws: ServerConnection) -> None:
        self.ws = ws
        self.channel = e2ee.ClientChannel(e2ee.encode_b64(bytes(DAEMON_KEY.public_key)))

    async def handshake(self) -> None:
        await self.ws.send(self.channel.hello)
        frame = await asyncio.wait_for(self.ws.recv(), WAIT)
        assert frame == e2ee.READY_FRAME
        assert self.channel.receive(frame).opened

    async def say(self, text: str) -> str | bytes | None:
        sealed = self.channel.send(text)
        assert sealed is not None
        await self.ws.send(sealed)
        return self.channel.receive(await asyncio.wait_for(self.ws.recv(), WAIT)).message


async def _connected(relay: Relay, transport: RelayTransport, connection_id: str) -> Client:
    control = await _next(relay.controls)
    await control.send(json.dumps({"type": "connected", "connectionId": connection_id}))
    return Client(await _next(relay.data))


def test_the_urls_follow_the_typescript_rule_for_tls() -> None:
    assert relay_url("relay.paseo.sh:443", "srv_x").startswith("wss://relay.paseo.sh:443/ws?")
    assert relay_url("127.0.0.1:8080", "srv_x") == (
        "ws://127.0.0.1:8080/ws?serverId=srv_x&role=server&v=2"
    )
    assert relay_url("relay.example:443", "srv_x", "conn_1").startswith("ws://")
    assert "connectionId=conn_1" in relay_url("relay.example:443", "srv_x", "conn_1")


def test_handshake_rehello_and_rekey() -> None:
    """Same key again: ready, the channel goes on. A new key: the old channel ends (its sends
    fail), ready, and the next message opens a new channel."""

    async def run() -> None:
        async with Relay() as relay:
            host = EchoHost(relay.endpoint)
            transport = RelayTransport()
            await transport.start(host)  # type: ignore[arg-type]
            try:
                client = await _connected(relay, transport, "conn_a")
                await client.handshake()
                assert await client.say("one") == "echo:one"
                facts, first = await _next(host.served)
                assert facts.relay
                assert facts.peer is None
                assert first == "one"
                # A hello retried with the same key: ready again, same channel.
                await client.ws.send(client.channel.hello)
                assert await asyncio.wait_for(client.ws.recv(), WAIT) == e2ee.READY_FRAME
                assert await client.say("two") == "echo:two"
                assert host.ended.empty()
                # A new client behind the same socket.
                fresh = Client(client.ws)
                await fresh.handshake()
                assert await _next(host.ended) == "closed"
                assert await fresh.say("three") == "echo:three"
                assert (await _next(host.served))[1] == "three"
                assert transport.relay_status().state == "connected"
                assert transport.relay_status().clients == 1
            finally:
                await transport.stop()
            assert transport.relay_status().state == "off"

    asyncio.run(run())


@pytest.mark.parametrize(
    ("first", "reason"),
    [
        ("not a hello", e2ee.HANDSHAKE_FAILED),
        ('{"type":"e2ee_hello","key":"AAAA"}', e2ee.HANDSHAKE_FAILED),
        ('{"type":"hello","clientId":"x"}', e2ee.HANDSHAKE_FAILED),
    ],
)
def test_a_bad_first_frame_fails_the_handshake(first: str, reason: str) -> None:
    async def run() -> tuple[int | None, str]:
        async with Relay() as relay:
            host = EchoHost(relay.endpoint)
            transport = RelayTransport()
            await transport.start(host)  # type: ignore[arg-type]
            try:
                client = await _connected(relay, transport, "conn_b")
                await client.ws.send(first)
                try:
                    await asyncio.wait_for(client.ws.recv(), WAIT)
                except ConnectionClosed as exc:
                    close = exc.rcvd
                assert host.served.empty()
                return (close.code, close.reason) if close else (None, "")
            finally:
                await transport.stop()

    assert asyncio.run(run()) == (1011, reason)


def test_a_thousand_control_reconnects_leave_nothing_behind() -> None:
    """The relay answers and drops the control socket, 1,000 times: the transport keeps
    reconnecting, ends up with as many tasks as it started with and about the same memory."""

    async def run() -> tuple[int, int, int]:
        limits = RelayLimits(reconnect_step=0.0001, reconnect_max=0.001)
        async with Relay(drop_control=True) as relay:
            transport = RelayTransport(limits)
            await transport.start(EchoHost(relay.endpoint))  # type: ignore[arg-type]
            try:
                await relay.controls_counted(50)
                gc.collect()
                tracemalloc.start()
                before = tracemalloc.get_traced_memory()[0]
                tasks_before = len(asyncio.all_tasks())
                await relay.controls_counted(1050)
                gc.collect()
                grown = tracemalloc.get_traced_memory()[0] - before
                tracemalloc.stop()
                return relay.control_count, len(asyncio.all_tasks()) - tasks_before, grown
            finally:
                await transport.stop()

    # Each reconnect logs a line: pytest's capture handler (on the root logger) keeps every
    # record it sees, which is the test harness's memory, not the transport's.
    relay_log = logging.getLogger("paseo.relay")
    relay_log.propagate = False
    try:
        connections, extra_tasks, grown = asyncio.run(run())
    finally:
        relay_log.propagate = True
    assert connections >= 1050
    assert extra_tasks <= 2  # a handler of the relay's, at most, in flight
    assert grown < 2 << 20, grown


# ----------------------------------------------------------------- routing (the kernel)


class QueueChannel:
    """A :class:`MessageChannel` fed by the test."""

    def __init__(self, *messages: str) -> None:
        self.inbound: asyncio.Queue[str | None] = asyncio.Queue()
        for message in messages:
            self.inbound.put_nowait(message)
        self.sent: list[str | bytes] = []
        self.closed: tuple[int, str] | None = None

    async def recv(self) -> str | bytes:
        message = await self.inbound.get()
        if message is None or self.closed is not None:
            raise ChannelClosed
        return message

    async def send(self, frame: str | bytes) -> None:
        self.sent.append(frame)

    async def close(self, code: int, reason: str) -> None:
        self.closed = (code, reason)
        self.inbound.put_nowait(None)


class Protocol:
    def __init__(self, name: str) -> None:
        self.name = name
        self.served: list[tuple[str | bytes, str]] = []

    def claims(self, first: str | bytes) -> bool:
        return isinstance(first, str) and first.startswith(self.name)

    async def serve(
        self, channel: MessageChannel, first: str | bytes, *, kind: str, observed: Observed
    ) -> None:
        self.served.append((first, kind))


class Session:
    def __init__(self) -> None:
        self.received: list[str | bytes] = []
        self.lost = False
        self._lost = asyncio.Event()

    def receive(self, frame: str | bytes) -> None:
        self.received.append(frame)

    async def run(self) -> None:
        await self._lost.wait()

    def connection_lost(self) -> None:
        self.lost = True
        self._lost.set()


OBSERVED = Observed("relay", False, None, None, None)


async def _route(
    channel: QueueChannel, protocols: dict[str, Protocol], status: int = 200
) -> list[Session]:
    sessions: list[Session] = []

    async def admit(facts: PeerFacts) -> Admission:
        assert facts.relay
        if status != 200:
            return Admission(status, observed=OBSERVED)
        return Admission(200, kind="remote", observed=OBSERVED)

    def open_session(kind: str, _c: MessageChannel, _o: Observed, _l: SessionLimits) -> Any:
        assert kind == "remote"
        sessions.append(Session())
        return sessions[-1]

    await asyncio.wait_for(
        serve_channel(
            channel,
            PeerFacts("relay", False, None, relay=True),
            limits=SessionLimits(hello_timeout=0.2),
            admit=admit,
            protocols=protocols,
            open_session=open_session,
        ),
        WAIT,
    )
    return sessions


def test_the_first_message_routes_the_channel() -> None:
    ts, other = Protocol('{"type"'), Protocol("other")
    channel = QueueChannel('{"type":"hello"}')
    assert asyncio.run(_route(channel, {"other": other, "ts": ts})) == []
    assert ts.served == [('{"type":"hello"}', "remote")]
    assert other.served == []

    rpc = QueueChannel('{"jsonrpc":"2.0","id":1,"method":"server.hello"}', "second")
    rpc.inbound.put_nowait(None)
    (session,) = asyncio.run(_route(rpc, {"ts": ts}))
    assert session.received == ['{"jsonrpc":"2.0","id":1,"method":"server.hello"}', "second"]
    assert session.lost


def test_refused_or_silent_channels_are_closed() -> None:
    refused = QueueChannel("x")
    assert asyncio.run(_route(refused, {}, status=503)) == []
    assert refused.closed is not None
    assert refused.closed[0] == 1013
    unauthorized = QueueChannel("x")
    asyncio.run(_route(unauthorized, {}, status=401))
    assert unauthorized.closed is not None
    assert unauthorized.closed[0] == 4401
    silent = QueueChannel()
    assert asyncio.run(_route(silent, {})) == []
    assert silent.closed is not None
    assert silent.closed[0] == 4001
