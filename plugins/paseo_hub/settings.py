"""The ``plugins.hub.settings`` section of config.json."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class HubSettings(BaseModel):
    """Timings of the Hub relationship (seconds). The defaults suit a Hub across the internet."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    httpTimeout: float = Field(default=15.0, gt=0, description="enroll and revoke requests")
    connectWait: float = Field(
        default=30.0,
        gt=0,
        description="how long `paseo hub connect` waits for enrollment before reporting progress",
    )
    openTimeout: float = Field(default=10.0, gt=0, description="WebSocket opening handshake")
    pingInterval: float = Field(default=20.0, gt=0, description="WebSocket ping period")
    pingTimeout: float = Field(default=20.0, gt=0, description="a pong later than this is a drop")
    backoffInitial: float = Field(default=1.0, gt=0, description="first reconnect delay")
    backoffMax: float = Field(default=60.0, gt=0, description="reconnect delay cap")
    maxFrameBytes: int = Field(default=16 * 1024 * 1024, gt=0, description="largest Hub frame")
