"""The clients the daemon last heard from, each with a way to notify its connection.

Filled by ``client.heartbeat``: the call's :class:`~paseo_hookspecs.context.RpcContext` is kept
as that client's notifier, so an in-app notice goes to the connection that sent the latest
heartbeat. Bounded: at most :data:`MAX_CLIENTS` are kept (the least recently heard from go
first), and a client silent for longer than the activity window is forgotten — it could never
be active or present again without a new heartbeat.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from paseo_push.policy import ACTIVE_WINDOW, ClientState

if TYPE_CHECKING:
    from paseo_hookspecs.context import RpcContext

MAX_CLIENTS = 64


@runtime_checkable
class ConnectionAware(Protocol):
    """What this plugin needs from an RPC context to forget a client whose connection ended.

    The kernel's :class:`~paseo_hookspecs.context.RpcContext` does not offer it yet; until it
    does, a client that went away counts until its activity window (3 minutes) runs out, and a
    notice sent to it meanwhile is dropped by the closed connection.
    """

    @property
    def connected(self) -> bool:
        """Whether the connection that made the call is still open."""


class ClientRegistry:
    """See the module docstring."""

    def __init__(self, limit: int = MAX_CLIENTS) -> None:
        self._limit = limit
        self._clients: OrderedDict[str, tuple[ClientState, RpcContext]] = OrderedDict()

    def heartbeat(self, state: ClientState, notifier: RpcContext, now: float) -> None:
        """Record ``state`` as the client's latest, ``notifier`` as its connection."""
        self._clients[state.client_id] = (state, notifier)
        self._clients.move_to_end(state.client_id)
        self._forget_gone(now)
        while len(self._clients) > self._limit:
            self._clients.popitem(last=False)

    def states(self, now: float) -> list[ClientState]:
        """The clients still worth asking about, after forgetting the gone and the silent."""
        self._forget_gone(now)
        return [state for state, _ in self._clients.values()]

    def _forget_gone(self, now: float) -> None:
        for client_id, (state, notifier) in list(self._clients.items()):
            gone = isinstance(notifier, ConnectionAware) and not notifier.connected
            if gone or now - state.last_activity >= ACTIVE_WINDOW:
                del self._clients[client_id]

    def notifier(self, client_id: str) -> RpcContext | None:
        entry = self._clients.get(client_id)
        return entry[1] if entry else None

    def clear(self) -> None:
        self._clients.clear()
