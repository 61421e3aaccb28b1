"""``config.json``: valid exactly as start-up validates it (the ``paseo config validate`` code
path, :func:`paseo.config.validate_file`), and free of keys another Paseo would refuse.

The TypeScript Paseo refuses a ``config.json`` with keys it does not know. The keys below are
this version's own additions (the plugin system, named store drivers): a home shared with the
TypeScript daemon or CLI works here and fails there, which is worth a warning, never a failure.
"""

from __future__ import annotations

import shlex
from typing import Any

from paseo.doctor.model import Check, DoctorContext

GROUP = "config"

FOREIGN_KEYS: dict[str, str] = {
    "plugins": "plugin settings",
    "pluginsEnabled": "turning plugins off",
    "storage": "the store driver",
}
"""Top-level keys the TypeScript Paseo does not know (and so refuses), with what they set."""


def _document(context: DoctorContext) -> dict[str, Any] | None:
    from paseo.config import ConfigError, read_document

    try:
        document, _ = read_document(context.layout.config)
    except ConfigError:  # unreadable: validate_file reports why
        return None
    return document


def checks(context: DoctorContext) -> list[Check]:
    from paseo.config import validate_file

    config = context.layout.config
    quoted = shlex.quote(str(config))
    if not config.exists():
        return [Check(GROUP, "config.json", "ok", f"{config} does not exist: defaults apply")]
    problems = validate_file(config, context.env)
    errors = [problem for problem in problems if problem.severity == "error"]
    warnings = [problem for problem in problems if problem.severity != "error"]
    results: list[Check] = []
    if errors:
        listed = "; ".join(str(problem) for problem in errors[:5])
        more = f" (and {len(errors) - 5} more)" if len(errors) > 5 else ""
        results.append(
            Check(
                GROUP,
                "config.json",
                "fail",
                f"{config}: the daemon refuses to start with it: {listed}{more}",
                f"fix the keys named (`paseo config validate` lists them), e.g. with "
                f"`paseo config set PATH VALUE`, or edit {quoted}",
            )
        )
    else:
        results.append(Check(GROUP, "config.json", "ok", f"{config} is valid"))
    for problem in warnings:
        results.append(
            Check(
                GROUP,
                problem.path or "config.json",
                "warn",
                str(problem),
                "`paseo config set PATH null` removes a key this version ignores",
            )
        )
    document = _document(context) or {}
    for key, what in FOREIGN_KEYS.items():
        if key in document:
            results.append(
                Check(
                    GROUP,
                    key,
                    "warn",
                    f"`{key}` ({what}) is a key of this Paseo only: the TypeScript Paseo "
                    "refuses a config.json that has it",
                    f"if the TypeScript CLI or daemon shares this home, give it its own "
                    f"PASEO_HOME; otherwise nothing to do (`paseo config set {key} null` drops "
                    "it)",
                )
            )
    return results
