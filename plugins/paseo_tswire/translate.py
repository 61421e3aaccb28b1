"""This daemon's stream events (``paseo_hookspecs.events``, as JSON) in the TypeScript shapes.

Pure functions from a JSON event to a model of :mod:`paseo_tswire.models.timeline`; an event
the TypeScript clients have no type for translates to ``None`` and is not sent.
"""

from __future__ import annotations

from typing import Any

from paseo_tswire.models import timeline as ts


def detail(data: dict[str, Any] | None) -> Any:
    """A tool-call detail (our ``path``/``oldText``/… become ``filePath``/``oldString``/…)."""
    if not isinstance(data, dict):
        return ts.UnknownDetail(input=None, output=None)
    kind = data.get("type")
    text = _opt_str
    if kind == "shell":
        exit_code = data.get("exitCode")
        return ts.ShellDetail(
            command=str(data.get("command") or ""),
            cwd=text(data.get("cwd")),
            output=text(data.get("output")),
            exitCode=exit_code if isinstance(exit_code, int) else None,
        )
    if kind == "read":
        return ts.ReadDetail(
            filePath=str(data.get("path") or ""), content=text(data.get("content"))
        )
    if kind == "edit":
        return ts.EditDetail(
            filePath=str(data.get("path") or ""),
            oldString=text(data.get("oldText")),
            newString=text(data.get("newText")),
            unifiedDiff=text(data.get("diff")),
        )
    if kind == "write":
        return ts.WriteDetail(
            filePath=str(data.get("path") or ""), content=text(data.get("content"))
        )
    if kind == "search":
        return ts.SearchDetail(
            query=str(data.get("query") or ""), content=text(data.get("results"))
        )
    if kind == "fetch":
        return ts.FetchDetail(url=str(data.get("url") or ""), result=text(data.get("result")))
    if kind == "sub_agent":
        return ts.SubAgentDetail(
            subAgentType=text(data.get("agentType")),
            description=text(data.get("description")),
            log=str(data.get("result") or ""),
        )
    if kind == "plan":
        return ts.PlanDetail(text=str(data.get("text") or ""))
    given = data.get("input")
    if kind == "other" and isinstance(given, dict) and given.get("kind") == "worktree_setup":
        return _worktree_setup(given, data.get("output"))
    return ts.UnknownDetail(input=data.get("input"), output=data.get("output"))


def _worktree_setup(given: dict[str, Any], output: Any) -> ts.WorktreeSetupDetail:
    """The daemon's ``paseo_worktree_setup`` call (``paseo.agents.worktree_setup``)."""
    found = output if isinstance(output, dict) else {}
    commands = [
        ts.WorktreeSetupCommand(
            index=int(c.get("index") or n),
            command=str(c.get("command") or ""),
            cwd=str(c.get("cwd") or ""),
            log=str(c.get("log") or ""),
            status=c["status"] if c.get("status") in ("running", "completed") else "failed",
            exitCode=c.get("exitCode") if isinstance(c.get("exitCode"), int) else None,
            durationMs=c.get("durationMs") if isinstance(c.get("durationMs"), int) else None,
        )
        for n, c in enumerate(found.get("commands") or [], start=1)
        if isinstance(c, dict)
    ]
    return ts.WorktreeSetupDetail(
        worktreePath=str(given.get("worktreePath") or ""),
        branchName=str(given.get("branchName") or ""),
        log=str(found.get("log") or ""),
        commands=commands,
        truncated=True if found.get("truncated") else None,
    )


def item(data: dict[str, Any]) -> Any:
    """A timeline item, or ``None`` for a kind the clients do not know."""
    kind = data.get("type")
    if kind == "user_message":
        return ts.UserMessageItem(
            text=str(data.get("text") or ""), messageId=_opt_str(data.get("messageId"))
        )
    if kind == "assistant_message":
        return ts.AssistantMessageItem(text=str(data.get("text") or ""))
    if kind == "reasoning":
        return ts.ReasoningItem(text=str(data.get("text") or ""))
    if kind == "tool_call":
        status = data.get("status")
        if status not in ("running", "completed", "failed", "canceled"):
            status = "running"
        failed = status == "failed"
        return ts.ToolCallItem(
            callId=str(data.get("callId") or ""),
            name=str(data.get("name") or ""),
            detail=detail(data.get("detail")),
            status=status,
            # The client requires an error exactly when the call failed.
            error=(data.get("error") or "failed") if failed else None,
        )
    if kind == "todo":
        raw_items = data.get("items")
        entries: list[Any] = raw_items if isinstance(raw_items, list) else []
        return ts.TodoItem(
            items=[
                ts.TodoEntry(
                    text=str(e.get("text") or ""), completed=e.get("status") == "completed"
                )
                for e in entries
                if isinstance(e, dict)
            ]
        )
    if kind == "error":
        return ts.ErrorItem(message=str(data.get("message") or ""))
    if kind == "compaction":
        return ts.CompactionItem(status="completed")
    return None


def permission(data: dict[str, Any], provider: str) -> ts.PermissionRequest:
    """A pending permission request (our ``toolName`` is their ``name``)."""
    kind = data.get("kind")
    raw_input = data.get("input")
    raw_detail = data.get("detail")
    return ts.PermissionRequest(
        id=str(data.get("id") or ""),
        provider=provider,
        name=str(data.get("toolName") or data.get("title") or kind or "tool"),
        kind=kind if kind in ("tool", "plan", "question", "mode", "other") else "other",
        title=_opt_str(data.get("title")),
        description=_opt_str(data.get("description")),
        input=raw_input if isinstance(raw_input, dict) else None,
        detail=detail(raw_detail) if isinstance(raw_detail, dict) else None,
        actions=[
            ts.PermissionAction(id="allow", label="Allow", behavior="allow"),
            ts.PermissionAction(id="deny", label="Deny", behavior="deny"),
        ],
    )


def resolution(data: dict[str, Any]) -> ts.AllowResolution | ts.DenyResolution:
    if data.get("behavior") == "deny":
        return ts.DenyResolution(
            message=_opt_str(data.get("message")), interrupt=bool(data.get("interrupt"))
        )
    updated = data.get("updatedInput")
    return ts.AllowResolution(updatedInput=updated if isinstance(updated, dict) else None)


def usage(data: Any) -> ts.Usage | None:
    if not isinstance(data, dict):
        return None
    return ts.Usage(
        inputTokens=data.get("inputTokens"),
        cachedInputTokens=data.get("cachedInputTokens"),
        outputTokens=data.get("outputTokens"),
        totalCostUsd=data.get("costUsd"),
        contextWindowMaxTokens=data.get("contextWindow"),
    )


def event(data: dict[str, Any]) -> Any:
    """A stream event, or ``None`` when the clients have no such type."""
    kind = data.get("type")
    provider = str(data.get("provider") or "")
    if kind == "thread_started":
        return ts.ThreadStarted(sessionId=str(data.get("sessionId") or ""), provider=provider)
    if kind == "turn_started":
        return ts.TurnStarted(provider=provider)
    if kind == "turn_completed":
        return ts.TurnCompleted(provider=provider, usage=usage(data.get("usage")))
    if kind == "turn_failed":
        return ts.TurnFailed(
            provider=provider,
            error=str(data.get("error") or ""),
            code=_opt_str(data.get("code")),
            diagnostic=_opt_str(data.get("diagnostic")),
        )
    if kind == "turn_canceled":
        return ts.TurnCanceled(provider=provider, reason=str(data.get("reason") or "interrupted"))
    if kind == "timeline":
        translated = item(data.get("item") or {})
        return None if translated is None else ts.TimelineEvent(provider=provider, item=translated)
    if kind == "permission_requested":
        return ts.PermissionRequested(
            provider=provider, request=permission(data.get("request") or {}, provider)
        )
    if kind == "permission_resolved":
        return ts.PermissionResolved(
            provider=provider,
            requestId=str(data.get("requestId") or ""),
            resolution=resolution(data.get("resolution") or {}),
        )
    if kind == "attention_required":
        reason = data.get("reason")
        return ts.AttentionRequired(
            provider=provider,
            reason=reason if reason in ("finished", "error", "permission") else "finished",
            timestamp=str(data.get("timestamp") or ""),
            shouldNotify=bool(data.get("shouldNotify", True)),
        )
    return None


def _opt_str(value: Any) -> str | None:
    return value if isinstance(value, str) else None
