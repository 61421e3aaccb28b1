"""Transports carry client connections into the daemon."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any


class Transport(ABC):
    """A listener (TCP, unix socket, relay, …) that hands each connection to the daemon.

    ``start`` must not return before the listener accepts connections; ``stop`` closes the
    listener and every connection it opened, then returns.
    """

    name: str
    """Unique transport name (``websocket``, …)."""

    @abstractmethod
    async def start(self, daemon: Any) -> list[str]:
        """Start listening; return the addresses clients can use (``ws://127.0.0.1:6767/ws``)."""

    @abstractmethod
    async def stop(self) -> None:
        """Stop accepting, close open connections, release the listener."""
