"""One finding about a config document: where it is (a JSON path) and what is wrong."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Severity = Literal["error", "warning"]


@dataclass(frozen=True)
class ConfigProblem:
    """A problem at a JSON path. Messages never quote config values (they may be secrets)."""

    path: str
    message: str
    severity: Severity = "error"

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"

    def to_json(self) -> dict[str, str]:
        """Plain data for ``-o json`` and the wire."""
        return {"path": self.path, "message": self.message, "severity": self.severity}
