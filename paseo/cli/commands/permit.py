"""``paseo permit``: list and answer agents' pending permission requests."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from paseo.cli.commands._agentcli import add_host, connect
from paseo.cli.errors import EXIT_USAGE, CliError
from paseo.cli.output import emit

COLUMNS = (
    ("agent", "AGENT"),
    ("requestId", "REQUEST"),
    ("kind", "KIND"),
    ("title", "TITLE"),
    ("tool", "TOOL"),
)


def configure(parser: argparse.ArgumentParser) -> None:
    subs = parser.add_subparsers(dest="subcommand", metavar="SUBCOMMAND")
    ls = subs.add_parser("ls", help="pending requests")
    ls.add_argument("agent", metavar="ID", nargs="?", help="only this agent's")
    add_host(ls)
    ls.set_defaults(run=run_ls)
    allow = subs.add_parser("allow", help="allow a request")
    _target(allow)
    allow.add_argument("--input", help="edited tool input (a JSON object)")
    allow.set_defaults(run=run_allow)
    deny = subs.add_parser("deny", help="deny a request")
    _target(deny)
    deny.add_argument("--message", help="tell the agent why")
    deny.add_argument("--interrupt", action="store_true", help="also stop the agent's turn")
    deny.set_defaults(run=run_deny)


def _target(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("agent", metavar="ID", help="agent id, id prefix or title")
    parser.add_argument("request", metavar="REQUEST", nargs="?", help="default: the only one")
    parser.add_argument("--all", action="store_true", help="every pending request of the agent")
    add_host(parser)


def run_ls(args: argparse.Namespace) -> int:
    with connect(args) as client:
        pending = client.call("agent.permissions.list", {"agentId": args.agent})["requests"]
    rows = [
        {
            "agent": entry["agentId"] if args.output != "table" else entry["agentId"][:8],
            "agentId": entry["agentId"],
            "requestId": entry["request"]["id"],
            "kind": entry["request"].get("kind"),
            "title": entry["request"].get("title"),
            "tool": entry["request"].get("toolName"),
            "input": entry["request"].get("input"),
        }
        for entry in pending
    ]
    emit(args, rows, columns=COLUMNS, id_key="requestId")
    return 0


def _answer(args: argparse.Namespace, extra: dict[str, Any]) -> int:
    with connect(args) as client:
        pending = client.call("agent.permissions.list", {"agentId": args.agent})["requests"]
        ids = [entry["request"]["id"] for entry in pending]
        if args.request:
            targets = [args.request]
        elif args.all or len(ids) == 1:
            targets = ids
        elif not ids:
            raise CliError(f"agent {args.agent} has no pending permission request")
        else:
            raise CliError(
                f"agent {args.agent} has {len(ids)} pending requests ({', '.join(ids)}); "
                "name one or use --all",
                exit_code=EXIT_USAGE,
            )
        answered = [
            client.call(
                "agent.permissions.respond",
                {"agentId": args.agent, "requestId": request, **extra},
            )
            for request in targets
        ]
    if args.output != "table" or args.quiet:
        emit(args, answered, id_key="requestId")
    else:
        for item in answered:
            done = {"allow": "allowed", "deny": "denied"}[item["behavior"]]
            sys.stdout.write(f"{done} {item['requestId']}\n")
    return 0


def run_allow(args: argparse.Namespace) -> int:
    extra: dict[str, Any] = {"behavior": "allow"}
    if args.input is not None:
        try:
            edited = json.loads(args.input)
        except ValueError as exc:
            raise CliError(f"--input is not JSON: {exc}", exit_code=EXIT_USAGE) from None
        if not isinstance(edited, dict):
            raise CliError("--input must be a JSON object", exit_code=EXIT_USAGE)
        extra["updatedInput"] = edited
    return _answer(args, extra)


def run_deny(args: argparse.Namespace) -> int:
    extra: dict[str, Any] = {"behavior": "deny", "interrupt": args.interrupt}
    if args.message:
        extra["message"] = args.message
    return _answer(args, extra)
