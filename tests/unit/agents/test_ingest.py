"""The pure ingest rules: which events enter the timeline, the attention they raise, and what a
durable event changes."""

from __future__ import annotations

from paseo_hookspecs.events import (
    AllowResolution,
    AssistantMessageItem,
    AttentionRequired,
    OtherDetail,
    PermissionRequest,
    PermissionRequested,
    PermissionResolved,
    Timeline,
    ToolCallItem,
    TurnCanceled,
    TurnCompleted,
    TurnFailed,
    TurnStarted,
    Usage,
    UserMessageItem,
)

from paseo.agents.ingest import Admission, Reply, TurnState, admit, apply, follow_reply

P = "prov"
CURRENT = TurnState(latest_prompt="m2", provider_prompt="m2", latest_text="hello", seen={"m1"})
REPLACED = TurnState(latest_prompt="m2", provider_prompt="m1")


def _text(text: str, message_id: str | None = "a1") -> Timeline:
    return Timeline(provider=P, item=AssistantMessageItem(text=text, messageId=message_id))


def test_providers_own_attention_is_dropped_and_the_kernels_kept() -> None:
    event = AttentionRequired(provider=P, reason="finished", timestamp="2026-01-01T00:00:00Z")
    assert admit(CURRENT, event, from_provider=True) is None
    assert admit(CURRENT, event, from_provider=False) == Admission()


def test_a_prompt_echo_is_dropped_by_message_id_or_by_text() -> None:
    by_id = Timeline(provider=P, item=UserMessageItem(text="other", messageId="m1"))
    by_text = Timeline(provider=P, item=UserMessageItem(text="hello"))
    fresh = Timeline(provider=P, item=UserMessageItem(text="new", messageId="m9"))
    assert admit(CURRENT, by_id, from_provider=True) is None
    assert admit(CURRENT, by_text, from_provider=True) is None
    assert admit(CURRENT, fresh, from_provider=True) == Admission()
    # The kernel's own record of the prompt is never an echo.
    assert admit(CURRENT, by_id, from_provider=False) == Admission()


def test_an_answer_a_client_gave_is_not_recorded_twice() -> None:
    answered = TurnState(resolved={"r1"})
    event = PermissionResolved(provider=P, requestId="r1", resolution=AllowResolution())
    assert admit(answered, event, from_provider=True) is None
    other = PermissionResolved(provider=P, requestId="r2", resolution=AllowResolution())
    assert admit(answered, other, from_provider=True) == Admission()


def test_attention_follows_the_newest_prompt_only() -> None:
    completed = TurnCompleted(provider=P)
    failed = TurnFailed(provider=P, error="boom")
    assert admit(CURRENT, completed, from_provider=True) == Admission("finished")
    assert admit(CURRENT, failed, from_provider=True) == Admission("error")
    # The end of a run being replaced raises nothing.
    assert admit(REPLACED, completed, from_provider=True) == Admission()
    assert admit(REPLACED, failed, from_provider=True) == Admission()
    request = PermissionRequested(provider=P, request=PermissionRequest(id="r", title="t"))
    assert admit(REPLACED, request, from_provider=True) == Admission("permission")
    assert admit(CURRENT, TurnStarted(provider=P), from_provider=True) == Admission()


def test_internal_agents_never_ask_for_attention() -> None:
    internal = TurnState(latest_prompt="m", provider_prompt="m", internal=True)
    assert admit(internal, TurnCompleted(provider=P), from_provider=True) == Admission()


def test_turn_start_and_end_set_the_status_of_the_newest_prompt() -> None:
    assert apply(CURRENT, TurnStarted(provider=P)).changes == {"lastStatus": "running"}
    assert apply(REPLACED, TurnStarted(provider=P)).changes == {}
    completed = apply(CURRENT, TurnCompleted(provider=P))
    assert completed.turn_ended
    assert completed.changes == {"lastStatus": "idle", "lastError": None}
    canceled = apply(CURRENT, TurnCanceled(provider=P))
    assert canceled.turn_ended
    assert canceled.changes == {"lastStatus": "idle"}
    failed = apply(CURRENT, TurnFailed(provider=P, error="boom", diagnostic="stderr tail"))
    assert failed.changes == {"lastStatus": "error", "lastError": "boom\nstderr tail"}
    assert apply(CURRENT, TurnFailed(provider=P, error="")).changes["lastError"] == (
        "the turn failed"
    )
    # A replaced run's end only ends that run.
    stale = apply(REPLACED, TurnFailed(provider=P, error="boom"))
    assert stale.turn_ended
    assert stale.changes == {}


def test_a_turn_that_reports_usage_records_it_as_the_last_usage() -> None:
    usage = Usage(inputTokens=10, outputTokens=2, costUsd=0.01)
    reported = apply(CURRENT, TurnCompleted(provider=P, usage=usage)).changes
    assert reported["lastUsage"] == {"inputTokens": 10, "outputTokens": 2, "costUsd": 0.01}
    # A replaced run's turn still spent what it reports; one reporting nothing keeps the last.
    stale = apply(REPLACED, TurnCanceled(provider=P, usage=usage)).changes
    assert stale == {"lastUsage": reported["lastUsage"]}
    assert "lastUsage" not in apply(CURRENT, TurnCompleted(provider=P)).changes


def test_permissions_become_pending_and_answered() -> None:
    request = PermissionRequest(id="r1", title="Write", toolName="Write")
    effects = apply(CURRENT, PermissionRequested(provider=P, request=request))
    assert effects.requested is not None
    assert effects.requested.model_dump(exclude_none=True) == request.model_dump(exclude_none=True)
    resolved = PermissionResolved(provider=P, requestId="r1", resolution=AllowResolution())
    assert apply(CURRENT, resolved).answered == "r1"


def test_attention_is_recorded_on_the_agent() -> None:
    event = AttentionRequired(provider=P, reason="error", timestamp="2026-01-01T00:00:00.000Z")
    assert apply(CURRENT, event).changes == {
        "requiresAttention": True,
        "attentionReason": "error",
        "attentionTimestamp": "2026-01-01T00:00:00.000Z",
    }


def test_the_reply_follows_the_newest_assistant_message() -> None:
    reply = follow_reply(Reply(), AssistantMessageItem(text="Hel", messageId="a1"))
    reply = follow_reply(reply, AssistantMessageItem(text="lo", messageId="a1"))
    assert reply == Reply("a1", "Hello")
    assert follow_reply(reply, AssistantMessageItem(text="New", messageId="a2")) == Reply(
        "a2", "New"
    )
    tool = ToolCallItem(callId="c", name="t", status="running", detail=OtherDetail())
    assert follow_reply(reply, tool) == reply
    assert follow_reply(reply, UserMessageItem(text="next")) == Reply()
    effects = apply(TurnState(current_reply=reply), _text("!"))
    assert effects.reply == Reply("a1", "Hello!")
    assert apply(CURRENT, TurnStarted(provider=P)).reply is None
