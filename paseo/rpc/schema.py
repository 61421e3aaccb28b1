"""The protocol's JSON Schema, generated from the pydantic models.

``docs/protocol.schema.json`` is this module's output; a test fails when the committed file is
stale. Regenerate with::

    python -m paseo.rpc.schema docs/protocol.schema.json

It covers the envelope, the error codes, the close codes, the kernel's methods and
notifications, and the methods of every built-in plugin (third-party plugins document their
own).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal

from paseo_hookspecs.registration import RpcMethodGroup
from pydantic import BaseModel
from pydantic.json_schema import models_json_schema

from paseo.rpc.errors import APP_ERROR, ERROR_CODES, JSONRPC_CODES
from paseo.rpc.models import (
    PROTOCOL_VERSION,
    ErrorResponse,
    NotificationEnvelope,
    RequestEnvelope,
    ResultResponse,
)
from paseo.rpc.session import CLOSE_CODES

Mode = Literal["validation", "serialization"]


def builtin_method_groups() -> list[RpcMethodGroup]:
    """The RPC method groups of the built-in plugins (loaded through their entry points)."""
    from paseo.plugins import LoadPolicy, PaseoPluginManager

    manager = PaseoPluginManager(LoadPolicy(strict=True))
    manager.load_all()
    builtin = {record.name for record in manager.records if record.builtin}
    return [group for owner, group in manager.rpc_method_groups() if owner in builtin]


def protocol_schema(groups: Iterable[RpcMethodGroup] | None = None) -> dict[str, Any]:
    """The schema document (kernel groups plus ``groups``, default the built-in plugins')."""
    from paseo.daemon.services import service_method_groups, service_notifications
    from paseo.rpc.kernel import kernel_groups
    from paseo.rpc.models import NOTIFICATIONS as KERNEL_NOTIFICATIONS

    NOTIFICATIONS = {**KERNEL_NOTIFICATIONS, **service_notifications()}

    every = [
        *kernel_groups(),
        *service_method_groups(),
        *(builtin_method_groups() if groups is None else groups),
    ]
    models: list[tuple[type[BaseModel], Mode]] = [
        (RequestEnvelope, "validation"),
        (ResultResponse, "serialization"),
        (ErrorResponse, "serialization"),
        (NotificationEnvelope, "serialization"),
    ]
    for group in every:
        for method in group.methods:
            if method.params is not None:
                models.append((method.params, "validation"))
            if method.result is not None:
                models.append((method.result, "serialization"))
    models.extend((model, "serialization") for model in NOTIFICATIONS.values())
    # The refs pydantic hands back: a model whose input and output schemas differ gets two
    # definitions (Name-Input / Name-Output), so refs cannot be derived from class names.
    refs, definitions = models_json_schema(
        list(dict.fromkeys(models)), ref_template="#/$defs/{model}"
    )
    methods: dict[str, dict[str, Any]] = {}
    for group in every:
        for method in group.methods:
            methods[method.name] = {
                "summary": method.summary,
                "access": sorted(method.access),
                "params": refs[(method.params, "validation")] if method.params else None,
                "result": refs[(method.result, "serialization")] if method.result else None,
            }
    notifications = {name: refs[(model, "serialization")] for name, model in NOTIFICATIONS.items()}
    envelope = {
        "request": refs[(RequestEnvelope, "validation")],
        "result": refs[(ResultResponse, "serialization")],
        "error": refs[(ErrorResponse, "serialization")],
        "notification": refs[(NotificationEnvelope, "serialization")],
    }
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "Paseo wire protocol",
        "description": "JSON-RPC 2.0 over WebSocket text frames; see docs/protocol.md.",
        "protocolVersion": PROTOCOL_VERSION,
        "envelope": envelope,
        "methods": dict(sorted(methods.items())),
        "notifications": dict(sorted(notifications.items())),
        "errors": {
            code: {"jsonrpcCode": JSONRPC_CODES.get(code, APP_ERROR), "description": text}
            for code, text in sorted(ERROR_CODES.items())
        },
        "closeCodes": {str(code): text for code, text in sorted(CLOSE_CODES.items())},
        "$defs": definitions.get("$defs", {}),
    }


def render(schema: dict[str, Any]) -> str:
    """Stable text for the committed file."""
    return json.dumps(schema, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Write the schema to the path given (default ``docs/protocol.schema.json``)."""
    args = sys.argv[1:] if argv is None else argv
    target = Path(args[0]) if args else Path("docs/protocol.schema.json")
    target.write_text(render(protocol_schema()), encoding="utf-8")
    sys.stdout.write(f"wrote {target}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
