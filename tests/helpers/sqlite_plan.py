"""SQLite's own plan for a query on a store's database (``EXPLAIN QUERY PLAN``), read-only:
the driver's index tests assert on it, so they hold whatever the machine's speed."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from paseo_store_sqlite import DATABASE_FILE


def query_plan(home: Path, sql: str, params: tuple[Any, ...] | list[Any] = ()) -> str:
    """The plan's steps for ``sql`` on the database under ``home``, joined with `` | ``."""
    conn = sqlite3.connect(f"{(home / DATABASE_FILE).as_uri()}?mode=ro", uri=True)
    try:
        rows = conn.execute(f"EXPLAIN QUERY PLAN {sql}", tuple(params)).fetchall()
    finally:
        conn.close()
    return " | ".join(str(row[-1]) for row in rows)
