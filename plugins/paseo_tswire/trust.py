"""What this transport observes for the daemon's trust decision (it never decides itself).

* On its unix socket: the peer's user id, read from the kernel (``SO_PEERCRED``). The daemon
  admits its own user as ``local`` without a token, so the TypeScript CLI, which sends none to
  a socket, works with no flags. The socket is created 0600 in the daemon's home.
* On TCP: the password as the ``paseo.bearer.<token>`` subprotocol (browsers, the app) or an
  ``Authorization: Bearer`` header (the Node CLI sends both); the local credential works too.
  Host and Origin go to the daemon exactly as ``/ws`` reports them.
"""

from __future__ import annotations

import socket
import struct
from typing import Any

from paseo_hookspecs.transport import PeerFacts
from websockets.datastructures import Headers

BEARER_SUBPROTOCOL = "paseo.bearer."
_PEERCRED = struct.Struct("3i")


def peer_uid(sock: Any) -> int | None:
    """The user id of a unix-socket peer, ``None`` where the kernel does not say."""
    option = getattr(socket, "SO_PEERCRED", None)
    # asyncio hands out a TransportSocket wrapper, not the socket itself: duck-typed.
    if option is None or getattr(sock, "family", None) != socket.AF_UNIX:
        return None
    try:
        raw = sock.getsockopt(socket.SOL_SOCKET, option, _PEERCRED.size)
    except OSError:
        return None
    _pid, uid, _gid = _PEERCRED.unpack(raw)
    return int(uid)


def offered_subprotocols(headers: Headers) -> list[str]:
    return [
        item.strip()
        for value in headers.get_all("Sec-WebSocket-Protocol")
        for item in value.split(",")
        if item.strip()
    ]


def presented_token(headers: Headers) -> str | None:
    """The bearer subprotocol's token (everything after ``paseo.bearer.``), else an
    ``Authorization: Bearer`` header given once."""
    for offered in offered_subprotocols(headers):
        if offered.startswith(BEARER_SUBPROTOCOL) and len(offered) > len(BEARER_SUBPROTOCOL):
            return offered[len(BEARER_SUBPROTOCOL) :]
    values = headers.get_all("Authorization")
    if len(values) == 1:
        scheme, _, token = values[0].partition(" ")
        if scheme.lower() == "bearer" and token.strip():
            return token.strip()
    return None


def select_subprotocol(offered: list[str]) -> str | None:
    """Echo the bearer subprotocol, else the first offered: the Node ``ws`` client fails the
    handshake when it offered one and none comes back."""
    for item in offered:
        if item.startswith(BEARER_SUBPROTOCOL):
            return item
    return offered[0] if offered else None


def facts(*, unix: bool, remote: Any, headers: Headers, sock: Any) -> PeerFacts:
    """The :class:`PeerFacts` of one upgrade request."""
    peer = str(remote[0]) if isinstance(remote, tuple) and remote else None
    forwarded = headers.get_all("X-Forwarded-For")
    return PeerFacts(
        transport="ts-unix" if unix else "ts-tcp",
        unix_socket=unix,
        peer=peer,
        hosts=tuple(headers.get_all("Host")),
        origins=tuple(headers.get_all("Origin")),
        forwarded_for=",".join(forwarded) if forwarded else None,
        credential=presented_token(headers),
        peer_uid=peer_uid(sock) if unix else None,
    )
