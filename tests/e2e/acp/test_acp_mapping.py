"""ACP tool calls, plans and usage as Paseo events (pure translations; shapes as real agents
send them, e.g. claude-agent-acp's, recorded in docs/testing.md)."""

from __future__ import annotations

from typing import Any

import pytest
from paseo_acp import _mapping
from paseo_acp._options import SessionOptions


@pytest.mark.parametrize(
    ("call", "expected"),
    [
        (
            {
                "kind": "execute",
                "title": "Terminal",
                "rawInput": {"command": "ls -l"},
                "rawOutput": {"stdout": "a\n", "exitCode": 0},
            },
            {"type": "shell", "command": "ls -l", "output": "a\n", "exitCode": 0},
        ),
        (
            {
                "kind": "read",
                "title": "Read f",
                "rawInput": {"file_path": "/w/f"},
                "content": [{"type": "content", "content": {"type": "text", "text": "body"}}],
            },
            {"type": "read", "path": "/w/f", "content": "body"},
        ),
        (
            {
                "kind": "edit",
                "title": "Write out.txt",
                "content": [{"type": "diff", "path": "out.txt", "oldText": None, "newText": "hi"}],
            },
            {"type": "write", "path": "out.txt", "content": "hi"},
        ),
        (
            {
                "kind": "edit",
                "title": "Edit a.py",
                "content": [{"type": "diff", "path": "a.py", "oldText": "x", "newText": "y"}],
            },
            {"type": "edit", "path": "a.py", "oldText": "x", "newText": "y"},
        ),
        (
            {"kind": "edit", "title": "Preparing file…", "rawInput": {}, "locations": []},
            {"type": "edit", "path": "Preparing file…"},
        ),
        (
            {"kind": "search", "title": "grep", "rawInput": {"pattern": "TODO", "path": "src"}},
            {"type": "search", "query": "TODO", "path": "src"},
        ),
        (
            {"kind": "fetch", "title": "Fetch", "rawInput": {"url": "http://127.0.0.1/x"}},
            {"type": "fetch", "url": "http://127.0.0.1/x"},
        ),
        (
            {
                "kind": "think",
                "title": "Task",
                "rawInput": {"description": "look", "subagent_type": "Explore", "prompt": "p"},
            },
            {"type": "sub_agent", "description": "look", "agentType": "Explore"},
        ),
        (
            {"kind": "switch_mode", "title": "Ready", "rawInput": {"plan": "1. do it"}},
            {"type": "plan", "text": "1. do it"},
        ),
        (
            {"kind": "other", "title": "mcp", "rawInput": {"a": 1}, "rawOutput": [1]},
            {"type": "other", "input": {"a": 1}, "output": [1]},
        ),
    ],
)
def test_tool_kinds_map_to_details(call: dict[str, Any], expected: dict[str, Any]) -> None:
    detail = _mapping.tool_detail(call).model_dump(exclude_none=True)
    assert detail == expected


def test_tool_names_and_statuses() -> None:
    assert (
        _mapping.tool_name({"_meta": {"claudeCode": {"toolName": "Bash"}}, "kind": "x"}) == "Bash"
    )
    assert _mapping.tool_name({"name": "Write"}) == "Write"
    assert _mapping.tool_name({"kind": "execute"}) == "execute"
    assert [_mapping.tool_status(s) for s in ("pending", "in_progress", "completed", "failed")] == [
        "running",
        "running",
        "completed",
        "failed",
    ]


def test_plan_and_usage() -> None:
    todo = _mapping.todo_item([{"content": "a", "status": "completed", "priority": "high"}])
    assert [(e.text, e.status) for e in todo.items] == [("a", "completed")]
    usage = _mapping.usage(
        {"inputTokens": 10, "outputTokens": 2, "cachedReadTokens": 1},
        {"used": 12, "size": 1000, "cost": {"amount": 0.5, "currency": "USD"}},
    )
    assert usage is not None
    assert usage.model_dump(exclude_none=True) == {
        "inputTokens": 10,
        "outputTokens": 2,
        "cachedInputTokens": 1,
        "contextWindow": 1000,
        "costUsd": 0.5,
    }
    assert _mapping.usage(None, None) is None


def test_mcp_servers_keep_only_supported_transports() -> None:
    servers = {
        "paseo": {"type": "http", "url": "http://127.0.0.1:1/mcp", "headers": {"A": "b"}},
        "local": {"command": "srv", "args": ["-x"], "env": {"K": "v"}},
    }
    assert _mapping.mcp_servers(servers, {}) == [
        {"name": "local", "command": "srv", "args": ["-x"], "env": [{"name": "K", "value": "v"}]}
    ]
    assert _mapping.mcp_servers(servers, {"http": True})[0] == {
        "type": "http",
        "name": "paseo",
        "url": "http://127.0.0.1:1/mcp",
        "headers": [{"name": "A", "value": "b"}],
    }


def test_config_options_win_over_legacy_modes() -> None:
    options = SessionOptions()
    options.update_from(
        {
            "modes": {"currentModeId": "auto", "availableModes": [{"id": "auto", "name": "Auto"}]},
            "models": {"currentModelId": "m1", "availableModels": [{"modelId": "m1", "name": "M"}]},
            "configOptions": [
                {
                    "id": "mode",
                    "category": "mode",
                    "type": "select",
                    "currentValue": "auto",
                    "options": [
                        {"value": "auto", "name": "Auto"},
                        {"value": "default", "name": "Ask"},
                    ],
                },
                {
                    "id": "effort",
                    "category": "thought_level",
                    "type": "select",
                    "currentValue": "low",
                    "options": [
                        {"group": "g", "name": "G", "options": [{"value": "low", "name": "Low"}]}
                    ],
                },
            ],
        }
    )
    assert options.mode.ids() == ["auto", "default"]
    assert options.change_request("mode", "default", "s") == (
        "session/set_config_option",
        {"sessionId": "s", "configId": "mode", "value": "default"},
    )
    assert options.change_request("model", "m1", "s") == (
        "session/set_model",
        {"sessionId": "s", "modelId": "m1"},
    )
    assert [(m.id, m.default, [t.id for t in m.thinkingOptions]) for m in options.models()] == [
        ("m1", True, ["low"])
    ]
