"""Schedule targets plugins offer (``paseo_register_schedule_targets``): the loops plugin's
``loop`` is one. The kernel knows them only by ``type``: it validates a new schedule's config
with the kind, and runs each fire through it, bounded by the run timeout.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping

from paseo_hookspecs.errors import InvalidParams, NotFound
from paseo_hookspecs.records import PluginScheduleTarget, ScheduleRecord
from paseo_hookspecs.schedules import ScheduleFire, ScheduleFired, ScheduleTargetKind

from paseo.schedules.ports import SCHEDULE_ID_LABEL, SCHEDULE_RUN_LABEL


class PluginTargets:
    def __init__(self, kinds: Mapping[str, ScheduleTargetKind] | None = None) -> None:
        self._kinds = dict(kinds or {})

    def _kind(self, type_: str) -> ScheduleTargetKind:
        kind = self._kinds.get(type_)
        if kind is None:
            offered = ", ".join(sorted(["agent", "new-agent", *self._kinds]))
            raise InvalidParams(
                f"no loaded plugin offers the schedule target {type_!r} (targets: {offered})"
            )
        return kind

    async def target(self, type_: str, config: Mapping[str, object]) -> PluginScheduleTarget:
        """The stored target of a new schedule: the config as its kind validated it."""
        validated = await self._kind(type_).validate(dict(config))
        return PluginScheduleTarget(type=type_, config=validated)

    async def fire(
        self, record: ScheduleRecord, target: PluginScheduleTarget, run_id: str, within: float
    ) -> ScheduleFired:
        """Run one fire; a kind that is no longer loaded (its plugin disabled) is
        ``NotFound``, so the run fails saying so."""
        kind = self._kinds.get(target.type)
        if kind is None:
            raise NotFound(f"no loaded plugin runs the schedule target {target.type!r}")
        fire = ScheduleFire(
            schedule_id=record.id,
            run_id=run_id,
            prompt=record.prompt,
            config=dict(target.config),
            labels={SCHEDULE_ID_LABEL: record.id, SCHEDULE_RUN_LABEL: run_id},
            timeout=within,
        )
        try:
            async with asyncio.timeout(within):
                return await kind.run(fire)
        except TimeoutError:
            return ScheduleFired("failed", error=f"the run did not end within {within:.0f}s")
