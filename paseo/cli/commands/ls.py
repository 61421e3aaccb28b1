"""``paseo ls``: list agents."""

from __future__ import annotations

import argparse

from paseo.cli.commands._agentcli import add_host, ago, connect, parse_labels
from paseo.cli.output import emit

COLUMNS = (
    ("short", "ID"),
    ("title", "TITLE"),
    ("provider", "PROVIDER"),
    ("status", "STATUS"),
    ("attention", "ATTENTION"),
    ("activity", "ACTIVITY"),
    ("cwd", "CWD"),
)


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-a", "--all", action="store_true", help="include archived agents")
    parser.add_argument("--label", action="append", metavar="K=V", help="only with this label")
    add_host(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    with connect(args) as client:
        agents = client.call(
            "agent.list", {"includeArchived": args.all, "labels": parse_labels(args.label)}
        )["agents"]
    if args.output != "table" or args.quiet:
        emit(args, agents)
        return 0
    rows = [
        {
            "short": agent["id"][:8],
            "title": agent.get("title"),
            "provider": agent["provider"],
            "status": agent["lastStatus"] + (" (archived)" if agent.get("archivedAt") else ""),
            "attention": agent.get("attentionReason") if agent.get("requiresAttention") else None,
            "activity": ago(agent.get("lastActivityAt")),
            "cwd": agent["cwd"],
        }
        for agent in agents
    ]
    emit(args, rows, columns=COLUMNS)
    return 0
