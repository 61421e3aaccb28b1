"""``paseo wait``: wait until an agent is idle, needs permission, fails, or a timeout."""

from __future__ import annotations

import argparse

from paseo.cli.commands._agentcli import (
    EXIT_CODES_HELP,
    add_host,
    connect,
    parse_duration,
    report_outcome,
    wait_agent,
)


def configure(parser: argparse.ArgumentParser) -> None:
    parser.epilog = EXIT_CODES_HELP
    parser.add_argument("agent", metavar="ID", help="agent id, id prefix or title")
    parser.add_argument("--timeout", type=parse_duration, help="give up after this (30s, 5m)")
    add_host(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    with connect(args) as client:
        agent = client.call("agent.get", {"agentId": args.agent})["agent"]
        result = wait_agent(client, agent["id"], args.timeout)
    # As `run` and `send` do: the reply is what the wait was for.
    return report_outcome(args, result, reply=True)
