"""Record text, compare-and-set and cursors: the pure parts of the repositories."""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

from paseo_hookspecs.errors import Conflict, InvalidParams
from paseo_hookspecs.records import RecordModel, dump_record
from paseo_hookspecs.store import MAX_PAGE_SIZE, Changes, Expect
from pydantic import BaseModel, ValidationError

M = TypeVar("M", bound=RecordModel)
B = TypeVar("B", bound=BaseModel)


def record_text(model: BaseModel) -> str:
    """The stored form of a record: its :func:`dump_record` JSON, compact."""
    return to_json(dump_record(model))


def checked_text(model: type[B], record: Any) -> str:
    """The stored form of a record handed in by a caller, strictly re-validated first: it may
    have been built with ``model_construct`` or mutated after validation."""
    if not isinstance(record, model):
        raise InvalidParams(f"expected a {model.__name__}, got {type(record).__name__}")
    text = record_text(record)
    try:
        model.model_validate_json(text)
    except ValidationError as exc:
        raise InvalidParams(
            f"invalid {model.__name__}: {exc}", data={"errors": _errors(exc)}
        ) from exc
    return text


def to_json(value: Any) -> str:
    """Compact JSON text; ``InvalidParams`` for values JSON cannot hold (NaN, infinity)."""
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except ValueError as exc:
        raise InvalidParams(f"not JSON-representable: {exc}") from exc


def _errors(exc: ValidationError) -> Any:
    # Through JSON: ``errors()`` may hold exception objects in ``ctx``, which the wire cannot.
    return json.loads(exc.json(include_url=False, include_input=False))


def validate(model: type[M], data: Any) -> M:
    """``data`` as a ``model``; ``InvalidParams`` naming the problems when it is not one."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise InvalidParams(
            f"invalid {model.__name__}: {exc}", data={"errors": _errors(exc)}
        ) from exc


def json_equal(left: Any, right: Any) -> bool:
    """Equality of JSON values in which ``true`` is not ``1`` (Python's ``True == 1`` is)."""
    if isinstance(left, bool) or isinstance(right, bool):
        return type(left) is type(right) and left == right
    if isinstance(left, Mapping) and isinstance(right, Mapping):
        return left.keys() == right.keys() and all(json_equal(left[k], right[k]) for k in left)
    if isinstance(left, list | tuple) and isinstance(right, list | tuple):
        return len(left) == len(right) and all(map(json_equal, left, right))
    return bool(left == right)


def check_expect(current: dict[str, Any], expect: Expect | None) -> None:
    """Raise ``Conflict`` unless every expected field holds its expected value.

    ``None`` matches a field that is absent or ``null``.
    """
    for key, wanted in (expect or {}).items():
        have = current.get(key)
        matches = have is None if wanted is None else have is not None and json_equal(have, wanted)
        if not matches:
            raise Conflict(
                f"expected {key} to be {wanted!r}, it is {have!r}",
                data={"field": key, "expected": wanted, "actual": have},
            )


def apply_changes(
    model: type[M], current: dict[str, Any], changes: Changes, *, key_field: str
) -> M:
    """``current`` with ``changes`` applied, validated as ``model``.

    ``None`` removes a field that may be omitted but not null (the model's ``NOT_NULL``) and
    stores ``null`` everywhere else, so a required non-nullable field then fails validation.
    The identifying ``key_field`` cannot change.
    """
    data = dict(current)
    for key, value in changes.items():
        if not isinstance(key, str):
            raise InvalidParams(f"field names are strings, got {key!r}")
        if key == key_field and value != current.get(key_field):
            raise InvalidParams(f"{key_field} cannot be changed", data={"field": key_field})
        if value is None and key in model.NOT_NULL:
            data.pop(key, None)
        else:
            data[key] = value
    return validate(model, data)


def check_limit(limit: int) -> int:
    """The page size for ``limit``: at least 1 (else ``InvalidParams``), larger requests
    clamped to ``MAX_PAGE_SIZE``."""
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise InvalidParams(f"limit must be a positive integer, got {limit!r}")
    return min(limit, MAX_PAGE_SIZE)


def encode_cursor(kind: str, key: Sequence[str | int]) -> str:
    """An opaque cursor naming the last row seen (its sort key) in a listing of ``kind``."""
    raw = json.dumps([kind, *key], separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(kind: str, cursor: str, types: Sequence[type]) -> list[Any]:
    """The sort key inside ``cursor``; ``InvalidParams`` unless it is a cursor of ``kind``
    whose key has the given element ``types``."""
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        decoded = json.loads(base64.urlsafe_b64decode(padded.encode("ascii")))
    except (ValueError, UnicodeError, binascii.Error):
        decoded = None
    if (
        isinstance(decoded, list)
        and len(decoded) == len(types) + 1
        and decoded[0] == kind
        and all(type(value) is wanted for value, wanted in zip(decoded[1:], types, strict=True))
    ):
        return decoded[1:]
    raise InvalidParams(f"malformed cursor: {cursor!r}")
