"""Reading stored rows back into records."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from paseo_hookspecs.errors import NotFound, StorageError
from paseo_hookspecs.store import Page
from pydantic import BaseModel, TypeAdapter, ValidationError

from paseo_store_sqlite._codec import encode_cursor

if TYPE_CHECKING:
    from paseo_store_sqlite._database import Database

B = TypeVar("B", bound=BaseModel)
T = TypeVar("T")


def parse(model: type[B], text: str) -> B:
    """A stored record's text as ``model`` (pydantic's JSON parser: no intermediate dict).

    Every row was validated on write, so a failure here means the file was damaged or written by
    an incompatible version: a storage problem, not the caller's.
    """
    try:
        return model.model_validate_json(text)
    except ValidationError as exc:
        raise StorageError(f"a stored {model.__name__} does not validate: {exc}") from exc


def parse_with(adapter: TypeAdapter[Any], text: str) -> Any:
    """Like :func:`parse`, for a type that is not a model class (a discriminated union)."""
    try:
        return adapter.validate_json(text)
    except ValidationError as exc:
        raise StorageError(f"a stored record does not validate: {exc}") from exc


def load_current(conn: sqlite3.Connection, sql: str, key: str, what: str) -> dict[str, Any]:
    """The JSON object of the one row ``sql`` selects for ``key`` (inside a write transaction,
    for a read-modify-write); ``NotFound`` when there is none."""
    row = conn.execute(sql, (key,)).fetchone()
    if row is None:
        raise NotFound(f"no {what} {key!r}", data={"id": key})
    data = json.loads(row[0])
    if not isinstance(data, dict):
        raise StorageError(f"the stored {what} {key!r} is not a JSON object")
    return data


async def read_one(db: Database, sql: str, key: str, decode: Callable[[str], T]) -> T | None:
    """The record the one-row ``sql`` selects for ``key`` (on a reader), or ``None``."""

    def run(conn: sqlite3.Connection) -> T | None:
        row = conn.execute(sql, (key,)).fetchone()
        return None if row is None else decode(row[0])

    return await db.read(run)


def page_of(
    items: list[T], limit: int, kind: str, key: Callable[[T], Sequence[str | int]]
) -> Page[T]:
    """A page from up to ``limit + 1`` fetched rows: the extra row only proves there is more,
    and the cursor names the last row returned."""
    if len(items) <= limit:
        return Page(items)
    items = items[:limit]
    return Page(items, encode_cursor(kind, key(items[-1])))
