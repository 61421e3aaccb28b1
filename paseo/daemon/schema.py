"""Write the protocol's JSON Schema (``docs/protocol.schema.json``)::

    python -m paseo.daemon.schema docs/protocol.schema.json

It covers the envelope, the error codes, the close codes, the daemon's and the kernel services'
methods and notifications, and the methods of every built-in plugin (third-party plugins
document their own). The groups come from the composition root (:mod:`paseo.daemon.wiring`),
built without a running daemon.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from paseo.daemon.wiring import builtin_plugin_groups, schema_groups, schema_notifications
from paseo.rpc.schema import protocol_schema, render


def daemon_schema() -> dict[str, Any]:
    """The schema document of everything a daemon with the built-in plugins serves."""
    return protocol_schema([*schema_groups(), *builtin_plugin_groups()], schema_notifications())


def main(argv: list[str] | None = None) -> int:
    """Write the schema to the path given (default ``docs/protocol.schema.json``)."""
    args = sys.argv[1:] if argv is None else argv
    target = Path(args[0]) if args else Path("docs/protocol.schema.json")
    target.write_text(render(daemon_schema()), encoding="utf-8")
    sys.stdout.write(f"wrote {target}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
