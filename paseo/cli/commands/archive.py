"""``paseo archive``: stop an agent and hide it from `paseo ls` (a new prompt restores it)."""

from __future__ import annotations

import argparse
import sys

from paseo.cli.commands._agentcli import add_host, connect
from paseo.cli.output import emit


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("agent", metavar="ID", help="agent id, id prefix or title")
    parser.add_argument("--restore", action="store_true", help="un-archive instead")
    add_host(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    method = "agent.restore" if args.restore else "agent.archive"
    with connect(args) as client:
        agent = client.call(method, {"agentId": args.agent})["agent"]
    if args.output != "table" or args.quiet:
        emit(args, agent)
    else:
        done = "restored" if args.restore else "archived"
        sys.stdout.write(f"{done} {agent['id'][:8]}\n")
    return 0
