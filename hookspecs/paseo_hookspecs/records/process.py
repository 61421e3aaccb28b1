"""Managed process records: ``runtime/managed-processes/{recordId}.json``.

One file per helper process Paseo spawned (provider sidecars and the like). On daemon bootstrap
every record is reconciled: a helper whose pid is gone, or whose identity no longer matches (pid
reuse), loses its record; a live helper owned by this home is terminated. The ``daemon`` block lets
a reaper on a shared home leave another live daemon's helpers alone.
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar

from pydantic import Field

from paseo_hookspecs.records._base import RecordModel

__all__ = [
    "ManagedProcessDaemon",
    "ManagedProcessOwner",
    "ManagedProcessRecord",
    "ProcessIdentity",
]

_Required = Annotated[str, Field(min_length=1)]
_Pid = Annotated[int, Field(gt=0)]


class ManagedProcessOwner(RecordModel):
    """Who spawned the helper: a provider id and what kind of helper it is."""

    provider: _Required
    kind: _Required


class ProcessIdentity(RecordModel):
    """How to recognise the same process later despite pid reuse.

    ``commandLine`` and ``startedAt`` come from the process table; on Linux ``startTimeTicks`` and
    ``bootId`` come from ``/proc`` (locale independent). The last two default to ``null`` and are
    always written.
    """

    ALWAYS_EMIT: ClassVar[frozenset[str]] = frozenset({"startTimeTicks", "bootId"})

    commandLine: str | None
    startedAt: str | None
    startTimeTicks: str | None = None
    bootId: str | None = None


class ManagedProcessDaemon(RecordModel):
    """The daemon instance that spawned the helper, with its own process identity."""

    ALWAYS_EMIT: ClassVar[frozenset[str]] = frozenset({"bootId"})

    instanceId: _Required
    pid: _Pid
    identity: ProcessIdentity
    bootId: str | None = None
    recordedAt: _Required


class ManagedProcessRecord(RecordModel):
    """One helper process owned by Paseo."""

    ALWAYS_EMIT: ClassVar[frozenset[str]] = frozenset({"metadata"})
    NOT_NULL: ClassVar[frozenset[str]] = frozenset({"daemon"})

    id: _Required
    owner: ManagedProcessOwner
    pid: _Pid
    command: _Required
    args: list[str]
    metadata: dict[str, Any] = Field(default_factory=dict)
    identity: ProcessIdentity
    daemon: ManagedProcessDaemon | None = None
    createdAt: _Required
