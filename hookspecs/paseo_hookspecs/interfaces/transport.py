"""Transports carry client connections into the daemon."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from paseo_hookspecs.transport import TransportHost


class Transport(ABC):
    """A listener (TCP, unix socket, relay, …) that hands each connection to the daemon.

    ``start`` must not return before the listener accepts connections; ``stop`` closes the
    listener and every connection it opened, then returns. Everything a transport needs from
    the daemon — admission decisions, sessions, limits, the health and status answers — comes
    through the :class:`~paseo_hookspecs.transport.TransportHost` given to ``start``; the
    host's docstring has an "implement and register" example.
    """

    name: str
    """Unique transport name (``websocket``, …)."""

    @abstractmethod
    async def start(self, host: TransportHost) -> list[str]:
        """Start listening; return the addresses clients can use (``ws://127.0.0.1:6767/ws``).

        Raise :class:`OSError` when the listener cannot be opened (the daemon refuses to start
        and shows the message).
        """

    @abstractmethod
    async def stop(self) -> None:
        """Stop accepting, close open connections, release the listener."""
