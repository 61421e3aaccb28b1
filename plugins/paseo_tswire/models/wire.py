"""The base of every outbound model: exact keys, and optional fields left out rather than null.

zod's ``.optional()`` accepts an absent key but rejects ``null``; ``.nullable()`` fields are
declared without a default here, so they are always sent. A field with a default is therefore
dropped from the frame when it holds ``None``.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, SerializerFunctionWrapHandler, model_serializer


class Wire(BaseModel):
    """An outbound shape: unknown keys are refused, ``None`` optionals are omitted."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    @model_serializer(mode="wrap")
    def _omit_absent(self, handler: SerializerFunctionWrapHandler) -> Any:
        data = handler(self)
        if not isinstance(data, dict):
            return data
        fields = type(self).model_fields
        return {
            key: value
            for key, value in data.items()
            if value is not None or key not in fields or fields[key].is_required()
        }

    def wire(self) -> dict[str, Any]:
        """The JSON-ready form sent to the client."""
        data = self.model_dump(mode="json")
        assert isinstance(data, dict)
        return data


class Inbound(BaseModel):
    """An inbound request: unknown keys are ignored (as zod strips them)."""

    model_config = ConfigDict(extra="ignore", defer_build=True)
