"""What one managed-plugin operation did: the JSON the ``paseo plugins`` commands print."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Outcome:
    """What one install, update or remove did (the command's JSON output)."""

    id: str
    kind: str
    action: str
    """``installed``, ``updated``, ``unchanged``, ``removed``, ``enabled`` or ``disabled``."""
    path: str | None = None
    revision: str | None = None
    previous_revision: str | None = None
    enabled: bool | None = None
    hooks: list[str] = field(default_factory=list)
    providers: list[str] = field(default_factory=list)
    manifest: dict[str, Any] | None = None
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "kind": self.kind,
            "action": self.action,
            "path": self.path,
            "revision": self.revision,
            "previousRevision": self.previous_revision,
            "enabled": self.enabled,
            "hooks": self.hooks,
            "providers": self.providers,
            "manifest": self.manifest,
            "notes": self.notes,
        }
