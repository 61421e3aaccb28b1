"""``paseo import``: adopt a conversation started outside Paseo (a Claude Code session, a Codex
thread, an ACP agent's session) as an agent; its timeline is filled from the program's history,
and ``paseo send`` continues it."""

from __future__ import annotations

import argparse
import os
import sys

from paseo.cli.commands._agentcli import add_host, connect, parse_labels
from paseo.cli.output import emit

IMPORT_TIMEOUT = 180.0
"""Seconds the daemon may take to resume the conversation and read its history."""


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("session", metavar="SESSION_ID", help="the program's conversation id")
    parser.add_argument(
        "--provider", required=True, help="the provider that holds it (claude, codex, an ACP id)"
    )
    parser.add_argument("--cwd", help="directory the conversation ran in (default: here)")
    parser.add_argument("--title", help="a name for the agent")
    parser.add_argument("--label", action="append", metavar="K=V", help="label (repeatable)")
    add_host(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    params = {
        "provider": args.provider,
        "sessionId": args.session,
        "cwd": os.path.abspath(args.cwd or os.getcwd()),
        "labels": parse_labels(args.label),
    }
    if args.title:
        params["title"] = args.title
    with connect(args) as client:
        agent = client.call("agent.import", params, timeout=IMPORT_TIMEOUT)["agent"]
    if args.output != "table" or args.quiet:
        emit(args, agent)
    else:
        sys.stdout.write(f"{agent['id']}\n")
        sys.stderr.write(
            f"paseo: imported {args.provider} conversation {args.session} as agent "
            f"{agent['id'][:8]}; read it with `paseo logs {agent['id'][:8]}`\n"
        )
    return 0
