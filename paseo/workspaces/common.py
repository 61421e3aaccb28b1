"""Small helpers shared by the project, workspace, worktree and label services."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any, TypeVar

from paseo_hookspecs.registration import RpcMethod
from paseo_hookspecs.store import MAX_PAGE_SIZE, Page
from pydantic import BaseModel

T = TypeVar("T")

Publish = Callable[[str, dict[str, Any]], None]
"""``publish(method, payload)``: announce a change on the ``workspaces`` stream."""

STREAM = "workspaces"
"""The notification stream of projects, workspaces, worktrees and labels."""


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


def owner_method(
    name: str,
    handler: Callable[[Any, Any], Awaitable[Any]],
    params: type[BaseModel] | None,
    result: type[BaseModel] | None,
    summary: str,
) -> RpcMethod:
    """An RPC method open to local and remote (not hub) sessions."""
    return RpcMethod(name, handler, params, result, summary=summary, access=OWNER)


OWNER = frozenset({"local", "remote"})
