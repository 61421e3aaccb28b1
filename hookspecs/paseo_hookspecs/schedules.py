"""Schedules (prompts sent on a cadence), driven by a plugin.

.. versionadded:: 2.0
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
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


@dataclass(frozen=True)
class ScheduleFire:
    """One run of a schedule whose target is a plugin's (:class:`ScheduleTargetKind`)."""

    schedule_id: str
    run_id: str
    prompt: str
    config: Mapping[str, Any]
    """The target's config, as :attr:`ScheduleTargetKind.validate` returned it."""
    labels: Mapping[str, str]
    """Labels the agents the run starts should carry (``paseo.schedule-id``, …)."""
    timeout: float
    """Seconds the run may take; past them the run is cancelled and fails."""


@dataclass(frozen=True)
class ScheduleRunEnded:
    """One run of a schedule that has ended, as recorded in the schedule's run history
    (what :func:`~paseo_hookspecs.specs.paseo_schedule_run_ended` observes).

    .. versionadded:: 2.1
    """

    schedule_id: str
    schedule_name: str | None
    run_id: str
    status: Literal["succeeded", "failed"]
    error: str | None
    """Why a failed run failed (``None`` when it succeeded)."""
    agent_id: str | None
    """The agent that worked on the run, when it reached one."""
    ended_at: str
    """ISO 8601 time the run ended."""


@dataclass(frozen=True)
class ScheduleFired:
    """How a plugin's run ended: ``output`` is kept (bounded) in the run entry."""

    status: Literal["succeeded", "failed"]
    output: str | None = None
    error: str | None = None


@dataclass(frozen=True)
class ScheduleTargetKind:
    """A schedule target a plugin offers: ``{"type": <type>, "config": {...}}`` in
    ``schedule.create`` (the loops plugin's ``loop``).

    ``validate(config)`` runs at create time and returns the config to store (raise
    ``InvalidParams`` to refuse it); ``run(fire)`` runs each fire and returns when the run is
    over (a slot that comes while it still runs is skipped, as for an agent's turn).
    """

    type: str
    summary: str
    validate: Callable[[Mapping[str, Any]], Awaitable[dict[str, Any]]]
    run: Callable[[ScheduleFire], Awaitable[ScheduleFired]]


class ScheduleTargetRegistrar(Protocol):
    def __call__(self, kind: ScheduleTargetKind) -> None:
        """Register a schedule target kind; a ``type`` already taken is refused."""


@runtime_checkable
class ScheduleSource(Protocol):
    """A :class:`~paseo_hookspecs.context.DaemonContext` that offers schedules."""

    @property
    def schedules(self) -> ScheduleControl: ...


__all__ = [
    "ScheduleControl",
    "ScheduleFire",
    "ScheduleFired",
    "ScheduleRunEnded",
    "ScheduleSource",
    "ScheduleStatus",
    "ScheduleTargetKind",
    "ScheduleTargetRegistrar",
]
