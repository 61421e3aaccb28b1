"""Client connectors: how the kernel's client reaches a daemon through something it cannot
dial itself (the relay: ``paseo ls --host "https://app.paseo.sh/#offer=…"``).

The client tries a ``--host`` / ``PASEO_HOST`` value as an address first; only a value that is
no address makes it load plugins and ask each :class:`ClientConnector` whether it
:meth:`~ClientConnector.accepts` it, so ``paseo --help`` and ordinary hosts import no plugin.
The first that accepts opens a :class:`~paseo_hookspecs.channels.MessageChannel` to the daemon,
and the client speaks its usual JSON-RPC session inside it (``server.hello`` first). No token is
sent: what the host string holds (the offer's daemon key) is the credential.

.. versionadded:: 2.0
"""

from __future__ import annotations

from abc import ABC, abstractmethod

from paseo_hookspecs.channels import MessageChannel


class ConnectorError(Exception):
    """The connection could not be made. Its text is the whole message for the user (for the
    relay, ``Failed to connect via relay offer: <reason>``), printed without a traceback."""


class ClientConnector(ABC):
    """Opens message channels to a daemon for host strings of one kind."""

    name: str
    """Unique among connectors (``relay``)."""

    @abstractmethod
    def accepts(self, host: str) -> bool:
        """Whether ``host`` is this connector's (cheap, no I/O)."""

    @abstractmethod
    async def connect(self, host: str) -> MessageChannel:
        """A channel to the daemon ``host`` names, ready for the first JSON-RPC request;
        :class:`ConnectorError` otherwise. The connector bounds its own wait, as its protocol
        does (the relay's is 15 s, as the TypeScript CLI's), and never reconnects.

        The channel's :class:`~paseo_hookspecs.channels.ChannelClosed` carries, as its text,
        what to tell the user when it ends before the daemon ever answered (a daemon that could
        not decrypt the first frame, for the relay)."""


__all__ = ["ClientConnector", "ConnectorError"]
