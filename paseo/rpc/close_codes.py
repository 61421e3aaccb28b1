"""The WebSocket close codes a session closes with, and what each says to a person.

They are part of the protocol (documented in the schema, :mod:`paseo.rpc.schema`), so they live
apart from the session that uses them: the server, the schema and the transports name them
without the session's machinery.
"""

from __future__ import annotations

CLOSE_GOING_AWAY = 1001
"""The daemon is shutting down."""
CLOSE_UNSUPPORTED_DATA = 1003
"""A binary frame arrived; the protocol is text only."""
CLOSE_TOO_BIG = 1009
"""A frame exceeded the maximum size (sent by the WebSocket layer)."""
CLOSE_IDLE = 4000
"""Nothing was received for the idle timeout while nothing was subscribed."""
CLOSE_HELLO_TIMEOUT = 4001
"""``server.hello`` did not arrive within the hello timeout."""
CLOSE_UNAUTHORIZED = 4401
"""Authentication failed after the upgrade (transports that cannot refuse over HTTP)."""
CLOSE_SLOW_CONSUMER = 4008
"""The client did not read its messages: the outbound queue overflowed twice."""

CLOSE_CODES: dict[int, str] = {
    CLOSE_GOING_AWAY: "the daemon is shutting down",
    CLOSE_UNSUPPORTED_DATA: "binary frames are not supported",
    CLOSE_TOO_BIG: "frame larger than the maximum frame size",
    CLOSE_IDLE: "idle timeout",
    CLOSE_HELLO_TIMEOUT: "server.hello not received in time",
    CLOSE_UNAUTHORIZED: "unauthorized",
    CLOSE_SLOW_CONSUMER: "client too slow: outbound queue overflowed",
}
