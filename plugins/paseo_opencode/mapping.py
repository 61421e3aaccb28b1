"""Pure translations between OpenCode's shapes and Paseo's: modes, tool parts, errors."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from paseo_hookspecs.events import (
    AnyToolDetail,
    EditDetail,
    FetchDetail,
    OtherDetail,
    ReadDetail,
    SearchDetail,
    ShellDetail,
    ToolCallItem,
    ToolStatus,
    WriteDetail,
)
from paseo_hookspecs.interfaces.agent import ModeAccess, ModeInfo, ModelInfo, ThinkingOption

ASK_BEFORE_CHANGES: list[dict[str, str]] = [
    {"permission": name, "pattern": "*", "action": "ask"}
    for name in ("edit", "bash", "webfetch", "external_directory")
]
"""Rules of the asking modes: OpenCode's defaults run every tool without asking."""

ALLOW_ALL: list[dict[str, str]] = [{"permission": "*", "pattern": "*", "action": "allow"}]


@dataclass(frozen=True)
class Mode:
    """A Paseo mode: the OpenCode agent a prompt names and the session's permission rules."""

    id: str
    agent: str
    label: str
    description: str
    rules: list[dict[str, str]] = field(default_factory=list)
    access: ModeAccess | None = None

    @property
    def info(self) -> ModeInfo:
        return ModeInfo(
            id=self.id, label=self.label, description=self.description, access=self.access
        )


BUILT_IN_MODES = {
    "build": Mode(
        "build", "build", "Build", "OpenCode's build agent; asks before edits, commands and "
        "fetches", ASK_BEFORE_CHANGES, "ask",
    ),
    "plan": Mode(
        "plan", "plan", "Plan", "OpenCode's plan agent: no edits; asks before commands",
        ASK_BEFORE_CHANGES, "read-only",
    ),
    "full-access": Mode(
        "full-access", "build", "Full access", "The build agent without any approval",
        ALLOW_ALL, "full",
    ),
}  # fmt: skip
DEFAULT_MODE = "build"

NO_TOOLS = Mode(
    "no-tools", "build", "No tools", "Every tool denied (internal agents)",
    [{"permission": "*", "pattern": "*", "action": "deny"}], "read-only",
)  # fmt: skip
"""``SessionConfig.noTools`` (never listed): the session's rules deny every permission, and
OpenCode offers the model no tool a rule denies outright. Session rules are applied after the
agent's, so they win."""


def mode_by_id(mode_id: str | None, agents: list[dict[str, Any]] | None = None) -> Mode | None:
    """The built-in mode ``mode_id``, or a custom OpenCode agent of that name (asking)."""
    mode_id = mode_id or DEFAULT_MODE
    if mode_id in BUILT_IN_MODES:
        return BUILT_IN_MODES[mode_id]
    for agent in agents or []:
        if agent.get("name") == mode_id:
            return custom_mode(agent)
    if agents is None:
        # A running session cannot list agents cheaply: trust the name (OpenCode rejects an
        # unknown agent at the next prompt).
        return Mode(mode_id, mode_id, mode_id, "an OpenCode agent", ASK_BEFORE_CHANGES)
    return None


def custom_mode(agent: dict[str, Any]) -> Mode:
    name = str(agent.get("name"))
    return Mode(name, name, name, str(agent.get("description") or ""), ASK_BEFORE_CHANGES)


def selectable_agents(agents: Any) -> list[dict[str, Any]]:
    """Primary, visible agents of ``GET /agent`` beyond the built-in ones."""
    if not isinstance(agents, list):
        return []
    return [
        a
        for a in agents
        if isinstance(a, dict)
        and a.get("mode") in ("primary", "all")
        and not a.get("hidden")
        and a.get("name") not in BUILT_IN_MODES
    ]


def models_of(listing: Any, configured: str | None = None) -> list[ModelInfo]:
    """``GET /provider`` → the models of the connected providers; variants are thinking.
    The default is the configured ``model`` (``provider/model``), else each provider's own."""
    if not isinstance(listing, dict):
        return []
    connected = set(listing.get("connected") or [])
    defaults = as_dict(listing.get("default"))
    models = []
    for provider in listing.get("all") or []:
        if not isinstance(provider, dict) or provider.get("id") not in connected:
            continue
        pid = str(provider["id"])
        for model_id, model in (provider.get("models") or {}).items():
            if not isinstance(model, dict):
                continue
            variants = as_dict(model.get("variants"))
            models.append(
                ModelInfo(
                    id=f"{pid}/{model_id}",
                    label=str(model.get("name") or model_id),
                    default=(
                        configured == f"{pid}/{model_id}"
                        if configured
                        else defaults.get(pid) == model_id
                    ),
                    thinkingOptions=[ThinkingOption(id=v, label=v.capitalize()) for v in variants],
                )
            )
    return models


def as_dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _str(data: dict[str, Any], *keys: str) -> str | None:
    for key in keys:
        if isinstance(data.get(key), str):
            return str(data[key])
    return None


def tool_detail(tool: str, args: dict[str, Any], output: str | None) -> AnyToolDetail:
    path = _str(args, "filePath", "path")
    if tool == "bash" and _str(args, "command") is not None:
        return ShellDetail(command=_str(args, "command") or "", output=output)
    if tool == "read" and path:
        return ReadDetail(path=path, content=output)
    if tool == "write" and path:
        return WriteDetail(path=path, content=_str(args, "content"))
    if tool == "edit" and path:
        return EditDetail(
            path=path, oldText=_str(args, "oldString"), newText=_str(args, "newString")
        )
    if tool in ("grep", "glob") and _str(args, "pattern"):
        return SearchDetail(query=_str(args, "pattern") or "", path=path, results=output)
    if tool == "webfetch" and _str(args, "url"):
        return FetchDetail(url=_str(args, "url") or "", result=output)
    return OtherDetail(input=args, output=output)


_STATUS: dict[str, ToolStatus] = {
    "pending": "running",
    "running": "running",
    "completed": "completed",
    "error": "failed",
}


def tool_item(part: dict[str, Any]) -> ToolCallItem | None:
    """A ``tool`` part of ``message.part.updated`` as a tool call (``None`` when malformed)."""
    state = as_dict(part.get("state"))
    status = _STATUS.get(str(state.get("status")))
    call_id = part.get("callID") or part.get("id")
    if status is None or not isinstance(call_id, str):
        return None
    args = as_dict(state.get("input"))
    output = state.get("output") if isinstance(state.get("output"), str) else None
    error = state.get("error") if isinstance(state.get("error"), str) else None
    tool = str(part.get("tool") or "tool")
    return ToolCallItem(
        callId=call_id,
        name=tool,
        status=status,
        detail=tool_detail(tool, args, output or error),
        error=error if status == "failed" else None,
    )


def error_text(error: Any) -> str:
    """A ``session.error`` payload (``{"name", "data": {"message"}}``) as one sentence."""
    if isinstance(error, dict):
        data = as_dict(error.get("data"))
        message = data.get("message") or error.get("message")
        name = error.get("name") or "error"
        return f"OpenCode reported {name}: {message}" if message else f"OpenCode reported {name}"
    return "OpenCode reported an error"
