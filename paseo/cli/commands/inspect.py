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


def run(args: argparse.Namespace) -> int:
    with connect(args) as client:
        detail = client.call("agent.get", {"agentId": args.agent})
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
    }
    emit(args, row)
    return 0
