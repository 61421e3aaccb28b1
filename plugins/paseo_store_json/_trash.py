"""The trash: purging tombstoned agents into the cleanup queue ``trash/cleanup/{itemId}.json``.

A purge is one transaction across three files: the queued item, the agent's record and its
timeline. The item is written first and is the commit point: once it is durable the purge has
happened, and the record and timeline are removed after it. A crash in between leaves the
tombstone on disk next to an item naming it with the same ``deletedAt``, and the next open
finishes the purge before anything is served (:func:`paseo_store_json._load.finish_purges`).
Under the agent's lock nothing can restore the tombstone while its purge runs.
"""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Callable
from pathlib import Path, PurePosixPath
from typing import Any

from paseo_hookspecs.errors import Conflict, InvalidParams, StorageError
from paseo_hookspecs.records import CleanupItem
from paseo_hookspecs.store import DEFAULT_PAGE_SIZE, TrashRepository

from paseo_store_json._core import Core, check_file_id, check_limit, revalidated
from paseo_store_json._files import encode_json
from paseo_store_json._index import CleanupRow
from paseo_store_json._load import CLEANUP_DIR, SWEEP_FILE
from paseo_store_json._per_record import JsonAgentRepository, RecordFiles

log = logging.getLogger("paseo.store.json")

_QUEUE = PurePosixPath(CLEANUP_DIR)


class JsonTrashRepository(TrashRepository):
    """The queue as one file per item; the sweep marker in ``trash/sweep.json``."""

    def __init__(
        self,
        core: Core,
        agents: JsonAgentRepository,
        timeline_remove: Callable[[str], Any],
    ) -> None:
        self.core = core
        self._agents = agents
        self._timeline_remove = timeline_remove
        self.files: RecordFiles[CleanupItem, CleanupRow] = RecordFiles(
            core,
            CleanupItem,
            "cleanup item",
            lambda row: _QUEUE / f"{row.id}.json",
            row_type=CleanupRow,
        )
        self.last_sweep_at: str | None = None

    @staticmethod
    def read_sweep(home: Path) -> str | None:
        """The sweep marker as stored (blocking; called at open)."""
        try:
            data = json.loads((home / SWEEP_FILE).read_bytes())
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:
            # A marker that cannot be read only allows one extra sweep: not worth refusing
            # to open the store over.
            log.warning("ignoring the unreadable trash sweep marker %s: %s", SWEEP_FILE, exc)
            return None
        value = data.get("lastSweepAt") if isinstance(data, dict) else None
        return value if isinstance(value, str) else None

    async def purge(self, agent_id: str, *, deleted_at: str, item: CleanupItem) -> bool:
        row, encoded = revalidated(CleanupItem, item)
        check_file_id("cleanup item", row.id)
        if row.agentId != agent_id or row.deletedAt != deleted_at:
            raise InvalidParams("the cleanup item must name the purged agent and its deletedAt")
        agents = self._agents.files

        async def operation() -> bool:
            async with agents.locks.hold(agent_id), self.files.locks.hold(row.id):
                current = await agents.row_of(agent_id)
                if current is None or current.deletedAt != deleted_at:
                    return False
                if row.id in self.files.index.rows:
                    raise Conflict(f"cleanup item {row.id} is queued already")
                await self.files._store(row, encoded)
                # Committed: the agent is gone from now on, whatever happens to its files
                # (the next open removes what could not be removed here).
                record_path = Path(current.path)
                agents.forget(agent_id)
                try:
                    await self.core.io(
                        lambda: self.core.ops.remove(record_path), f"purging agent {agent_id}"
                    )
                    await self._timeline_remove(agent_id)
                except StorageError:
                    log.exception("agent %s purged; the next open removes its files", agent_id)
                return True

        return await self.core.write(operation)

    async def finish_purges(self) -> None:
        """Redo purges a crash interrupted whose tombstone the open's index did not show (it
        came from a stale index file): what :func:`paseo_store_json._load.finish_purges` does
        at open, once the index has been checked against the records."""
        agents = self._agents.files
        for item in list(self.files.index.rows.values()):
            agent_id = item.agentId
            held = agents.index.rows.get(agent_id)
            if held is None or held.deletedAt != item.deletedAt:
                continue
            async with agents.locks.hold(agent_id):
                held = agents.index.rows.get(agent_id)
                if held is None or held.deletedAt != item.deletedAt:
                    continue
                remove = functools.partial(self.core.ops.remove, Path(held.path))
                await self.core.io(remove, f"purging agent {agent_id}")
                agents.forget(agent_id)
                await self._timeline_remove(agent_id)
                log.info("finished the interrupted purge of agent %s", agent_id)

    async def queued(self, *, limit: int = DEFAULT_PAGE_SIZE) -> list[CleanupItem]:
        self.core.check_open()
        size = check_limit(limit)
        rows: list[CleanupRow] = []
        for _key, row in self.files.index.walk(None):
            if len(rows) == size:
                break
            rows.append(row)
        return await self.files.read_rows(rows)

    async def retire(self, item_id: str) -> bool:
        return await self.files.delete(item_id)

    async def retry_later(self, item_id: str, *, error: str, at: str) -> CleanupItem:
        def count(current: CleanupItem) -> CleanupItem:
            return current.model_copy(update={"attempts": current.attempts + 1})

        return await self.files.update(
            item_id, {"lastError": error, "lastAttemptAt": at}, None, edit=count
        )

    async def last_sweep(self) -> str | None:
        self.core.check_open()
        return self.last_sweep_at

    async def record_sweep(self, at: str) -> None:
        if not isinstance(at, str) or not at:
            raise InvalidParams("the sweep time is a non-empty ISO string")
        path = self.core.home / SWEEP_FILE
        data = encode_json({"lastSweepAt": at})

        async def operation() -> None:
            await self.core.io(lambda: self.core.ops.write_bytes(path, data), "the sweep marker")
            self.last_sweep_at = at

        await self.core.write(operation)


__all__ = ["JsonTrashRepository"]
