"""Filtered agent listing on the ``sqlite`` store against the same raw query.

Fills a database with fully populated agent records, then times one page of a filtered listing
(``store.agents.list``: a hop to a reader thread, the query, pydantic validation of each row)
against the identical ``SELECT`` run directly with ``sqlite3`` plus ``json.loads`` of each row,
measured in the same run. Prints medians and their ratio (target: at most 3x).
Run: ``.venv/bin/python bench/store_sqlite_list.py``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path

from paseo_hookspecs.records import AgentRecord
from paseo_hookspecs.store import AgentFilter
from paseo_store_sqlite import DATABASE_FILE, SqliteStore

from paseo.testing.store_conformance import agent_data, iso

PROVIDERS = ("claude", "codex", "opencode")
STATUSES = ("idle", "running", "closed", "error")

# What ``agents.list(FILTER, limit=PAGE)`` runs, written out by hand.
FILTER = AgentFilter(provider="claude", statuses=frozenset({"idle", "running"}))
RAW_SQL = (
    "SELECT record FROM agents WHERE archived_at IS NULL AND provider = ? "
    "AND last_status IN (?, ?) ORDER BY created_at, id LIMIT ?"
)


async def fill(store: SqliteStore, count: int) -> None:
    records = [
        AgentRecord.model_validate(
            agent_data(
                created_at=iso(index),
                provider=PROVIDERS[index % len(PROVIDERS)],
                lastStatus=STATUSES[index % len(STATUSES)],
                workspaceId=f"wks_{index % 17:016x}",
            )
        )
        for index in range(count)
    ]
    await asyncio.gather(*(store.agents.insert(record) for record in records))


async def main_async(count: int, page: int, runs: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        store = SqliteStore(home)
        await store.open()
        try:
            await fill(store, count)
            raw = sqlite3.connect(f"{(home / DATABASE_FILE).as_uri()}?mode=ro", uri=True)
            params = ("claude", "idle", "running", page + 1)

            def baseline() -> int:
                rows = raw.execute(RAW_SQL, params).fetchall()
                return len([json.loads(row[0]) for row in rows])

            ours_samples: list[float] = []
            raw_samples: list[float] = []
            # Interleave so machine noise hits both alike.
            for _ in range(runs):
                start = time.perf_counter()
                result = await store.agents.list(FILTER, limit=page)
                ours_samples.append(time.perf_counter() - start)
                start = time.perf_counter()
                rows = baseline()
                raw_samples.append(time.perf_counter() - start)
            assert len(result.items) == min(page, rows)
            raw.close()
        finally:
            await store.close()
    ours = statistics.median(ours_samples)
    base = statistics.median(raw_samples)
    print(f"{count} agents, page of {page}, {runs} runs")
    print(f"{'case':<34}{'median ms':>10}{'ratio':>8}")
    print(f"{'sqlite3 + json.loads (baseline)':<34}{base * 1000:>10.2f}{1.0:>8.2f}")
    print(f"{'SqliteStore.agents.list':<34}{ours * 1000:>10.2f}{ours / base:>8.2f}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--agents", type=int, default=5000)
    parser.add_argument("--page", type=int, default=200)
    parser.add_argument("--runs", type=int, default=200)
    args = parser.parse_args()
    asyncio.run(main_async(args.agents, args.page, args.runs))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
