"""The daemon's side of the relay: one outbound control socket, one data socket per client.

The daemon dials out (nothing listens): ``ws://<endpoint>/ws?serverId=<id>&role=server&v=2``
(``wss`` only for exactly ``relay.paseo.sh:443``, as the TypeScript daemon decides). On that
control socket the relay sends ``sync`` (the clients already waiting), then ``connected`` and
``disconnected`` per client; the daemon pings every 10 s, answers the relay's pings, drops a
socket silent for 30 s or that said nothing parsable within 8 s of opening, and reconnects after
``min(30 s, 1 s * attempt)`` plus jitter. For each announced client it opens a data socket (15 s
to open) served by a :class:`~paseo_relay.tunnel.Tunnel`; ``disconnected`` closes it with 1001.
Data sockets outlive a control reconnect, as the TypeScript daemon's do.

Everything the relay sends is untrusted: control frames are size-capped and only well-formed
ones count, connection ids are checked before they go into a URL, at most
:attr:`~paseo_relay.tunnel.RelayLimits.max_clients` data sockets exist at once, and no close
waits for an answer the relay never sends.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import random
import re
import time
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

from paseo_hookspecs.channels import ChannelHost
from paseo_hookspecs.interfaces.transport import Transport
from paseo_hookspecs.relay import RelayHost, RelayIdentity, RelayState, RelayStatus
from paseo_hookspecs.transport import TransportHost
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidURI

from paseo_relay.limits import CLOSE_CLIENT_GONE, RelayLimits, SeenKeys

if TYPE_CHECKING:
    from paseo_relay.tunnel import Tunnel

log = logging.getLogger("paseo.relay")

HOSTED_RELAY = "relay.paseo.sh:443"
"""The only endpoint dialled with TLS (``shouldUseTlsForDefaultHostedRelay``)."""
_CONNECTION_ID = re.compile(r"[A-Za-z0-9_-]{1,128}")
_STOP_GRACE = 2.0


def relay_url(endpoint: str, server_id: str, connection_id: str | None = None) -> str:
    """``buildRelayWebSocketUrl``: the socket URL for the daemon's role at ``endpoint``."""
    host = endpoint.strip()
    for prefix in ("wss://", "ws://", "https://", "http://"):
        if host.lower().startswith(prefix):
            host = host[len(prefix) :]
    host = host.split("/", 1)[0]
    scheme = "wss" if host.lower() == HOSTED_RELAY else "ws"
    query: dict[str, str] = {"serverId": server_id, "role": "server", "v": "2"}
    if connection_id is not None:
        query["connectionId"] = connection_id
    return f"{scheme}://{host}/ws?{urlencode(query)}"


def _describe(exc: BaseException) -> str:
    if isinstance(exc, ConnectionClosed):
        frame = exc.rcvd or exc.sent
        if frame is not None:
            return f"closed {frame.code} {frame.reason}".strip()
        return "connection lost"
    if isinstance(exc, TimeoutError):
        return "timed out"
    return str(exc) or type(exc).__name__


class RelayTransport(Transport):
    """See the module docstring; registered as ``relay``, active when ``daemon.relay.enabled``."""

    name = "relay"

    def __init__(self, limits: RelayLimits | None = None) -> None:
        self.limits = limits or RelayLimits()
        self._host: TransportHost | None = None
        self._endpoint: str | None = None
        self._identity: RelayIdentity | None = None
        self._state: RelayState = "off"
        self._last_error: str | None = None
        self._control: asyncio.Task[None] | None = None
        self._tunnels: dict[str, asyncio.Task[None]] = {}
        self._open: dict[str, Tunnel] = {}
        self._gone: set[str] = set()
        """Clients that left while their data socket was opening (a subset of _tunnels)."""
        self._seen_keys = SeenKeys(self.limits.seen_keys)
        self._refused_clients = 0
        self.control_connections = 0
        """Control sockets opened so far (tests watch reconnects with it)."""

    # ----------------------------------------------------------------- status

    def relay_status(self) -> RelayStatus:
        """See :class:`paseo_hookspecs.relay.RelayReporter`."""
        return RelayStatus(
            state=self._state,
            endpoint=self._endpoint,
            clients=len(self._open),
            last_error=self._last_error,
        )

    # -------------------------------------------------------------- lifecycle

    async def start(self, host: TransportHost) -> list[str]:
        self._host = host
        if not isinstance(host, RelayHost) or not isinstance(host, ChannelHost):
            log.warning("relay: this daemon cannot serve relayed connections")
            return []
        settings = host.relay_settings
        if not settings.enabled:
            return []
        self._endpoint = settings.endpoint
        self._identity = await asyncio.to_thread(host.relay_identity)
        self._state = "connecting"
        self._control = asyncio.get_running_loop().create_task(self._control_loop())
        # No address: nothing listens here, and the daemon's clients connect to what
        # transports return (the relay's state is in server.status instead).
        return []

    async def stop(self) -> None:
        control, self._control = self._control, None
        if control is not None:
            control.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await control
        tunnels = list(self._tunnels.values())
        for tunnel in list(self._open.values()):
            tunnel.close(CLOSE_CLIENT_GONE, "daemon stopping")
        if tunnels:
            _done, pending = await asyncio.wait(tunnels, timeout=_STOP_GRACE)
            for task in pending:
                task.cancel()
            await asyncio.gather(*pending, return_exceptions=True)
        for tunnel in list(self._open.values()):
            tunnel.abort()
        self._tunnels.clear()
        self._open.clear()
        self._state = "off"

    # ---------------------------------------------------------------- control

    async def _control_loop(self) -> None:
        attempt = 0
        while True:
            try:
                answered = await self._control_once()
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - whatever the relay did, try again later
                self._last_error = _describe(exc)
                answered = False
                log.info("relay: control connection to %s: %s", self._endpoint, self._last_error)
            attempt = 1 if answered else attempt + 1
            self._state = "reconnecting"
            delay = min(self.limits.reconnect_max, self.limits.reconnect_step * attempt)
            await asyncio.sleep(delay + random.uniform(0, delay / 4))  # noqa: S311 - jitter

    async def _control_once(self) -> bool:
        """One control connection, until it ends; whether the relay answered on it."""
        assert self._identity is not None
        assert self._endpoint is not None
        limits = self.limits
        url = relay_url(self._endpoint, self._identity.server_id)
        ws = await connect(
            url,
            open_timeout=limits.open_timeout,
            close_timeout=limits.close_timeout,
            ping_interval=None,
            compression=None,
            max_size=limits.max_control_bytes,
            max_queue=4,
            user_agent_header=None,
            logger=log,
        )
        self.control_connections += 1
        answered = False
        pinger = asyncio.get_running_loop().create_task(self._ping(ws))
        try:
            deadline = time.monotonic() + limits.ready_timeout
            while True:
                try:
                    # asyncio.timeout, not wait_for: on 3.11 wait_for can lose a cancel
                    # (the daemon stopping) that races a frame's arrival.
                    async with asyncio.timeout(max(0.0, deadline - time.monotonic())):
                        raw = await ws.recv()
                except TimeoutError:
                    self._last_error = (
                        "the relay went silent" if answered else "the relay did not answer"
                    )
                    return answered
                except ConnectionClosed as exc:
                    self._last_error = _describe(exc)
                    return answered
                message = _control_message(raw)
                if answered:
                    # Any frame shows the socket alive; only a parsable one makes it ready.
                    deadline = time.monotonic() + limits.stale_after
                if message is None:
                    continue
                if not answered:
                    answered = True
                    self._state = "connected"
                    self._last_error = None
                    log.info("relay: connected to %s", self._endpoint)
                deadline = time.monotonic() + limits.stale_after
                await self._on_control(ws, message)
        finally:
            pinger.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await pinger
            # Never wait for a Close answer: drop the TCP connection.
            ws.transport.abort()

    async def _ping(self, ws: ClientConnection) -> None:
        with contextlib.suppress(ConnectionClosed):
            while True:
                await ws.send(json.dumps({"type": "ping", "ts": int(time.time() * 1000)}))
                await asyncio.sleep(self.limits.ping_interval)

    async def _on_control(self, ws: ClientConnection, message: dict[str, Any]) -> None:
        kind = message["type"]
        if kind == "ping":
            with contextlib.suppress(ConnectionClosed):
                await ws.send(json.dumps({"type": "pong", "ts": int(time.time() * 1000)}))
        elif kind == "sync":
            for connection_id in message["connectionIds"]:
                self._ensure_tunnel(connection_id)
        elif kind == "connected":
            self._ensure_tunnel(message["connectionId"])
        elif kind == "disconnected":
            tunnel = self._open.get(message["connectionId"])
            if tunnel is not None:
                tunnel.close(CLOSE_CLIENT_GONE, "Client disconnected")
            elif message["connectionId"] in self._tunnels:
                # Still opening: it closes as soon as it is open. (Not a cancel: a cancel
                # that races the socket's opening can be lost.)
                self._gone.add(message["connectionId"])

    # ------------------------------------------------------------------- data

    def _ensure_tunnel(self, connection_id: str) -> None:
        if connection_id in self._tunnels:
            return
        if len(self._tunnels) >= self.limits.max_clients:
            self._refused_clients += 1
            if self._refused_clients == 1 or self._refused_clients % 100 == 0:
                log.warning(
                    "relay: %d data sockets are open (the maximum): client %s not served "
                    "(%d refused so far)",
                    len(self._tunnels),
                    connection_id,
                    self._refused_clients,
                )
            return
        task = asyncio.get_running_loop().create_task(self._serve_client(connection_id))
        self._tunnels[connection_id] = task
        task.add_done_callback(lambda _t: self._tunnel_done(connection_id, task))

    def _tunnel_done(self, connection_id: str, task: asyncio.Task[None]) -> None:
        if self._tunnels.get(connection_id) is task:
            del self._tunnels[connection_id]
        if not task.cancelled() and task.exception() is not None:
            log.warning("relay: client %s failed", connection_id, exc_info=task.exception())

    async def _serve_client(self, connection_id: str) -> None:
        assert self._identity is not None
        assert self._endpoint is not None
        host = self._host
        assert isinstance(host, ChannelHost)
        assert isinstance(host, RelayHost)
        limits = self.limits
        url = relay_url(self._endpoint, self._identity.server_id, connection_id)
        ws: ClientConnection | None = None
        try:
            ws = await connect(
                url,
                open_timeout=limits.open_timeout,
                close_timeout=limits.close_timeout,
                ping_interval=None,
                compression=None,
                max_size=limits.max_frame_bytes,
                max_queue=limits.max_queue,
                user_agent_header=None,
                logger=log,
            )
            # Read each time: a keypair rotated since start-up holds for new clients.
            identity = await asyncio.to_thread(host.relay_identity)
            # The tunnel and its E2EE code are imported for the first relayed client: a daemon
            # with the relay off (or no client yet) never loads them.
            from paseo_relay.tunnel import Tunnel

            tunnel = Tunnel(
                connection_id,
                ws,
                host=host,
                secret_key=identity.secret_key,
                limits=limits,
                seen_keys=self._seen_keys,
            )
            self._open[connection_id] = tunnel
            if connection_id in self._gone:
                tunnel.close(CLOSE_CLIENT_GONE, "Client disconnected")
            await tunnel.run()
            await tunnel.closed_fully()
        except (OSError, TimeoutError, InvalidHandshake, InvalidURI) as exc:
            log.info("relay: data socket for %s: %s", connection_id, _describe(exc))
        finally:
            # Also when cancelled (the client left while its socket was opening).
            self._open.pop(connection_id, None)
            self._gone.discard(connection_id)
            if ws is not None:
                ws.transport.abort()


def _control_message(raw: str | bytes) -> dict[str, Any] | None:
    """A well-formed control message (``tryParseControlMessage``), else ``None``."""
    if not isinstance(raw, str):
        return None
    try:
        data = json.loads(raw)
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    kind = data.get("type")
    if kind in ("ping", "pong"):
        return data
    if kind == "sync":
        ids = data.get("connectionIds")
        if not isinstance(ids, list):
            return None
        return {"type": kind, "connectionIds": [i for i in ids if _valid_id(i)]}
    if kind in ("connected", "disconnected") and _valid_id(data.get("connectionId")):
        return data
    return None


def _valid_id(value: object) -> bool:
    return isinstance(value, str) and _CONNECTION_ID.fullmatch(value) is not None


__all__ = ["HOSTED_RELAY", "RelayTransport", "relay_url"]
