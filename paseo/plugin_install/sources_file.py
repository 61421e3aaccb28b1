"""``plugins/sources.json``: how each managed plugin was acquired.

The file maps a plugin id to ``{"kind": "git", "remote": …}``, ``{"kind": "npm"}`` or
``{"kind": "pypi", "remote": <requirement or wheel path>}``. Nothing else is stored here:
config.json owns the active path and enabled state, and the installed revision and package
identity are read from the retained artifacts. Records are parsed with the models of
:mod:`paseo_hookspecs.records.plugin_source` (plus :class:`PypiPluginSource`), so fields written
by older versions are accepted and ignored. Writes change one key of the raw document and
replace the file atomically, so entries this version cannot parse survive untouched.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, Literal

from paseo_hookspecs.errors import StorageError
from paseo_hookspecs.records import GitPluginSource, NpmPluginSource, RecordModel, dump_record
from pydantic import Field, ValidationError

from paseo.fs import atomic_write_json

__all__ = [
    "GitPluginSource",
    "NpmPluginSource",
    "PypiPluginSource",
    "SourceRecord",
    "delete_source",
    "parse_record",
    "put_source",
    "read_raw",
    "read_sources",
]


class PypiPluginSource(RecordModel):
    """A plugin installed into the daemon's environment from ``remote`` (a requirement or a
    wheel path), kept so ``paseo plugins update --all`` can re-install it after an upgrade."""

    kind: Literal["pypi"]
    remote: Annotated[str, Field(min_length=1)]


SourceRecord = GitPluginSource | NpmPluginSource | PypiPluginSource

_MODELS: dict[str, type[RecordModel]] = {
    "git": GitPluginSource,
    "npm": NpmPluginSource,
    "pypi": PypiPluginSource,
}


def parse_record(raw: Any) -> SourceRecord | None:
    """The record in ``raw``, or ``None`` when it is not one this version understands."""
    if not isinstance(raw, dict):
        return None
    # Writers before ``kind`` existed only wrote Git sources.
    model = _MODELS.get(str(raw.get("kind", "git")))
    if model is None:
        return None
    try:
        record = model.model_validate(raw)
    except ValidationError:
        return None
    assert isinstance(record, GitPluginSource | NpmPluginSource | PypiPluginSource)
    return record


def read_raw(path: Path) -> dict[str, Any]:
    """The whole document (``{}`` when the file is missing)."""
    try:
        data = json.loads(path.read_bytes())
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise StorageError(f"cannot read {path}: {exc}") from exc
    if not isinstance(data, dict):
        raise StorageError(f"{path}: expected a JSON object")
    return data


def read_sources(path: Path) -> dict[str, SourceRecord]:
    """Every record this version understands, keyed by plugin id."""
    records = {}
    for plugin_id, raw in read_raw(path).items():
        record = parse_record(raw)
        if record is not None:
            records[plugin_id] = record
    return records


def put_source(path: Path, plugin_id: str, record: SourceRecord) -> None:
    """Insert or replace one record, atomically; other entries are kept as they are."""
    document = read_raw(path)
    document[plugin_id] = dump_record(record)
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    atomic_write_json(path, document)


def delete_source(path: Path, plugin_id: str) -> bool:
    """Remove one record; ``False`` when there was none."""
    document = read_raw(path)
    if plugin_id not in document:
        return False
    del document[plugin_id]
    atomic_write_json(path, document)
    return True
