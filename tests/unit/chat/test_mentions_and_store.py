"""The pure parts of chat: which words are mentions, the per-room rate bound, and the message
files' bounded history (real files in a temporary home)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

import pytest
from paseo_chat import mentions, store
from paseo_chat.mentions import MentionDispatcher, mention_tokens
from paseo_chat.models import ChatMessage
from paseo_chat.store import ChatStore


def test_mention_tokens_are_words_after_an_at_sign_once_each() -> None:
    body = "hi @helper, ask @abc123. not mail@example.com; @helper again @everyone"
    assert mention_tokens(body) == ["helper", "abc123", "everyone"]


def test_a_room_causes_at_most_the_rate_of_prompts_per_window(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock = [1000.0]
    monkeypatch.setattr(mentions.time, "monotonic", lambda: clock[0])
    # The rate bound never touches the agent port.
    dispatcher = MentionDispatcher(cast(Any, None))
    taken = [dispatcher._take_rate("room") for _ in range(mentions.ROOM_RATE + 5)]
    assert taken == [True] * mentions.ROOM_RATE + [False] * 5
    assert dispatcher._take_rate("other room") is True
    clock[0] += mentions.RATE_WINDOW + 1
    assert dispatcher._take_rate("room") is True


def _message(index: int) -> ChatMessage:
    return ChatMessage(
        id=f"m{index}", roomId="r1", authorAgentId="manual", body=str(index), createdAt="t"
    )


def test_history_keeps_the_newest_messages_and_survives_reopening(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(store, "HISTORY_LIMIT", 3)
    chat = ChatStore(tmp_path)
    kept = chat.save_messages("r1", [_message(i) for i in range(5)])
    assert [m.id for m in kept] == ["m2", "m3", "m4"]
    assert [m.id for m in ChatStore(tmp_path).load_messages("r1")] == ["m2", "m3", "m4"]
    with pytest.raises(ValueError, match="bad room id"):
        chat.load_messages("../rooms")
