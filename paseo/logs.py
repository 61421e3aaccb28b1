"""Daemon logging: a rotating ``daemon.log`` and, in the foreground, the console.

Levels and formats come from ``config.json`` ``log``: ``pretty`` (human lines) or ``json`` (one
object per line, for log shippers).
"""

from __future__ import annotations

import json
import logging
import logging.handlers
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from paseo.redaction.redactor import Redactor

LEVELS = {
    "trace": logging.DEBUG,
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "warn": logging.WARNING,
    "error": logging.ERROR,
    "fatal": logging.CRITICAL,
}


class JsonFormatter(logging.Formatter):
    """One JSON object per record: time, level, logger, message, and the exception if any."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": self.formatTime(record, "%Y-%m-%dT%H:%M:%S"),
            "level": record.levelname.lower(),
            "name": record.name,
            "msg": record.getMessage(),
        }
        if record.exc_text:
            # Set (and redacted) by the redacting filter, or by another formatter before.
            entry["err"] = record.exc_text
        elif record.exc_info:
            entry["err"] = self.formatException(record.exc_info)
        return json.dumps(entry, ensure_ascii=False)


def _formatter(fmt: str) -> logging.Formatter:
    if fmt == "json":
        return JsonFormatter()
    return logging.Formatter("%(asctime)s %(levelname)-7s %(name)s: %(message)s")


def configure_logging(
    *,
    file_path: Path,
    file_level: str,
    file_format: str,
    max_bytes: int,
    backups: int,
    console_level: str | None,
    console_format: str = "pretty",
    redactor: Redactor | None = None,
) -> None:
    """Route the ``paseo`` logger to the rotating file (and the console when given)."""
    from paseo.redaction.logfilter import RedactingFilter

    root = logging.getLogger("paseo")
    for handler in list(root.handlers):
        root.removeHandler(handler)
        handler.close()
    file_path.parent.mkdir(parents=True, exist_ok=True)
    file_handler = logging.handlers.RotatingFileHandler(
        file_path, maxBytes=max_bytes, backupCount=backups, encoding="utf-8"
    )
    file_handler.setLevel(LEVELS.get(file_level, logging.INFO))
    file_handler.setFormatter(_formatter(file_format))
    if redactor is not None:
        file_handler.addFilter(RedactingFilter(redactor))
    root.addHandler(file_handler)
    levels = [file_handler.level]
    if console_level is not None:
        console = logging.StreamHandler(sys.stderr)
        console.setLevel(LEVELS.get(console_level, logging.INFO))
        console.setFormatter(_formatter(console_format))
        if redactor is not None:
            console.addFilter(RedactingFilter(redactor))
        root.addHandler(console)
        levels.append(console.level)
    root.setLevel(min(levels))
    root.propagate = False
