"""Shared machinery of the JSON store: validation on write, compare-and-set, in-memory tables,
locks, cursors and the write runner."""

from __future__ import annotations

import asyncio
import base64
import binascii
import contextlib
import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from pathlib import Path
from typing import Any, Generic, TypeVar

from paseo_hookspecs.errors import (
    Conflict,
    InvalidParams,
    StorageError,
    Unavailable,
    WorkspaceLabelStorageUncertain,
)
from paseo_hookspecs.records import dump_record
from paseo_hookspecs.store import MAX_PAGE_SIZE, QuarantinedFile
from pydantic import BaseModel, ValidationError

from paseo_store_json._files import FileOps, encode_json

log = logging.getLogger("paseo.store.json")

M = TypeVar("M", bound=BaseModel)
T = TypeVar("T")

CLOSE_TIMEOUT = 60.0
"""How long :meth:`Core.close` waits for in-flight writes (each is a few fsyncs)."""


# --- validation and compare-and-set ---------------------------------------------------------


def describe_validation_error(error: ValidationError) -> str:
    """A one-line summary: the first problem and how many there are."""
    problems = error.errors()
    first = problems[0]
    if first["type"] == "json_invalid":
        return f"not valid JSON: {first['msg']}"
    location = ".".join(str(part) for part in first["loc"]) or "(top level)"
    more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
    return f"schema-invalid: {location}: {first['msg']}{more}"


def validated(model: type[M], data: Any) -> tuple[M, bytes]:
    """Validate JSON-ready ``data`` strictly as ``model``; returns the model and the file bytes.

    The model is parsed back from the very bytes that will be written, so what the cache holds
    is exactly what a reload reads. ``InvalidParams`` when ``data`` is not a valid record.
    """
    try:
        encoded = encode_json(data)
    except (TypeError, ValueError) as exc:
        raise InvalidParams(f"not JSON-serializable: {exc}") from exc
    try:
        return model.model_validate_json(encoded), encoded
    except ValidationError as exc:
        raise InvalidParams(
            f"invalid {model.__name__}: {describe_validation_error(exc)}",
            data={"errors": json.loads(exc.json(include_url=False, include_input=False))},
        ) from exc


def revalidated(model: type[M], record: Any) -> tuple[M, bytes]:
    """Strictly re-validate a record handed in by a caller (it may have been built with
    ``model_construct`` or mutated after validation)."""
    if not isinstance(record, model):
        raise InvalidParams(f"expected a {model.__name__}, got {type(record).__name__}")
    return validated(model, dump_record(record))


def with_changes(
    model: type[M], current: M, changes: Mapping[str, Any], id_field: str
) -> tuple[M, bytes]:
    """``current`` with top-level ``changes`` applied, validated; ``InvalidParams`` otherwise.

    ``None`` removes a field that may be omitted but never be null (the model's ``NOT_NULL``)
    and stores ``null`` everywhere else; a required non-nullable field then fails validation.
    """
    data = dump_record(current)
    not_null: frozenset[str] = getattr(model, "NOT_NULL", frozenset())
    for key, value in changes.items():
        if not isinstance(key, str):
            raise InvalidParams(f"field names are strings, got {key!r}")
        if key == id_field and value != data.get(id_field):
            raise InvalidParams(f"{id_field} cannot be changed")
        if value is None and key in not_null:
            data.pop(key, None)
        else:
            data[key] = value
    return validated(model, data)


def json_equal(left: Any, right: Any) -> bool:
    """Equality of JSON values, where ``true`` is not ``1``."""
    if isinstance(left, bool) or isinstance(right, bool):
        return type(left) is type(right) and left == right
    if isinstance(left, Mapping) and isinstance(right, Mapping):
        return left.keys() == right.keys() and all(json_equal(left[k], right[k]) for k in left)
    if isinstance(left, list | tuple) and isinstance(right, list | tuple):
        return len(left) == len(right) and all(map(json_equal, left, right))
    return bool(left == right)


def check_expect(current: BaseModel, expect: Mapping[str, Any] | None) -> None:
    """Raise ``Conflict`` unless every expected field holds its value (``None`` matches a
    field that is absent or null)."""
    if not expect:
        return
    data = dump_record(current)
    for key, wanted in expect.items():
        held = data.get(key)
        matches = held is None if wanted is None else json_equal(held, wanted)
        if not matches:
            raise Conflict(
                f"{key} is {held!r}, expected {wanted!r}",
                data={"field": key, "actual": held, "expected": wanted},
            )


def clone(record: M) -> M:
    """A private copy for a caller: cached records are never handed out, so a caller mutating
    what it read cannot corrupt the cache."""
    return type(record).model_validate(dump_record(record))


def check_file_id(kind: str, value: str) -> None:
    """Ids that name files must be plain file names (no separators, not hidden)."""
    if not value or value.startswith(".") or any(char in value for char in "/\\\0"):
        raise InvalidParams(f"{kind} id {value!r} cannot name a file")


def check_limit(limit: int) -> int:
    """A page size: at least 1, at most ``MAX_PAGE_SIZE`` (larger requests are clamped)."""
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise InvalidParams(f"limit must be a positive integer, got {limit!r}")
    return min(limit, MAX_PAGE_SIZE)


# --- cursors ---------------------------------------------------------------------------------


def encode_cursor(kind: str, *key: str | int) -> str:
    """An opaque cursor naming the sort key of the last row of a page."""
    raw = json.dumps([kind, *key], separators=(",", ":")).encode("utf-8")
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def decode_cursor(cursor: str, kind: str, shape: tuple[type, ...]) -> tuple[Any, ...]:
    """The key inside ``cursor``; ``InvalidParams`` when it is malformed or belongs to another
    listing."""
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        value = json.loads(base64.urlsafe_b64decode(padded.encode("ascii")))
    except (ValueError, binascii.Error, UnicodeError, AttributeError, TypeError) as exc:
        raise InvalidParams(f"malformed cursor {cursor!r}") from exc
    if (
        not isinstance(value, list)
        or len(value) != len(shape) + 1
        or value[0] != kind
        or not all(
            isinstance(part, expected) and not isinstance(part, bool)
            for part, expected in zip(value[1:], shape, strict=True)
        )
    ):
        raise InvalidParams(f"malformed cursor {cursor!r}")
    return tuple(value[1:])


# --- in-memory tables ------------------------------------------------------------------------


class OrderedTable(Generic[M]):
    """Rows in insertion order, each with an ordinal that never changes while the store is
    open: inserts take a larger ordinal and deletes leave the others alone, so "after ordinal
    n" stays meaningful across concurrent inserts and deletes."""

    def __init__(self, id_field: str) -> None:
        self.id_field = id_field
        self.rows: dict[str, M] = {}
        self.ordinals: dict[str, int] = {}
        self._next = 0

    def append(self, row: M) -> None:
        row_id = str(getattr(row, self.id_field))
        self.rows[row_id] = row
        self.ordinals[row_id] = self._next
        self._next += 1

    def replace(self, row: M) -> None:
        """Replace a row in place (dict assignment keeps its position)."""
        self.rows[str(getattr(row, self.id_field))] = row

    def pop(self, row_id: str) -> M | None:
        self.ordinals.pop(row_id, None)
        return self.rows.pop(row_id, None)

    def after(self, cursor: tuple[int, str] | None) -> Iterator[tuple[int, M]]:
        """Rows after the cursor's row. The cursor's id is preferred when it still exists (its
        ordinal may differ after a reopen renumbered the rows); otherwise its ordinal is used."""
        start = -1
        if cursor is not None:
            ordinal, row_id = cursor
            start = self.ordinals.get(row_id, ordinal)
        for row_id, row in self.rows.items():
            ordinal = self.ordinals[row_id]
            if ordinal > start:
                yield ordinal, row


# --- locks and the write runner --------------------------------------------------------------


class KeyedLocks:
    """One lock per key (per agent, per schedule ...), dropped when nobody holds or awaits it."""

    def __init__(self) -> None:
        self._locks: dict[str, asyncio.Lock] = {}
        self._users: dict[str, int] = {}

    def busy(self, key: str) -> bool:
        """Whether someone holds or awaits ``key``'s lock."""
        return key in self._users

    @contextlib.asynccontextmanager
    async def hold(self, key: str) -> AsyncIterator[None]:
        lock = self._locks.setdefault(key, asyncio.Lock())
        self._users[key] = self._users.get(key, 0) + 1
        try:
            async with lock:
                yield
        finally:
            self._users[key] -= 1
            if not self._users[key]:
                del self._users[key]
                del self._locks[key]


class Core:
    """State shared by the repositories of one store: the home, the file operations, the
    open/closed state, the label-storage freeze and the in-flight writes."""

    def __init__(self, home: Path, ops: FileOps, quarantined: list[QuarantinedFile]) -> None:
        self.home = home
        self.ops = ops
        self.quarantined = quarantined
        self.is_open = False
        self.uncertain: str | None = None
        """Why label storage is uncertain; while set, workspace and label writes are refused."""
        self._pending: set[asyncio.Task[Any]] = set()

    def check_open(self) -> None:
        if not self.is_open:
            raise Unavailable("the json store is not open")

    def check_certain(self) -> None:
        """Refuse a workspace-registry write or label mutation while storage is uncertain."""
        if self.uncertain is not None:
            raise WorkspaceLabelStorageUncertain(
                "workspace label storage is uncertain until the daemon restarts: " + self.uncertain
            )

    async def write(self, operation: Callable[[], Awaitable[T]]) -> T:
        """Run a mutation so that cancelling the caller cannot split it.

        A disk write in a worker thread cannot be cancelled, so publishing to memory must not
        be either: the whole operation (lock, write, publish) runs as its own task, shielded
        from the caller's cancellation and awaited by :meth:`close`.
        """
        self.check_open()
        task = asyncio.ensure_future(operation())
        self._pending.add(task)
        task.add_done_callback(self._finished)
        return await asyncio.shield(task)

    def _finished(self, task: asyncio.Task[Any]) -> None:
        self._pending.discard(task)
        # The caller may have been cancelled and never see the outcome; retrieve it here so
        # asyncio does not report it as lost.
        if not task.cancelled():
            task.exception()

    async def io(self, function: Callable[[], T], what: str) -> T:
        """Run blocking disk work in a thread; an ``OSError`` becomes ``StorageError``."""
        try:
            return await asyncio.to_thread(function)
        except OSError as exc:
            raise StorageError(f"{what} failed, previous version kept: {exc}") from exc

    def io_now(self, function: Callable[[], T], what: str) -> T:
        """Run short disk work that never waits for the device (writes into the page cache,
        no fsync) on the calling thread: handing it to a worker would cost more than doing
        it. An ``OSError`` becomes ``StorageError``."""
        try:
            return function()
        except OSError as exc:
            raise StorageError(f"{what} failed, previous version kept: {exc}") from exc

    async def close(self) -> None:
        if not self.is_open:
            return
        self.is_open = False
        if self._pending:
            _done, still_running = await asyncio.wait(set(self._pending), timeout=CLOSE_TIMEOUT)
            if still_running:
                log.error("%d store writes still running at close", len(still_running))


def typed_dump(records: list[Any]) -> list[Any]:
    """``dump_record`` of each record of a whole-file collection."""
    return [dump_record(record) for record in records]


__all__ = [
    "Core",
    "KeyedLocks",
    "OrderedTable",
    "check_expect",
    "check_file_id",
    "check_limit",
    "clone",
    "decode_cursor",
    "encode_cursor",
    "revalidated",
    "typed_dump",
    "validated",
    "with_changes",
]
