"""The plugin's settings: ``plugins.notify.settings`` in config.json.

The sinks themselves are declared at ``daemon.notifications`` (the contract's models,
:mod:`paseo_hookspecs.notifications`, validated by start-up and ``paseo config set``). This
section holds what is the plugin's own: whether to deliver at all, and whether internal agents
count. ``sinks`` here is the place sinks were declared before ``daemon.notifications`` existed:
still read, after the daemon's, and documented as deprecated.
"""

from __future__ import annotations

from typing import Any

from paseo_hookspecs.notifications import (
    DEFAULT_EVENTS,
    MAX_SINKS,
    CommandSink,
    NotificationEvent,
    NotificationSink,
    NtfySink,
    WebhookSink,
)
from pydantic import BaseModel, ConfigDict, Field

EventName = NotificationEvent
Sink = NotificationSink


class NotifySettings(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    enabled: bool = Field(True, description="deliver notifications at all")
    sinks: list[Sink] = Field(
        default_factory=list,
        max_length=MAX_SINKS,
        description="deprecated: declare sinks in daemon.notifications",
    )
    internalAgents: bool = Field(
        False, description="notify about internal agents too (push never does)"
    )


def settings_of(section: Any) -> NotifySettings:
    """The settings from what ``DaemonContext.config_section`` returned."""
    if isinstance(section, NotifySettings):
        return section
    if isinstance(section, dict):
        return NotifySettings.model_validate(section)
    return NotifySettings()


__all__ = [
    "DEFAULT_EVENTS",
    "CommandSink",
    "EventName",
    "NotifySettings",
    "NtfySink",
    "Sink",
    "WebhookSink",
    "settings_of",
]
