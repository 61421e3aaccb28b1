"""The turn and permission state of one Claude Code session, without I/O.

:class:`ClaudeTurns` decides what Claude Code's messages and Paseo's requests mean for the
running turn (how its ``result`` ends it, whether an interrupt must be sent, what a permission
answer says, which prompts are pending); :class:`paseo_claude.session.ClaudeSession` does the
process I/O and emits the events these decisions return.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Mapping
from typing import Any

from paseo_hookspecs.errors import NotFound
from paseo_hookspecs.events import (
    AllowResolution,
    AssistantMessageItem,
    PermissionRequest,
    PermissionResolution,
    TimelineItem,
    TurnCanceled,
    TurnCompleted,
    TurnFailed,
    Usage,
)
from paseo_hookspecs.turns import Turn, TurnLedger

from paseo_claude import mapping

DEFAULT_DENY_MESSAGE = "The user denied this tool call."

RETRIES_KEPT = 20
"""``api_retry`` notices of the running turn kept for its diagnostics."""

TurnEnd = TurnCompleted | TurnFailed | TurnCanceled


class ClaudeTurns:
    """See the module docstring."""

    def __init__(self, provider: str) -> None:
        self._provider = provider
        self.ledger = TurnLedger()
        self._interrupt_sent = False
        self._permissions: dict[str, PermissionRequest] = {}
        self.retries: deque[dict[str, Any]] = deque(maxlen=RETRIES_KEPT)
        """The running turn's ``api_retry`` notices."""
        self._cost_so_far = 0.0
        self._calls: dict[str, Usage] = {}
        """The running turn's model calls (``message.id``) and their tokens."""
        self._reported: Usage | None = None

    # ------------------------------------------------------------------ turns

    @property
    def current(self) -> Turn | None:
        return self.ledger.current

    @property
    def active(self) -> bool:
        return self.ledger.active

    @property
    def canceling(self) -> bool:
        """An interrupt of the running turn was asked for."""
        turn = self.ledger.current
        return turn is not None and turn.cancel_requested

    def begin(self) -> Turn:
        """A prompt starts the next turn (``Conflict`` while one runs)."""
        turn = self.ledger.begin()
        self._interrupt_sent = False
        self.retries.clear()
        self._calls.clear()
        self._reported = None
        return turn

    def reported(self, message: Mapping[str, Any]) -> Usage | None:
        """What the running turn spent so far once an ``assistant`` message names a model
        call's usage (each call's last report, summed; no cost: Claude Code reports cost only
        in its ``result``), or ``None`` when that total did not change."""
        inner = message.get("message")
        call = inner.get("id") if isinstance(inner, Mapping) else None
        tokens = mapping.message_tokens(message)
        if self.ledger.current is None or not isinstance(call, str) or tokens is None:
            return None
        self._calls[call] = tokens
        fields = ("inputTokens", "outputTokens", "cachedInputTokens", "cacheWriteTokens")
        total = Usage(
            **{
                name: sum(getattr(u, name) or 0 for u in self._calls.values())
                if any(getattr(u, name) is not None for u in self._calls.values())
                else None
                for name in fields
            }
        )
        if total == self._reported:
            return None
        self._reported = total
        return total

    def interrupt(self) -> bool:
        """An interrupt is asked for; returns whether Claude Code must be sent one (once per
        turn: a second would end the next turn early)."""
        turn = self.ledger.current
        if turn is None:
            return False
        turn.cancel_requested = True
        if self._interrupt_sent:
            return False
        self._interrupt_sent = True
        return True

    def finish(self, turn: Turn | None = None) -> Turn | None:
        """Claim the end of ``turn`` (see :meth:`TurnLedger.finish`)."""
        return self.ledger.finish(turn)

    def settle(self, turn: Turn) -> None:
        self.ledger.settle(turn)

    def retried(self, message: dict[str, Any]) -> None:
        """Claude Code retries a model request (``system/api_retry``)."""
        self.retries.append(message)

    def retry_summary(self) -> str | None:
        if not self.retries:
            return None
        return "API retries: " + "; ".join(
            f"HTTP {r.get('error_status')} {r.get('error') or ''}".strip() for r in self.retries
        )

    def result(
        self, turn: Turn, message: Mapping[str, Any], diagnostic: str | None
    ) -> tuple[list[TimelineItem], TurnEnd]:
        """How Claude Code's ``result`` ends ``turn``: the items to emit first (a structured
        answer) and the terminal event."""
        terminal = str(message.get("terminal_reason") or "")
        failed = bool(message.get("is_error")) or message.get("subtype") != "success"
        if turn.cancel_requested or terminal.startswith("aborted"):
            return [], TurnCanceled(provider=self._provider, reason="interrupted")
        if failed:
            return [], TurnFailed(
                provider=self._provider,
                error=mapping.failure_message(message, list(self.retries)),
                code=mapping.failure_code(message),
                diagnostic=diagnostic,
            )
        items: list[TimelineItem] = []
        structured = message.get("structured_output")
        if structured is not None:
            # --json-schema: Claude Code takes the answer as a StructuredOutput tool call and
            # reports it here; the turn's final reply is that JSON document.
            items.append(
                AssistantMessageItem(
                    text=json.dumps(structured),
                    messageId=f"structured-{message.get('uuid') or turn.number}",
                )
            )
        usage = mapping.usage_from_result(message)
        if usage.costUsd is not None:
            # Claude Code reports the process's running total; a turn costs the difference.
            total = usage.costUsd
            usage.costUsd = max(0.0, total - self._cost_so_far)
            self._cost_so_far = total
        return items, TurnCompleted(provider=self._provider, usage=usage)

    # ------------------------------------------------------------------ permissions

    def asked(self, request_id: str, request: Mapping[str, Any]) -> PermissionRequest:
        """Claude Code asks ``can_use_tool``: the prompt is pending."""
        permission = mapping.permission_request(request_id, request)
        self._permissions[request_id] = permission
        return permission

    def withdrawn(self, request_id: str) -> bool:
        """Claude Code withdraws a prompt; returns whether it was pending."""
        return self._permissions.pop(request_id, None) is not None

    def answer(self, request_id: str, resolution: PermissionResolution) -> dict[str, Any]:
        """The ``control_response`` answering pending prompt ``request_id`` (``NotFound`` when
        none is pending). A deny with ``interrupt`` makes the turn's end a cancellation."""
        request = self._permissions.pop(request_id, None)
        if request is None:
            raise NotFound(f"no pending permission request {request_id!r}")
        if isinstance(resolution, AllowResolution):
            return {"behavior": "allow", "updatedInput": resolution.updatedInput or request.input}
        if resolution.interrupt and self.ledger.current is not None:
            # Claude Code stops the turn itself on a deny with interrupt; its result then reads
            # as a cancellation.
            self.ledger.current.cancel_requested = True
        return {
            "behavior": "deny",
            "message": resolution.message or DEFAULT_DENY_MESSAGE,
            "interrupt": resolution.interrupt,
        }

    def forget_permissions(self) -> None:
        """The turn ended or the process is gone: nothing answers its prompts."""
        self._permissions.clear()
