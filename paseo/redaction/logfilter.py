"""A logging filter that redacts each record's message and traceback before any handler
writes it (``daemon.log``, the console, and so ``paseo logs``)."""

from __future__ import annotations

import logging

from paseo.redaction.redactor import Redactor

_TRACEBACKS = logging.Formatter()


class RedactingFilter(logging.Filter):
    def __init__(self, redactor: Redactor) -> None:
        super().__init__()
        self._redactor = redactor

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except (TypeError, ValueError, KeyError):  # malformed: the handler reports it
            return True
        redacted = self._redactor.text(message)
        if redacted is not message:
            record.msg, record.args = redacted, None
        if record.exc_info and not record.exc_text:
            # Formatted once here so the handlers' formatters reuse the redacted text.
            record.exc_text = _TRACEBACKS.formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = self._redactor.text(record.exc_text)
        return True
