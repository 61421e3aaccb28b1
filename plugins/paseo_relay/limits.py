"""The relay transport's bounds and the client keys it remembers: what the transport holds
from its construction, apart from :mod:`paseo_relay.tunnel` and the E2EE code, which are
imported when the first relayed client is served (a daemon with the relay off never does)."""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field

from paseo_hookspecs.transport import SessionLimits

CLOSE_CLIENT_GONE = 1001
"""The relay said the client disconnected (``disconnected`` on the control socket)."""


@dataclass(frozen=True)
class RelayLimits:
    """The bounds of the relay transport (the defaults are the TypeScript daemon's timings;
    tests shorten them)."""

    ping_interval: float = 10.0
    """Seconds between control pings."""
    stale_after: float = 30.0
    """Seconds without any control message before the socket is dropped."""
    ready_timeout: float = 8.0
    """Seconds after the control socket opens for a ``sync`` or ``pong``."""
    open_timeout: float = 15.0
    """Seconds for a socket to open (TCP, HTTP upgrade)."""
    handshake_timeout: float = 30.0
    """Seconds for a data socket's first frame (a client resends its hello every second)."""
    close_timeout: float = 2.0
    """Seconds a close waits for the relay's answer (it never answers: bounded, in the
    background)."""
    reconnect_step: float = 1.0
    """The reconnect delay grows by this per failed attempt …"""
    reconnect_max: float = 30.0
    """… up to this, plus up to a quarter of it at random."""
    max_frame_bytes: int = 4 << 20
    """Largest data frame (a boxed, base64 message); larger closes the socket with 1009."""
    max_control_bytes: int = 1 << 20
    """Largest control frame."""
    max_queue: int = 2
    """Frames websockets holds unread per data socket before it stops reading."""
    max_clients: int = 64
    """Data sockets open at once; announced clients beyond are not served."""
    seen_keys: int = 4096
    """Client keys remembered across data sockets (replayed handshakes are refused)."""
    session: SessionLimits = field(default_factory=SessionLimits)
    """The bounds of each relayed session (as any remote session's)."""


class SeenKeys:
    """Client public keys that completed a handshake, most recent last, bounded."""

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._keys: OrderedDict[bytes, str] = OrderedDict()

    def claim(self, key: bytes, connection_id: str) -> bool:
        """Record ``key`` for ``connection_id``; ``False`` when another socket used it."""
        owner = self._keys.get(key)
        if owner is not None and owner != connection_id:
            return False
        self._keys[key] = connection_id
        self._keys.move_to_end(key)
        while len(self._keys) > self._limit:
            self._keys.popitem(last=False)
        return True
