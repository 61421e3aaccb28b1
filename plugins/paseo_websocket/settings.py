"""The transport's limits (``plugins.websocket.settings`` in config.json); all optional."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class WebSocketSettings(BaseModel):
    """Bounds that keep one client from hurting the daemon or other clients."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    maxConnections: int = Field(256, ge=1, description="open connections; beyond: HTTP 503")
    maxFrameBytes: int = Field(
        # 2 MiB: a 1 MiB project icon is about 1.4 MiB once base64-encoded.
        2 << 20,
        ge=1024,
        description="largest inbound frame; close 1009",
    )
    outboundQueue: int = Field(
        1000, ge=2, description="frames queued per connection before server.resync"
    )
    outboundBytes: int = Field(
        8 << 20, ge=64 << 10, description="bytes queued per connection before server.resync"
    )
    outboundBytesTotal: int = Field(
        32 << 20,
        ge=64 << 10,
        description="bytes queued for all connections; the largest queues resync first",
    )
    maxInFlight: int = Field(64, ge=1, description="concurrent calls per connection")
    requestsPerSecond: float = Field(500.0, gt=0, description="sustained calls per connection")
    requestBurst: int = Field(1000, ge=1, description="calls allowed in a burst")
    helloTimeout: float = Field(15.0, gt=0, description="seconds to send server.hello; 4001")
    idleTimeout: float = Field(
        3600.0, gt=0, description="seconds without frames or subscriptions before close 4000"
    )
    pingInterval: float = Field(20.0, gt=0, description="keepalive ping interval (seconds)")
    pingTimeout: float = Field(20.0, gt=0, description="close when a ping is not answered")
    closeTimeout: float = Field(3.0, gt=0, description="closing handshake bound (seconds)")
    compression: bool = Field(False, description="permessage-deflate")
