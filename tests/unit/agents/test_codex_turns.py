"""The Codex session's turn, settings and permission state on its own (no process)."""

from __future__ import annotations

import pytest
from paseo_codex.modes import MODES
from paseo_codex.turns import PendingRequests, TurnSettings, TurnState
from paseo_hookspecs.errors import Conflict, InvalidParams
from paseo_hookspecs.events import PermissionRequest, TurnCanceled, TurnCompleted, TurnFailed


def test_one_turn_runs_at_a_time_and_is_settled_once_named_or_over() -> None:
    turn = TurnState()
    turn.begin()
    assert turn.active
    assert not turn.settled.is_set()
    with pytest.raises(Conflict):
        turn.begin()
    turn.accepted("t1")
    assert turn.turn_id == "t1"
    assert turn.settled.is_set()
    turn.accepted("t2")  # turn/started named it first: the answer does not rename it
    assert turn.turn_id == "t1"
    turn.ended()
    assert not turn.active
    assert turn.turn_id is None
    turn.begin()
    turn.refused()
    assert not turn.active
    assert turn.settled.is_set()


def test_a_turn_codex_started_itself_runs_and_only_a_turns_usage_counts() -> None:
    turn = TurnState()
    turn.token_usage({"last": {"inputTokens": 5}})  # a resumed thread's old totals
    assert turn.usage is None
    turn.started("t9")
    assert turn.active
    assert turn.turn_id == "t9"
    turn.token_usage({"last": {"inputTokens": 5, "outputTokens": 2}})
    turn.token_usage({"last": {"inputTokens": 1, "outputTokens": 1}})
    event, status, error = turn.end_of("codex", {"status": "completed"})
    assert isinstance(event, TurnCompleted)
    assert event.usage is not None
    assert (event.usage.inputTokens, event.usage.outputTokens) == (6, 3)
    assert (status, error) == ("completed", None)


def test_how_turn_completed_ends_the_turn() -> None:
    turn = TurnState()
    event, status, _ = turn.end_of("codex", {"status": "interrupted"})
    assert isinstance(event, TurnCanceled)
    assert status == "canceled"
    event, status, error = turn.end_of("codex", {"status": "failed", "error": {"message": "x"}})
    assert isinstance(event, TurnFailed)
    assert (status, error) == ("failed", "x")


def test_only_the_settings_codex_does_not_hold_are_sent() -> None:
    settings = TurnSettings(MODES["auto"], None, None)
    settings.thread_ready({"model": "gpt-x", "reasoningEffort": "medium"})
    assert (settings.model, settings.effort) == ("gpt-x", "medium")
    assert settings.changed() == {}
    settings.set_model("gpt-y")
    settings.set_mode("read-only")
    changed = settings.changed()
    # read-only asks like auto: only its sandbox differs.
    assert changed == {"model": "gpt-y", "sandboxPolicy": MODES["read-only"].sandbox_policy}
    settings.applied(changed)
    assert settings.changed() == {}
    with pytest.raises(InvalidParams):
        settings.set_mode("nope")
    with pytest.raises(InvalidParams):
        settings.set_effort(" ")


def test_an_agents_own_model_is_kept_over_the_threads() -> None:
    settings = TurnSettings(MODES["auto"], "mine", "high")
    settings.thread_ready({"model": "gpt-x", "reasoningEffort": "medium"})
    assert (settings.model, settings.effort) == ("mine", "high")
    assert settings.changed() == {"model": "mine", "effort": "high"}


def test_pending_requests_are_answered_or_withdrawn_once() -> None:
    pending = PendingRequests()
    for rpc_id, request_id in ((1, "r1"), (2, "r2"), (3, "r3")):
        request = PermissionRequest(id=request_id, title="Run")
        pending.add(rpc_id, "item/commandExecution/requestApproval", {}, request)
    taken = pending.take("r1")
    assert taken is not None
    assert taken.rpc_id == 1
    assert pending.take("r1") is None
    assert list(pending.withdrawn(3)) == ["r3"]
    withdrawing = pending.withdrawn()
    assert pending.take("r2") is not None  # answered before the withdrawal reached it
    assert list(withdrawing) == []
