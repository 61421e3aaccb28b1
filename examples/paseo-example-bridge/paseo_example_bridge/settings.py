"""The bridge's settings: ``plugins.bridge.settings`` in ``config.json`` (all optional)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator


class BridgeSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    folder: str | None = Field(
        None, description="the watched folder (default: $PASEO_HOME/bridge), absolute"
    )
    cwd: str | None = Field(
        None, description="where the agents work (default: the watched folder), absolute"
    )
    provider: str | None = Field(None, description="provider id (default: the daemon's)")
    modeId: str | None = Field(None, description="the agents' mode, e.g. a mode that asks")
    pollSeconds: float = Field(0.5, gt=0, le=60, description="how often the folder is read")

    @field_validator("folder", "cwd")
    @classmethod
    def _absolute(cls, value: str | None) -> str | None:
        if value is not None and not Path(value).is_absolute():
            raise ValueError(f"must be an absolute path, not {value!r}")
        return value

    def folder_path(self, home: Path) -> Path:
        return Path(self.folder) if self.folder else home / "bridge"

    def cwd_path(self, home: Path) -> Path:
        return Path(self.cwd) if self.cwd else self.folder_path(home)


def settings_of(section: Any) -> BridgeSettings:
    """The settings from what ``DaemonContext.config_section`` returned (``None``: defaults)."""
    if isinstance(section, BridgeSettings):
        return section
    if isinstance(section, dict):
        return BridgeSettings.model_validate(section)
    return BridgeSettings()
