"""``paseo stop``: interrupt an agent and stop its provider process (a new prompt resumes it)."""

from __future__ import annotations

import argparse
import sys

from paseo.cli.commands._agentcli import add_host, connect
from paseo.cli.errors import EXIT_USAGE, CliError
from paseo.cli.output import emit


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("agent", metavar="ID", nargs="?", help="agent id, id prefix or title")
    parser.add_argument("--all", action="store_true", help="every agent that is not closed")
    add_host(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if bool(args.agent) == bool(args.all):
        raise CliError("give an agent ID or --all", exit_code=EXIT_USAGE)
    with connect(args) as client:
        if args.all:
            listed = client.call(
                "agent.list", {"statuses": ["initializing", "idle", "running", "error"]}
            )["agents"]
            targets = [agent["id"] for agent in listed]
        else:
            targets = [args.agent]
        stopped = [client.call("agent.stop", {"agentId": ref})["agent"] for ref in targets]
    if args.output != "table" or args.quiet:
        emit(args, stopped)
    else:
        for agent in stopped:
            sys.stdout.write(f"stopped {agent['id'][:8]}\n")
    return 0
