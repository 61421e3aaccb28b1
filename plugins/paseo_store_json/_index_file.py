"""The durable agent index: ``index/agents.json``, what an open loads instead of every record.

Reading and validating 50,000 agent files takes about a second; this file holds just their
index rows (:class:`paseo_store_json._index.AgentRow`). An open reads only its first rows, the
few the start needs (:func:`is_hot`: live agents, agents without a workspace, tombstones), and
serves; the rest of the file is loaded in the background, then the records are checked.

It is a cache, never the truth: after every open the records are walked in the background and
the index fixed where they disagree (:mod:`paseo_store_json._keeper`); until then listings say
they are partial (or wait). So a stale file (a crash between a record write and the next index
write, a record added, removed or changed behind the store's back) costs a rebuild, never a
wrong answer.

Format: a header line ``{"format", "version", "rows", "hot", "digest"}``, a line holding the
JSON array of the hot rows, then one holding every row (each row an array of its fields, paths
relative to the home). The digests (of each rows line) and the row count reject a torn or
damaged file; a file of another format
version is ignored too. Every case of an unusable file is the same: no durable index, the
background pass builds one. Written atomically (temp file, fsync, rename) like every record.
"""

from __future__ import annotations

import hashlib
import logging
import os
from pathlib import Path
from typing import Any

import orjson
from paseo_hookspecs.atomic import atomic_write_bytes

from paseo_store_json._files import ensure_directory
from paseo_store_json._index import RESTING_STATUS, AgentRow

log = logging.getLogger("paseo.store.json")

INDEX_FILE = "index/agents.json"
"""The durable agent index, relative to the home (Python Paseo only)."""

FORMAT = "paseo-agent-index"
VERSION = 1


def _digest(body: bytes) -> str:
    return hashlib.blake2b(body, digest_size=16).hexdigest()


def is_hot(row: AgentRow) -> bool:
    """Whether the open needs ``row`` before serving: the start-up passes look for live
    agents (to close them) and agents without a workspace; an open finishes the purges a crash
    interrupted, whose tombstones these are. Most agents are none of these."""
    return row.status != RESTING_STATUS or row.workspaceId is None or row.deletedAt is not None


def encode_index(rows: list[AgentRow], home: str) -> bytes:
    """The file's bytes for ``rows`` (any order)."""
    prefix = home.rstrip(os.sep) + os.sep
    cut = len(prefix)

    def line(chosen: list[AgentRow]) -> bytes:
        return orjson.dumps(
            [
                row.stored_fields(row.path[cut:] if row.path.startswith(prefix) else row.path)
                for row in chosen
            ]
        )

    hot = line([row for row in rows if is_hot(row)])
    body = line(rows)
    header = orjson.dumps(
        {
            "format": FORMAT,
            "version": VERSION,
            "rows": len(rows),
            "hot": _digest(hot),
            "digest": _digest(body),
        }
    )
    return b"\n".join((header, hot, body)) + b"\n"


class IndexFileError(ValueError):
    """The index file cannot be used (torn, damaged, another version): rebuild it."""


def _header(line: bytes) -> dict[str, Any]:
    if not line.endswith(b"\n"):
        raise IndexFileError("torn (no complete header)")
    try:
        header = orjson.loads(line)
    except orjson.JSONDecodeError as exc:
        raise IndexFileError(f"unreadable header: {exc}") from exc
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise IndexFileError("not an agent index")
    if header.get("version") != VERSION:
        raise IndexFileError(f"format version {header.get('version')!r}, not {VERSION}")
    return header


def _decode_line(line: bytes, digest: Any, home: str) -> dict[str, AgentRow]:
    if not line.endswith(b"\n"):
        raise IndexFileError("torn (a rows line is incomplete)")
    line = line[:-1]
    if digest != _digest(line):
        raise IndexFileError("digest mismatch (torn or damaged)")
    try:
        fields = orjson.loads(line)
        rows = _rows(fields, home.rstrip(os.sep) + os.sep)
    except (orjson.JSONDecodeError, TypeError, ValueError, AttributeError, IndexError) as exc:
        raise IndexFileError(f"malformed rows: {exc}") from exc
    if len(rows) != len(fields):
        raise IndexFileError("an id repeats")
    return rows


def decode_index(data: bytes, home: str) -> dict[str, AgentRow]:
    """Every row of an index file, by id; ``IndexFileError`` when it is not a sound one."""
    lines = data.splitlines(keepends=True)
    if len(lines) != 3:
        raise IndexFileError(f"{len(lines)} lines, not 3")
    header = _header(lines[0])
    rows = _decode_line(lines[2], header.get("digest"), home)
    if len(rows) != header.get("rows"):
        raise IndexFileError("row count mismatch")
    return rows


def _rows(fields: Any, prefix: str) -> dict[str, AgentRow]:
    if not isinstance(fields, list):
        raise TypeError("rows are not an array")
    make = AgentRow.from_fields
    rows: dict[str, AgentRow] = {}
    for item in fields:
        path = item[2]
        if not isinstance(path, str):
            raise TypeError("a row's path is not a string")
        row = make(item, path if path.startswith(os.sep) else prefix + path)
        rows[row.id] = row
    return rows


def read_hot(home: Path) -> dict[str, AgentRow] | None:
    """The rows the open needs (:func:`is_hot`), read from the first two lines of the index
    file only; ``None`` when there is none or it cannot be used (logged: the background pass
    rebuilds it). Blocking."""
    path = home / INDEX_FILE
    try:
        with open(path, "rb") as handle:
            header = _header(handle.readline())
            return _decode_line(handle.readline(), header.get("hot"), str(home))
    except FileNotFoundError:
        return None
    except (OSError, IndexFileError) as exc:
        log.warning("the agent index %s is not usable (%s); rebuilding it", path, exc)
        return None


def read_index(home: Path) -> dict[str, AgentRow] | None:
    """Every row of the durable index of ``home``, or ``None`` when there is none or it
    cannot be used (logged). Blocking."""
    path = home / INDEX_FILE
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        log.warning("the agent index %s cannot be read (%s); rebuilding it", path, exc)
        return None
    try:
        return decode_index(data, str(home))
    except IndexFileError as exc:
        log.warning("the agent index %s is not usable (%s); rebuilding it", path, exc)
        return None


def write_index(home: Path, rows: list[AgentRow]) -> None:
    """Atomically replace the durable index with ``rows`` (blocking; ``OSError`` on failure,
    the previous file intact)."""
    path = home / INDEX_FILE
    ensure_directory(path.parent)
    atomic_write_bytes(path, encode_index(rows, str(home)))


__all__ = [
    "INDEX_FILE",
    "IndexFileError",
    "decode_index",
    "encode_index",
    "is_hot",
    "read_hot",
    "read_index",
    "write_index",
]
