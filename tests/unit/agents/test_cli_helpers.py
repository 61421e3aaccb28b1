"""Pure helpers of the agent commands: durations and the readable event renderer."""

from __future__ import annotations

import argparse
import io
from typing import Any

import pytest

from paseo.cli.commands._agentcli import Renderer, matches, parse_duration


def test_durations() -> None:
    assert parse_duration("90") == 90
    assert parse_duration("1.5") == 1.5
    assert parse_duration("30s") == 30
    assert parse_duration("5m") == 300
    assert parse_duration("1h30m") == 5400
    for bad in ("", "m5", "5x", "1h junk"):
        with pytest.raises(argparse.ArgumentTypeError):
            parse_duration(bad)


def test_renderer_joins_chunks_and_describes_events() -> None:
    out = io.StringIO()
    renderer = Renderer(out, color=False, agent="abcd1234")
    events: list[dict[str, Any]] = [
        {"type": "timeline", "item": {"type": "user_message", "text": "hi"}},
        {
            "type": "timeline",
            "item": {"type": "assistant_message", "text": "Hel", "messageId": "1"},
        },
        {"type": "timeline", "item": {"type": "assistant_message", "text": "lo", "messageId": "1"}},
        {
            "type": "timeline",
            "item": {
                "type": "tool_call",
                "callId": "c",
                "name": "Bash",
                "status": "failed",
                "error": "exit 1",
                "detail": {"type": "shell", "command": "ls"},
            },
        },
        {"type": "permission_requested", "request": {"id": "r1", "kind": "tool", "title": "Run"}},
        {"type": "turn_failed", "error": "HTTP 500"},
    ]
    for event in events:
        renderer.entry({"event": event})
    assert out.getvalue().splitlines() == [
        "> hi",
        "Hello",
        "⚙ Bash failed ls — exit 1",
        "? permission r1 (tool): Run — paseo permit allow abcd1234 r1",
        "✗ turn failed: HTTP 500",
    ]
    assert matches(events[3], "errors")
    assert matches(events[3], "tools")
    assert matches(events[1], "text")
    assert not matches(events[1], "tools")
    assert matches(events[4], "permissions")
    assert matches(events[5], "errors")
