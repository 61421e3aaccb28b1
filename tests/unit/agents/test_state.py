"""The agent state machine on its own (no session, store or event loop): what a prompt, a
turn's start and end, an interrupt, a permission request and its answer, a session's opening
and closing and a deletion do to an agent's live state."""

from __future__ import annotations

from typing import Any, cast

from paseo_hookspecs.events import (
    AllowResolution,
    AssistantMessageItem,
    PermissionRequest,
    PermissionRequested,
    PermissionResolved,
    Timeline,
    TurnCanceled,
    TurnCompleted,
    TurnFailed,
    TurnStarted,
)
from paseo_hookspecs.interfaces.agent import AgentSession, PromptImage

from paseo.agents import ingest
from paseo.agents.ingest import Reply
from paseo.agents.state import SEEN_MESSAGES, AgentState

P = "prov"


def _session() -> AgentSession:
    # The machine only keeps the session it is told about; it never calls it.
    return cast(AgentSession, object())


def _request(request_id: str = "r1") -> PermissionRequest:
    return PermissionRequest(id=request_id, title="Run Bash", toolName="Bash")


def _durable(state: AgentState, event: Any) -> dict[str, Any]:
    """What the roster does once ``event`` is durable: ingest's rules, then the transition."""
    effects = ingest.apply(state, event)
    state.apply(effects)
    return effects.changes


def _running(state: AgentState, text: str = "hello", message_id: str = "m1") -> None:
    assert state.queue_prompt(text, message_id)
    assert state.take_work()
    assert state.take_queued() == (text, message_id)
    state.prompt_started(message_id)
    state.prompt_delivered(message_id)


def test_a_new_agent_is_closed_and_quiet() -> None:
    state = AgentState()
    assert state.phase("closed") == "closed"
    assert state.quiet
    assert not state.busy
    assert state.outcome("closed") == "closed"
    assert not state.take_work()


def test_a_session_opened_makes_the_agent_idle() -> None:
    state = AgentState()
    state.want_session()
    assert not state.quiet
    assert state.take_work()
    assert not state.take_work()  # the wish for a session is taken once
    generation = state.session_starting()
    state.session_opened(_session())
    assert state.current(generation)
    assert state.phase("idle") == "idle"
    assert state.outcome("idle") == "idle"
    assert not state.quiet  # a session lives only in memory


def test_a_prompt_runs_and_its_turn_completing_settles_the_agent() -> None:
    state = AgentState()
    assert state.queue_prompt("hello", "m1")
    assert state.busy
    assert state.phase("idle") == "running"
    assert state.outcome("idle") is None  # a queued prompt is work
    assert state.take_work()
    assert state.take_queued() == ("hello", "m1")
    assert state.take_queued() is None
    state.prompt_started("m1")
    assert state.provider_prompt == state.latest_prompt == "m1"
    assert _durable(state, TurnStarted(provider=P)) == {"lastStatus": "running"}
    changes = _durable(state, TurnCompleted(provider=P))
    assert changes == {"lastStatus": "idle", "lastError": None}
    assert not state.busy
    assert state.provider_prompt is None
    assert state.outcome("idle") == "idle"


def test_a_failed_turn_leaves_the_agent_in_error_until_the_next_prompt() -> None:
    state = AgentState()
    _running(state)
    changes = _durable(state, TurnFailed(provider=P, error="boom"))
    assert changes["lastStatus"] == "error"
    assert state.phase("error") == "error"
    assert state.outcome("error") == "error"
    assert state.queue_prompt("again", "m2")
    assert state.phase("error") == "running"


def test_a_repeated_message_id_is_not_queued_again() -> None:
    state = AgentState()
    assert state.queue_prompt("hello", "m1")
    assert state.take_queued() is not None
    assert not state.queue_prompt("hello again", "m1")
    assert state.next_prompt is None
    assert state.latest_text == "hello"


def test_only_the_newest_message_ids_are_remembered() -> None:
    state = AgentState()
    state.seen_rebuilt(f"m{n}" for n in range(SEEN_MESSAGES + 1))
    assert "m0" not in state.seen
    assert f"m{SEEN_MESSAGES}" in state.seen
    assert state.queue_prompt("an old one is new again", "m0")


def test_a_prompt_replacing_a_running_turn_waits_for_its_end() -> None:
    state = AgentState()
    _running(state, "first", "m1")
    image = PromptImage(data="aGk=", mediaType="image/png")
    assert state.queue_prompt("second", "m2", [image])
    assert state.replacing
    # The replaced run's end does not settle the agent: the newest prompt is m2.
    assert _durable(state, TurnCanceled(provider=P, reason="interrupted")) == {}
    assert not state.replacing
    assert state.busy
    assert state.take_queued() == ("second", "m2")
    assert state.prompt_started("m2") == [image]
    state.prompt_delivered("m2")
    assert state.prompt_started("m2") is None  # delivered images are not kept


def test_a_replaced_prompt_takes_its_images_with_it() -> None:
    state = AgentState()
    image = PromptImage(data="aGk=", mediaType="image/png")
    assert state.queue_prompt("first", "m1", [image])
    assert state.queue_prompt("second", "m2")
    assert state.prompt_started("m1") is None


def test_an_interrupt_of_a_running_turn_settles_on_that_turn() -> None:
    state = AgentState()
    _running(state, "first", "m1")
    assert state.queue_prompt("second", "m2")
    assert state.drop_queued()
    assert not state.drop_queued()
    state.interrupting()
    assert state.latest_prompt == "m1"
    assert _durable(state, TurnCanceled(provider=P, reason="interrupted")) == {
        "lastStatus": "idle"
    }
    assert not state.busy


def test_a_turn_the_kernel_ends_itself_ends_the_newest_prompt() -> None:
    state = AgentState()
    assert state.queue_prompt("hello", "m1")
    state.take_queued()
    state.end_newest()  # e.g. the session could not start
    assert _durable(state, TurnFailed(provider=P, error="no start"))["lastStatus"] == "error"
    assert state.provider_prompt is None


def test_a_prompt_the_provider_refused_is_abandoned() -> None:
    state = AgentState()
    assert state.queue_prompt("hello", "m1")
    state.take_queued()
    state.prompt_started("m1")
    state.turn_abandoned()
    assert not state.busy
    assert state.provider_prompt is None


def test_a_permission_request_is_pending_until_answered() -> None:
    state = AgentState()
    _running(state)
    _durable(state, PermissionRequested(provider=P, request=_request()))
    assert set(state.pending) == {"r1"}
    assert state.phase("running") == "permission"
    assert state.outcome("running") == "permission"
    request = state.take_request("r1")
    assert request is not None
    assert request.id == "r1"
    assert state.take_request("r1") is None  # answered once
    state.answering("r1")
    # The provider's own announcement of the answer is an echo now.
    echo = PermissionResolved(provider=P, requestId="r1", resolution=AllowResolution())
    assert ingest.admit(state, echo, from_provider=True) is None
    assert state.phase("running") == "running"


def test_an_answer_the_provider_did_not_take_leaves_the_request_pending() -> None:
    state = AgentState()
    _durable(state, PermissionRequested(provider=P, request=_request()))
    request = state.take_request("r1")
    assert request is not None
    state.answering("r1")
    state.answer_failed(request)
    assert set(state.pending) == {"r1"}
    assert "r1" not in state.resolved


def test_a_request_withdrawn_by_the_provider_or_ended_with_its_turn_is_not_pending() -> None:
    state = AgentState()
    _running(state)
    _durable(state, PermissionRequested(provider=P, request=_request("r1")))
    _durable(state, PermissionRequested(provider=P, request=_request("r2")))
    resolution = AllowResolution()
    _durable(state, PermissionResolved(provider=P, requestId="r1", resolution=resolution))
    assert set(state.pending) == {"r2"}
    _durable(state, TurnCompleted(provider=P))
    assert not state.pending


def test_closing_the_session_ignores_its_late_events_and_drops_its_requests() -> None:
    state = AgentState()
    session = _session()
    generation = state.session_starting()
    state.session_opened(session)
    _durable(state, PermissionRequested(provider=P, request=_request()))
    assert state.session_closed() is session
    assert state.session is None
    assert not state.current(generation)
    assert set(state.pending) == {"r1"}  # until the session's processes are reaped
    state.requests_dropped()
    assert not state.pending
    assert state.session_closed() is None


def test_cancelling_work_drops_the_queued_prompt_and_the_wish_for_a_session() -> None:
    state = AgentState()
    state.want_session()
    assert not state.cancel_work()
    assert not state.take_work()
    assert state.queue_prompt("hello", "m1")
    assert state.cancel_work()
    assert state.next_prompt is None
    assert not state.busy


def test_a_deleted_agent_has_no_work_and_its_sessions_events_do_not_count() -> None:
    state = AgentState()
    generation = state.session_starting()
    assert state.queue_prompt("hello", "m1")
    state.delete()
    assert not state.take_work()
    assert not state.current(generation)
    assert state.phase("running") == "deleted"
    assert state.outcome("running") == "closed"
    assert not state.quiet


def test_the_reply_follows_the_assistants_text_and_is_rebuilt_once() -> None:
    state = AgentState()
    assert state.claim_reply_load()
    assert not state.claim_reply_load()
    item = AssistantMessageItem(text="hel", messageId="a1")
    _durable(state, Timeline(provider=P, item=item))
    _durable(state, Timeline(provider=P, item=item.model_copy(update={"text": "lo"})))
    assert state.current_reply == Reply("a1", "hello")
    fresh = AgentState()
    _durable(fresh, Timeline(provider=P, item=item))
    assert not fresh.claim_reply_load()  # a live reply needs no rebuilding
    state.reply_rebuilt(Reply("a2", "rebuilt"))
    assert state.current_reply == Reply("a2", "rebuilt")


def test_the_sent_message_ids_are_read_back_once() -> None:
    state = AgentState()
    assert state.claim_seen_load()
    assert not state.claim_seen_load()
