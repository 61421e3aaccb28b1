"""The push token store: ``push-tokens.json``, ``{"tokens": [...]}`` of Expo push tokens.

Parsing is permissive, as in TypeScript Paseo: entries that are not strings are dropped and a
missing or non-list ``tokens`` reads as no tokens, so one bad entry never loses the others. Only a
top level that is not a JSON object is an error.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field, field_validator

from paseo_hookspecs.records._base import RecordModel

__all__ = ["PushTokensFile"]


class PushTokensFile(RecordModel):
    """The set of Expo push notification tokens registered by the host's clients."""

    tokens: list[str] = Field(default_factory=list)

    @field_validator("tokens", mode="before")
    @classmethod
    def _keep_string_entries(cls, value: Any) -> list[str]:
        if not isinstance(value, list):
            return []
        return [entry for entry in value if isinstance(entry, str)]
