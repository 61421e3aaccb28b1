"""``paseo archive``: hide an idle agent from `paseo ls` (a new prompt restores it); a running
agent is archived only with ``--force``, which stops it first."""

from __future__ import annotations

import argparse
import sys

from paseo.cli.commands._agentcli import add_host, connect
from paseo.cli.errors import CliError
from paseo.cli.output import emit

BUSY = ("running", "initializing")
"""Statuses of an agent at work: archiving one would cut its run short."""


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("agent", metavar="ID", help="agent id, id prefix or title")
    parser.add_argument("--restore", action="store_true", help="un-archive instead")
    parser.add_argument(
        "--force", action="store_true", help="archive a running agent too (it is stopped first)"
    )
    add_host(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    with connect(args) as client:
        if args.restore:
            agent = client.call("agent.restore", {"agentId": args.agent})["agent"]
        else:
            current = client.call("agent.get", {"agentId": args.agent})["agent"]
            if current["lastStatus"] in BUSY and not args.force:
                raise CliError(
                    f"agent {current['id'][:8]} is {current['lastStatus']}; stop it first "
                    f"(`paseo stop {current['id'][:8]}`) or archive it anyway with --force"
                )
            if current["lastStatus"] in BUSY:
                client.call("agent.stop", {"agentId": current["id"]})
            agent = client.call("agent.archive", {"agentId": current["id"]})["agent"]
    if args.output != "table" or args.quiet:
        emit(args, agent)
    else:
        done = "restored" if args.restore else "archived"
        sys.stdout.write(f"{done} {agent['id'][:8]}\n")
    return 0
