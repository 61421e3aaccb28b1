"""Sending one notification to many Expo push tokens, with the Expo server SDK.

The SDK is synchronous (``requests``); :func:`send` is meant to run in a worker thread. Tokens
go out in batches of :data:`BATCH_SIZE` (the limit of Expo's ``/push/send``). Each batch is
sent on its own, so one failed request never loses the tickets of the others. A ticket whose
error is ``DeviceNotRegistered`` names a token to forget.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

BATCH_SIZE = 100
DEVICE_NOT_REGISTERED = "DeviceNotRegistered"

log = logging.getLogger("paseo.plugins.push")


def batches(tokens: Sequence[str], size: int = BATCH_SIZE) -> list[list[str]]:
    """``tokens`` in order, cut into lists of at most ``size``."""
    return [list(tokens[start : start + size]) for start in range(0, len(tokens), size)]


def is_expo_token(token: str) -> bool:
    """The SDK refuses anything else before sending."""
    return token.startswith("ExponentPushToken[") and token.endswith("]")


@dataclass
class PushOutcome:
    """What one :func:`send` achieved."""

    delivered: int = 0
    unregistered: list[str] = field(default_factory=list)
    failed_batches: int = 0


def send(
    tokens: Sequence[str],
    *,
    title: str,
    body: str,
    data: dict[str, Any],
    endpoint: str,
    timeout: float,
) -> PushOutcome:
    """Send the notification to every token (blocking; see the module docstring)."""
    import requests
    from exponent_server_sdk import (  # type: ignore[import-untyped]
        PushClient,
        PushMessage,
        PushServerError,
    )

    client = PushClient(host=endpoint.rstrip("/"), timeout=timeout)
    outcome = PushOutcome()
    for batch in batches(tokens):
        messages = [
            PushMessage(to=token, title=title, body=body, data=data, sound="default")
            for token in batch
        ]
        try:
            tickets = client.publish_multiple(messages)
        except (PushServerError, requests.RequestException, ValueError) as exc:
            # ValueError: the answer was not JSON. The batch is lost; the others still go.
            outcome.failed_batches += 1
            log.warning("expo push batch of %d failed: %s", len(batch), exc)
            continue
        for ticket in tickets:
            details = ticket.details if isinstance(ticket.details, dict) else {}
            if ticket.is_success():
                outcome.delivered += 1
            elif details.get("error") == DEVICE_NOT_REGISTERED:
                outcome.unregistered.append(ticket.push_message.to)
            else:
                log.warning("expo push to a device failed: %s", ticket.message)
    return outcome
