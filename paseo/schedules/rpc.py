"""``schedule.*`` over the wire: thin handlers that reach the service through a
:class:`~paseo.services.ServiceRef`.

Changes are announced on the ``schedules`` stream as ``schedule.updated``
(see :mod:`paseo.schedules.models`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from paseo_hookspecs.context import RpcContext
from paseo_hookspecs.registration import RpcMethod, RpcMethodGroup

from paseo.schedules.models import (
    NOTIFICATIONS,
    ScheduleCreateParams,
    ScheduleDeleteResult,
    ScheduleListParams,
    ScheduleListResult,
    ScheduleLogsParams,
    ScheduleLogsResult,
    ScheduleRefParams,
    ScheduleResult,
    ScheduleRunNowResult,
)

if TYPE_CHECKING:
    from pydantic import BaseModel

    from paseo.schedules.service import ScheduleService
    from paseo.services import ServiceRef

OWNER = frozenset({"local", "remote"})


def method_groups(ref: ServiceRef[ScheduleService]) -> list[RpcMethodGroup]:
    """The ``schedule`` method group, calling the service ``ref`` is bound to."""

    async def create(ctx: RpcContext, params: ScheduleCreateParams) -> ScheduleResult:
        return ScheduleResult(schedule=await ref.get().create(params))

    async def list_(ctx: RpcContext, params: ScheduleListParams) -> ScheduleListResult:
        service = ref.get()
        return ScheduleListResult(
            schedules=await service.list_schedules(params.status),
            quarantined=service.quarantined,
        )

    async def inspect(ctx: RpcContext, params: ScheduleRefParams) -> ScheduleResult:
        return ScheduleResult(schedule=await ref.get().get(params.scheduleId))

    async def logs(ctx: RpcContext, params: ScheduleLogsParams) -> ScheduleLogsResult:
        schedule_id, history = await ref.get().logs(params.scheduleId, params.limit)
        return ScheduleLogsResult(scheduleId=schedule_id, runs=history)

    async def pause(ctx: RpcContext, params: ScheduleRefParams) -> ScheduleResult:
        return ScheduleResult(schedule=await ref.get().pause(params.scheduleId))

    async def resume(ctx: RpcContext, params: ScheduleRefParams) -> ScheduleResult:
        return ScheduleResult(schedule=await ref.get().resume(params.scheduleId))

    async def delete(ctx: RpcContext, params: ScheduleRefParams) -> ScheduleDeleteResult:
        return ScheduleDeleteResult(scheduleId=await ref.get().delete(params.scheduleId))

    async def run_now(ctx: RpcContext, params: ScheduleRefParams) -> ScheduleRunNowResult:
        record, run_id = await ref.get().run_now(params.scheduleId)
        return ScheduleRunNowResult(schedule=record, runId=run_id)

    def method(
        verb: str,
        handler: Callable[[Any, Any], Awaitable[Any]],
        params: type[BaseModel],
        result: type[BaseModel],
        summary: str,
    ) -> RpcMethod:
        return RpcMethod(f"schedule.{verb}", handler, params, result, summary, access=OWNER)

    return [
        RpcMethodGroup(
            "schedule",
            [
                method(
                    "create",
                    create,
                    ScheduleCreateParams,
                    ScheduleResult,
                    "Create a schedule (cron in a time zone, or a legacy interval)",
                ),
                method(
                    "list",
                    list_,
                    ScheduleListParams,
                    ScheduleListResult,
                    "Every schedule, oldest first, and the schedule files quarantined at boot",
                ),
                method("inspect", inspect, ScheduleRefParams, ScheduleResult, "One schedule"),
                method(
                    "logs",
                    logs,
                    ScheduleLogsParams,
                    ScheduleLogsResult,
                    "A schedule's newest runs (the history is bounded)",
                ),
                method("pause", pause, ScheduleRefParams, ScheduleResult, "Stop firing"),
                method(
                    "resume",
                    resume,
                    ScheduleRefParams,
                    ScheduleResult,
                    "Fire again from the next slot after now",
                ),
                method(
                    "delete",
                    delete,
                    ScheduleRefParams,
                    ScheduleDeleteResult,
                    "Delete a schedule and its history",
                ),
                method(
                    "run-now",
                    run_now,
                    ScheduleRefParams,
                    ScheduleRunNowResult,
                    "Start a run at once (refused while one is in progress)",
                ),
            ],
        )
    ]


def notifications() -> dict[str, type[BaseModel]]:
    """The schedule notifications (method → params model), for the protocol schema."""
    return dict(NOTIFICATIONS)
