"""The trash's cleanup queue: ``trash/cleanup/{itemId}.json`` on the JSON driver.

A purge (the permanent removal of a tombstoned agent, see
:class:`paseo_hookspecs.store.TrashRepository`) writes one :class:`CleanupItem` in the same
transaction that removes the agent's record and timeline. The item names what is left to remove
outside the store: Paseo-owned per-agent directories under ``$PASEO_HOME`` (``roots``, relative
to the home). The cleanup worker drains the queue; an item whose removal failed stays queued
with its ``attempts`` and ``lastError`` and is retried later.
"""

from __future__ import annotations

from typing import Annotated, ClassVar

from pydantic import Field

from paseo_hookspecs.records._base import RecordModel

__all__ = ["CleanupItem"]

_Required = Annotated[str, Field(min_length=1)]


class CleanupItem(RecordModel):
    """One durable cleanup work item, produced by exactly one purge."""

    ALWAYS_EMIT: ClassVar[frozenset[str]] = frozenset({"roots", "attempts"})
    NOT_NULL: ClassVar[frozenset[str]] = frozenset({"lastError", "lastAttemptAt"})

    id: _Required
    agentId: _Required
    deletedAt: _Required
    """The tombstone's ``deletedAt``: which tombstone the purge removed."""
    createdAt: _Required
    """When the purge committed (the queue's order)."""
    roots: list[str] = Field(default_factory=list)
    """Home-relative directories to remove (Paseo-owned, per agent)."""
    attempts: int = 0
    lastError: str | None = None
    lastAttemptAt: str | None = None
