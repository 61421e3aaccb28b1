"""``hello`` → ``status:server_info``, the close codes, and reattachment by ``clientId``.

Rules (the TypeScript daemon's): the first frame must be a ``hello`` within
:data:`HELLO_TIMEOUT` seconds (else 4001); anything else first, or a binary frame, closes with
4002, as does a second ``hello`` or an empty ``clientId``; a ``protocolVersion`` other than 1
closes with 4003; a connection whose credential failed closes with 4401. A ``hello`` naming a
``clientId`` whose session is kept (see :data:`paseo_tswire.connection.REATTACH_SECONDS`) and
was admitted with the same trust reattaches to it.
"""

from __future__ import annotations

import socket
from typing import Any, Literal

from pydantic import Field, ValidationError

from paseo_tswire.models.messages import ServerInfo
from paseo_tswire.models.voice import ServerCapabilities
from paseo_tswire.models.wire import Inbound

PROTOCOL_VERSION = 1
HELLO_TIMEOUT = 15.0

CLOSE_HELLO_TIMEOUT = 4001
CLOSE_PROTOCOL = 4002
CLOSE_VERSION = 4003
CLOSE_UNAUTHORIZED = 4401

CLOSE_REASONS = {
    CLOSE_HELLO_TIMEOUT: "Hello timeout",
    CLOSE_PROTOCOL: "Session message before hello",
    CLOSE_VERSION: "Unsupported protocol version",
    CLOSE_UNAUTHORIZED: "Password required",
}


class Hello(Inbound):
    """``WSHelloMessageSchema``."""

    type: Literal["hello"]
    clientId: str
    clientType: Literal["mobile", "browser", "cli", "mcp"]
    protocolVersion: int
    appVersion: str | None = None
    capabilities: dict[str, Any] = Field(default_factory=dict)


class HelloRefused(Exception):
    """A ``hello`` that closes the connection with :attr:`code`."""

    def __init__(self, code: int, reason: str) -> None:
        super().__init__(reason)
        self.code = code
        self.reason = reason


def read_hello(body: dict[str, Any]) -> Hello:
    """Validate a ``hello`` frame; raise :class:`HelloRefused` with the close code."""
    version = body.get("protocolVersion")
    if isinstance(version, int) and not isinstance(version, bool) and version != PROTOCOL_VERSION:
        raise HelloRefused(CLOSE_VERSION, f"Unsupported protocol version {version}")
    try:
        hello = Hello.model_validate(body)
    except ValidationError as exc:
        raise HelloRefused(CLOSE_PROTOCOL, f"Invalid hello: {exc.errors()[0]['msg']}") from exc
    if not hello.clientId.strip():
        raise HelloRefused(CLOSE_PROTOCOL, "Invalid hello: clientId is empty")
    return hello


def server_info(
    server_id: str, version: str, capabilities: ServerCapabilities | None = None
) -> ServerInfo:
    """The ``status`` payload answering a valid hello (``features.providersSnapshot`` makes
    the app ask for the providers snapshot; ``capabilities.voice`` shows its voice controls)."""
    return ServerInfo(
        serverId=server_id,
        hostname=socket.gethostname() or None,
        version=version,
        capabilities=capabilities,
        features={"providersSnapshot": True},
    )
