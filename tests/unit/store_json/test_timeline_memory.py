"""The JSON store's memory for timelines is bounded: reading every timeline of a home does not
keep every entry parsed for the agent's life (SQLite keeps none; the JSON store keeps at most
``CACHE_TIMELINE_BYTES`` of lines parsed, and a small index per entry)."""

from __future__ import annotations

import asyncio
import gc
import json
import tracemalloc
import uuid
from pathlib import Path

from paseo_store_json import JsonStore
from paseo_store_json._timeline import CACHE_TIMELINE_BYTES

from paseo.testing.store_conformance import timeline_entry_data

AGENTS = 48
ENTRIES = 400
"""~280-byte lines: 48 timelines of 400 entries are 5.4 MB, over twice the cache bound."""

RETAINED_BOUND = 24 * 1024 * 1024
"""What reading them all may leave allocated: the cache bound's worth of parsed entries (a
parsed entry takes several times its line) and the index. Keeping every entry took ~50 MiB."""


def _write_timelines(home: Path) -> list[str]:
    directory = home / "timelines"
    directory.mkdir(parents=True)
    agent_ids = [str(uuid.UUID(int=n + 1, version=4)) for n in range(AGENTS)]
    for agent_id in agent_ids:
        lines = (
            json.dumps(timeline_entry_data(agent_id, seq), separators=(",", ":")) + "\n"
            for seq in range(1, ENTRIES + 1)
        )
        (directory / f"{agent_id}.jsonl").write_text("".join(lines))
    return agent_ids


def test_reading_every_timeline_retains_a_bounded_amount(tmp_path: Path) -> None:
    agent_ids = _write_timelines(tmp_path)

    async def scenario() -> tuple[int, int]:
        store = JsonStore(tmp_path)
        await store.open()
        try:
            gc.collect()
            tracemalloc.start()
            try:
                before = tracemalloc.get_traced_memory()[0]
                for agent_id in agent_ids:
                    whole = await store.timeline.read(agent_id)
                    assert [e.seq for e in whole] == list(range(1, ENTRIES + 1))
                    assert [
                        e.seq for e in await store.timeline.read(agent_id, limit=5, tail=True)
                    ] == list(range(ENTRIES - 4, ENTRIES + 1))
                    del whole
                # The oldest timelines are no longer parsed in memory; they still read right.
                middle = await store.timeline.read(agent_ids[0], after_seq=100, limit=3)
                assert [e.seq for e in middle] == [101, 102, 103]
                assert (await store.timeline.last(agent_ids[0])).seq == ENTRIES  # type: ignore[union-attr]
                del middle
                gc.collect()
                retained = tracemalloc.get_traced_memory()[0] - before
            finally:
                tracemalloc.stop()
            return retained, store.timeline.cached_bytes
        finally:
            await store.close()

    retained, cached = asyncio.run(asyncio.wait_for(scenario(), 120))
    assert retained < RETAINED_BOUND, f"reading every timeline kept {retained / 2**20:.1f} MiB"
    assert cached <= CACHE_TIMELINE_BYTES
