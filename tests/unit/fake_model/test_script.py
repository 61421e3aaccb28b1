"""The directive grammar and reply planning, independent of any wire format."""

from __future__ import annotations

import json

import pytest

from paseo.testing.fake_model import Conversation, ToolSpec, plan_reply
from paseo.testing.fake_model.script import (
    DEFAULT_SLOW_DELAY,
    parse_directives,
    split_chunks,
)

BASH = ToolSpec(
    "Bash",
    {"properties": {"command": {"type": "string"}, "description": {"type": "string"}}},
)
EXEC = ToolSpec("exec_command", {"properties": {"cmd": {"type": "string"}}})
CODEX_SHELL = ToolSpec("shell", {"properties": {"command": {"type": "array"}}})
WRITE = ToolSpec(
    "Write", {"properties": {"file_path": {"type": "string"}, "content": {"type": "string"}}}
)
OPENCODE_WRITE = ToolSpec(
    "write", {"properties": {"filePath": {"type": "string"}, "content": {"type": "string"}}}
)
APPLY_PATCH = ToolSpec("apply_patch", {}, freeform=True)
OTHER = ToolSpec("Read", {"properties": {"file_path": {"type": "string"}}})


def convo(prompt: str, *tools: ToolSpec, results: tuple[str, ...] = ()) -> Conversation:
    return Conversation(prompt, results, tools or (OTHER,), "m")


def test_default_reply_echoes_prompt_without_directives() -> None:
    reply = plan_reply(convo("hello   world"))
    assert reply.text == "ok: hello world"
    assert reply.tool_call is None
    assert len(reply.text_chunks) >= 1


def test_grammar_is_tolerant_of_case_spaces_and_unknown_names() -> None:
    found = parse_directives("x [[ Reply : hi ]] [[nonsense]] [[SLOW:3:0.5]] [[long-x:2]]")
    assert [(d.name, d.argument) for d in found] == [
        ("reply", " hi "),
        ("nonsense", None),
        ("slow", "3:0.5"),
        ("long_x", "2"),
    ]
    assert plan_reply(convo("[[ REPLY :hi]] [[bogus]]")).text == "hi"


def test_reply_decodes_escapes() -> None:
    assert plan_reply(convo(r"[[reply:a\nb\tc\\n]]")).text == "a\nb\tc\\n"


@pytest.mark.parametrize(
    ("tools", "name", "arguments"),
    [
        (
            (OTHER, BASH),
            "Bash",
            {"command": "ls -l", "description": "Run a command for the fake model"},
        ),
        ((EXEC, OTHER), "exec_command", {"cmd": "ls -l"}),
        ((CODEX_SHELL,), "shell", {"command": ["bash", "-lc", "ls -l"]}),
        (
            (ToolSpec("_bash", {"properties": {"command": {"type": "string"}}}),),
            "_bash",
            {"command": "ls -l"},
        ),
    ],
)
def test_shell_picks_tool_by_name_and_shapes_arguments(
    tools: tuple[ToolSpec, ...], name: str, arguments: dict[str, object]
) -> None:
    reply = plan_reply(convo("[[shell:ls -l]]", *tools))
    assert reply.tool_call is not None
    assert reply.tool_call.name == name
    assert reply.tool_call.arguments == arguments
    assert reply.text == ""


def test_shell_without_a_shell_tool_says_so() -> None:
    reply = plan_reply(convo("[[shell:ls]]", OTHER))
    assert reply.tool_call is None
    assert "no shell tool offered" in reply.text
    assert "Read" in reply.text


def test_reply_and_tool_call_combine() -> None:
    reply = plan_reply(convo("[[reply:running it]] [[shell:true]]", BASH))
    assert reply.text == "running it"
    assert reply.tool_call is not None


def test_write_prefers_write_tools_then_apply_patch_then_shell() -> None:
    claude = plan_reply(convo(r"[[write:/tmp/a.txt:one\ntwo]]", BASH, WRITE)).tool_call
    assert claude is not None
    assert (claude.name, claude.arguments) == (
        "Write",
        {"file_path": "/tmp/a.txt", "content": "one\ntwo"},
    )
    opencode = plan_reply(convo("[[write:a.txt:x]]", OPENCODE_WRITE)).tool_call
    assert opencode is not None
    assert opencode.arguments == {"filePath": "a.txt", "content": "x"}
    codex = plan_reply(convo(r"[[write:a.txt:one\ntwo]]", EXEC, APPLY_PATCH)).tool_call
    assert codex is not None
    assert codex.name == "apply_patch"
    assert codex.input == "*** Begin Patch\n*** Add File: a.txt\n+one\n+two\n*** End Patch\n"
    shell = plan_reply(convo("[[write:a b.txt:it's]]", EXEC)).tool_call
    assert shell is not None
    assert shell.arguments == {"cmd": "printf '%s' 'it'\"'\"'s' > 'a b.txt'"}


def test_error_directive() -> None:
    reply = plan_reply(convo("[[error:429]]"))
    assert reply.error_status == 429
    assert reply.error_message
    custom = plan_reply(convo("[[error:503:overloaded now]]"))
    assert (custom.error_status, custom.error_message) == (503, "overloaded now")
    assert plan_reply(convo("[[error:teapot]]")).error_status == 500


def test_long_and_slow_chunking() -> None:
    long = plan_reply(convo("[[long:5]]"))
    assert long.text_chunks == ("chunk 1", " chunk 2", " chunk 3", " chunk 4", " chunk 5")
    assert long.chunk_delay == 0
    slow = plan_reply(convo("[[slow:3]] [[reply:abcdefg]]"))
    assert slow.text_chunks == ("abc", "de", "fg")
    assert slow.chunk_delay == DEFAULT_SLOW_DELAY
    assert plan_reply(convo("[[slow:2:0.01]]")).chunk_delay == 0.01
    assert split_chunks("ab", 4) == ("a", "b", "", "")


def test_think_comes_with_the_answer() -> None:
    reply = plan_reply(convo("[[think:hmm]] [[reply:done]]"))
    assert (reply.thinking, reply.text) == ("hmm", "done")


def test_tool_result_is_quoted_whatever_the_prompt() -> None:
    reply = plan_reply(convo("[[error:500]] [[shell:x]]", BASH, results=("x" * 600, "second")))
    assert reply.error_status is None
    assert reply.tool_call is None
    assert reply.text == "tool said: " + "x" * 500 + "\nsecond"


def test_side_requests_without_tools_never_fail_block_or_call_tools() -> None:
    side = Conversation("[[error:500]] [[slow:50]] [[shell:ls]]", (), (), "m")
    reply = plan_reply(side)
    assert (reply.text, reply.error_status, reply.chunk_delay, reply.tool_call) == (
        "ok",
        None,
        0.0,
        None,
    )
    assert plan_reply(Conversation("[[reply:Title]]", (), (), "m")).text == "Title"


def test_structured_output_follows_the_schema() -> None:
    schema = {
        "type": "object",
        "properties": {
            "title": {"type": "string"},
            "n": {"type": "integer"},
            "tags": {"type": "array"},
            "kind": {"enum": ["a", "b"]},
            "nested": {"type": "object", "properties": {"ok": {"type": "boolean"}}},
        },
    }
    reply = plan_reply(Conversation("[[reply:My title]]", (), (), "m", schema))
    assert json.loads(reply.text) == {
        "title": "My title",
        "n": 0,
        "tags": [],
        "kind": "a",
        "nested": {"ok": False},
    }


MCP_CREATE = ToolSpec("mcp__paseo__create_agent", {"properties": {"provider": {"type": "string"}}})


def test_call_tool_names_a_tool_and_its_arguments() -> None:
    prompt = 'please\nCALL_TOOL: create_agent :: {"provider": "claude", "labels": {"a": "b"}}\n'
    reply = plan_reply(convo(prompt, BASH, MCP_CREATE))
    assert reply.tool_call is not None
    assert reply.tool_call.name == "mcp__paseo__create_agent"
    assert reply.tool_call.arguments == {"provider": "claude", "labels": {"a": "b"}}
    exact = plan_reply(convo("CALL_TOOL: Bash :: {}", BASH, MCP_CREATE)).tool_call
    assert exact is not None
    assert exact.name == "Bash"


def test_call_tool_says_why_it_cannot_call() -> None:
    missing = plan_reply(convo("CALL_TOOL: kill_agent :: {}", BASH))
    assert missing.tool_call is None
    assert "no kill_agent tool offered" in missing.text
    broken = plan_reply(convo("CALL_TOOL: create_agent :: {nope", MCP_CREATE))
    assert broken.tool_call is None
    assert "not JSON" in broken.text


def test_an_offered_structured_output_tool_is_called_with_the_document() -> None:
    schema = {"type": "object", "properties": {"branch": {"type": "string"}}}
    tools = (ToolSpec("Bash", {}), ToolSpec("StructuredOutput", schema))
    reply = plan_reply(Conversation("name it [[reply:feat/x]]", (), tools, "m"))
    assert reply.tool_call is not None
    assert (reply.tool_call.name, reply.tool_call.arguments) == (
        "StructuredOutput",
        {"branch": "feat/x"},
    )
    # After the tool result the ordinary rule answers.
    after = plan_reply(Conversation("name it [[reply:feat/x]]", ("done",), tools, "m"))
    assert after.tool_call is None
    assert after.text == "tool said: done"


def test_usage_directive_sets_the_reported_token_counts() -> None:
    from paseo.testing.fake_model.anthropic import message
    from paseo.testing.fake_model.openai import response_object

    tools = (ToolSpec("Bash"),)
    reply = plan_reply(Conversation("[[usage:1200:340:50:7]] [[reply:hi]]", (), tools, "m"))
    assert reply.usage == (1200, 340, 50, 7)
    assert message(reply, "m", 99)["usage"] == {
        "input_tokens": 1200,
        "output_tokens": 340,
        "cache_creation_input_tokens": 7,
        "cache_read_input_tokens": 50,
    }
    usage = response_object(reply, "m", 99)["usage"]
    assert (usage["input_tokens"], usage["output_tokens"]) == (1200, 340)
    assert usage["input_tokens_details"] == {"cached_tokens": 50}
    # Without the directive the counts are estimated from the sizes.
    plain = plan_reply(Conversation("[[reply:hi]]", (), tools, "m"))
    assert plain.usage is None
    assert message(plain, "m", 99)["usage"]["input_tokens"] == 99
