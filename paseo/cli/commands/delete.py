"""``paseo delete``: stop an agent and delete it with its timeline."""

from __future__ import annotations

import argparse
import sys

from paseo.cli.commands._agentcli import add_host, connect
from paseo.cli.output import emit


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("agent", metavar="ID", help="agent id, id prefix or title")
    add_host(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    with connect(args) as client:
        result = client.call("agent.delete", {"agentId": args.agent})
    if args.output != "table" or args.quiet:
        emit(args, {"id": result["agentId"], "deleted": True})
    else:
        sys.stdout.write(f"deleted {result['agentId'][:8]}\n")
    return 0
