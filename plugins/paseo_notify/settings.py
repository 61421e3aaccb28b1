"""The plugin's settings: ``plugins.notify.settings`` in config.json.

A list of sinks, each with the events it wants. Validated when the plugin loads, like every
plugin section: an invalid one is the plugin's load error (``paseo plugins list``).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

EventName = Literal["finished", "permission", "error", "budget", "schedule-failed"]
"""``budget`` and ``schedule-failed`` are accepted for sinks to ask for; no part of the daemon
raises them yet (docs/notifications.md)."""

DEFAULT_EVENTS: tuple[EventName, ...] = ("finished", "permission", "error")


class _Sink(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str | None = Field(
        default=None, max_length=64, description="shown in notify.status (default: type and index)"
    )
    events: list[EventName] = Field(default_factory=lambda: list(DEFAULT_EVENTS), min_length=1)
    timeout: float = Field(10.0, gt=0, le=120, description="seconds one delivery attempt may take")
    retries: int = Field(3, ge=0, le=10, description="attempts after the first that fail")
    backoff: float = Field(
        1.0, gt=0, le=300, description="seconds before the first retry, doubled for each next"
    )
    queueSize: int = Field(100, ge=1, le=10_000, description="notifications waiting at most")


class WebhookSink(_Sink):
    """POST the notification as JSON; signed when ``secretFile`` is set."""

    type: Literal["webhook"]
    url: str = Field(pattern=r"^https?://")
    secretFile: str | None = Field(
        default=None,
        description="HMAC-SHA256 key file (created 0600 with a random key when absent; refused "
        "when group or others may read it); signs X-Paseo-Signature: sha256=<hex>",
    )


class NtfySink(_Sink):
    """POST a line of text to an ntfy topic URL, with its title as a header."""

    type: Literal["ntfy"]
    url: str = Field(pattern=r"^https?://", description="the topic URL, e.g. https://ntfy.sh/x")


class CommandSink(_Sink):
    """Run a program with the JSON on its stdin (e.g. a script calling notify-send)."""

    type: Literal["command"]
    argv: list[str] = Field(min_length=1)
    retries: int = Field(0, ge=0, le=10)


Sink = Annotated[WebhookSink | NtfySink | CommandSink, Field(discriminator="type")]


class NotifySettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    enabled: bool = Field(True, description="deliver notifications at all")
    sinks: list[Sink] = Field(default_factory=list, max_length=32)
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
