"""Where the TypeScript protocol is served (``plugins.tswire.settings`` in config.json)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class TsWireSettings(BaseModel):
    """All optional: by default a unix socket in the daemon's home, found by the TypeScript CLI
    through ``paseo.pid``."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    socket: str | None = Field(
        "paseo-ts.sock",
        description="unix socket path (relative: in PASEO_HOME); null: none",
    )
    listen: str | None = Field(
        None,
        description="TCP host:port for the app and remote TypeScript clients; null: none",
    )
    maxConnections: int = Field(256, ge=1, description="open connections; beyond: HTTP 503")
    maxFrameBytes: int = Field(2 << 20, ge=1024, description="largest inbound frame; close 1009")
    helloTimeout: float = Field(15.0, gt=0, description="seconds to send hello; close 4001")
    maxDetachedSessions: int = Field(
        256,
        ge=0,
        description="sessions kept for a reattach after their connection closed; beyond: "
        "the oldest is dropped",
    )
    maxInFlight: int = Field(64, ge=1, description="concurrent requests per connection")
