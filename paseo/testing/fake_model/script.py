"""Prompt scripting: what the fake model answers, decided from the request alone.

Every API adapter reduces a request to a :class:`Conversation` (the text of the last real user
message, the tool results that just arrived, the tools on offer) and renders the :class:`Reply`
that :func:`plan_reply` computes from it. The rules, in order:

1. A tool result just arrived (the newest user turn carries tool results) → a text reply quoting
   it: ``tool said: <first 500 characters of each result>``.
2. The request offers no tools → it is a side request (title generation, a summary, a quota
   probe) → a short text, the ``[[reply:…]]`` text if the prompt has one, else ``ok``; never an
   error, a tool call or a delay.
3. Otherwise the directives in the prompt decide (see :data:`DIRECTIVE_HELP`); with none the
   reply is ``ok: <prompt>``.

A structured-output request (a JSON schema for the answer) gets a JSON document built from the
schema whose string fields hold the text the rules above chose. A request offering Claude
Code's ``StructuredOutput`` tool (how its ``--json-schema`` asks for the answer) is one too: the
answer is a call of that tool with such a document as its arguments.
"""

from __future__ import annotations

import dataclasses
import json
import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

DIRECTIVE_HELP = """\
Directives are written anywhere in the user's prompt as [[name]] or [[name:argument]]. Names are
case-insensitive; spaces around the name are ignored; unknown names are ignored; an argument runs
to the first "]]" (so it cannot contain "]]"). In reply, think and write contents the escapes
\\n, \\t and \\\\ are decoded; shell commands are passed verbatim.

  [[reply:TEXT]]         answer with TEXT (default: "ok: <prompt>")
  [[think:TEXT]]         emit a thinking/reasoning block with TEXT before the answer
  [[shell:COMMAND]]      answer with a shell tool call running COMMAND
  [[write:PATH:CONTENT]] answer with a file-write tool call: a write tool (Write, write, …),
                         else Codex's apply_patch (an "Add File" patch), else a shell printf
  [[error:STATUS]]       answer with HTTP STATUS and the API's error JSON
  [[error:STATUS:MSG]]   ... with MSG as the error message
  [[long:N]]             stream the answer in N chunks, fast
  [[slow:N]]             stream the answer in N chunks, 0.2 s apart (interrupt tests)
  [[slow:N:SECONDS]]     ... SECONDS apart
  [[usage:IN:OUT:CACHE_READ:CACHE_WRITE]]
                         report these token counts in the answer's usage (missing parts 0),
                         instead of counts estimated from the request's and answer's sizes

A line of the prompt reading
  CALL_TOOL: NAME :: JSON      answers with a call of the offered tool NAME (exactly, or an MCP
                               tool the program namespaced, e.g. Claude's mcp__paseo__NAME) with
                               the JSON object (to the end of the line) as its arguments

With long/slow the answer is the reply TEXT split into N pieces, or "chunk 1 chunk 2 … chunk N".
reply combines with shell/write (text block, then the tool call). After a tool result the answer
is "tool said: <result>" whatever the prompt said.
"""

_CALL_TOOL = re.compile(r"^\s*CALL_TOOL:\s*(\S+)\s*::\s*(.*?)\s*$", re.MULTILINE)
_DIRECTIVE = re.compile(r"\[\[\s*([A-Za-z_-]+)\s*(?::(.*?))?\]\]", re.DOTALL)
_ESCAPES = re.compile(r"\\(n|t|\\)")
_ESCAPE_VALUES = {"n": "\n", "t": "\t", "\\": "\\"}

# Shell tools by name, most specific first. The fake picks by name, never by position: every
# program offers a different tool list.
SHELL_TOOL_NAMES: tuple[str, ...] = (
    "Bash",
    "bash",
    "_bash",
    "exec_command",
    "shell",
    "shell_command",
    "local_shell",
    "execute",
    "run_shell_command",
    "run_terminal_cmd",
    "terminal",
)
WRITE_TOOL_NAMES: tuple[str, ...] = ("Write", "write", "_write", "write_file", "create_file")
PATCH_TOOL_NAMES: tuple[str, ...] = ("apply_patch",)

QUOTE_LIMIT = 500
DEFAULT_SLOW_DELAY = 0.2
# Chunk size used to stream ordinary text, so clients always see more than one delta.
TEXT_CHUNK = 24


@dataclass(frozen=True)
class ToolSpec:
    """A tool the request offers: its name and JSON-schema parameters (may be empty).

    ``freeform`` marks an OpenAI ``custom`` tool, called with a plain-text ``input`` instead of
    JSON arguments (Codex's ``apply_patch``).
    """

    name: str
    parameters: Mapping[str, Any] = field(default_factory=dict)
    freeform: bool = False


@dataclass(frozen=True)
class Conversation:
    """The API-independent view of a model request.

    ``output_schema`` is the JSON schema of a structured-output request (title generation and
    the like); the text answer is then a JSON document that satisfies it.
    """

    prompt: str
    tool_results: tuple[str, ...]
    tools: tuple[ToolSpec, ...]
    model: str
    output_schema: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class ToolCall:
    """A tool call the fake answers with; ``arguments`` follows the tool's own schema.

    For a freeform tool ``input`` holds the text and ``arguments`` is empty.
    """

    name: str
    arguments: dict[str, Any]
    input: str | None = None


@dataclass(frozen=True)
class Reply:
    """What to send back, before it is rendered into one API's wire format."""

    text_chunks: tuple[str, ...] = ()
    thinking: str | None = None
    tool_call: ToolCall | None = None
    error_status: int | None = None
    error_message: str = ""
    chunk_delay: float = 0.0
    usage: tuple[int, int, int, int] | None = None
    """Reported (input, output, cache read, cache write) tokens; ``None``: estimated."""

    @property
    def text(self) -> str:
        """The whole answer text."""
        return "".join(self.text_chunks)

    def describe(self) -> str:
        """A one-line summary recorded with the request (for failure messages)."""
        if self.error_status is not None:
            return f"error {self.error_status}"
        parts = []
        if self.thinking is not None:
            parts.append("thinking")
        if self.text_chunks:
            parts.append(f"text({len(self.text_chunks)} chunks)")
        if self.tool_call is not None:
            parts.append(f"tool_call {self.tool_call.name}")
        return " + ".join(parts) or "empty"


@dataclass(frozen=True)
class Directive:
    """One ``[[name:argument]]`` found in a prompt."""

    name: str
    argument: str | None


def parse_directives(text: str) -> list[Directive]:
    """All directives in ``text``, in order, names lower-cased."""
    return [
        Directive(match.group(1).lower().replace("-", "_"), match.group(2))
        for match in _DIRECTIVE.finditer(text)
    ]


def decode_escapes(text: str) -> str:
    r"""Decode ``\n``, ``\t`` and ``\\`` (prompts are often typed on one line)."""
    return _ESCAPES.sub(lambda m: _ESCAPE_VALUES[m.group(1)], text)


def strip_directives(text: str) -> str:
    """The prompt with its directives removed (used in the default reply)."""
    return " ".join(_DIRECTIVE.sub(" ", text).split())


def split_chunks(text: str, count: int) -> tuple[str, ...]:
    """Split ``text`` into ``count`` contiguous pieces (some may be empty if text is short)."""
    count = max(1, count)
    size, extra = divmod(len(text), count)
    pieces, start = [], 0
    for index in range(count):
        end = start + size + (1 if index < extra else 0)
        pieces.append(text[start:end])
        start = end
    return tuple(pieces)


def _chunked(text: str) -> tuple[str, ...]:
    return tuple(text[i : i + TEXT_CHUNK] for i in range(0, len(text), TEXT_CHUNK)) or ("",)


def _int(value: str | None, default: int) -> int:
    try:
        return int((value or "").strip())
    except ValueError:
        return default


def _float(value: str, default: float) -> float:
    try:
        return float(value.strip())
    except ValueError:
        return default


def find_tool(tools: Sequence[ToolSpec], names: Sequence[str]) -> ToolSpec | None:
    """The offered tool matching the earliest of ``names`` (exact, then case-insensitive)."""
    by_name = {tool.name: tool for tool in tools}
    for name in names:
        if name in by_name:
            return by_name[name]
    lowered = {tool.name.lower(): tool for tool in tools}
    for name in names:
        if name.lower() in lowered:
            return lowered[name.lower()]
    return None


def _properties(tool: ToolSpec) -> Mapping[str, Any]:
    props = tool.parameters.get("properties")
    return props if isinstance(props, Mapping) else {}


def shell_arguments(tool: ToolSpec, command: str) -> dict[str, Any]:
    """Arguments for a shell tool, shaped after its schema (``cmd``, ``command`` string/array)."""
    props = _properties(tool)
    if "cmd" in props:
        return {"cmd": command}
    if "command" in props:
        spec = props["command"]
        if isinstance(spec, Mapping) and spec.get("type") == "array":
            return {"command": ["bash", "-lc", command]}
        args: dict[str, Any] = {"command": command}
        if "description" in props:
            args["description"] = "Run a command for the fake model"
        return args
    required = tool.parameters.get("required")
    if isinstance(required, list) and required and isinstance(required[0], str):
        return {required[0]: command}
    return {"command": command}


def write_arguments(tool: ToolSpec, path: str, content: str) -> dict[str, Any]:
    """Arguments for a file-write tool, shaped after its schema."""
    props = _properties(tool)
    path_key = next((k for k in ("file_path", "filePath", "path") if k in props), "file_path")
    content_key = next((k for k in ("content", "contents", "text") if k in props), "content")
    return {path_key: path, content_key: content}


def _shell_call(tools: Sequence[ToolSpec], command: str) -> ToolCall | None:
    tool = find_tool(tools, SHELL_TOOL_NAMES)
    return ToolCall(tool.name, shell_arguments(tool, command)) if tool else None


def add_file_patch(path: str, content: str) -> str:
    """An ``apply_patch`` patch creating ``path`` with ``content``."""
    lines = "".join(f"+{line}\n" for line in content.split("\n"))
    return f"*** Begin Patch\n*** Add File: {path}\n{lines}*** End Patch\n"


def _write_call(tools: Sequence[ToolSpec], argument: str) -> ToolCall | None:
    path, _, content = argument.partition(":")
    path, content = path.strip(), decode_escapes(content)
    tool = find_tool(tools, WRITE_TOOL_NAMES)
    if tool is not None:
        return ToolCall(tool.name, write_arguments(tool, path, content))
    patch_tool = find_tool(tools, PATCH_TOOL_NAMES)
    if patch_tool is not None:
        patch = add_file_patch(path, content)
        if patch_tool.freeform:
            return ToolCall(patch_tool.name, {}, input=patch)
        return ToolCall(patch_tool.name, {"input": patch})
    command = f"printf '%s' {shlex.quote(content)} > {shlex.quote(path)}"
    return _shell_call(tools, command)


def _named_call(tools: Sequence[ToolSpec], prompt: str) -> tuple[ToolCall | None, str | None]:
    """The ``CALL_TOOL:`` line's call, or the text saying why there is none."""
    match = _CALL_TOOL.search(prompt)
    if match is None:
        return None, None
    name, raw = match.group(1), match.group(2)
    try:
        arguments = json.loads(raw or "{}")
    except ValueError:
        return None, f"fake model: CALL_TOOL {name}: the arguments are not JSON: {raw}"
    if not isinstance(arguments, dict):
        return None, f"fake model: CALL_TOOL {name}: the arguments must be a JSON object"
    for tool in tools:
        # Programs namespace MCP tools: Claude Code `mcp__<server>__<tool>`, others
        # `<server>.<tool>`.
        if tool.name == name or tool.name.endswith((f"__{name}", f".{name}", f"/{name}")):
            return ToolCall(tool.name, arguments), None
    return None, _no_tool_text(name, tools)


def _no_tool_text(kind: str, tools: Sequence[ToolSpec]) -> str:
    names = ", ".join(tool.name for tool in tools) or "none"
    return f"fake model: no {kind} tool offered (tools: {names})"


def json_for_schema(schema: Mapping[str, Any], text: str) -> Any:
    """A small value satisfying ``schema``: strings are ``text``, numbers 0, arrays empty."""
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if "enum" in schema and isinstance(schema["enum"], list) and schema["enum"]:
        return schema["enum"][0]
    if kind == "object" or "properties" in schema:
        props = schema.get("properties")
        if not isinstance(props, Mapping):
            return {}
        return {
            name: json_for_schema(sub if isinstance(sub, Mapping) else {}, text)
            for name, sub in props.items()
        }
    if kind in ("integer", "number"):
        return 0
    if kind == "boolean":
        return False
    if kind == "array":
        return []
    if kind == "null":
        return None
    return text


STRUCTURED_OUTPUT_TOOL = "StructuredOutput"


def _structured(conversation: Conversation, reply: Reply) -> Reply:
    if reply.tool_call is not None:
        return reply
    tool = (
        None
        if conversation.tool_results
        else find_tool(conversation.tools, (STRUCTURED_OUTPUT_TOOL,))
    )
    if tool is not None:
        arguments = json_for_schema(tool.parameters, reply.text)
        if isinstance(arguments, dict):
            return Reply(tool_call=ToolCall(tool.name, arguments), thinking=reply.thinking)
    if conversation.output_schema is None:
        return reply
    document = json.dumps(json_for_schema(conversation.output_schema, reply.text))
    return Reply(text_chunks=(document,), thinking=reply.thinking)


def plan_reply(conversation: Conversation) -> Reply:
    """Decide the answer to one request (see the module docstring for the rules)."""
    reply = _plan(conversation)
    if reply.error_status is not None:
        return reply
    reply = _structured(conversation, reply)
    usage = _usage(conversation.prompt)
    return reply if usage is None else dataclasses.replace(reply, usage=usage)


def _usage(prompt: str) -> tuple[int, int, int, int] | None:
    """The ``[[usage:…]]`` token counts of ``prompt``, if it has the directive."""
    for directive in parse_directives(prompt):
        if directive.name == "usage":
            parts = (directive.argument or "").split(":")
            counts = [max(0, _int(part, 0)) for part in parts[:4]]
            counts += [0] * (4 - len(counts))
            return counts[0], counts[1], counts[2], counts[3]
    return None


def _plan(conversation: Conversation) -> Reply:
    directives = parse_directives(conversation.prompt)
    first: dict[str, str | None] = {}
    for directive in directives:
        first.setdefault(directive.name, directive.argument)

    if conversation.tool_results:
        quoted = "\n".join(result[:QUOTE_LIMIT] for result in conversation.tool_results)
        return Reply(text_chunks=_chunked(f"tool said: {quoted}"))

    reply_text = decode_escapes(first["reply"] or "") if "reply" in first else None
    if not conversation.tools:
        return Reply(text_chunks=(reply_text or "ok",))

    if "error" in first:
        status_text, _, message = (first["error"] or "500").partition(":")
        status = _int(status_text, 500)
        return Reply(
            error_status=status if 400 <= status <= 599 else 500,
            error_message=message.strip() or f"fake model error {status}",
        )

    thinking = decode_escapes(first["think"] or "") if "think" in first else None
    tool_call, tool_text = _named_call(conversation.tools, conversation.prompt)
    for directive in directives if tool_call is None and tool_text is None else ():
        if directive.name == "shell":
            tool_call = _shell_call(conversation.tools, directive.argument or "true")
            tool_text = None if tool_call else _no_tool_text("shell", conversation.tools)
            break
        if directive.name == "write":
            tool_call = _write_call(conversation.tools, directive.argument or "")
            tool_text = None if tool_call else _no_tool_text("write or shell", conversation.tools)
            break

    delay = 0.0
    count: int | None = None
    if "slow" in first:
        count_text, _, delay_text = (first["slow"] or "").partition(":")
        count = _int(count_text, 10)
        delay = _float(delay_text, DEFAULT_SLOW_DELAY) if delay_text else DEFAULT_SLOW_DELAY
    elif "long" in first:
        count = _int(first["long"], 100)

    if tool_text is not None:
        text: str | None = tool_text
    elif reply_text is not None:
        text = reply_text
    elif count is not None:
        text = None
    elif tool_call is not None:
        text = ""
    else:
        text = f"ok: {strip_directives(conversation.prompt)}"

    if count is not None:
        chunks = (
            split_chunks(text, count)
            if text
            else tuple(("" if i == 1 else " ") + f"chunk {i}" for i in range(1, count + 1))
        )
    else:
        chunks = _chunked(text) if text else ()
    return Reply(text_chunks=chunks, thinking=thinking, tool_call=tool_call, chunk_delay=delay)
