"""Reading ``config.json`` as a raw JSON document, without validating it.

Kept free of pydantic so commands that only show the file (``paseo config get``) start fast.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from paseo_hookspecs.nesting import nests_deeper_than

from paseo.config.legacy import migrate
from paseo.config.problems import ConfigError, ConfigProblem

MAX_BYTES = 1 << 20
"""Largest ``config.json`` accepted (1 MiB): a real one is a few KiB; anything near this was
written by accident or by an attacker, and every start would pay for parsing it."""
MAX_DEPTH = 64
"""Deepest nesting of objects and arrays accepted. The schema needs fewer than ten levels; the
limit keeps every recursive walk (the JSON parser, validation, merging) far from Python's
recursion limit, so a deep document is refused with a message, never a ``RecursionError``."""

# A JSON string (escapes included): its brackets do not nest anything.
_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"')
_BRACKET = re.compile(rb"[\[\]{}]")


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
    limit = raw_limit_problem(data)
    if limit is not None:
        raise ConfigError(path, [limit])
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


def raw_limit_problem(data: bytes) -> ConfigProblem | None:
    """Why the bytes of a config document are too large or too deep to parse, if they are.

    Runs before the parser, which recurses once per nesting level: counting brackets outside
    strings is a flat scan.
    """
    if len(data) > MAX_BYTES:
        return ConfigProblem(
            "(root)", f"larger than {MAX_BYTES >> 20} MiB ({len(data)} bytes); shrink the file"
        )
    depth = 0
    for match in _BRACKET.finditer(_STRING.sub(b"", data)):
        if match[0] in b"[{":
            depth += 1
            if depth > MAX_DEPTH:
                return _too_deep()
        else:
            depth -= 1
    return None


def document_limit_problem(document: Any) -> ConfigProblem | None:
    """:func:`raw_limit_problem` for a document already in memory (a patch, a changed file)."""
    if nests_deeper_than(document, MAX_DEPTH):
        return _too_deep()
    # Depth is bounded now, so serialising (recursive) is safe.
    size = len(json.dumps(document, ensure_ascii=False).encode("utf-8", "surrogatepass"))
    if size > MAX_BYTES:
        return ConfigProblem(
            "(root)", f"the result would be larger than {MAX_BYTES >> 20} MiB ({size} bytes)"
        )
    return None


def _too_deep() -> ConfigProblem:
    return ConfigProblem(
        "(root)", f"nested deeper than {MAX_DEPTH} levels; no Paseo setting needs that"
    )
