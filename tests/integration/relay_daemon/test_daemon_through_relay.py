"""A real daemon with ``daemon.relay.enabled`` dialling a relay the test plays: the control
socket, the data sockets, and the client at the far end of the tunnel (the E2EE initiator of
:mod:`paseo_relay.e2ee`). Loopback only, a temporary home, every wait bounded.

The relay here is scripted, not a relay server: it lets each test say exactly what a relay
(honest or hostile) sends and see exactly what the daemon sends back.
"""

from __future__ import annotations

import asyncio
import base64
import json
import secrets
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import psutil
import pytest
from helpers.daemon_rpc import LiveDaemon
from nacl.public import Box, PrivateKey, PublicKey
from paseo_relay import e2ee
from paseo_tswire.envelope import validate_outbound
from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.exceptions import ConnectionClosed

WAIT = 20.0


class ScriptedRelay:
    """Accepts the daemon's sockets and hands them to the test, keyed by role."""

    def __init__(self) -> None:
        self.controls: asyncio.Queue[ServerConnection] = asyncio.Queue()
        self._data: dict[str, asyncio.Queue[ServerConnection]] = {}
        self.requests: list[dict[str, list[str]]] = []
        self.open_data = 0
        self.most_open_data = 0
        self.no_data = asyncio.Event()
        """Set while no data socket is open."""
        self.server: Server | None = None

    async def __aenter__(self) -> ScriptedRelay:
        self.server = await serve(
            self._handle, "127.0.0.1", 0, compression=None, max_size=None, ping_interval=None
        )
        return self

    async def __aexit__(self, *_exc: object) -> None:
        assert self.server is not None
        self.server.close()
        for connection in list(self.server.connections):
            connection.transport.abort()

    @property
    def endpoint(self) -> str:
        assert self.server is not None
        port = next(iter(self.server.sockets)).getsockname()[1]
        return f"127.0.0.1:{port}"

    def data_queue(self, connection_id: str) -> asyncio.Queue[ServerConnection]:
        return self._data.setdefault(connection_id, asyncio.Queue())

    async def _handle(self, ws: ServerConnection) -> None:
        query = parse_qs(urlsplit(ws.request.path if ws.request else "").query)
        self.requests.append(query)
        connection_id = query.get("connectionId", [None])[0]
        if connection_id is None:
            await self.controls.put(ws)
            await ws.wait_closed()
            return
        self.open_data += 1
        self.no_data.clear()
        self.most_open_data = max(self.most_open_data, self.open_data)
        try:
            await self.data_queue(connection_id).put(ws)
            await ws.wait_closed()
        finally:
            self.open_data -= 1
            if not self.open_data:
                self.no_data.set()

    async def control(self) -> ServerConnection:
        """The next control socket, after its first ping (answered by a ``sync``)."""
        ws = await asyncio.wait_for(self.controls.get(), WAIT)
        ping = json.loads(await asyncio.wait_for(ws.recv(), WAIT))
        assert ping["type"] == "ping"
        await ws.send(json.dumps({"type": "sync", "connectionIds": []}))
        return ws

    async def client(self, control: ServerConnection, connection_id: str) -> ServerConnection:
        """Announce a client; the daemon's data socket for it."""
        await control.send(json.dumps({"type": "connected", "connectionId": connection_id}))
        return await asyncio.wait_for(self.data_queue(connection_id).get(), WAIT)


class TunnelClient:
    """The client end of one tunnel, speaking through the data socket the daemon opened."""

    def __init__(self, ws: ServerConnection, daemon_key_b64: str) -> None:
        self.ws = ws
        self.channel = e2ee.ClientChannel(daemon_key_b64)
        self.received: list[str | bytes] = []
        """Every raw frame the daemon sent on the socket (the capture)."""

    async def handshake(self) -> None:
        await self.ws.send(self.channel.hello)
        async with asyncio.timeout(WAIT):
            while True:
                frame = await self.ws.recv()
                self.received.append(frame)
                if self.channel.receive(frame).opened:
                    return

    async def send(self, message: dict[str, Any]) -> None:
        frame = self.channel.send(json.dumps(message))
        assert frame is not None
        await self.ws.send(frame)

    async def recv(self) -> dict[str, Any]:
        async with asyncio.timeout(WAIT):
            while True:
                frame = await self.ws.recv()
                self.received.append(frame)
                message = self.channel.receive(frame).message
                if message is not None:
                    parsed: dict[str, Any] = json.loads(message)
                    return parsed

    async def call(self, request_id: int, method: str, params: Any = None) -> dict[str, Any]:
        body: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            body["params"] = params
        await self.send(body)
        while True:
            message = await self.recv()
            if message.get("id") == request_id and "method" not in message:
                return message


async def closed_with(ws: ServerConnection) -> tuple[int | None, str]:
    """The close the daemon sent on ``ws`` (frames before it are skipped)."""
    async with asyncio.timeout(WAIT):
        try:
            while True:
                await ws.recv()
        except ConnectionClosed as exc:
            frame = exc.rcvd
            return (frame.code, frame.reason) if frame is not None else (None, "")


def daemon_key(home: Path) -> str:
    key: str = json.loads((home / "daemon-keypair.json").read_text())["publicKeyB64"]
    return key


def server_id(home: Path) -> str:
    return (home / "server-id").read_text().strip()


StartDaemon = Callable[..., LiveDaemon]


@pytest.fixture
def relay_daemon(daemon_factory: StartDaemon) -> Callable[[str], LiveDaemon]:
    def start(endpoint: str, **env: str) -> LiveDaemon:
        return daemon_factory(
            env={"PASEO_RELAY_ENABLED": "true", "PASEO_RELAY_ENDPOINT": endpoint, **env}
        )

    return start


async def started(
    relay: ScriptedRelay, start: Callable[[str], LiveDaemon]
) -> tuple[LiveDaemon, ServerConnection]:
    daemon = await asyncio.to_thread(start, relay.endpoint)
    return daemon, await relay.control()


def status(daemon: LiveDaemon, run_paseo: Callable[..., Any]) -> dict[str, Any]:
    result = run_paseo(
        "daemon", "status", "-o", "json", env={"PASEO_HOME": str(daemon.home)}, timeout=30
    )
    assert result.returncode == 0, result.stderr
    found: dict[str, Any] = json.loads(result.stdout)
    return found


async def _aiter(ws: ServerConnection) -> AsyncIterator[str | bytes]:
    async for frame in ws:
        yield frame


# ---------------------------------------------------------------------------------- honest


def test_json_rpc_through_the_relay_is_a_remote_session_and_only_ciphertext_crosses(
    relay_daemon: Callable[[str], LiveDaemon], run_paseo: Callable[..., Any]
) -> None:
    async def run() -> tuple[LiveDaemon, dict[str, Any], dict[str, Any], list[str | bytes]]:
        async with ScriptedRelay() as relay:
            daemon, control = await started(relay, relay_daemon)
            ws = await relay.client(control, "conn_0123456789abcdef")
            client = TunnelClient(ws, daemon_key(daemon.home))
            await client.handshake()
            hello = await client.call(
                1, "server.hello", {"clientId": "relayed", "clientType": "cli"}
            )
            agents = await client.call(2, "agent.list", {})
            shown = await asyncio.to_thread(status, daemon, run_paseo)
            return daemon, hello, {"agents": agents, "status": shown}, client.received

    daemon, hello, seen, captured = asyncio.run(run())
    assert hello["result"]["sessionKind"] == "remote"
    assert "result" in seen["agents"], seen["agents"]
    relay = seen["status"]["relay"]
    assert relay["state"] == "connected"
    assert relay["clients"] == 1
    # The capture: the ready is the only plaintext; every later frame is one sealed box.
    assert captured[0] == e2ee.READY_FRAME
    for frame in captured[1:]:
        assert isinstance(frame, str)
        assert not frame.lstrip().startswith("{")
        assert len(base64.b64decode(frame, validate=True)) > e2ee.OVERHEAD
    assert server_id(daemon.home) in json.dumps(seen["status"])


def test_a_typescript_hello_through_the_relay_gets_server_info(
    relay_daemon: Callable[[str], LiveDaemon],
) -> None:
    async def run() -> tuple[str, dict[str, Any]]:
        async with ScriptedRelay() as relay:
            daemon, control = await started(relay, relay_daemon)
            ws = await relay.client(control, "conn_ts")
            client = TunnelClient(ws, daemon_key(daemon.home))
            await client.handshake()
            await client.send(
                {
                    "type": "hello",
                    "clientId": "ts-app-1",
                    "clientType": "mobile",
                    "protocolVersion": 1,
                    "capabilities": {},
                    "appVersion": "0.1.0",
                }
            )
            return server_id(daemon.home), await client.recv()

    sid, info = asyncio.run(run())
    validate_outbound(info)
    assert info["type"] == "session"
    payload = info["message"]["payload"]
    assert payload["status"] == "server_info"
    assert payload["serverId"] == sid


def test_the_control_socket_pings_answers_pings_and_disconnected_closes_the_client(
    relay_daemon: Callable[[str], LiveDaemon],
) -> None:
    async def run() -> tuple[dict[str, Any], tuple[int | None, str], dict[str, list[str]]]:
        async with ScriptedRelay() as relay:
            daemon, control = await started(relay, relay_daemon)
            await control.send(json.dumps({"type": "ping", "ts": 1}))
            async with asyncio.timeout(WAIT):
                while True:
                    pong = json.loads(await control.recv())
                    if pong["type"] == "pong":
                        break
            ws = await relay.client(control, "conn_bye")
            client = TunnelClient(ws, daemon_key(daemon.home))
            await client.handshake()
            await control.send(json.dumps({"type": "disconnected", "connectionId": "conn_bye"}))
            return pong, await closed_with(ws), relay.requests[-1]

    pong, close, query = asyncio.run(run())
    assert isinstance(pong["ts"], int)
    assert close == (1001, "Client disconnected")
    assert query["role"] == ["server"]
    assert query["v"] == ["2"]
    assert query["connectionId"] == ["conn_bye"]


def test_no_relay_keeps_the_daemon_off_the_relay(
    daemon_factory: StartDaemon, run_paseo: Callable[..., Any], paseo_home: Path
) -> None:
    """``daemon.relay.enabled`` in config.json, and ``--no-relay`` wins for this run."""
    paseo_home.mkdir(parents=True)
    (paseo_home / "config.json").write_text(
        json.dumps({"daemon": {"relay": {"enabled": True, "endpoint": "127.0.0.1:9"}}})
    )
    result = run_paseo(
        "daemon", "start", "--no-relay", "-o", "json", env={"PASEO_HOME": str(paseo_home)}
    )
    assert result.returncode == 0, result.stderr
    try:
        shown = run_paseo("daemon", "status", "-o", "json", env={"PASEO_HOME": str(paseo_home)})
        assert json.loads(shown.stdout)["relay"]["state"] == "off"
        table = run_paseo("daemon", "status", env={"PASEO_HOME": str(paseo_home)})
        assert "relay" in table.stdout
    finally:
        run_paseo("daemon", "stop", "--force", env={"PASEO_HOME": str(paseo_home)})
    # Nothing the TypeScript daemon's strict daemon.relay schema rejects was written.
    relay = json.loads((paseo_home / "config.json").read_text())["daemon"]["relay"]
    assert set(relay) <= {"enabled", "endpoint", "publicEndpoint"}


# --------------------------------------------------------------------------------- hostile


def _forged_box(frame_text: str) -> str:
    """A box sealed with a key pair the daemon never saw (what a relay could make)."""
    stranger = Box(PrivateKey.generate(), PrivateKey.generate().public_key)
    return e2ee.seal(stranger, frame_text)


def test_a_hostile_relay_reaches_no_session_and_the_daemon_lives(
    relay_daemon: Callable[[str], LiveDaemon],
) -> None:
    """Garbage and oversized control frames, a bad first frame, a handshake with a key of the
    relay's own (it cannot seal for the daemon's key), plaintext after the handshake, a frame
    replayed on its socket, and a handshake replayed on another socket: each data socket is
    closed with 1011 and the control socket carries on."""

    async def run() -> dict[str, Any]:
        async with ScriptedRelay() as relay:
            daemon, control = await started(relay, relay_daemon)
            key = daemon_key(daemon.home)
            for garbage in (
                "not json",
                "[1,2,3]",
                '{"type":"connected","connectionId":"../../etc"}',
                '{"type":"sync","connectionIds":"x"}',
                b"\x00\xff binary",
                "{" * 10000,
            ):
                await control.send(garbage)
            outcomes: dict[str, Any] = {}

            ws = await relay.client(control, "conn_badhello")
            await ws.send("hello?")
            outcomes["bad hello"] = await closed_with(ws)

            ws = await relay.client(control, "conn_badkey")
            await ws.send(json.dumps({"type": "e2ee_hello", "key": "AAAA"}))
            outcomes["short key"] = await closed_with(ws)

            ws = await relay.client(control, "conn_forged")
            own = PrivateKey.generate()
            await ws.send(e2ee.hello_frame(own.public_key))
            assert await asyncio.wait_for(ws.recv(), WAIT) == e2ee.READY_FRAME
            # The relay knows its own secret but not the daemon's public key: a guess fails.
            guess = Box(own, PublicKey(secrets.token_bytes(32)))
            await ws.send(e2ee.seal(guess, '{"jsonrpc":"2.0","id":1,"method":"agent.list"}'))
            outcomes["forged"] = await closed_with(ws)

            ws = await relay.client(control, "conn_plain")
            client = TunnelClient(ws, key)
            await client.handshake()
            await ws.send(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "server.hello"}))
            outcomes["plaintext"] = await closed_with(ws)

            ws = await relay.client(control, "conn_replay")
            client = TunnelClient(ws, key)
            await client.handshake()
            sealed = client.channel.send(
                json.dumps(
                    {
                        "jsonrpc": "2.0",
                        "id": 1,
                        "method": "server.hello",
                        "params": {"clientId": "r", "clientType": "cli"},
                    }
                )
            )
            assert sealed is not None
            await ws.send(sealed)
            await client.recv()
            await ws.send(sealed)
            outcomes["replayed frame"] = await closed_with(ws)

            ws = await relay.client(control, "conn_replay2")
            await ws.send(client.channel.hello)  # the same client key, on another socket
            outcomes["replayed handshake"] = await closed_with(ws)

            ws = await relay.client(control, "conn_huge")
            client = TunnelClient(ws, key)
            await client.handshake()
            await ws.send("A" * (5 << 20))
            outcomes["huge"] = await closed_with(ws)

            # The control socket still works, and so does an honest client.
            ws = await relay.client(control, "conn_honest")
            client = TunnelClient(ws, key)
            await client.handshake()
            reply = await client.call(1, "server.hello", {"clientId": "ok", "clientType": "cli"})
            outcomes["honest"] = reply["result"]["sessionKind"]
            outcomes["pid alive"] = psutil.pid_exists(daemon.pid)
            outcomes["log"] = (daemon.home / "daemon.log").read_text(errors="replace")
            return outcomes

    outcomes = asyncio.run(run())
    handshake_failed = (1011, e2ee.HANDSHAKE_FAILED)
    assert outcomes["bad hello"] == handshake_failed
    assert outcomes["short key"] == handshake_failed
    assert outcomes["forged"] == (1011, e2ee.DECRYPTION_FAILED)
    assert outcomes["plaintext"] == (1011, e2ee.PLAINTEXT_ON_ENCRYPTED)
    assert outcomes["replayed frame"] == (1011, e2ee.REPLAYED)
    assert outcomes["replayed handshake"] == handshake_failed
    assert outcomes["huge"][0] == 1009
    assert outcomes["honest"] == "remote"
    assert outcomes["pid alive"]
    assert "Traceback" not in outcomes["log"]


def test_storms_of_clients_and_control_reconnects_do_not_grow_the_daemon(
    relay_daemon: Callable[[str], LiveDaemon],
) -> None:
    """1,000 clients announced and dropped one by one, 1,000 more announced at once (no more
    than the cap get a data socket), and the control socket dropped again and again: the
    daemon's memory stays bounded and it still serves an honest client."""

    async def run() -> dict[str, Any]:
        async with ScriptedRelay() as relay:
            daemon, control = await started(relay, relay_daemon)
            process = psutil.Process(daemon.pid)
            key = daemon_key(daemon.home)
            # Warm up the paths once so the baseline includes their imports.
            ws = await relay.client(control, "conn_warm")
            client = TunnelClient(ws, key)
            await client.handshake()
            await client.call(1, "server.hello", {"clientId": "w", "clientType": "cli"})
            await control.send(json.dumps({"type": "disconnected", "connectionId": "conn_warm"}))
            await closed_with(ws)
            baseline = process.memory_info().rss

            for i in range(1000):
                connection_id = f"conn_one{i}"
                ws = await relay.client(control, connection_id)
                await ws.send(e2ee.hello_frame(PrivateKey.generate().public_key))
                await control.send(
                    json.dumps({"type": "disconnected", "connectionId": connection_id})
                )
                await closed_with(ws)
            burst = [f"conn_burst{i}" for i in range(1000)]
            for connection_id in burst:
                await control.send(json.dumps({"type": "connected", "connectionId": connection_id}))
            await pinged(control)
            for connection_id in burst:
                await control.send(
                    json.dumps({"type": "disconnected", "connectionId": connection_id})
                )
            await pinged(control)
            await asyncio.wait_for(relay.no_data.wait(), WAIT)
            # Control storms: the relay drops the control socket as soon as it answered.
            for _ in range(5):
                await control.close()
                control = await relay.control()
            ws = await relay.client(control, "conn_after")
            client = TunnelClient(ws, key)
            await client.handshake()
            reply = await client.call(1, "server.hello", {"clientId": "a", "clientType": "cli"})
            return {
                "growth": process.memory_info().rss - baseline,
                "kind": reply["result"]["sessionKind"],
                "most open": relay.most_open_data,
                "log": (daemon.home / "daemon.log").read_text(errors="replace"),
            }

    seen = asyncio.run(run())
    assert seen["kind"] == "remote"
    assert seen["most open"] <= 64
    assert seen["growth"] < 40 << 20, seen["growth"]
    assert "Traceback" not in seen["log"]


async def pinged(control: ServerConnection) -> None:
    """Wait for the answer to a ping: the daemon has handled every control frame before it."""
    await control.send(json.dumps({"type": "ping", "ts": 0}))
    async with asyncio.timeout(WAIT):
        while json.loads(await control.recv())["type"] != "pong":
            pass


if sys.platform != "linux":  # pragma: no cover - psutil's rss is what the bound reads
    pytestmark = pytest.mark.skip("linux only")
