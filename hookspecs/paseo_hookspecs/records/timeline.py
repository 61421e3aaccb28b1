"""The durable agent timeline entry, a record of Python Paseo (not part of the TypeScript layout).

Each entry wraps one agent stream event with its position, so a timeline survives a daemon
restart and clients can resume from a cursor: ``epoch`` names one contiguous run of ``seq``
numbers (it changes when a timeline is reset or rebuilt), ``seq`` orders entries within it.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from pydantic import Field, field_validator

from paseo_hookspecs.records._base import RecordModel

__all__ = ["TimelineEntry"]


class TimelineEntry(RecordModel):
    """One persisted timeline event of one agent.

    ``timestamp`` is an ISO 8601 string, kept exactly as written; ``event`` is the stream event
    object as emitted to clients.
    """

    agentId: Annotated[str, Field(min_length=1)]
    seq: Annotated[int, Field(ge=0)]
    epoch: Annotated[str, Field(min_length=1)]
    timestamp: str
    event: dict[str, Any]

    @field_validator("timestamp")
    @classmethod
    def _must_be_iso_8601(cls, value: str) -> str:
        try:
            datetime.fromisoformat(value)
        except ValueError:
            msg = f"not an ISO 8601 timestamp: {value!r}"
            raise ValueError(msg) from None
        return value
