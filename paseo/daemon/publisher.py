"""The :class:`paseo.services.Publisher` the composition root hands to services."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from paseo.rpc.server import RpcServer


class ForwardingPublisher:
    """Forwards to the RPC server once it exists.

    Services are built (and start, recovering state) before the server: until
    :meth:`attach`, a published event is dropped (no client can have subscribed yet) and a
    registered stream is remembered, then declared on the server when it attaches.
    """

    def __init__(self) -> None:
        self._server: RpcServer | None = None
        self._early: dict[str, frozenset[str]] = {}
        self._on_demand: dict[str, Callable[[str], Awaitable[None]]] = {}

    def on_demand(self, prefix: str, declare: Callable[[str], Awaitable[None]]) -> None:
        """Streams named ``prefix...`` are declared when first subscribed to: ``declare(name)``
        registers the stream if what it follows exists (an agent the daemon has not loaded has
        no stream until then)."""
        self._on_demand[prefix] = declare

    async def declare(self, names: Sequence[str]) -> None:
        """Declare the on-demand streams among ``names`` that are not declared yet."""
        server = self._server
        for name in names:
            if server is not None and server.stream_position(name) is not None:
                continue
            for prefix, declare in self._on_demand.items():
                if name.startswith(prefix):
                    await declare(name)

    def attach(self, server: RpcServer) -> None:
        self._server = server
        for name, access in self._early.items():
            server.register_stream(name, access)
        self._early.clear()

    def register_stream(self, name: str, access: frozenset[str]) -> None:
        if self._server is None:
            self._early.setdefault(name, access)
        else:
            self._server.register_stream(name, access)

    def publish(self, stream: str, method: str, payload: Mapping[str, Any]) -> None:
        if self._server is not None:
            self._server.publish(stream, method, payload)
