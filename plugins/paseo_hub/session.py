"""The Hub session: what one accepted Hub socket may ask of this daemon.

The Hub is not a Paseo client: its socket is dialled by this plugin and never reaches the
daemon's RPC server, so the Hub can only cause what this module dispatches. The inbound
allowlist is exactly :data:`paseo_hub.wire.REQUESTS`; any other request is answered with an
``rpc_error`` ``access_denied`` and anything unparseable is dropped. Nothing here ever stops
the socket.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from paseo_hookspecs.nesting import nests_deeper_than
from pydantic import ValidationError

from paseo_hub import wire
from paseo_hub.executions import Executions, Send

log = logging.getLogger("paseo.hub")

MAX_IN_FLIGHT = 256
"""Requests handled at once; beyond it a request is refused (the Hub retries creates later)."""
MAX_DEPTH = 64
"""Deepest nesting of a frame's objects and arrays. A Hub message needs fewer than ten levels;
the bound keeps every recursive walk after the parser (validation, the record's JSON) far from
Python's recursion limit, which the parser itself turns into a ``RecursionError``."""


_DEEP = object()


def too_deep(document: Any) -> bool:
    """Whether ``document`` nests objects and arrays deeper than :data:`MAX_DEPTH` (an
    iterative walk: it must not recurse on what it guards against)."""
    return nests_deeper_than(document, MAX_DEPTH)


class HubSession:
    """Dispatches inbound frames of one socket; answers go out through ``send``."""

    def __init__(self, executions: Executions, send: Send) -> None:
        self._executions = executions
        self._send = send
        self._tasks: set[asyncio.Task[None]] = set()

    def receive(self, frame: str | bytes) -> None:
        if isinstance(frame, bytes):
            log.warning("ignored a binary frame from the Hub (the protocol is JSON text)")
            return
        try:
            document = json.loads(frame)
        except ValueError:
            log.warning("ignored a Hub frame that is not JSON")
            return
        except RecursionError:
            document = _DEEP
        if document is _DEEP or too_deep(document):
            log.warning("ignored a Hub frame nested deeper than %d levels", MAX_DEPTH)
            return
        message = document.get("message") if isinstance(document, dict) else None
        if not isinstance(document, dict) or document.get("type") != "session":
            log.warning("ignored a Hub frame outside the session envelope")
            return
        if not isinstance(message, dict) or not isinstance(message.get("type"), str):
            log.warning("ignored a Hub session frame without a message type")
            return
        self._dispatch(message)

    def _dispatch(self, message: dict[str, Any]) -> None:
        kind: str = message["type"]
        raw_id = message.get("requestId")
        request_id = raw_id if isinstance(raw_id, str) else ""
        answerable = request_id != ""
        model = wire.REQUESTS.get(kind)
        if model is None:
            if answerable:
                self._send(
                    wire.rpc_error(
                        request_id, kind, f"Session is not authorized for {kind}", "access_denied"
                    )
                )
            else:
                log.info("ignored a Hub message of type %r", kind[:100])
            return
        try:
            request = model.model_validate(message)
        except ValidationError as exc:
            if answerable:
                fields = ", ".join(".".join(map(str, e["loc"])) for e in exc.errors()) or kind
                self._send(
                    wire.rpc_error(request_id, kind, f"invalid {kind}: {fields}", "invalid_request")
                )
            else:
                log.warning("ignored an invalid %s without a requestId", kind)
            return
        if len(self._tasks) >= MAX_IN_FLIGHT:
            self._send(wire.rpc_error(request.requestId, kind, "too many requests", "busy"))
            return
        handler: Callable[[Any], Awaitable[dict[str, Any]]]
        if isinstance(request, wire.CreateRequest):
            handler = self._executions.create
        elif isinstance(request, wire.ControlRequest):
            handler = self._executions.control
        else:
            handler = self._executions.validate
        task = asyncio.get_running_loop().create_task(self._answer(handler, request))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _answer(
        self, handler: Callable[[Any], Awaitable[dict[str, Any]]], request: Any
    ) -> None:
        # Handlers turn every failure into a structured answer; a create keeps running if
        # the socket drops (its agent is durable) and its answer then goes nowhere.
        self._send(await handler(request))

    async def wait_idle(self) -> None:
        if self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)
