"""``paseo trash ls | restore ID | empty --yes``: deleted agents, kept restorable.

``paseo delete`` moves an agent to the trash: it leaves every listing but keeps its record,
timeline and conversation handle for ``agents.trashRetentionDays`` (15 or 30, default 30), after
which the daemon purges it while no agent is working. ``restore`` brings one back (its next
prompt resumes the conversation); ``empty`` removes them for good now.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from paseo.cli.errors import EXIT_USAGE, CliError
from paseo.cli.output import emit

COLUMNS = [
    ("id", "ID"),
    ("title", "TITLE"),
    ("provider", "PROVIDER"),
    ("cwd", "CWD"),
    ("deletedAt", "DELETED"),
    ("purgeAfter", "PURGE AFTER"),
]


def configure(parser: argparse.ArgumentParser) -> None:
    subs = parser.add_subparsers(dest="subcommand", metavar="SUBCOMMAND")
    ls = subs.add_parser("ls", help="deleted agents, most recent first")
    ls.set_defaults(run=run_ls)
    restore = subs.add_parser("restore", help="bring a deleted agent back with its history")
    restore.add_argument("agent", metavar="ID", help="agent id, id prefix or title")
    restore.set_defaults(run=run_restore)
    empty = subs.add_parser("empty", help="remove deleted agents for good, now")
    empty.add_argument("agents", metavar="ID", nargs="*", help="only these (default: all)")
    empty.add_argument("--yes", action="store_true", help="confirm: this cannot be undone")
    empty.set_defaults(run=run_empty)
    for sub in (ls, restore, empty):
        sub.add_argument("--host", help="daemon address (default: this home's)")


def _call(args: argparse.Namespace, method: str, params: dict[str, Any] | None = None) -> Any:
    from paseo.cli.commands.project import call_daemon

    return call_daemon(args, method, params)


def _row(entry: dict[str, Any]) -> dict[str, Any]:
    agent = entry["agent"]
    return {
        "id": agent["id"],
        "title": agent.get("title"),
        "provider": agent.get("provider"),
        "cwd": agent.get("cwd"),
        "deletedAt": agent.get("deletedAt"),
        "purgeAfter": entry["purgeAfter"],
    }


def run_ls(args: argparse.Namespace) -> int:
    result = _call(args, "trash.list")
    if getattr(args, "output", "table") in ("json", "yaml"):
        emit(args, result)
        return 0
    rows = [_row(entry) for entry in result["agents"]]
    if getattr(args, "quiet", False):
        emit(args, rows)
        return 0
    if rows:
        emit(args, [{**row, "id": row["id"][:8]} for row in rows], columns=COLUMNS)
    else:
        days = result["retentionDays"]
        sys.stdout.write(f"the trash is empty (deleted agents stay {days} days)\n")
    failing = [item for item in result["cleanup"] if item["attempts"]]
    for item in failing:
        sys.stderr.write(
            f"cleanup of purged agent {item['agentId'][:8]} failed {item['attempts']} time(s), "
            f"retried while agents are idle: {item.get('lastError')}\n"
        )
    return 0


def run_restore(args: argparse.Namespace) -> int:
    agent = _call(args, "trash.restore", {"agentId": args.agent})["agent"]
    if args.output != "table" or args.quiet:
        emit(args, agent)
    else:
        short = agent["id"][:8]
        sys.stdout.write(f"restored {short}: `paseo send {short} ...` resumes it\n")
    return 0


def run_empty(args: argparse.Namespace) -> int:
    if not args.yes:
        what = f"{len(args.agents)} agent(s)" if args.agents else "every agent in the trash"
        raise CliError(
            f"this removes {what} for good (record, timeline, conversation handle); "
            "run again with --yes to confirm, or see `paseo trash ls` first",
            exit_code=EXIT_USAGE,
        )
    result = _call(args, "trash.empty", {"agentIds": args.agents or None})
    if args.quiet:
        emit(args, [{"id": agent_id} for agent_id in result["purged"]])
        return 0
    if args.output != "table":
        emit(args, result)
        return 0
    sys.stdout.write(f"removed {len(result['purged'])} agent(s) for good\n")
    if result["failed"]:
        sys.stderr.write(
            f"{result['failed']} cleanup item(s) failed and stay queued; "
            "`paseo trash ls` shows why\n"
        )
    return 0
