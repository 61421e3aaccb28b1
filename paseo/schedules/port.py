"""The contract's :class:`~paseo_hookspecs.schedules.ScheduleControl` over the schedule
service (``create`` validates its spec as ``schedule.create`` validates its params)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from paseo_hookspecs.errors import InvalidParams
from paseo_hookspecs.records.schedule import ScheduleRecord
from paseo_hookspecs.schedules import ScheduleStatus
from pydantic import ValidationError

from paseo.schedules.models import ScheduleCreateParams

if TYPE_CHECKING:
    from paseo.schedules.service import ScheduleService


class KernelSchedules:
    def __init__(self, service: ScheduleService) -> None:
        self._service = service

    async def create(self, spec: Mapping[str, Any]) -> ScheduleRecord:
        try:
            params = ScheduleCreateParams.model_validate(dict(spec))
        except ValidationError as exc:
            problems = [
                {"path": ".".join(str(p) for p in e["loc"]), "message": e["msg"]}
                for e in exc.errors(include_url=False, include_input=False)
            ]
            raise InvalidParams("invalid schedule", data={"errors": problems}) from None
        return await self._service.create(params)

    async def list(self, status: ScheduleStatus | None = None) -> list[ScheduleRecord]:
        return await self._service.list_schedules(status)

    async def get(self, schedule: str) -> ScheduleRecord:
        return await self._service.get(schedule)

    async def pause(self, schedule: str) -> ScheduleRecord:
        return await self._service.pause(schedule)

    async def resume(self, schedule: str) -> ScheduleRecord:
        return await self._service.resume(schedule)

    async def delete(self, schedule: str) -> str:
        return await self._service.delete(schedule)
