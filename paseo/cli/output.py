"""Output conventions every command follows.

``-o table`` (default) for people, ``-o json`` / ``--json`` and ``-o yaml`` for scripts, ``-q``
for ids only. Commands hand :func:`emit` plain data (dicts, lists, scalars) and the columns to
show in a table; they never print structured results themselves.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping, Sequence
from typing import Any, TextIO

Columns = Sequence[tuple[str, str]]
"""``(key, HEADER)`` pairs naming the table columns."""


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (list, tuple)):
        return ",".join(_cell(item) for item in value) or "-"
    if isinstance(value, Mapping):
        return ",".join(f"{k}={_cell(v)}" for k, v in value.items()) or "-"
    return str(value)


def render_table(rows: Sequence[Mapping[str, Any]], columns: Columns, *, headers: bool) -> str:
    """Left-aligned columns separated by two spaces."""
    table = [[_cell(row.get(key)) for key, _ in columns] for row in rows]
    if headers:
        table.insert(0, [header for _, header in columns])
    if not table:
        return ""
    widths = [max(len(line[i]) for line in table) for i in range(len(columns))]
    lines = [
        "  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=True)).rstrip()
        for line in table
    ]
    return "\n".join(lines) + "\n"


def render_mapping(data: Mapping[str, Any]) -> str:
    """``key: value`` lines for a single object."""
    width = max((len(str(key)) for key in data), default=0) + 1
    return "".join(
        f"{(str(key) + ':').ljust(width)} {_cell(value)}\n" for key, value in data.items()
    )


def dump_yaml(data: Any, *, explicit_start: bool = False) -> str:
    """``data`` as YAML, with libyaml's emitter when PyYAML has it: the pure-Python one takes
    seconds for a thousand agents (``paseo ls -a -o yaml``), libyaml a tenth of that."""
    import yaml

    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    return yaml.dump(
        data, Dumper=dumper, sort_keys=False, allow_unicode=True, explicit_start=explicit_start
    )


def emit(
    args: argparse.Namespace,
    data: Any,
    *,
    columns: Columns | None = None,
    id_key: str = "id",
    stream: TextIO | None = None,
) -> None:
    """Print ``data`` in the format the user chose."""
    out = stream or sys.stdout
    fmt = getattr(args, "output", "table")
    if fmt == "json":
        out.write(json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n")
        return
    if fmt == "yaml":
        out.write(dump_yaml(data))
        return
    if getattr(args, "quiet", False):
        items = data if isinstance(data, list) else [data]
        for item in items:
            if isinstance(item, Mapping) and item.get(id_key) is not None:
                out.write(f"{item[id_key]}\n")
        return
    if isinstance(data, list):
        if columns is None:
            columns = [(key, key.upper()) for key in (data[0] if data else {})]
        out.write(render_table(data, columns, headers=not getattr(args, "no_headers", False)))
    elif isinstance(data, Mapping):
        out.write(render_mapping(data))
    elif data is not None:
        out.write(f"{data}\n")
