"""Findings about a config document (a JSON path and what is wrong) and the error carrying them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from paseo_hookspecs.errors import PaseoError

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


class ConfigError(PaseoError):
    """``config.json`` cannot be read, parsed or validated, or a change to it is invalid."""

    code = "invalid_config"

    def __init__(self, file: Path | None, problems: Sequence[ConfigProblem]) -> None:
        self.file = file
        self.problems = tuple(problems)
        prefix = f"{file}: " if file is not None else ""
        message = "\n".join(
            f"{prefix}{problem}" + (" (warning)" if problem.severity == "warning" else "")
            for problem in sorted(self.problems, key=lambda p: p.severity != "error")
        )
        super().__init__(
            message or f"{prefix}invalid config",
            data={"problems": [problem.to_json() for problem in self.problems]},
        )
