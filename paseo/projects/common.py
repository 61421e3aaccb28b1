"""Small helpers shared by the placement services (projects, workspaces, worktrees, labels).

They live with the project registry because it is the lowest of those packages: the worktree
and workspace packages import it, never the other way round.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any, TypeVar

from paseo_hookspecs.store import MAX_PAGE_SIZE, Page

T = TypeVar("T")

Publish = Callable[[str, dict[str, Any]], None]
"""``publish(method, payload)``: announce a change on the ``workspaces`` stream."""


def utc_now() -> str:
    """Now as ISO 8601 UTC with milliseconds and ``Z``, the form TypeScript Paseo writes."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def no_publish(method: str, payload: dict[str, Any]) -> None:
    """A publisher for services running without an RPC server (tests, tools)."""
    return


async def collect(fetch: Callable[[str | None], Awaitable[Page[T]]]) -> list[T]:
    """Every row of a cursor-paginated listing (``fetch(cursor)`` returns one page)."""
    rows: list[T] = []
    cursor: str | None = None
    while True:
        page = await fetch(cursor)
        rows.extend(page.items)
        if page.next_cursor is None:
            return rows
        cursor = page.next_cursor


PAGE = MAX_PAGE_SIZE
