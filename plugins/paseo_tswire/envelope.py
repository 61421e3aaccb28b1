"""The WebSocket envelope: ``ping``/``hello``/``recording_state``/``session`` in,
``pong``/``session`` out, JSON in text frames (binary frames carry terminal data).

Inbound frames are parsed into :class:`Frame`; outbound session messages are built from a
payload model by :func:`session_frame`, and :func:`validate_outbound` checks a frame against
the models the way the client's ``WSOutboundMessageSchema`` would.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from paseo_hookspecs.nesting import nests_deeper_than

from paseo_tswire.models.checkout import CHECKOUT_OUTBOUND, CHECKOUT_UNIONS
from paseo_tswire.models.files import FILES_OUTBOUND
from paseo_tswire.models.loopchat import LOOPCHAT_OUTBOUND
from paseo_tswire.models.messages import OUTBOUND, STATUS_PAYLOADS, AgentRemove, AgentUpsert
from paseo_tswire.models.schedule import SCHEDULE_OUTBOUND
from paseo_tswire.models.settings import FAILED_WHEN_NOT_OK, SETTINGS_OUTBOUND
from paseo_tswire.models.terminal import TERMINAL_OUTBOUND, Subscribed, SubscribeFailed
from paseo_tswire.models.voice import VOICE_OUTBOUND
from paseo_tswire.models.wire import Wire
from paseo_tswire.models.workspace import WORKSPACE_OUTBOUND, Remove, Upsert

_ALL_OUTBOUND = {
    **OUTBOUND,
    **TERMINAL_OUTBOUND,
    **SCHEDULE_OUTBOUND,
    **WORKSPACE_OUTBOUND,
    **LOOPCHAT_OUTBOUND,
    **SETTINGS_OUTBOUND,
    **VOICE_OUTBOUND,
    **CHECKOUT_OUTBOUND,
    **FILES_OUTBOUND,
}

WS_PONG = json.dumps({"type": "pong"})
MAX_DEPTH = 64
"""Deepest nesting of an inbound frame's objects and arrays. No message needs ten levels; the
bound keeps validation and every later walk of a frame far from Python's recursion limit."""


class FrameError(ValueError):
    """An inbound frame that is not a WebSocket-level message (closes the connection when it
    arrives before ``hello``; answered ``rpc_error`` when it carries a requestId)."""

    def __init__(self, message: str, request_id: str | None = None, type_: str | None = None):
        super().__init__(message)
        self.request_id = request_id
        self.type = type_


@dataclass(frozen=True)
class Frame:
    """One inbound WebSocket message: ``kind`` is its ``type``; ``body`` the whole object for
    ``hello``, the inner message for ``session``."""

    kind: str
    body: dict[str, Any]


def parse_frame(text: str) -> Frame:
    """Parse one text frame; raise :class:`FrameError` for anything else."""
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise FrameError("the frame is not JSON") from exc
    except RecursionError:
        # The parser recurses once per level: a deep enough frame exhausts the stack.
        raise FrameError(f"the frame nests deeper than {MAX_DEPTH} levels") from None
    if _too_deep(data):
        raise FrameError(f"the frame nests deeper than {MAX_DEPTH} levels")
    if not isinstance(data, dict) or not isinstance(data.get("type"), str):
        raise FrameError("the frame is not a message object with a type")
    kind = data["type"]
    if kind == "session":
        message = data.get("message")
        if not isinstance(message, dict) or not isinstance(message.get("type"), str):
            request_id = message.get("requestId") if isinstance(message, dict) else None
            raise FrameError(
                "a session frame carries a message with a type",
                request_id if isinstance(request_id, str) else None,
            )
        return Frame("session", message)
    if kind in ("ping", "hello", "recording_state"):
        return Frame(kind, data)
    raise FrameError(f"unknown frame type {kind!r}")


def _too_deep(document: Any) -> bool:
    """Whether ``document`` nests deeper than :data:`MAX_DEPTH` (iterative: it must not
    recurse on what it guards against)."""
    return nests_deeper_than(document, MAX_DEPTH)


def session_frame(type_: str, payload: Wire) -> str:
    """The text of ``{"type": "session", "message": {"type": type_, "payload": ...}}``."""
    message = {"type": type_, "payload": payload.wire()}
    return json.dumps({"type": "session", "message": message}, separators=(",", ":"))


def validate_outbound(frame: dict[str, Any]) -> Wire | None:
    """Validate one outbound frame against the models; ``None`` for a WebSocket ``pong``.

    Raises :class:`pydantic.ValidationError` (or :class:`ValueError` for an unknown type).
    """
    if frame.get("type") == "pong" and set(frame) == {"type"}:
        return None
    if frame.get("type") != "session" or set(frame) != {"type", "message"}:
        raise ValueError(f"not an outbound frame: {frame!r}")
    message = frame["message"]
    if set(message) != {"type", "payload"}:
        raise ValueError(f"a session message has exactly type and payload: {message!r}")
    type_, payload = message["type"], message["payload"]
    if type_ == "status":
        model = STATUS_PAYLOADS.get(payload.get("status"))
    elif type_ == "agent_update":
        return _agent_update(payload)
    elif type_ == "workspace_update":
        return (Remove if payload.get("kind") == "remove" else Upsert).model_validate(payload)
    elif type_ in SETTINGS_OUTBOUND and payload.get("ok") is False:
        model = FAILED_WHEN_NOT_OK
    elif type_ in CHECKOUT_UNIONS:
        return CHECKOUT_UNIONS[type_](payload)
    elif type_ == "subscribe_terminal_response":
        model = SubscribeFailed if isinstance(payload.get("error"), str) else Subscribed
    else:
        model = _ALL_OUTBOUND.get(type_)
    if model is None:
        raise ValueError(f"no model for outbound {type_!r}")
    return model.model_validate(payload)


def _agent_update(payload: dict[str, Any]) -> Wire:
    if payload.get("kind") == "remove":
        return AgentRemove.model_validate(payload)
    return AgentUpsert.model_validate(payload)
