"""The turn, settings and permission state of one Codex session, without I/O.

:class:`CodexSession <paseo_codex.session.CodexSession>` talks to ``codex app-server`` and emits
events; what it knows between messages lives here: the running turn (:class:`TurnState`), the
settings of the next ``turn/start`` and the ones Codex holds already (:class:`TurnSettings`),
and the permission prompts waiting for an answer (:class:`PendingRequests`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

from paseo_hookspecs.errors import Conflict, InvalidParams
from paseo_hookspecs.events import (
    AgentEvent,
    PermissionRequest,
    ToolStatus,
    TurnCanceled,
    TurnCompleted,
    TurnFailed,
    Usage,
)

from .mapping import add_usage, turn_error
from .modes import MODES, ModePreset
from .requests import PendingRequest


class TurnState:
    """The running turn: whether one runs, its id once Codex names it, its usage so far."""

    def __init__(self) -> None:
        self.active = False
        self.turn_id: str | None = None
        self.settled = asyncio.Event()
        """Set once the running turn's id is known or the turn is over: what an interrupt
        awaits."""
        self.usage: Usage | None = None

    def begin(self) -> None:
        """A prompt goes to Codex (``Conflict`` while a turn runs)."""
        if self.active:
            raise Conflict("a Codex turn is already running")
        self.active = True
        self.turn_id = None
        self.settled.clear()
        self.usage = None

    def refused(self) -> None:
        """Codex did not take the prompt: no turn runs."""
        self.active = False
        self.settled.set()

    def accepted(self, turn_id: Any) -> None:
        """``turn/start`` answered with the turn (``turn/started`` may have named it first)."""
        if self.active and self.turn_id is None and isinstance(turn_id, str):
            self.turn_id = turn_id
            self.settled.set()

    def started(self, turn_id: str | None) -> None:
        """``turn/started``; a turn this session did not start (none today, but Codex may start
        follow-ups) runs from now on."""
        if not self.active:
            self.active = True
            self.usage = None
        if turn_id is not None:
            self.turn_id = turn_id
            self.settled.set()

    def token_usage(self, totals: dict[str, Any]) -> None:
        """``thread/tokenUsage/updated``: outside a turn these restate old totals (a resumed
        thread), not this turn's cost."""
        if self.active:
            self.usage = add_usage(self.usage, totals)

    def ended(self) -> None:
        self.active = False
        self.turn_id = None
        self.settled.set()

    def end_of(
        self, provider: str, turn: dict[str, Any]
    ) -> tuple[AgentEvent, ToolStatus, str | None]:
        """How ``turn/completed`` ends the turn: the terminal event, the status the running
        tool calls end with, and their error."""
        status = turn.get("status")
        if status == "interrupted":
            return TurnCanceled(provider=provider), "canceled", None
        if status == "failed":
            message, code, detail = turn_error(turn.get("error"))
            event = TurnFailed(provider=provider, error=message, code=code, diagnostic=detail)
            return event, "failed", message
        return TurnCompleted(provider=provider, usage=self.usage), "completed", None


class TurnSettings:
    """The mode, model and effort of the next turn. ``turn/start`` overrides persist for later
    turns, so only the ones that differ from what Codex holds are sent (each costs Codex a
    rebuild)."""

    def __init__(self, mode: ModePreset, model: str | None, effort: str | None) -> None:
        self.mode = mode
        self.model = model
        self.effort = effort
        self._model_override = model is not None
        self._effort_override = effort is not None
        self._applied: dict[str, Any] = {}

    def thread_ready(self, result: dict[str, Any]) -> None:
        """The ``thread/start``/``thread/resume`` answer: what Codex holds now; its model and
        effort are the session's unless the agent chose its own."""
        self._applied = {
            "approvalPolicy": self.mode.approval_policy,
            "sandboxPolicy": self.mode.sandbox_policy,
            "model": result.get("model"),
            "effort": result.get("reasoningEffort"),
        }
        if not self._model_override and isinstance(result.get("model"), str):
            self.model = result["model"]
        if not self._effort_override and isinstance(result.get("reasoningEffort"), str):
            self.effort = result["reasoningEffort"]

    def changed(self) -> dict[str, Any]:
        """The ``turn/start`` overrides that differ from what Codex holds."""
        wanted: dict[str, Any] = {
            "approvalPolicy": self.mode.approval_policy,
            "sandboxPolicy": self.mode.sandbox_policy,
        }
        if self._model_override and self.model:
            wanted["model"] = self.model
        if self._effort_override and self.effort:
            wanted["effort"] = self.effort
        return {key: value for key, value in wanted.items() if self._applied.get(key) != value}

    def applied(self, changed: dict[str, Any]) -> None:
        """Codex took a turn with ``changed``: it holds them now."""
        self._applied.update(changed)

    def set_mode(self, mode_id: str) -> None:
        preset = MODES.get(mode_id)
        if preset is None:
            raise InvalidParams(f"Codex has no mode {mode_id!r} (modes: {', '.join(MODES)})")
        self.mode = preset

    def set_model(self, model: str) -> None:
        if not model.strip():
            raise InvalidParams("the model id is empty")
        self.model = model
        self._model_override = True

    def set_effort(self, option_id: str) -> None:
        if not option_id.strip():
            raise InvalidParams("the reasoning effort is empty")
        self.effort = option_id
        self._effort_override = True


class PendingRequests:
    """Codex's server requests waiting for an answer, by the permission request's id."""

    def __init__(self) -> None:
        self._pending: dict[str, PendingRequest] = {}

    def add(
        self, rpc_id: Any, method: str, params: dict[str, Any], request: PermissionRequest
    ) -> None:
        self._pending[request.id] = PendingRequest(rpc_id, method, params, request)

    def take(self, request_id: str) -> PendingRequest | None:
        """The request, no longer pending (``None``: it was not)."""
        return self._pending.pop(request_id, None)

    def withdrawn(self, rpc_id: Any = None) -> Iterator[str]:
        """Take the pending requests (of Codex request ``rpc_id`` only, when given), yielding
        each id as it goes; one answered meanwhile is skipped."""
        for request_id, pending in list(self._pending.items()):
            if rpc_id is not None and pending.rpc_id != rpc_id:
                continue
            if self._pending.pop(request_id, None) is not None:
                yield request_id
