"""The slash commands Claude Code and ACP agents report, as the contract's ``SlashCommand``."""

from __future__ import annotations

from paseo_acp import _mapping as acp
from paseo_claude import mapping as claude
from paseo_hookspecs.interfaces.agent import SlashCommand


def test_claude_initialize_answer_lists_commands_in_order() -> None:
    # The shape Claude Code 2.1.332 answers ``initialize`` with (a control_response body).
    answer = {
        "subtype": "success",
        "request_id": "paseo-1",
        "response": {
            "commands": [
                {"name": "compact", "description": "Clear history", "argumentHint": "<focus>"},
                {"name": "/clear", "description": "Start over"},
                {"name": "", "description": "nameless"},
                {"description": "no name at all"},
                "not a command",
                {"name": "review", "description": 3, "argumentHint": None},
            ],
            "models": [],
        },
    }
    assert claude.slash_commands(answer) == [
        SlashCommand(name="compact", description="Clear history", argumentHint="<focus>"),
        SlashCommand(name="clear", description="Start over"),
        SlashCommand(name="review"),
    ]


def test_claude_answer_without_commands_lists_none() -> None:
    assert claude.slash_commands({"subtype": "success", "response": {}}) == []
    assert claude.slash_commands({"subtype": "success"}) == []
    assert claude.slash_commands({"response": {"commands": "x"}}) == []


def test_acp_available_commands_take_the_input_hint() -> None:
    listed = [
        {"name": "web", "description": "Search the web", "input": {"hint": "query"}},
        {"name": "plan", "description": "Plan first"},
        {"name": "/init", "description": "Write AGENTS.md", "input": None},
        {"name": 7},
    ]
    assert acp.slash_commands(listed) == [
        SlashCommand(name="web", description="Search the web", argumentHint="query"),
        SlashCommand(name="plan", description="Plan first"),
        SlashCommand(name="init", description="Write AGENTS.md"),
    ]
    assert acp.slash_commands(None) == []
