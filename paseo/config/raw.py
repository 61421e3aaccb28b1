"""Reading ``config.json`` as a raw JSON document, without validating it.

Kept free of pydantic so commands that only show the file (``paseo config get``) start fast.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from paseo.config.legacy import migrate
from paseo.config.problems import ConfigError, ConfigProblem


def read_raw(path: Path) -> dict[str, Any] | None:
    """The JSON object in ``path``, or ``None`` when the file does not exist."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as error:
        raise ConfigError(
            path, [ConfigProblem("(root)", f"cannot read: {error.strerror or error}")]
        ) from error
    try:
        parsed = json.loads(data)
    except json.JSONDecodeError as error:
        problem = f"invalid JSON at line {error.lineno} column {error.colno}: {error.msg}"
        raise ConfigError(path, [ConfigProblem("(root)", problem)]) from error
    except UnicodeDecodeError as error:
        raise ConfigError(path, [ConfigProblem("(root)", "not UTF-8 text")]) from error
    if not isinstance(parsed, dict):
        raise ConfigError(path, [ConfigProblem("(root)", "expected a JSON object")])
    return parsed


def read_document(path: Path) -> tuple[dict[str, Any], tuple[ConfigProblem, ...]]:
    """The migrated raw document (``{}`` when missing) and migration warnings; not validated."""
    migrated, warnings = migrate(read_raw(path) or {})
    return migrated, tuple(warnings)
