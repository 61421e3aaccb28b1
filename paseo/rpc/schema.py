"""The protocol's JSON Schema, generated from the pydantic models.

:func:`protocol_schema` turns the method groups and notifications it is given into the schema
document; which groups exist is the composition root's knowledge, so the committed
``docs/protocol.schema.json`` is written by :mod:`paseo.daemon.schema` (a test fails when it is
stale)::

    python -m paseo.daemon.schema docs/protocol.schema.json
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any, Literal

from paseo_hookspecs.registration import RpcMethodGroup
from pydantic import BaseModel
from pydantic.json_schema import models_json_schema

from paseo.rpc.close_codes import CLOSE_CODES
from paseo.rpc.errors import APP_ERROR, ERROR_CODES, JSONRPC_CODES
from paseo.rpc.models import (
    PROTOCOL_VERSION,
    ErrorResponse,
    NotificationEnvelope,
    RequestEnvelope,
    ResultResponse,
)

Mode = Literal["validation", "serialization"]


def protocol_schema(
    groups: Iterable[RpcMethodGroup], notifications: Mapping[str, type[BaseModel]]
) -> dict[str, Any]:
    """The schema document of the envelope, the error and close codes, ``groups`` and
    ``notifications`` (method → params model)."""
    every = list(groups)
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
    models.extend((model, "serialization") for model in notifications.values())
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
    notification_refs = {
        name: refs[(model, "serialization")] for name, model in notifications.items()
    }
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
        "notifications": dict(sorted(notification_refs.items())),
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
