"""``paseo usage [--since 7d|DATE] [--until …] [--by GROUP] [--agent ID]``: what agents spent.

Totals per group (turns, tokens, USD), most expensive first. Cost is what the providers
reported; a group none of whose turns reported one shows ``?`` (never an estimate), and a
footnote counts the turns whose cost is unknown.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from paseo.cli.output import emit

GROUPS = ("agent", "provider", "model", "project", "schedule", "day")

COLUMNS = [
    ("key", "GROUP"),
    ("turns", "TURNS"),
    ("inputTokens", "INPUT"),
    ("outputTokens", "OUTPUT"),
    ("cacheReadTokens", "CACHE READ"),
    ("cacheWriteTokens", "CACHE WRITE"),
    ("costUsd", "COST USD"),
]


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--since",
        metavar="WHEN",
        help="start of the window: a duration back from now (30m, 12h, 7d, 2w), a date "
        "(2026-11-30) or an ISO 8601 instant (default: everything recorded)",
    )
    parser.add_argument("--until", metavar="WHEN", help="end of the window (same forms)")
    parser.add_argument(
        "--by", choices=GROUPS, default="agent", help="what to total by (default: agent)"
    )
    parser.add_argument("--agent", metavar="ID", help="only this agent (id, id prefix or title)")
    parser.add_argument("--host", help="daemon address (default: this home's)")
    parser.set_defaults(run=run)


def _cell(value: Any) -> str:
    if value is None:
        return "?"
    if isinstance(value, float):
        return f"{value:.4f}"
    return str(value)


def _row(group: dict[str, Any], by: str) -> dict[str, Any]:
    key = group.get("key")
    if key is None:
        key = "(none)" if by != "schedule" else "(by hand)"
    elif by == "agent":
        key = key[:8]
    return {name: _cell(group.get(name)) for name, _ in COLUMNS} | {"key": key}


def run(args: argparse.Namespace) -> int:
    from paseo.cli.commands.project import call_daemon

    params = {"since": args.since, "until": args.until, "by": args.by, "agentId": args.agent}
    result = call_daemon(args, "usage.query", {k: v for k, v in params.items() if v is not None})
    if args.output in ("json", "yaml"):
        emit(args, result)
        return 0
    groups = result["groups"]
    if args.quiet:
        emit(args, [{"id": g["key"]} for g in groups if g.get("key")])
        return 0
    if not groups:
        sys.stdout.write("no usage recorded in this window\n")
        return 0
    rows = [_row(group, args.by) for group in groups]
    rows.append(_row(result["total"], args.by) | {"key": "TOTAL"})
    emit(args, rows, columns=COLUMNS)
    unknown = result["total"].get("costUnknownTurns") or 0
    if unknown:
        sys.stderr.write(
            f"{unknown} turn(s) have no cost: their provider did not report one "
            "(? = unknown, never estimated)\n"
        )
    return 0
