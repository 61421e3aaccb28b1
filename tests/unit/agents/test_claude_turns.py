"""The Claude Code session's turn and permission state on its own (no process): how a
``result`` ends a turn, when an interrupt is sent, what a permission answer says."""

from __future__ import annotations

import pytest
from paseo_claude.turns import DEFAULT_DENY_MESSAGE, ClaudeTurns
from paseo_hookspecs.errors import Conflict, NotFound
from paseo_hookspecs.events import (
    AllowResolution,
    AssistantMessageItem,
    DenyResolution,
    TurnCanceled,
    TurnCompleted,
    TurnFailed,
)

CAN_USE_TOOL = {"subtype": "can_use_tool", "tool_name": "Bash", "input": {"command": "ls"}}


def test_a_turn_runs_one_at_a_time() -> None:
    turns = ClaudeTurns("claude")
    turn = turns.begin()
    assert turns.active
    with pytest.raises(Conflict):
        turns.begin()
    assert turns.finish() is turn
    assert turns.finish(turn) is None  # ends once
    turns.settle(turn)
    assert not turns.active
    assert turns.begin().number == 2


def test_an_interrupt_is_sent_once_per_turn() -> None:
    turns = ClaudeTurns("claude")
    assert not turns.interrupt()  # no turn: nothing to interrupt
    turn = turns.begin()
    assert turns.interrupt()
    assert not turns.interrupt()
    assert turns.canceling
    turns.settle(turns.finish() or turn)
    turns.begin()
    assert turns.interrupt()  # a new turn gets its own


def test_a_success_completes_the_turn_and_costs_the_difference_of_the_totals() -> None:
    turns = ClaudeTurns("claude")
    turn = turns.begin()
    items, event = turns.result(turn, {"subtype": "success", "total_cost_usd": 0.25}, None)
    assert items == []
    assert isinstance(event, TurnCompleted)
    assert event.usage is not None
    assert event.usage.costUsd == 0.25
    turns.settle(turn)
    second = turns.begin()
    _, event = turns.result(second, {"subtype": "success", "total_cost_usd": 0.4}, None)
    assert isinstance(event, TurnCompleted)
    assert event.usage is not None
    assert event.usage.costUsd == pytest.approx(0.15)


def test_a_structured_answer_is_the_turns_reply() -> None:
    turns = ClaudeTurns("claude")
    turn = turns.begin()
    result = {"subtype": "success", "structured_output": {"a": 1}, "uuid": "u1"}
    items, event = turns.result(turn, result, None)
    assert items == [AssistantMessageItem(text='{"a": 1}', messageId="structured-u1")]
    assert isinstance(event, TurnCompleted)


def test_an_error_fails_the_turn_with_the_diagnostic_and_an_interrupt_cancels_it() -> None:
    turns = ClaudeTurns("claude")
    turn = turns.begin()
    turns.retried({"error_status": 500, "error": "server_error"})
    failed = {"subtype": "success", "is_error": True, "api_error_status": 500, "result": "x"}
    _, event = turns.result(turn, failed, "stderr: boom")
    assert isinstance(event, TurnFailed)
    assert event.code == "http_500"
    assert event.diagnostic == "stderr: boom"
    assert turns.retry_summary() == "API retries: HTTP 500 server_error"
    turns.interrupt()
    _, event = turns.result(turn, failed, None)
    assert isinstance(event, TurnCanceled)
    _, event = ClaudeTurns("claude").result(
        turn, {"subtype": "success", "terminal_reason": "aborted_streaming"}, None
    )
    assert isinstance(event, TurnCanceled)


def test_a_new_turn_forgets_the_last_ones_retries() -> None:
    turns = ClaudeTurns("claude")
    turn = turns.begin()
    turns.retried({"error_status": 529})
    turns.settle(turns.finish() or turn)
    turns.begin()
    assert turns.retry_summary() is None


def test_a_pending_prompt_is_answered_once() -> None:
    turns = ClaudeTurns("claude")
    turns.begin()
    request = turns.asked("r1", CAN_USE_TOOL)
    assert request.id == "r1"
    answer = turns.answer("r1", AllowResolution())
    assert answer == {"behavior": "allow", "updatedInput": {"command": "ls"}}
    with pytest.raises(NotFound):
        turns.answer("r1", AllowResolution())
    turns.asked("r2", CAN_USE_TOOL)
    edited = turns.answer("r2", AllowResolution(updatedInput={"command": "pwd"}))
    assert edited["updatedInput"] == {"command": "pwd"}


def test_a_deny_with_interrupt_makes_the_turns_end_a_cancellation() -> None:
    turns = ClaudeTurns("claude")
    turns.begin()
    turns.asked("r1", CAN_USE_TOOL)
    answer = turns.answer("r1", DenyResolution(interrupt=True))
    assert answer == {"behavior": "deny", "message": DEFAULT_DENY_MESSAGE, "interrupt": True}
    assert turns.canceling
    turns.asked("r2", CAN_USE_TOOL)
    plain = turns.answer("r2", DenyResolution(message="no"))
    assert plain == {"behavior": "deny", "message": "no", "interrupt": False}


def test_a_withdrawn_or_forgotten_prompt_is_not_pending() -> None:
    turns = ClaudeTurns("claude")
    turns.asked("r1", CAN_USE_TOOL)
    assert turns.withdrawn("r1")
    assert not turns.withdrawn("r1")
    turns.asked("r2", CAN_USE_TOOL)
    turns.forget_permissions()
    with pytest.raises(NotFound):
        turns.answer("r2", AllowResolution())


def _assistant(call: str, **usage: int) -> dict[str, object]:
    return {"type": "assistant", "message": {"id": call, "content": [], "usage": usage}}


def test_each_model_calls_tokens_are_reported_as_the_turns_running_total() -> None:
    turns = ClaudeTurns("claude")
    assert turns.reported(_assistant("msg_1", input_tokens=5)) is None  # no turn runs
    turns.begin()
    first = turns.reported(_assistant("msg_1", input_tokens=100, output_tokens=3))
    assert first is not None
    assert (first.inputTokens, first.outputTokens, first.costUsd) == (100, 3, None)
    # The same call's next content block repeats (or grows) its usage: it replaces, not adds.
    assert turns.reported(_assistant("msg_1", input_tokens=100, output_tokens=3)) is None
    grown = turns.reported(_assistant("msg_1", input_tokens=100, output_tokens=9))
    assert grown is not None
    assert grown.outputTokens == 9
    second = turns.reported(
        _assistant("msg_2", input_tokens=150, output_tokens=1, cache_read_input_tokens=80)
    )
    assert second is not None
    assert (second.inputTokens, second.outputTokens, second.cachedInputTokens) == (250, 10, 80)
    assert second.cacheWriteTokens is None  # never reported
    assert turns.reported({"type": "assistant", "message": {"id": "msg_3"}}) is None
