"""``push.register``, ``push.unregister`` and ``client.heartbeat``: params and results."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from paseo_push.expo import is_expo_token

IN_APP_NOTICE = "client.attention"
"""The notification an in-app notice is sent as, to one connection only."""


class _Wire(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)


class PushRegisterParams(_Wire):
    token: str = Field(min_length=1, max_length=512, description="ExponentPushToken[…]")
    deviceType: str | None = Field(default=None, max_length=32)

    def valid_token(self) -> bool:
        return is_expo_token(self.token)


class PushRegisterResult(_Wire):
    registered: bool = Field(description="false when the token was already registered")


class PushUnregisterParams(_Wire):
    token: str = Field(min_length=1, max_length=512)


class PushUnregisterResult(_Wire):
    removed: bool = Field(description="false when the token was not registered")


class HeartbeatParams(_Wire):
    deviceType: str = Field(min_length=1, max_length=32, description="web, mobile, desktop, …")
    focusedAgentId: str | None = Field(default=None, max_length=200)
    visible: bool = Field(description="whether the app is in the foreground")
    lastActivityAt: str | None = Field(
        default=None, description="ISO 8601 time of the user's last input (default: now)"
    )


class HeartbeatResult(_Wire):
    clientId: str


class AttentionNotice(_Wire):
    """Params of :data:`IN_APP_NOTICE`."""

    agentId: str
    reason: str
    timestamp: str
    title: str
