"""Message channels one transport carries and another transport's protocol serves.

A transport that only *carries* connections — a relay, whose tunnel delivers decrypted
messages — does not know every protocol a client may speak inside it (this daemon's JSON-RPC,
the TypeScript Paseo's session protocol, …). A transport that speaks a protocol registers it
as a named :class:`ChannelProtocol` with the host (:meth:`ChannelHost.register_channel_protocol`,
from its :meth:`~paseo_hookspecs.interfaces.transport.Transport.start`); the carrying
transport hands each tunnel to :meth:`ChannelHost.serve_channel`, with the
:class:`~paseo_hookspecs.transport.PeerFacts` it observed. The host admits the channel as it
admits any connection, reads its first message, gives the channel to the first registered
protocol that :meth:`~ChannelProtocol.claims` that message, and serves it as a JSON-RPC
session itself when none does. Neither transport imports the other::

    # the protocol's transport
    async def start(self, host):
        if isinstance(host, ChannelHost):
            host.register_channel_protocol("tswire", self)

    # the carrying transport, per tunnel
    await host.serve_channel(TunnelChannel(...), PeerFacts("relay", False, None, relay=True))

.. versionadded:: 2.0
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from paseo_hookspecs.transport import Observed, PeerFacts, SessionLimits


class ChannelClosed(Exception):
    """Raised by :meth:`MessageChannel.recv` (and ``send``) once the channel is gone."""


class MessageChannel(Protocol):
    """One bidirectional channel of whole messages (a WebSocket-like tunnel)."""

    async def recv(self) -> str | bytes:
        """The next inbound message, text or binary; :class:`ChannelClosed` when the peer went
        away or the channel was closed."""

    async def send(self, frame: str | bytes) -> None:
        """Send one message; :class:`ChannelClosed` when the channel is gone."""

    async def close(self, code: int, reason: str) -> None:
        """Close with a WebSocket close code; never waits for the peer's answer."""


class ChannelProtocol(Protocol):
    """A session protocol a transport offers for channels other transports carry."""

    def claims(self, first: str | bytes) -> bool:
        """Whether ``first``, a channel's first message, opens a session of this protocol
        (cheap and side-effect free: every registered protocol may be asked)."""

    async def serve(
        self, channel: MessageChannel, first: str | bytes, *, kind: str, observed: Observed
    ) -> None:
        """Serve the admitted ``channel`` (session ``kind``, the connection as ``observed``),
        whose ``first`` message was already read, until it ends; never raises for what the
        peer sent (a bad message closes the channel)."""


@runtime_checkable
class ChannelHost(Protocol):
    """The part of :class:`~paseo_hookspecs.transport.TransportHost` that serves channels
    (the kernel's implements it; test hosts may not, hence ``isinstance``)."""

    def register_channel_protocol(self, name: str, protocol: ChannelProtocol) -> None:
        """Offer ``protocol`` under ``name`` (unique; a second registration replaces the
        first, so a restarted transport re-registers)."""

    def unregister_channel_protocol(self, name: str) -> None:
        """Withdraw ``name`` (a stopping transport); unknown names are ignored."""

    async def serve_channel(
        self, channel: MessageChannel, facts: PeerFacts, *, limits: SessionLimits
    ) -> None:
        """Admit ``channel`` from ``facts`` (purpose ``session``; refused → closed with 4401
        or 1013), wait at most ``limits.hello_timeout`` for its first message, then serve it
        with the protocol that claims it (JSON-RPC when none does) until it ends. Returns
        when the channel is done; never raises for what the peer sent."""


__all__ = ["ChannelClosed", "ChannelHost", "ChannelProtocol", "MessageChannel"]
