"""The pydantic models of the protocol envelope, the kernel's methods and its notifications.

Field names are camelCase on the wire, as in the rest of the Paseo protocol.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

PROTOCOL_VERSION = 1
"""Bumped only for incompatible changes; additions are announced in the hello feature map."""


class WireModel(BaseModel):
    """Base of protocol models: unknown fields are refused, so typos surface as errors.

    Validators are built on first use (``defer_build``): most models are never needed by a
    given process, and building them all would slow the daemon's start.
    """

    model_config = ConfigDict(extra="forbid", defer_build=True)


# --- envelope ------------------------------------------------------------------------------


class RequestEnvelope(WireModel):
    """A JSON-RPC 2.0 request (with ``id``) or client notification (without)."""

    jsonrpc: Literal["2.0"]
    id: str | int | None = Field(default=None, description="absent for a notification")
    method: str = Field(min_length=1, max_length=128)
    params: dict[str, Any] | None = None


class ErrorData(BaseModel):
    """``error.data``: the stable string code plus error-specific fields."""

    model_config = ConfigDict(extra="allow", defer_build=True)
    code: str


class ErrorObject(WireModel):
    code: int = Field(description="JSON-RPC numeric code (-32000 for application errors)")
    message: str
    data: ErrorData


class ResultResponse(WireModel):
    jsonrpc: Literal["2.0"]
    id: str | int
    result: Any


class ErrorResponse(WireModel):
    jsonrpc: Literal["2.0"]
    id: str | int | None = Field(description="null when the request id could not be read")
    error: ErrorObject


class NotificationEnvelope(WireModel):
    """A server push: ``params`` always carries ``stream`` and ``seq``."""

    jsonrpc: Literal["2.0"]
    method: str
    params: dict[str, Any]


class StreamEvent(WireModel):
    """Fields every notification's params start with.

    ``seq`` increases by exactly one per event of ``stream``; a client that sees a jump has
    missed events and re-fetches the state the stream describes.
    """

    stream: str
    seq: int = Field(ge=1)


# --- server.* ------------------------------------------------------------------------------

ClientType = Literal["cli", "browser", "mobile", "mcp", "sdk", "hub", "other"]


class HelloParams(BaseModel):
    """``server.hello``. Extra fields are ignored so newer clients can add some."""

    model_config = ConfigDict(extra="ignore", defer_build=True)
    clientId: str = Field(min_length=1, max_length=200)
    clientType: ClientType = "other"
    version: str = Field(default="", max_length=100, description="the client's own version")
    protocolVersion: int = PROTOCOL_VERSION


class HelloResult(WireModel):
    serverId: str
    version: str
    protocolVersion: int
    sessionKind: Literal["local", "remote", "hub"]
    features: dict[str, bool] = Field(description="capabilities this server offers")
    methods: list[str] = Field(description="every method this session may call")


class PingParams(WireModel):
    data: str | None = Field(default=None, max_length=65536)


class PingResult(WireModel):
    data: str | None
    time: float = Field(description="server wall clock, seconds since the epoch")


class PluginFailure(WireModel):
    name: str
    error: str


class PluginSummary(WireModel):
    loaded: list[str]
    failed: list[PluginFailure]


class Counts(WireModel):
    connections: int
    sessions: dict[str, int] = Field(description="open sessions by kind")
    subscriptions: int
    methods: int
    agents: int | None = Field(description="null when the store cannot count")


class StatusSectionResult(WireModel):
    plugin: str = Field(description="the plugin that reported it")
    state: Literal["ok", "warn", "fail", "off", "unknown"]
    headline: str
    details: dict[str, Any] = Field(description="the section's own fields (no secrets)")


class RelayInfo(WireModel):
    """The relay connection (``daemon.relay``), as its transport reports it."""

    state: Literal["off", "connecting", "connected", "reconnecting"]
    endpoint: str | None = Field(default=None, description="host:port the daemon dials")
    clients: int = Field(default=0, description="relay clients with an open data socket")
    lastError: str | None = Field(default=None, description="why the last connection failed")


class StatusResult(WireModel):
    """``server.status`` and ``GET /api/status``."""

    serverId: str
    version: str
    protocolVersion: int
    pid: int
    home: str
    hostname: str
    startedAt: str | None
    uptimeSeconds: float
    listen: list[str]
    storageDriver: str
    plugins: PluginSummary
    counts: Counts
    sections: dict[str, StatusSectionResult] = Field(
        default_factory=dict,
        description="plugins' sections (paseo_register_status_sections), by name",
    )
    relay: RelayInfo | None = None


class ShutdownParams(WireModel):
    reason: str | None = Field(default=None, max_length=500)


class ShutdownResult(WireModel):
    accepted: bool


class SubscribeParams(WireModel):
    streams: list[str] = Field(min_length=1, max_length=64)


class StreamPosition(WireModel):
    stream: str
    seq: int = Field(description="the last seq published on the stream (0: none yet)")


class SubscribeResult(WireModel):
    streams: list[StreamPosition]


class UnsubscribeResult(WireModel):
    streams: list[str]


class HealthResult(WireModel):
    """``GET /api/health`` (no authentication)."""

    ok: bool
    version: str


# --- config.* ------------------------------------------------------------------------------


class ConfigGetParams(WireModel):
    path: str | None = Field(
        default=None, description="a JSON path (daemon.git.maxProcessConcurrency); all if absent"
    )


class ConfigGetResult(WireModel):
    file: str
    exists: bool
    config: Any = Field(description="what config.json says (secrets redacted)")
    resolved: Any = Field(description="the effective values the daemon runs with")
    envOverrides: dict[str, str] = Field(description="config path -> launch variable")


class ConfigPatchParams(WireModel):
    patch: dict[str, Any] = Field(
        description="deep-merged into config.json: objects merge, lists and scalars replace, "
        "null removes"
    )


class ConfigReloadResult(WireModel):
    """What a reload (or a patch, which reloads) changed."""

    changed: list[str] = Field(description="effective config paths whose value changed")
    applied: list[str] = Field(description="changed paths now in effect")
    restartRequired: list[str] = Field(description="changed paths that need a daemon restart")
    warnings: list[str]


class ConfigPatchResult(ConfigReloadResult):
    config: Any = Field(description="config.json after the patch (secrets redacted)")


# --- notifications -------------------------------------------------------------------------


class ResyncEvent(StreamEvent):
    """``server.resync``: this connection fell behind and messages were dropped.

    Sent on the per-connection stream ``session``. Re-fetch the state of every stream listed;
    requests listed in ``droppedRequestIds`` will get no answer.
    """

    reason: Literal["overflow"]
    streams: list[str]
    droppedRequestIds: list[str | int]


class ShuttingDownEvent(StreamEvent):
    """``server.shuttingDown`` on stream ``server``: the daemon is about to close connections."""

    reason: str | None


class ConfigChangedEvent(StreamEvent):
    """``config.changed`` on stream ``config``: a patch or reload changed effective values."""

    changed: list[str]
    applied: list[str]
    restartRequired: list[str]


NOTIFICATIONS: dict[str, type[StreamEvent]] = {
    "server.resync": ResyncEvent,
    "server.shuttingDown": ShuttingDownEvent,
    "config.changed": ConfigChangedEvent,
}
"""Kernel notification method -> params model."""
