"""The ACP session's update and permission state on its own (no agent process): what
``session/update`` notifications make of the session and its timeline, and how a pending
permission request is answered."""

from __future__ import annotations

from typing import Any

import pytest
from paseo_acp._permissions import PendingPermissions, permission_request
from paseo_acp._updates import SessionUpdates
from paseo_hookspecs.errors import InvalidParams, NotFound
from paseo_hookspecs.events import (
    AllowResolution,
    AssistantMessageItem,
    DenyResolution,
    ReasoningItem,
    TodoItem,
    ToolCallItem,
)


def _chunk(kind: str, text: str, message_id: str | None = None) -> dict[str, Any]:
    update: dict[str, Any] = {"sessionUpdate": kind, "content": {"type": "text", "text": text}}
    if message_id is not None:
        update["messageId"] = message_id
    return update


def test_text_chunks_become_assistant_and_reasoning_items() -> None:
    updates = SessionUpdates()
    first = updates.apply(_chunk("agent_message_chunk", "hel"))
    second = updates.apply(_chunk("agent_message_chunk", "lo"))
    assert isinstance(first, AssistantMessageItem)
    assert isinstance(second, AssistantMessageItem)
    assert first.messageId == second.messageId  # one message
    thought = updates.apply(_chunk("agent_thought_chunk", "hmm", "m1"))
    assert isinstance(thought, ReasoningItem)
    assert thought.messageId == "m1:thought"
    assert updates.apply(_chunk("agent_message_chunk", "")) is None


def test_text_after_a_tool_call_is_a_new_message() -> None:
    updates = SessionUpdates()
    before = updates.apply(_chunk("agent_message_chunk", "a"))
    call = {"sessionUpdate": "tool_call", "toolCallId": "c1", "title": "ls", "status": "pending"}
    tool = updates.apply(call)
    assert isinstance(tool, ToolCallItem)
    updates.item_made(tool)
    after = updates.apply(_chunk("agent_message_chunk", "b"))
    assert isinstance(before, AssistantMessageItem)
    assert isinstance(after, AssistantMessageItem)
    assert before.messageId != after.messageId
    # An update that changes nothing shown makes no item.
    assert updates.apply({"sessionUpdate": "tool_call_update", "toolCallId": "c1"}) is None


def test_settings_commands_usage_and_title_follow_the_updates() -> None:
    updates = SessionUpdates()
    updates.options.update_from(
        {"modes": {"availableModes": [{"id": "a"}, {"id": "b"}], "currentModeId": "a"}}
    )
    updates.apply({"sessionUpdate": "current_mode_update", "currentModeId": "b"})
    assert updates.options.mode.current == "b"
    updates.apply(
        {"sessionUpdate": "available_commands_update", "availableCommands": [{"name": "x"}]}
    )
    assert [c.name for c in updates.commands] == ["x"]
    updates.apply({"sessionUpdate": "usage_update", "used": 10})
    assert updates.last_usage is not None
    updates.apply({"sessionUpdate": "session_info_update", "title": "T"})
    assert updates.title == "T"
    updates.turn_begun()
    assert updates.last_usage is None
    plan = updates.apply({"sessionUpdate": "plan", "entries": []})
    assert isinstance(plan, TodoItem)


def test_a_loaded_conversations_replay_is_kept_not_streamed() -> None:
    updates = SessionUpdates()
    updates.loading = True
    assert updates.apply(_chunk("user_message_chunk", "hi")) is None
    assert updates.apply(_chunk("agent_message_chunk", "hello")) is None
    updates.apply({"sessionUpdate": "current_mode_update", "currentModeId": "plan"})
    assert updates.options.mode.current == "plan"  # state applies during a replay
    assert [item.type for item in updates.replay.items()] == ["user_message", "assistant_message"]


def test_the_settings_the_agent_offers_are_checked() -> None:
    updates = SessionUpdates()
    with pytest.raises(InvalidParams, match="offers no mode"):
        updates.options.check("mode", "a")
    updates.options.update_from({"modes": {"availableModes": [{"id": "a"}]}})
    updates.options.check("mode", "a")
    with pytest.raises(InvalidParams, match="this agent offers: a"):
        updates.options.check("mode", "b")


def _asked(pending: PendingPermissions, options: list[dict[str, Any]]) -> str:
    params = {"options": options, "toolCall": {"toolCallId": "c1", "title": "ls"}}
    request = permission_request(7, params, params["toolCall"])
    pending.add(request)
    return request.request.id


def test_a_pending_request_is_answered_once_with_the_option_offered() -> None:
    pending = PendingPermissions()
    request_id = _asked(pending, [{"optionId": "yes", "kind": "allow_once"}])
    asked, outcome = pending.answer(request_id, AllowResolution())
    assert asked.rpc_id == 7
    assert outcome == {"outcome": "selected", "optionId": "yes"}
    with pytest.raises(NotFound):
        pending.answer(request_id, AllowResolution())


def test_an_allow_the_agent_cannot_take_leaves_the_request_pending() -> None:
    pending = PendingPermissions()
    request_id = _asked(pending, [{"optionId": "no", "kind": "reject_once"}])
    with pytest.raises(InvalidParams):
        pending.answer(request_id, AllowResolution())
    _, outcome = pending.answer(request_id, DenyResolution())
    assert outcome == {"outcome": "selected", "optionId": "no"}


def test_taking_every_request_leaves_none_pending() -> None:
    pending = PendingPermissions()
    request_id = _asked(pending, [])
    assert list(pending.take_all()) == [request_id]
    assert pending.take_all() == {}
