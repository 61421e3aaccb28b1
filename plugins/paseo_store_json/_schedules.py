"""Repositories over one file per record besides agents: schedules and managed processes (see
:class:`paseo_store_json._per_record.RecordFiles`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from paseo_hookspecs.errors import InvalidParams
from paseo_hookspecs.records import (
    ManagedProcessRecord,
    ScheduleRecord,
    dump_record,
    managed_process_record_path,
    schedule_record_path,
)
from paseo_hookspecs.store import (
    DEFAULT_PAGE_SIZE,
    Changes,
    Expect,
    ManagedProcessRepository,
    Page,
    ScheduleRepository,
)

from paseo_store_json._core import Core, validated
from paseo_store_json._index import DEFAULT_CACHE_RECORDS, PlainRow, ScheduleRow
from paseo_store_json._per_record import RecordFiles

# --- schedules -------------------------------------------------------------------------------


class JsonScheduleRepository(ScheduleRepository):
    """Schedules in ``schedules/{id}.json``."""

    def __init__(self, core: Core, cache_records: int = DEFAULT_CACHE_RECORDS) -> None:
        self.files: RecordFiles[ScheduleRecord, ScheduleRow] = RecordFiles(
            core,
            ScheduleRecord,
            "schedule",
            lambda row: schedule_record_path(row.id),
            row_type=ScheduleRow,
            cache_records=cache_records,
        )

    async def get(self, schedule_id: str) -> ScheduleRecord | None:
        return await self.files.get(schedule_id)

    async def list(
        self,
        *,
        status: str | None = None,
        cursor: str | None = None,
        limit: int = DEFAULT_PAGE_SIZE,
    ) -> Page[ScheduleRecord]:
        return await self.files.page(
            cursor, limit, lambda row: status is None or row.status == status, "schedules"
        )

    async def insert(self, record: ScheduleRecord) -> bool:
        return await self.files.insert(record)

    async def update(
        self, schedule_id: str, changes: Changes, *, expect: Expect | None = None
    ) -> ScheduleRecord:
        return await self.files.update(schedule_id, changes, expect)

    async def upsert_run(
        self, schedule_id: str, run: Mapping[str, Any], changes: Changes | None = None
    ) -> ScheduleRecord:
        run_id = run.get("id") if isinstance(run, Mapping) else None
        if not isinstance(run_id, str):
            raise InvalidParams("a schedule run needs a string id")

        def add_run(current: ScheduleRecord) -> ScheduleRecord:
            data = dump_record(current)
            runs = data.get("runs", [])
            if any(existing.get("id") == run_id for existing in runs):
                # A replaced run keeps its place in the history.
                data["runs"] = [dict(run) if r.get("id") == run_id else r for r in runs]
            else:
                data["runs"] = [*runs, dict(run)]
            return validated(ScheduleRecord, data)[0]

        return await self.files.update(schedule_id, changes or {}, None, edit=add_run)

    async def delete(self, schedule_id: str) -> bool:
        return await self.files.delete(schedule_id)


# --- managed processes -----------------------------------------------------------------------


class JsonManagedProcessRepository(ManagedProcessRepository):
    """Helper processes in ``runtime/managed-processes/{id}.json``."""

    def __init__(self, core: Core) -> None:
        self.files: RecordFiles[ManagedProcessRecord, PlainRow] = RecordFiles(
            core,
            ManagedProcessRecord,
            "managed process",
            lambda row: managed_process_record_path(row.id),
            row_type=PlainRow,
        )

    async def get(self, record_id: str) -> ManagedProcessRecord | None:
        return await self.files.get(record_id)

    async def list(self) -> list[ManagedProcessRecord]:
        self.files.core.check_open()
        return await self.files.read_rows([row for _key, row in self.files.index.walk(None)])

    async def put(self, record: ManagedProcessRecord) -> None:
        await self.files.put(record)

    async def delete(self, record_id: str) -> bool:
        return await self.files.delete(record_id)


__all__ = ["JsonManagedProcessRepository", "JsonScheduleRepository"]
