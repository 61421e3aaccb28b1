"""Protocol errors and their wire form.

Every error answer carries a JSON-RPC numeric ``code`` (so generic JSON-RPC tooling works), a
human ``message`` and, in ``error.data.code``, the stable string code clients branch on. The
string codes of :mod:`paseo_hookspecs.errors` travel unchanged; the protocol adds its own below.

Standard library plus :mod:`paseo_hookspecs.errors` only: the client imports this module.
"""

from __future__ import annotations

from typing import Any

from paseo_hookspecs.errors import (
    AccessDenied,
    Conflict,
    InvalidParams,
    NotFound,
    PaseoError,
    StorageError,
    Unavailable,
    WorkspaceLabelStorageUncertain,
)


class ParseError(PaseoError):
    """The frame is not valid JSON."""

    code = "parse_error"


class InvalidRequest(PaseoError):
    """The frame is JSON but not a JSON-RPC 2.0 request object."""

    code = "invalid_request"


class MethodNotFound(PaseoError):
    """No method of that name is registered."""

    code = "method_not_found"


class HelloRequired(PaseoError):
    """A call other than ``server.hello`` arrived before ``server.hello``."""

    code = "hello_required"


class VersionMismatch(PaseoError):
    """The client speaks a protocol version this server does not."""

    code = "version_mismatch"


class RateLimited(PaseoError):
    """The connection sent too many requests, or has too many in flight."""

    code = "rate_limited"


class ShuttingDown(PaseoError):
    """The daemon is shutting down and takes no new requests."""

    code = "shutting_down"


class InternalError(PaseoError):
    """An unexpected failure inside the daemon; details are in the daemon log only."""

    code = "internal_error"


class ConnectionLost(Unavailable):
    """Client side: the connection closed before the answer arrived."""


class DaemonNotRunning(PaseoError):
    """Client side: no daemon answers at the discovered address."""

    code = "daemon_not_running"


JSONRPC_CODES: dict[str, int] = {
    ParseError.code: -32700,
    InvalidRequest.code: -32600,
    MethodNotFound.code: -32601,
    InvalidParams.code: -32602,
    InternalError.code: -32603,
}
"""String code -> JSON-RPC numeric code; every other string code uses :data:`APP_ERROR`."""

APP_ERROR = -32000

ERROR_CODES: dict[str, str] = {
    ParseError.code: "the frame is not valid JSON",
    InvalidRequest.code: "not a JSON-RPC 2.0 request object (batches are not supported)",
    MethodNotFound.code: "no such method",
    InvalidParams.code: "params do not match the method's schema",
    InternalError.code: "unexpected daemon failure (details only in the daemon log)",
    HelloRequired.code: "call server.hello first",
    VersionMismatch.code: "unsupported protocolVersion",
    RateLimited.code: "too many requests, or too many in flight, on this connection",
    ShuttingDown.code: "the daemon is shutting down",
    AccessDenied.code: "this session may not call the method",
    NotFound.code: "the object does not exist",
    Conflict.code: "a uniqueness or compare-and-set check failed; nothing changed",
    Unavailable.code: "a dependency is missing or not ready",
    StorageError.code: "a durable write failed; the previous version is intact",
    WorkspaceLabelStorageUncertain.code: "label storage is frozen until restart",
    "invalid_config": "config.json or a change to it is invalid",
    "git_failed": "a git command failed; the message carries its output",
    "worktree_setup_failed": "a worktree setup command failed; nothing was left registered",
    "worktree_teardown_failed": "a worktree teardown command failed",
    "worktree_lifecycle_failed": "a worktree lifecycle step failed",
    "budget_exceeded": "the agent spent its budget; the prompt was not sent",
}
"""Every documented string code and what it means (rendered into the protocol schema)."""

_KNOWN: dict[str, type[PaseoError]] = {
    cls.code: cls
    for cls in (
        ParseError,
        InvalidRequest,
        MethodNotFound,
        HelloRequired,
        VersionMismatch,
        RateLimited,
        ShuttingDown,
        InternalError,
        AccessDenied,
        NotFound,
        Conflict,
        InvalidParams,
        Unavailable,
        StorageError,
        WorkspaceLabelStorageUncertain,
    )
}
_REMOTE_CLASSES: dict[str, type[PaseoError]] = {}


def error_object(error: PaseoError) -> dict[str, Any]:
    """The JSON-RPC ``error`` member for ``error``."""
    data = dict(error.data)
    data["code"] = error.code
    return {
        "code": JSONRPC_CODES.get(error.code, APP_ERROR),
        "message": error.message,
        "data": data,
    }


def from_error_object(error: Any) -> PaseoError:
    """Client side: the :class:`PaseoError` subclass an ``error`` member stands for.

    Unknown string codes get a subclass created on the fly so ``exc.code`` is always the code
    the server sent.
    """
    if not isinstance(error, dict):
        return InternalError(f"malformed error object: {error!r}")
    data = error.get("data")
    data = dict(data) if isinstance(data, dict) else {}
    code = data.pop("code", None)
    message = str(error.get("message") or "error")
    if not isinstance(code, str) or not code:
        numeric = error.get("code")
        code = next(
            (name for name, num in JSONRPC_CODES.items() if num == numeric), InternalError.code
        )
    cls = _KNOWN.get(code)
    if cls is None:
        cls = _REMOTE_CLASSES.get(code)
        if cls is None:
            cls = type(f"RemoteError_{code}", (PaseoError,), {"code": code})
            _REMOTE_CLASSES[code] = cls
    return cls(message, data=data)
