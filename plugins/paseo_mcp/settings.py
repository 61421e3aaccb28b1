"""The MCP plugin's settings: ``plugins.mcp.settings`` of ``config.json``.

These were ``daemon.mcp.*`` and ``agents.providers.<id>.paseoTools`` before the MCP server
became the plugin's alone; the daemon reads the old keys into this section (and writes them
here on the next ``config set`` / ``config.patch``), so existing homes keep working.
``PASEO_MCP=false`` (set by ``paseo daemon start --no-mcp``) wins over ``enabled``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

PLUGIN_ID = "mcp"

CallerScope = Literal["created", "workspace", "all"]
"""Which agents an agent reaches through the tools (docs/mcp.md, "Caller rules")."""

ChildPermissions = Literal["person", "parent"]
"""Who may answer a permission request of an agent another agent created: only a person
(``person``, the default), or also the agent that created it (``parent``)."""

LIVE = frozenset({"callerScope", "childPermissions"})
"""Settings a ``paseo reload`` applies at once (read at every call)."""

LOCAL_ONLY = frozenset({"enabled", "injectIntoAgents", "callerScope", "childPermissions"})
"""Settings a remote session may not change: they widen what agents reach (as every
``daemon.mcp`` key was)."""


class ProviderTools(BaseModel):
    """Which tools an agent of one provider is offered; absent means every tool."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    enabled: bool | None = None
    disabledTools: list[str] | None = None


class McpSettings(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    enabled: bool = True
    """Serve ``/mcp/agents`` and inject it into agents' sessions."""
    injectIntoAgents: bool = True
    """Inject the server into agents' sessions (it is served either way)."""
    callerScope: CallerScope = "created"
    childPermissions: ChildPermissions = "person"
    """``parent`` lets an agent answer the permission requests of agents in its reach
    (``respond_to_permission``); by default a person answers them."""
    providers: dict[str, ProviderTools] = {}
    """Per provider id: its agents' tool catalog (formerly ``agents.providers.<id>.paseoTools``)."""


def _env_enabled(env: Mapping[str, str]) -> bool | None:
    raw = env.get("PASEO_MCP")
    if raw is None or not raw.strip():
        return None
    return raw.strip().lower() not in ("0", "false", "no", "off")


def read_settings(section: Any, env: Mapping[str, str] | None = None) -> McpSettings:
    """The settings in force: ``section`` (what ``DaemonContext.config_section`` returns,
    already validated at start-up) with the environment's override."""
    if isinstance(section, McpSettings):
        settings = section
    else:
        try:
            settings = McpSettings.model_validate(section or {})
        except ValidationError:  # start-up refused an invalid section; keep the defaults
            settings = McpSettings()
    enabled = _env_enabled(os.environ if env is None else env)
    if enabled is not None:
        settings = settings.model_copy(update={"enabled": enabled})
    return settings
