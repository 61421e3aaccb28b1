"""How Claude Code's tool calls, permission prompts and results map onto Paseo's events.

The shell and write mappings run through the real program (the fake can script those two
tools); the other tools' mappings are checked on the input shapes Claude Code sends, since the
fake cannot make the model call them.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from e2e.claude.harness import Claude, run
from paseo_claude import mapping
from paseo_hookspecs.events import (
    AllowResolution,
    EditDetail,
    FetchDetail,
    OtherDetail,
    PermissionRequested,
    PlanDetail,
    ReadDetail,
    SearchDetail,
    ShellDetail,
    SubAgentDetail,
    Timeline,
    ToolCallItem,
    WriteDetail,
)


def _tool_items(events: list[object]) -> list[ToolCallItem]:
    return [e.item for e in events if isinstance(e, Timeline) and isinstance(e.item, ToolCallItem)]


@pytest.mark.e2e
def test_shell_and_write_calls_carry_typed_details(claude: Claude) -> None:
    async def body() -> None:
        try:
            agent = await claude.start()
            events = await agent.turn(
                "[[shell:echo from-bash > made.txt; cat made.txt]]", permission=AllowResolution()
            )
            request = next(e.request for e in events if isinstance(e, PermissionRequested))
            assert request.kind == "tool"
            assert request.toolName == "Bash"
            assert request.title == "Bash: echo from-bash > made.txt; cat made.txt"
            assert isinstance(request.detail, ShellDetail)
            assert request.input["command"] == "echo from-bash > made.txt; cat made.txt"
            shell = _tool_items(events)
            assert [t.status for t in shell] == ["running", "completed"]
            assert {t.callId for t in shell} == {shell[0].callId}
            done = shell[-1].detail
            assert isinstance(done, ShellDetail)
            assert done.command == "echo from-bash > made.txt; cat made.txt"
            assert done.cwd == agent.config.cwd
            assert done.output is not None
            assert "from-bash" in done.output

            events = await agent.turn("[[write:notes.md:line one]]", permission=AllowResolution())
            request = next(e.request for e in events if isinstance(e, PermissionRequested))
            assert request.title.startswith("Write: ")
            assert request.title.endswith("notes.md")
            writes = _tool_items(events)
            assert [t.status for t in writes] == ["running", "completed"]
            assert isinstance(writes[-1].detail, WriteDetail)
            assert writes[-1].detail.content == "line one"
            assert (Path(agent.config.cwd) / "notes.md").read_text() == "line one"
        finally:
            await claude.close_all()

    run(body())


@pytest.mark.e2e
def test_reasoning_and_text_stream_as_chunks(claude: Claude) -> None:
    async def body() -> None:
        try:
            agent = await claude.start()
            events = await agent.turn("[[think:weighing it up]] [[long:12]]")
            items = [e.item for e in events if isinstance(e, Timeline)]
            reasoning = [i for i in items if i.type == "reasoning"]
            text = [i for i in items if i.type == "assistant_message"]
            assert "".join(i.text for i in reasoning) == "weighing it up"
            assert len(text) == 12, "each streamed delta is its own chunk"
            assert len({i.messageId for i in text}) == 1
            assert {i.messageId for i in reasoning}.isdisjoint({i.messageId for i in text})
            assert "".join(i.text for i in text).startswith("chunk 1 chunk 2")
            completed = events[-1]
            assert completed.type == "turn_completed"
            assert completed.usage is not None
            assert completed.usage.inputTokens
            assert completed.usage.outputTokens
            assert completed.usage.costUsd is not None
        finally:
            await claude.close_all()

    run(body())


# --- the other tools, on the shapes Claude Code sends ----------------------------------------


@pytest.mark.parametrize(
    ("name", "tool_input", "expected"),
    [
        ("Read", {"file_path": "/w/a.py"}, ReadDetail(path="/w/a.py", content="out")),
        (
            "Edit",
            {"file_path": "/w/a.py", "old_string": "x = 1", "new_string": "x = 2"},
            EditDetail(path="/w/a.py", oldText="x = 1", newText="x = 2"),
        ),
        (
            "MultiEdit",
            {
                "file_path": "/w/a.py",
                "edits": [
                    {"old_string": "a", "new_string": "b"},
                    {"old_string": "c", "new_string": "d"},
                ],
            },
            EditDetail(path="/w/a.py", oldText="a\nc", newText="b\nd"),
        ),
        (
            "Grep",
            {"pattern": "TODO", "path": "src"},
            SearchDetail(query="TODO", path="src", results="out"),
        ),
        ("Glob", {"pattern": "**/*.py"}, SearchDetail(query="**/*.py", results="out")),
        ("WebFetch", {"url": "https://example.org", "prompt": "sum"}, None),
        (
            "Task",
            {"description": "Find uses", "prompt": "...", "subagent_type": "Explore"},
            SubAgentDetail(description="Find uses", agentType="Explore", result="out"),
        ),
        ("ExitPlanMode", {"plan": "1. do it"}, PlanDetail(text="1. do it")),
    ],
)
def test_tool_detail_by_tool(name: str, tool_input: dict[str, object], expected: object) -> None:
    detail = mapping.tool_detail(name, tool_input, output="out")
    if name == "WebFetch":
        assert detail == FetchDetail(url="https://example.org", result="out")
    else:
        assert detail == expected


def test_unknown_tools_keep_their_input() -> None:
    detail = mapping.tool_detail("mcp__srv__lookup", {"key": 1}, output="found")
    assert detail == OtherDetail(input={"key": 1}, output="found")


def test_plan_and_question_prompts_get_their_kinds() -> None:
    plan = mapping.permission_request(
        "r1", {"subtype": "can_use_tool", "tool_name": "ExitPlanMode", "input": {"plan": "P"}}
    )
    assert plan.kind == "plan"
    assert plan.detail == PlanDetail(text="P")
    question = mapping.permission_request(
        "r2",
        {
            "subtype": "can_use_tool",
            "tool_name": "AskUserQuestion",
            "input": {"questions": [{"question": "Which database?", "options": []}]},
        },
    )
    assert question.kind == "question"
    assert question.title == "Which database?"
    tool = mapping.permission_request(
        "r3",
        {
            "subtype": "can_use_tool",
            "tool_name": "Bash",
            "input": {"command": "rm -rf build"},
            "tool_use_id": "toolu_1",
            "permission_suggestions": [{"type": "addRules"}],
        },
    )
    assert tool.kind == "tool"
    assert tool.title == "Bash: rm -rf build"
    assert tool.model_dump()["tool_use_id"] == "toolu_1"


def test_todo_write_becomes_a_todo_item() -> None:
    item = mapping.todo_item(
        {
            "todos": [
                {"content": "write tests", "status": "completed"},
                {"content": "ship", "status": "in_progress", "activeForm": "Shipping"},
            ]
        }
    )
    assert item is not None
    assert [(e.text, e.status) for e in item.items] == [
        ("write tests", "completed"),
        ("ship", "in_progress"),
    ]
    assert mapping.todo_item({"todos": "nope"}) is None
