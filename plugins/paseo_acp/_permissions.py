"""ACP permission requests (``session/request_permission``) as Paseo requests, and the answer
an ACP agent expects for a Paseo resolution, and the requests pending (no I/O: the session
answers them)."""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from paseo_hookspecs.errors import InvalidParams, NotFound
from paseo_hookspecs.events import AllowResolution, PermissionRequest, PermissionResolution

from paseo_acp import _mapping


@dataclass
class PendingPermission:
    """A request the agent waits on: its JSON-RPC id, the options it offered, what Paseo shows."""

    rpc_id: Any
    options: list[dict[str, Any]]
    request: PermissionRequest


def _option_id(options: Sequence[Mapping[str, Any]], kinds: Sequence[str]) -> str | None:
    for kind in kinds:
        for option in options:
            if option.get("kind") == kind and isinstance(option.get("optionId"), str):
                return str(option["optionId"])
    return None


def permission_request(
    rpc_id: Any, params: Mapping[str, Any], call: Mapping[str, Any]
) -> PendingPermission:
    """The pending request for ``params``; ``call`` is the tool call it is about, merged with
    what earlier updates said of it."""
    raw_input = call.get("rawInput")
    options = [dict(o) for o in params.get("options") or [] if isinstance(o, dict)]
    request = PermissionRequest(
        id=f"perm_{uuid.uuid4().hex[:16]}",
        kind="plan" if call.get("kind") == "switch_mode" else "tool",
        title=str(call.get("title") or _mapping.tool_name(call)),
        toolName=_mapping.tool_name(call),
        input=dict(raw_input) if isinstance(raw_input, dict) else {},
        detail=_mapping.tool_detail(call),
        options=options,
        toolCallId=call.get("toolCallId"),
    )
    return PendingPermission(rpc_id, options, request)


def permission_outcome(
    pending: PendingPermission, resolution: PermissionResolution
) -> dict[str, Any]:
    """The ``outcome`` answering ``pending``; ``InvalidParams`` when the agent offered no way
    to allow it."""
    if isinstance(resolution, AllowResolution):
        option = _option_id(pending.options, ("allow_once", "allow_always"))
        if option is None:
            raise InvalidParams("the agent offered no way to allow this request")
        return {"outcome": "selected", "optionId": option}
    option = _option_id(pending.options, ("reject_once", "reject_always"))
    if option is None:
        return {"outcome": "cancelled"}
    return {"outcome": "selected", "optionId": option}


class PendingPermissions:
    """The requests the agent waits on, by the Paseo request id."""

    def __init__(self) -> None:
        self._pending: dict[str, PendingPermission] = {}

    def add(self, pending: PendingPermission) -> None:
        self._pending[pending.request.id] = pending

    def answer(
        self, request_id: str, resolution: PermissionResolution
    ) -> tuple[PendingPermission, dict[str, Any]]:
        """Take ``request_id`` with the ``outcome`` answering it: ``NotFound`` when it is not
        pending, ``InvalidParams`` (and it stays pending) when the agent offered no way to
        allow it."""
        pending = self._pending.get(request_id)
        if pending is None:
            raise NotFound(f"no pending permission request {request_id!r}")
        outcome = permission_outcome(pending, resolution)
        del self._pending[request_id]
        return pending, outcome

    def take_all(self) -> dict[str, PendingPermission]:
        """Every pending request, none pending any more."""
        pending, self._pending = self._pending, {}
        return pending
