"""Daemon and project settings, provider diagnostics and restart (``messages.ts``:
``MutableDaemonConfigSchema``, ``PaseoConfigRawSchema`` and ``ProjectConfigRpcErrorSchema`` of
``utils/paseo-config-schema.ts``, ``ProviderDiagnosticResponseMessageSchema``,
``RestartRequestedStatusPayloadSchema``)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from paseo_tswire.models.wire import Inbound, Wire

# --- inbound ----------------------------------------------------------------------------------


class ProviderPatch(Inbound):
    """``MutableDaemonProviderConfigSchema.partial().passthrough()``: the known fields are
    checked here, the others travel to ``config.patch`` (which validates them as start-up)."""

    model_config = {"extra": "allow"}

    enabled: bool | None = None
    additionalModels: list[dict[str, Any]] | None = None


class McpPatch(Inbound):
    injectIntoAgents: bool | None = None


class DaemonConfigPatch(Inbound):
    """``MutableDaemonConfigPatchSchema`` (passthrough: other keys are kept to be refused by
    name rather than dropped in silence)."""

    model_config = {"extra": "allow"}

    mcp: McpPatch | None = None
    providers: dict[str, ProviderPatch] | None = None


class GetDaemonConfig(Inbound):
    requestId: str


class SetDaemonConfig(Inbound):
    requestId: str
    config: DaemonConfigPatch


class Revision(Wire):
    """``PaseoConfigRevisionSchema`` (also read from requests)."""

    mtimeMs: float
    size: float


class ReadProjectConfig(Inbound):
    requestId: str
    repoRoot: str


class WriteProjectConfig(Inbound):
    requestId: str
    repoRoot: str
    config: dict[str, Any]
    expectedRevision: Revision | None


class ProviderDiagnosticRequest(Inbound):
    requestId: str
    provider: str


class RestartServer(Inbound):
    requestId: str
    reason: str | None = None


# --- outbound ---------------------------------------------------------------------------------


class McpView(Wire):
    injectIntoAgents: bool


class DaemonConfigView(Wire):
    """``MutableDaemonConfigSchema``: ``providers`` maps an id to its ``agents.providers``
    entry as ``config.get`` shows it (secrets replaced by the redaction placeholder)."""

    mcp: McpView
    providers: dict[str, dict[str, Any]]


class DaemonConfigReply(Wire):
    requestId: str
    config: DaemonConfigView


class ConfigError(Wire):
    code: Literal["project_not_found", "invalid_project_config", "write_failed"]


class StaleConfigError(Wire):
    code: Literal["stale_project_config"]
    currentRevision: Revision | None


class ProjectConfigRead(Wire):
    requestId: str
    repoRoot: str
    ok: Literal[True] = True
    config: dict[str, Any] | None
    revision: Revision | None


class ProjectConfigWritten(Wire):
    requestId: str
    repoRoot: str
    ok: Literal[True] = True
    config: dict[str, Any]
    revision: Revision


class ProjectConfigFailed(Wire):
    requestId: str
    repoRoot: str
    ok: Literal[False] = False
    error: ConfigError | StaleConfigError


class ProviderDiagnostic(Wire):
    provider: str
    diagnostic: str
    requestId: str


class RestartRequested(Wire):
    status: Literal["restart_requested"] = "restart_requested"
    clientId: str
    reason: str | None = Field(default=None)
    requestId: str


class DaemonConfigChanged(Wire):
    status: Literal["daemon_config_changed"] = "daemon_config_changed"
    config: DaemonConfigView


SETTINGS_OUTBOUND: dict[str, type[Wire]] = {
    "get_daemon_config_response": DaemonConfigReply,
    "set_daemon_config_response": DaemonConfigReply,
    "read_project_config_response": ProjectConfigRead,
    "write_project_config_response": ProjectConfigWritten,
    "provider_diagnostic_response": ProviderDiagnostic,
}

FAILED_WHEN_NOT_OK = ProjectConfigFailed
"""The model of a ``read/write_project_config_response`` whose ``ok`` is false."""
