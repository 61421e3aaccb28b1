"""The :class:`paseo.services.Publisher` the composition root hands to services."""

from __future__ import annotations

from collections.abc import Mapping
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
