"""Where loops are kept: the store's plugin records, and the one-file layout they came from.

Each loop is one record of the collection ``loops`` in the plugin's namespace ``loops``
(:mod:`paseo_hookspecs.plugin_records`), kept by the configured store driver: under the
``json`` driver ``$PASEO_HOME/plugin-records/loops/loops/<id>.json``, under ``sqlite`` a row of
``paseo.db``. A change to one loop writes that loop alone.

Earlier versions kept every loop in ``$PASEO_HOME/loops/loops.json``, rewritten whole after
each change. :func:`migrate_legacy_file` moves such a file's loops into the store once, at
start, and then renames it ``loops.json.migrated`` (kept, never deleted): a crash half-way
leaves the file in place, and the next start inserts only the loops not stored yet.
"""

from __future__ import annotations

import asyncio
import logging
import os
from pathlib import Path
from typing import Any

from paseo_hookspecs.atomic import fsync_directory, read_json, sweep_temp_files
from paseo_hookspecs.errors import Conflict, InvalidParams
from paseo_hookspecs.plugin_records import PluginRecordRepository

from paseo_loops.records import Loop

log = logging.getLogger("paseo.loops")

NAMESPACE = "loops"
"""The plugin's id: the namespace of its records."""
COLLECTION = "loops"
FILE = "loops.json"
MIGRATED = FILE + ".migrated"


class LoopStore:
    """The legacy ``loops/loops.json`` (read for the migration only)."""

    def __init__(self, home: Path) -> None:
        self.directory = home / "loops"
        self.path = self.directory / FILE

    def load(self) -> list[Loop]:
        """The loops the file holds; an unreadable file is logged and kept aside (never
        overwritten silently: it is renamed ``loops.json.corrupt``)."""
        sweep_temp_files(self.directory, [FILE])
        if not self.path.exists():
            return []
        try:
            document: Any = read_json(self.path)
        except (OSError, ValueError) as exc:
            log.warning("loops: %s is unreadable (%s); starting with no loops", self.path, exc)
            self.path.replace(self.path.with_name(FILE + ".corrupt"))
            return []
        loops = document.get("loops") if isinstance(document, dict) else document
        if not isinstance(loops, list):
            return []
        return [
            loop for loop in loops if isinstance(loop, dict) and isinstance(loop.get("id"), str)
        ]

    def retire(self) -> Path:
        """Rename the migrated file aside (a free ``loops.json.migrated[.N]`` name, so an older
        one is never replaced) and make the rename durable; the new path."""
        target = self.directory / MIGRATED
        counter = 1
        while target.exists():
            counter += 1
            target = self.directory / f"{MIGRATED}.{counter}"
        os.replace(self.path, target)
        fsync_directory(self.directory)
        return target


async def all_loops(records: PluginRecordRepository) -> list[Loop]:
    """Every stored loop (page by page)."""
    loops: list[Loop] = []
    cursor: str | None = None
    while True:
        page = await records.list(cursor=cursor)
        loops += [record.value for record in page.items]
        if page.next_cursor is None:
            return loops
        cursor = page.next_cursor


async def migrate_legacy_file(home: Path, records: PluginRecordRepository) -> int:
    """Move ``loops/loops.json``'s loops into ``records``; how many were inserted."""
    legacy = LoopStore(home)
    loops = await asyncio.to_thread(legacy.load)
    if not await asyncio.to_thread(legacy.path.exists):
        return 0  # no file, or an unreadable one, set aside as loops.json.corrupt
    inserted = 0
    for loop in loops:
        try:
            await records.put(loop["id"], loop, expect_revision=0)
            inserted += 1
        except Conflict:
            pass  # stored by a start that stopped before the rename: the stored one wins
        except InvalidParams as exc:
            log.warning("loops: loop %r of %s is not migrated: %s", loop["id"], legacy.path, exc)
    moved = await asyncio.to_thread(legacy.retire)
    log.info(
        "loops: moved %d loop(s) from %s into the store (file kept as %s)",
        inserted,
        legacy.path,
        moved.name,
    )
    return inserted
