"""The refill rule: which of the program's remembered messages a timeline lacks, and the
readers that turn each program's history into messages (Claude transcript lines, a Codex
``thread/read`` answer, an ACP ``session/load`` replay)."""

from __future__ import annotations

import json
from typing import Any

from paseo_acp._history import Replay
from paseo_claude.transcript import messages
from paseo_codex.history import thread_messages
from paseo_hookspecs.events import AssistantMessageItem, UserMessageItem
from paseo_hookspecs.records import TimelineEntry

from paseo.agents.refill import missing, recorded

U, A = UserMessageItem, AssistantMessageItem


def _entry(seq: int, item: dict[str, Any]) -> TimelineEntry:
    return TimelineEntry(
        agentId="a",
        seq=seq,
        epoch="e",
        timestamp="2026-01-01T00:00:00+00:00",
        event={"type": "timeline", "provider": "p", "item": item},
    )


def test_recorded_joins_the_chunks_of_one_reply() -> None:
    entries = [
        _entry(1, {"type": "user_message", "text": "hi", "messageId": "u1"}),
        _entry(2, {"type": "assistant_message", "text": "hel", "messageId": "m1"}),
        _entry(3, {"type": "assistant_message", "text": "lo", "messageId": "m1"}),
        _entry(4, {"type": "tool_call", "callId": "c", "name": "x", "status": "completed"}),
        _entry(5, {"type": "assistant_message", "text": "again", "messageId": "m2"}),
    ]
    assert recorded(entries) == [("user", "hi"), ("assistant", "hello"), ("assistant", "again")]


def test_nothing_is_missing_from_a_timeline_that_holds_it_all() -> None:
    history = [U(text="one"), A(text="first\n"), U(text="two"), A(text="second")]
    have = [("user", "one"), ("assistant", "first"), ("user", "two"), ("assistant", "second")]
    assert missing(history, have) == []
    # A new prompt recorded before the resume is no reason to add anything.
    assert missing(history, [*have, ("user", "three")]) == []


def test_an_empty_timeline_lacks_everything_and_a_partial_one_the_rest() -> None:
    history = [U(text="one"), A(text="ok"), U(text="two"), A(text="ok")]
    assert missing(history, []) == history
    # Repeated texts are matched in order: the second "ok" is still missing.
    assert missing(history, [("user", "one"), ("assistant", "ok")]) == history[2:]
    # A message the program has and Paseo lacks before one they share is not a new turn.
    made_up = [U(text="one"), U(text="[Request interrupted by user]"), A(text="ok")]
    assert missing(made_up, [("user", "one"), ("assistant", "ok")]) == []
    assert missing([*made_up, U(text="later")], [("user", "one"), ("assistant", "ok")]) == [
        U(text="later")
    ]
    # Empty messages and other items are not refilled.
    assert missing([U(text="  "), A(text="")], []) == []


def test_claude_transcript_lines() -> None:
    lines = [
        {"type": "queue-operation", "content": "hello"},
        {"type": "user", "message": {"role": "user", "content": "hello"}},
        {"type": "user", "isMeta": True, "message": {"content": "<reminder>"}},
        {"type": "user", "rowSource": "harness", "message": {"content": "[Request interrupted]"}},
        {"type": "assistant", "message": {"id": "m1", "content": [{"type": "text", "text": "a"}]}},
        {"type": "assistant", "message": {"id": "m1", "content": [{"type": "tool_use"}]}},
        {"type": "assistant", "message": {"id": "m1", "content": [{"type": "text", "text": "b"}]}},
        {
            "type": "user",
            "message": {"content": [{"type": "tool_result", "content": "output"}]},
        },
        {"type": "assistant", "isSidechain": True, "message": {"content": "sub-agent"}},
    ]
    text = [json.dumps(line) for line in lines] + ['{"cut short']
    assert messages(text) == [U(text="hello"), A(text="ab", messageId="m1")]


def test_codex_thread_read_answer() -> None:
    answer = {
        "thread": {
            "id": "t",
            "turns": [
                {
                    "items": [
                        {"type": "userMessage", "content": [{"type": "text", "text": "hi"}]},
                        {"type": "reasoning", "text": "hmm"},
                        {"type": "agentMessage", "id": "i1", "text": "hello"},
                    ]
                },
                {"items": [{"type": "userMessage", "content": [{"type": "image", "url": "x"}]}]},
            ],
        }
    }
    assert thread_messages(answer) == [U(text="hi"), A(text="hello", messageId="i1")]
    assert thread_messages({"thread": {"id": "t"}}) == []


def test_acp_replay_joins_chunks_per_role() -> None:
    replay = Replay()
    for kind, text in [
        ("user_message_chunk", "hel"),
        ("user_message_chunk", "lo"),
        ("agent_message_chunk", "hi "),
        ("agent_message_chunk", "there"),
        ("agent_thought_chunk", "thinking"),
        ("user_message_chunk", "bye"),
    ]:
        replay.add({"sessionUpdate": kind, "content": {"type": "text", "text": text}})
    replay.add(
        {
            "sessionUpdate": "agent_message_chunk",
            "content": {"type": "text", "text": "a"},
            "messageId": "x",
        }
    )
    replay.add(
        {
            "sessionUpdate": "agent_message_chunk",
            "content": {"type": "text", "text": "b"},
            "messageId": "y",
        }
    )
    assert replay.items() == [
        U(text="hello"),
        A(text="hi there"),
        U(text="bye"),
        A(text="a", messageId="x"),
        A(text="b", messageId="y"),
    ]
