"""The plugin's settings (``plugins.push.settings`` in config.json); all optional."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

DEFAULT_ENDPOINT = "https://exp.host"


class PushSettings(BaseModel):
    """Where Expo push notifications are sent; tests point ``endpoint`` at a local fake."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    enabled: bool = Field(True, description="send Expo push notifications at all")
    endpoint: str = Field(
        DEFAULT_ENDPOINT,
        pattern=r"^https?://",
        description="Expo push service origin (the API lives under /--/api/v2)",
    )
    timeout: float = Field(10.0, gt=0, description="seconds one batch request may take")


def settings_of(section: Any) -> PushSettings:
    """The settings from what :meth:`DaemonContext.config_section` returned."""
    if isinstance(section, PushSettings):
        return section
    if isinstance(section, dict):
        return PushSettings.model_validate(section)
    return PushSettings()
