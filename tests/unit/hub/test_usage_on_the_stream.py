"""Usage reaches the Hub as the providers report it: on a turn's end in the execution stream and
as the agent snapshot's ``lastUsage``, under both this daemon's and the TypeScript names."""

from __future__ import annotations

from paseo_hookspecs.events import TurnCompleted, TurnStarted, Usage
from paseo_hookspecs.records import AgentRecord
from paseo_hub.models import snapshot_of
from paseo_hub.wire import event_payload


def test_a_turns_usage_is_on_the_stream_under_both_names() -> None:
    usage = Usage(inputTokens=12, outputTokens=3, cachedInputTokens=4, costUsd=0.02)
    payload = event_payload(TurnCompleted(provider="claude", usage=usage))
    assert payload["usage"] == {
        "inputTokens": 12,
        "outputTokens": 3,
        "cachedInputTokens": 4,
        "costUsd": 0.02,
        "totalCostUsd": 0.02,
    }
    assert "usage" not in event_payload(TurnCompleted(provider="claude"))
    assert event_payload(TurnStarted(provider="claude")) == {
        "type": "turn_started",
        "provider": "claude",
    }


def test_the_snapshot_carries_the_last_usage_only_when_reported() -> None:
    record = AgentRecord(id="a1", provider="claude", cwd="/w", createdAt="t", updatedAt="t")
    assert "lastUsage" not in snapshot_of(record).model_dump(mode="json")
    used = record.model_copy(update={"lastUsage": Usage(inputTokens=5, costUsd=0.1)})
    assert snapshot_of(used).model_dump(mode="json")["lastUsage"] == {
        "inputTokens": 5,
        "costUsd": 0.1,
        "totalCostUsd": 0.1,
    }
