"""``paseo inspect``: everything about one agent."""

from __future__ import annotations

import argparse
from typing import Any

from paseo.cli.commands._agentcli import add_host, ago, connect
from paseo.cli.output import emit


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("agent", metavar="ID", help="agent id, id prefix or title")
    add_host(parser)
    parser.set_defaults(run=run)


def _usage(client: Any, agent_id: str) -> dict[str, Any] | None:
    """The agent's totals, or ``None`` from a daemon (or store) that keeps none."""
    from paseo_hookspecs.errors import PaseoError

    try:
        result: dict[str, Any] = client.call("usage.agent", {"agentId": agent_id})
    except PaseoError:
        return None
    usage: dict[str, Any] = result["usage"]
    return usage


def _usage_line(usage: dict[str, Any] | None) -> str | None:
    if not usage or not usage.get("turns"):
        return None
    cost = usage.get("costUsd")
    tokens = [
        f"{usage[name]} {label}"
        for name, label in (
            ("inputTokens", "in"),
            ("outputTokens", "out"),
            ("cacheReadTokens", "cache read"),
            ("cacheWriteTokens", "cache write"),
        )
        if usage.get(name) is not None
    ]
    money = f"${cost:.4f}" if cost is not None else "cost unknown"
    return f"{usage['turns']} turn(s), {', '.join(tokens) or 'tokens unknown'}, {money}"


def run(args: argparse.Namespace) -> int:
    with connect(args) as client:
        detail = client.call("agent.get", {"agentId": args.agent})
        detail["usage"] = _usage(client, detail["agent"]["id"])
    if args.output != "table" or args.quiet:
        emit(args, detail["agent"] if args.quiet else detail)
        return 0
    agent: dict[str, Any] = detail["agent"]
    config = agent.get("config") or {}
    runtime = agent.get("runtimeInfo") or {}
    pending = detail.get("pendingPermissions") or []
    timeline = detail.get("timeline") or {}
    row = {
        "id": agent["id"],
        "title": agent.get("title"),
        "provider": agent["provider"],
        "status": agent["lastStatus"],
        "live process": detail.get("live"),
        "model": runtime.get("model") or config.get("model"),
        "mode": runtime.get("modeId") or config.get("modeId") or agent.get("lastModeId"),
        "thinking": runtime.get("thinkingOptionId") or config.get("thinkingOptionId"),
        "session": runtime.get("sessionId") or (agent.get("persistence") or {}).get("sessionId"),
        "cwd": agent["cwd"],
        "workspace": agent.get("workspaceId"),
        "labels": agent.get("labels"),
        "created": agent.get("createdAt"),
        "last activity": ago(agent.get("lastActivityAt")),
        "last prompt": ago(agent.get("lastUserMessageAt")),
        "attention": agent.get("attentionReason") if agent.get("requiresAttention") else None,
        "last error": agent.get("lastError"),
        "archived": agent.get("archivedAt"),
        "timeline": f"{timeline.get('epoch')}:{timeline.get('seq')}" if timeline else None,
        "pending permissions": [f"{p['id']} {p['title']}" for p in pending] or None,
        "usage": _usage_line(detail.get("usage")),
    }
    emit(args, row)
    return 0
