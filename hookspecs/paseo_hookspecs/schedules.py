"""Schedules (prompts sent on a cadence), driven by a plugin.

.. versionadded:: 2.0
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, Protocol, runtime_checkable

from paseo_hookspecs.records.schedule import ScheduleRecord

ScheduleStatus = Literal["active", "paused", "completed"]


class ScheduleControl(Protocol):
    """Every method names a schedule by id (or a unique id prefix or its exact name); failures
    are the contract's errors (``NotFound``, ``InvalidParams``, ``Conflict``)."""

    async def create(self, spec: Mapping[str, Any]) -> ScheduleRecord:
        """A new schedule; ``spec`` is what ``schedule.create`` takes (``prompt``, ``name``,
        ``cadence``, ``target``, ``maxRuns``, ``expiresAt``), validated as it validates it."""

    async def list(self, status: ScheduleStatus | None = None) -> list[ScheduleRecord]: ...

    async def get(self, schedule: str) -> ScheduleRecord: ...

    async def pause(self, schedule: str) -> ScheduleRecord: ...

    async def resume(self, schedule: str) -> ScheduleRecord: ...

    async def delete(self, schedule: str) -> str:
        """Delete the schedule and its run history; returns its id."""


@runtime_checkable
class ScheduleSource(Protocol):
    """A :class:`~paseo_hookspecs.context.DaemonContext` that offers schedules."""

    @property
    def schedules(self) -> ScheduleControl: ...


__all__ = ["ScheduleControl", "ScheduleSource", "ScheduleStatus"]
