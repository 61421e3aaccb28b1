"""One relayed client: its data socket, the responder side of the E2EE handshake, and the
decrypted messages served as a remote session of the daemon.

The daemon dials ``/ws?serverId=…&role=server&connectionId=<id>&v=2`` when the relay announces
the client; the relay then flushes what the client sent meanwhile, usually its
``e2ee_hello``. The first frame must be a valid hello (else close 1011 "E2EE handshake
failed"); the daemon answers ``e2ee_ready`` and hands the decrypted channel to the host
(:meth:`paseo_hookspecs.channels.ChannelHost.serve_channel`), which admits it as ``remote``
(:attr:`paseo_hookspecs.transport.PeerFacts.relay`) and serves the protocol its first message
speaks. Later hellos: the same key is answered ready again; a new key is a new client behind the
same socket, so the current session's channel ends (what was queued for the old client is
dropped with it) and the next message opens a new one. A box that does not open or plaintext
JSON closes the socket with 1011 and the error's text.

Messages are pulled from the socket only as the session reads them: websockets' small inbound
queue (:attr:`RelayLimits.max_queue` frames of at most :attr:`RelayLimits.max_frame_bytes`) then
pushes back on the relay, so a flood costs a bounded number of bytes per client.

Defences against a relay that replays what it saw: a box whose nonce the channel already
opened is refused (:data:`paseo_relay.e2ee.REPLAY_WINDOW`), and a client key
that completed a handshake on another data socket is refused (:class:`SeenKeys`): TypeScript
clients make a fresh key per connection, so a replayed handshake is the only way one comes back.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import TYPE_CHECKING

from nacl.public import PrivateKey
from paseo_hookspecs.channels import ChannelClosed
from paseo_hookspecs.transport import PeerFacts
from websockets.asyncio.client import ClientConnection
from websockets.exceptions import ConnectionClosed

from paseo_relay import e2ee
from paseo_relay.limits import CLOSE_CLIENT_GONE, RelayLimits, SeenKeys

if TYPE_CHECKING:
    from paseo_hookspecs.channels import ChannelHost

log = logging.getLogger("paseo.relay")

RELAY_FACTS = PeerFacts(transport="relay", unix_socket=False, peer=None, relay=True)


class Tunnel:
    """The data socket of one relay connection id (see the module docstring)."""

    def __init__(
        self,
        connection_id: str,
        ws: ClientConnection,
        *,
        host: ChannelHost,
        secret_key: bytes,
        limits: RelayLimits,
        seen_keys: SeenKeys,
    ) -> None:
        self.connection_id = connection_id
        self._ws = ws
        self._host = host
        self._responder = e2ee.ResponderChannel(PrivateKey(secret_key))
        self._limits = limits
        self._seen_keys = seen_keys
        self._client_key: bytes | None = None
        self._generation = 0
        """Bumped by a re-key: a channel of an older generation is closed."""
        self._closing: asyncio.Task[None] | None = None

    # ------------------------------------------------------------------ life

    async def run(self) -> None:
        """Complete the handshake, serve the client until the socket ends."""
        ws = self._ws
        try:
            async with asyncio.timeout(self._limits.handshake_timeout):
                first = await ws.recv()
        except TimeoutError:
            self.close(e2ee.CLOSE_CODE, e2ee.HANDSHAKE_FAILED)
            return
        except ConnectionClosed:
            return
        try:
            received = self._handshake(first)
            for frame in received.outgoing:
                await ws.send(frame)
        except e2ee.E2eeError as exc:
            log.info("relay: client %s: handshake refused: %s", self.connection_id, exc)
            self.close(e2ee.CLOSE_CODE, e2ee.HANDSHAKE_FAILED)
            return
        except ConnectionClosed:
            return
        while not self.closed:
            generation = self._generation
            await self._host.serve_channel(
                _Channel(self, generation), RELAY_FACTS, limits=self._limits.session
            )
            if self._generation == generation:
                break  # the session ended (not re-keyed): so does the client's socket
        self.close(1000, "session ended")

    @property
    def closed(self) -> bool:
        return self._closing is not None

    def close(self, code: int, reason: str) -> None:
        """Start closing the socket and return at once: the relay never answers a Close, so
        websockets waits out its ``close_timeout`` in the background, then drops the TCP."""
        if self._closing is not None:
            return
        self._generation += 1  # every channel is over
        self._closing = asyncio.get_running_loop().create_task(self._ws.close(code, reason[:120]))
        self._closing.add_done_callback(_retrieve)

    async def closed_fully(self) -> None:
        """Wait (bounded by ``close_timeout``) until the socket is down."""
        if self._closing is not None:
            with contextlib.suppress(Exception):
                await self._closing

    def abort(self) -> None:
        """Drop the TCP connection now (the daemon is stopping)."""
        self._generation += 1
        self._ws.transport.abort()

    # ------------------------------------------------------------- frames

    def _handshake(self, frame: str | bytes) -> e2ee.Received:
        """The first frame: a hello with a key no other socket used."""
        key = bytes(e2ee.parse_hello(frame))
        if not self._seen_keys.claim(key, self.connection_id):
            raise e2ee.HandshakeError("client key already used on another connection")
        self._client_key = key
        return self._responder.receive(frame)

    def _rehello_key(self, frame: str | bytes) -> bytes | None:
        """The key of a hello arriving on the open channel, ``None`` for any other frame."""
        head = frame[:1] if isinstance(frame, bytes) else frame[:1].encode()
        if head != b"{":
            return None
        try:
            return bytes(e2ee.parse_hello(frame))
        except e2ee.HandshakeError:
            return None

    async def receive(self, generation: int) -> str | bytes:
        """The next application message for the channel of ``generation``."""
        ws = self._ws
        while True:
            if generation != self._generation:
                raise ChannelClosed
            try:
                frame = await ws.recv()
            except ConnectionClosed:
                self.close(1000, "closed")
                raise ChannelClosed from None
            if generation != self._generation:
                raise ChannelClosed
            try:
                key = self._rehello_key(frame)
                if key is not None and key != self._client_key:
                    if not self._seen_keys.claim(key, self.connection_id):
                        raise e2ee.HandshakeError("client key already used on another connection")
                    # A new client behind this socket: the old one's session ends here.
                    self._client_key = key
                    self._generation += 1
                received = self._responder.receive(frame)
            except e2ee.E2eeError as exc:
                log.info("relay: client %s: %s", self.connection_id, exc)
                self.close(e2ee.CLOSE_CODE, str(exc))
                raise ChannelClosed from None
            try:
                for out in received.outgoing:
                    await ws.send(out)
            except ConnectionClosed:
                self.close(1000, "closed")
                raise ChannelClosed from None
            if generation != self._generation:
                raise ChannelClosed
            if received.message is not None:
                return received.message

    def current(self, generation: int) -> bool:
        return generation == self._generation

    async def send(self, generation: int, message: str | bytes) -> None:
        if generation != self._generation:
            raise ChannelClosed  # a frame for a client that is gone is dropped
        frame = self._responder.send(message)
        try:
            await self._ws.send(frame)
        except ConnectionClosed:
            raise ChannelClosed from None


class _Channel:
    """The decrypted :class:`~paseo_hookspecs.channels.MessageChannel` of one client key."""

    __slots__ = ("_generation", "_tunnel")

    def __init__(self, tunnel: Tunnel, generation: int) -> None:
        self._tunnel = tunnel
        self._generation = generation

    async def recv(self) -> str | bytes:
        return await self._tunnel.receive(self._generation)

    async def send(self, frame: str | bytes) -> None:
        await self._tunnel.send(self._generation, frame)

    async def close(self, code: int, reason: str) -> None:
        # A session of a client that was re-keyed away must not close its successor's socket.
        if self._tunnel.current(self._generation):
            self._tunnel.close(code, reason)


def _retrieve(task: asyncio.Task[None]) -> None:
    if not task.cancelled():
        task.exception()  # a close that failed: the socket is gone either way


__all__ = ["CLOSE_CLIENT_GONE", "RELAY_FACTS", "RelayLimits", "SeenKeys", "Tunnel"]
