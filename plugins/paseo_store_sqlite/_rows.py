"""Reading stored rows back into records."""

from __future__ import annotations

import json
import sqlite3
from typing import Any, TypeVar

from paseo_hookspecs.errors import NotFound, StorageError
from pydantic import BaseModel, TypeAdapter, ValidationError

B = TypeVar("B", bound=BaseModel)


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
