"""``paseo run --output-schema``: ask for a JSON reply, check it against the schema, and ask
again (up to :data:`ATTEMPTS` replies in all) until it validates.

The schema travels in the prompt, so it works with every provider: the first prompt says what
shape the answer must have, each retry quotes what was wrong with the last reply.
"""

from __future__ import annotations

import json
import os
import re
from typing import Any

from paseo.cli.errors import EXIT_USAGE, CliError
from paseo.cli.files import read_named_text

ATTEMPTS = 3
"""Replies asked for in all (the first prompt and two corrections) before giving up."""

EXIT_INVALID = 8
"""``paseo run --output-schema``: no reply validated within :data:`ATTEMPTS`."""

MAX_SCHEMA_BYTES = 1024 * 1024
"""The largest ``--output-schema`` file (as ``config.json``): a real schema is a few KiB."""

_FENCE = re.compile(r"^```[A-Za-z0-9_-]*\s*\n(.*?)\n?```\s*$", re.DOTALL)


def load_schema(value: str) -> dict[str, Any]:
    """``--output-schema``: a file holding a JSON schema, or the schema itself as JSON."""
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError

    source = "the --output-schema value"
    text = value
    if not value.lstrip().startswith("{"):
        if not os.path.exists(value):
            raise CliError(
                f"--output-schema {value!r} is neither a file nor a JSON object",
                exit_code=EXIT_USAGE,
            )
        source = value
        text = read_named_text(value, what="--output-schema", limit=MAX_SCHEMA_BYTES)
    schema = _parse_schema(source, text)
    if not isinstance(schema, dict):
        raise CliError(f"{source} must be a JSON object (a schema)", exit_code=EXIT_USAGE)
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        raise CliError(
            f"{source} is not a valid JSON schema: {exc.message}", exit_code=EXIT_USAGE
        ) from None
    return schema


def _parse_schema(source: str, text: str) -> Any:
    # The same size and depth bounds as config.json: the parser and the schema checks recurse
    # once per level, so a deep document is refused here, never a RecursionError later.
    from paseo.config.raw import raw_limit_problem

    problem = raw_limit_problem(text.encode("utf-8", "surrogatepass"))
    if problem is not None:
        raise CliError(f"{source}: {problem.message}", exit_code=EXIT_USAGE)
    try:
        return json.loads(text)
    except ValueError as exc:
        raise CliError(f"{source} is not JSON: {exc}", exit_code=EXIT_USAGE) from None


def first_prompt(prompt: str, schema: dict[str, Any]) -> str:
    return (
        f"{prompt}\n\nAnswer with only a JSON document (no other text) that validates against "
        f"this JSON schema:\n{json.dumps(schema)}"
    )


def retry_prompt(problem: str, schema: dict[str, Any]) -> str:
    return (
        f"Your last reply was not accepted: {problem}. Reply again with only a JSON document "
        f"(no other text) that validates against this JSON schema:\n{json.dumps(schema)}"
    )


def check(reply: str | None, schema: dict[str, Any]) -> tuple[Any, str | None]:
    """``(document, None)`` when ``reply`` is JSON valid for ``schema`` (a code fence around it
    is allowed), else ``(None, what is wrong)``."""
    from jsonschema import Draft202012Validator

    text = (reply or "").strip()
    if not text:
        return None, "it was empty"
    fenced = _FENCE.match(text)
    if fenced:
        text = fenced.group(1).strip()
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        return None, f"it is not JSON ({exc.msg} at line {exc.lineno} column {exc.colno})"
    errors = sorted(Draft202012Validator(schema).iter_errors(document), key=lambda e: e.path)
    if errors:
        error = errors[0]
        where = "/".join(str(part) for part in error.absolute_path) or "the document"
        return None, f"{where}: {error.message}"
    return document, None
