"""Errors with stable string codes.

A :class:`PaseoError` travels over the wire unchanged: its ``code`` is part of the protocol and
never changes meaning, its message is for humans. Plugins raise these (or subclasses) so a client
can react to the code rather than parse text.
"""

from __future__ import annotations

from typing import Any, ClassVar


class PaseoError(Exception):
    """Base class of every error that has a stable code."""

    code: ClassVar[str] = "internal_error"

    def __init__(self, message: str, *, data: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.data = data or {}


class NotFound(PaseoError):
    code = "not_found"


class InvalidParams(PaseoError):
    code = "invalid_params"


class AccessDenied(PaseoError):
    code = "access_denied"


class Conflict(PaseoError):
    """A uniqueness or compare-and-set check failed; nothing was written."""

    code = "conflict"


class Unavailable(PaseoError):
    """A dependency (binary, service, provider) is missing or not ready."""

    code = "unavailable"


class StorageError(PaseoError):
    """A durable write failed; the previous version is intact."""

    code = "storage_error"


class WorkspaceLabelStorageUncertain(PaseoError):
    """Label storage could not be determined or restored; writes are frozen until restart."""

    code = "workspace_label_storage_uncertain"
