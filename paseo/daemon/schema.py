"""Write the protocol's JSON Schema (``docs/protocol.schema.json``)::

    python -m paseo.daemon.schema docs/protocol.schema.json

and, with ``--method-index``, the kernel's index of lazily loaded methods
(:mod:`paseo.daemon.method_index`; a test fails when either is stale)::

    python -m paseo.daemon.schema --method-index paseo/daemon/method_index.py

It covers the envelope, the error codes, the close codes, the daemon's and the kernel services'
methods and notifications, and the methods of every built-in plugin (third-party plugins
document their own). The groups come from the composition root (:mod:`paseo.daemon.wiring`),
built without a running daemon.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from paseo.daemon.wiring import (
    builtin_plugin_groups,
    lazy_sources,
    schema_groups,
    schema_notifications,
)
from paseo.rpc.schema import protocol_schema, render


def daemon_schema() -> dict[str, Any]:
    """The schema document of everything a daemon with the built-in plugins serves."""
    return protocol_schema([*schema_groups(), *builtin_plugin_groups()], schema_notifications())


_ACCESS_NAMES = {
    frozenset({"local"}): "LOCAL",
    frozenset({"local", "remote"}): "OWNER",
    frozenset({"hub", "local", "remote"}): "ALL",
}

_INDEX_HEAD = '''\
"""The kernel's method groups loaded on first call: each method's name and access, by the
source that builds it (:mod:`paseo.daemon.wiring`), so a start registers them without importing
their models and handlers.

Generated from the groups themselves; do not edit. Rewrite it with
``python -m paseo.daemon.schema --method-index paseo/daemon/method_index.py`` (a test fails when
it is stale, and a loaded method whose access differs is refused).
"""

from __future__ import annotations

LOCAL = frozenset({"local"})
OWNER = frozenset({"local", "remote"})
ALL = frozenset({"hub", "local", "remote"})

INDEX: dict[str, dict[str, tuple[tuple[str, frozenset[str]], ...]]] = {
'''


def method_index_source() -> str:
    """The text of :mod:`paseo.daemon.method_index` for the groups as they are."""
    lines = [_INDEX_HEAD]
    for source, groups in lazy_sources().items():
        lines.append(f"    {json.dumps(source)}: {{\n")
        for group in groups:
            lines.append(f"        {json.dumps(group.area)}: (\n")
            for method in group.methods:
                if method.immediate:
                    raise ValueError(f"{method.name} is immediate: keep it in an eager group")
                access = _ACCESS_NAMES[method.access]
                lines.append(f"            ({json.dumps(method.name)}, {access}),\n")
            lines.append("        ),\n")
        lines.append("    },\n")
    lines.append("}\n")
    return "".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Write the schema to the path given (default ``docs/protocol.schema.json``), or the method
    index after ``--method-index`` (default ``paseo/daemon/method_index.py``)."""
    args = sys.argv[1:] if argv is None else argv
    if args[:1] == ["--method-index"]:
        index = Path(args[1]) if len(args) > 1 else Path("paseo/daemon/method_index.py")
        index.write_text(method_index_source(), encoding="utf-8")
        sys.stdout.write(f"wrote {index}\n")
        return 0
    target = Path(args[0]) if args else Path("docs/protocol.schema.json")
    target.write_text(render(daemon_schema()), encoding="utf-8")
    sys.stdout.write(f"wrote {target}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
