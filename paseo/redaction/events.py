"""Redacting one agent event as its timeline entry is made.

The entry's JSON form is what the store, the streams and every observer get, so it is redacted
once, there; the typed event the feed hands on is rebuilt from the redacted form so the two
never disagree. Nothing changes for an event without a secret (the common case): the same
event and the same mapping come back.
"""

from __future__ import annotations

import logging
from typing import Any

from paseo_hookspecs.events import AgentEvent
from pydantic import ValidationError

from paseo.redaction.redactor import Redactor

log = logging.getLogger("paseo.redaction")


def redact_event(
    redactor: Redactor, event: AgentEvent, data: dict[str, Any]
) -> tuple[AgentEvent, dict[str, Any]]:
    """``(event, data)`` with the secrets in ``data`` replaced, and ``event`` to match."""
    redacted = redactor.data(data)
    if redacted is data:
        return event, data
    try:
        typed: AgentEvent = type(event).model_validate(redacted)
    except ValidationError:
        # A replacement broke a constrained field (none of the contract's text fields is, so
        # this takes a custom pattern matching an id): what is stored and sent stays redacted;
        # only in-process observers of the typed event see the original.
        log.warning("a redacted %s event no longer validates as its model", event.type)
        return event, redacted
    return typed, redacted
