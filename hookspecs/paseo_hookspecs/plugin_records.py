"""Records a plugin keeps in the daemon's store: the generic repository of plugin state.

.. versionadded:: 2.1

A plugin that must remember something across restarts (the loops plugin's loops) asks the
daemon for one of its collections, ``context.plugin_records(plugin_id, collection)``, and gets
a :class:`PluginRecordRepository`: JSON objects keyed by id, kept by whichever store driver
``storage.driver`` chose (the ``json`` driver: one file per record; ``sqlite``: one row). The
repository is bound to its ``(namespace, collection)`` when it is made: none of its methods can
name another one, so a plugin reaches the records of the namespace it asked for and no other.
The namespace is the plugin's id, passed as :meth:`DaemonContext.config_section` takes it.

Every method is one atomic, durable step, as for the kernel's repositories
(:mod:`paseo_hookspecs.store`): when :meth:`~PluginRecordRepository.put` returns, the record
survives SIGKILL and a power cut; when it raises, nothing changed. Writes to one collection
land in the order they were called (a caller cancelled while its write is under way does not
reorder it), and ``put`` encodes the value when it is called, so a caller may go on mutating
its own dict at once.

Compare-and-set: every stored record carries a ``revision`` (1 when created, one more at each
put). ``expect_revision=0`` creates only; ``expect_revision=n`` writes only over revision
``n``; a mismatch raises ``Conflict`` and writes nothing.
"""

from __future__ import annotations

import base64
import json
import re
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from paseo_hookspecs.errors import InvalidParams
from paseo_hookspecs.store import DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, Page

MAX_RECORD_BYTES = 4 * 1024 * 1024
"""The largest record value, in bytes of its compact JSON text (``InvalidParams`` above it):
what a driver reads into memory at once stays bounded."""

_NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")
_ID = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}")
_CURSOR_PREFIX = "pr1."


@dataclass(frozen=True)
class PluginRecord:
    """One stored record."""

    id: str
    value: dict[str, Any]
    """The JSON object last put (a fresh copy: mutating it changes nothing stored)."""
    revision: int
    """1 when created, one more at each put: what ``expect_revision`` compares."""
    updated: str
    """When the store last wrote it (ISO 8601 UTC)."""


class PluginRecordRepository(ABC):
    """One collection of one plugin's records, listed in ascending ``id`` order (code points).

    Ids are 1-128 characters of ``A-Z a-z 0-9 _ - .`` not starting with ``.``; two ids that
    differ only in case are distinct records, but a plugin should not rely on it (the ``json``
    driver keeps one file per id, on a filesystem that may ignore case).
    """

    namespace: str
    collection: str

    @abstractmethod
    async def get(self, record_id: str) -> PluginRecord | None:
        """The record, or ``None``; ``InvalidParams`` for a malformed id."""

    @abstractmethod
    async def list(
        self, *, cursor: str | None = None, limit: int = DEFAULT_PAGE_SIZE
    ) -> Page[PluginRecord]:
        """A page of records after ``cursor`` (stable: it names the last id seen), ``limit``
        clamped to :data:`~paseo_hookspecs.store.MAX_PAGE_SIZE`; ``InvalidParams`` for a
        malformed cursor."""

    @abstractmethod
    async def put(
        self, record_id: str, value: Mapping[str, Any], *, expect_revision: int | None = None
    ) -> PluginRecord:
        """Insert or replace the record (atomic, durable on return); the stored record.
        ``Conflict`` when ``expect_revision`` is given and the stored revision differs (0: the
        record must not exist); ``InvalidParams`` for a malformed id, a value that is not a
        JSON object or one over :data:`MAX_RECORD_BYTES`."""

    @abstractmethod
    async def delete(self, record_id: str, *, expect_revision: int | None = None) -> bool:
        """Remove the record; ``False`` when it did not exist. ``Conflict`` when
        ``expect_revision`` is given and the stored revision differs."""


class PluginRecordStore(ABC):
    """What a store driver offers as :attr:`Store.plugin_records
    <paseo_hookspecs.interfaces.store.Store.plugin_records>`: every plugin's collections."""

    @abstractmethod
    def collection(self, namespace: str, collection: str) -> PluginRecordRepository:
        """The repository of one collection (created on first write); ``InvalidParams`` for
        a name that is not 1-64 characters of ``a-z 0-9 _ -`` starting with a letter or
        digit."""

    @abstractmethod
    async def collections(self) -> list[tuple[str, str]]:
        """Every ``(namespace, collection)`` holding at least one record, sorted (what
        ``paseo store migrate`` copies)."""


# -- helpers every driver uses, so they agree on what is valid ---------------------------------


def check_name(kind: str, name: str) -> str:
    """``name`` when it is a valid namespace or collection name, else ``InvalidParams``."""
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise InvalidParams(
            f"invalid {kind} {name!r}: 1-64 characters of a-z 0-9 _ -, starting with a letter"
            " or digit"
        )
    return name


def check_id(record_id: str) -> str:
    """``record_id`` when it is a valid record id, else ``InvalidParams``."""
    if not isinstance(record_id, str) or not _ID.fullmatch(record_id):
        raise InvalidParams(
            f"invalid record id {record_id!r}: 1-128 characters of A-Z a-z 0-9 _ - ., not"
            " starting with '.'"
        )
    return record_id


def check_expect(expect_revision: int | None) -> int | None:
    if expect_revision is not None and (
        isinstance(expect_revision, bool)
        or not isinstance(expect_revision, int)
        or expect_revision < 0
    ):
        raise InvalidParams(f"expect_revision must be a revision >= 0, not {expect_revision!r}")
    return expect_revision


def encode_value(value: Mapping[str, Any]) -> str:
    """The compact JSON text of a record value; ``InvalidParams`` when it is no JSON object
    (non-string keys, NaN, objects JSON cannot hold) or is over :data:`MAX_RECORD_BYTES`."""
    if not isinstance(value, Mapping):
        raise InvalidParams(f"a plugin record is a JSON object, not {type(value).__name__}")
    try:
        text = json.dumps(dict(value), separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise InvalidParams(f"a plugin record must be plain JSON: {exc}") from exc
    if len(text.encode()) > MAX_RECORD_BYTES:
        raise InvalidParams(f"a plugin record is limited to {MAX_RECORD_BYTES} bytes of JSON")
    return text


def decode_value(text: str) -> dict[str, Any]:
    """The value of stored JSON text (a driver's read side of :func:`encode_value`)."""
    value = json.loads(text, parse_constant=_no_constant)
    if not isinstance(value, dict):
        # ValueError as for bad JSON: either way the stored text is damaged
        raise ValueError("a stored plugin record is not a JSON object")  # noqa: TRY004
    return value


def _no_constant(name: str) -> float:
    raise ValueError(f"{name} is not JSON")


def clamp_limit(limit: int) -> int:
    """``limit`` within ``1..MAX_PAGE_SIZE``."""
    return max(1, min(int(limit), MAX_PAGE_SIZE))


def encode_cursor(record_id: str) -> str:
    """The cursor naming ``record_id`` as the last row seen."""
    return _CURSOR_PREFIX + base64.urlsafe_b64encode(record_id.encode()).decode().rstrip("=")


def decode_cursor(cursor: str | None) -> str | None:
    """The id a cursor names (``None`` for none); ``InvalidParams`` when it is malformed."""
    if cursor is None:
        return None
    if not isinstance(cursor, str) or not cursor.startswith(_CURSOR_PREFIX):
        raise InvalidParams(f"malformed cursor {cursor!r}")
    body = cursor[len(_CURSOR_PREFIX) :]
    try:
        record_id = base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)).decode()
    except (ValueError, UnicodeDecodeError) as exc:
        raise InvalidParams(f"malformed cursor {cursor!r}") from exc
    if not _ID.fullmatch(record_id):
        raise InvalidParams(f"malformed cursor {cursor!r}")
    return record_id


__all__ = [
    "MAX_RECORD_BYTES",
    "PluginRecord",
    "PluginRecordRepository",
    "PluginRecordStore",
    "check_expect",
    "check_id",
    "check_name",
    "clamp_limit",
    "decode_cursor",
    "decode_value",
    "encode_cursor",
    "encode_value",
]
