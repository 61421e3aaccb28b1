"""``paseo stop``: interrupt agents and stop their provider processes (a new prompt resumes
them).

As in the TypeScript CLI, ``paseo stop`` is about agents. Naming none is refused as ambiguous
rather than taken to mean the daemon (it once was: a user of the other CLI expecting "stop my
agents" stopped everything); ``paseo daemon stop`` stops the daemon."""

from __future__ import annotations

import argparse
import sys

from paseo.cli.commands._agentcli import add_host, connect
from paseo.cli.commands._select import add_selection, named, require_one, selected
from paseo.cli.errors import EXIT_USAGE, CliError
from paseo.cli.output import emit

LIVE = ["initializing", "idle", "running", "error"]
"""The statuses of agents that are not closed."""


def configure(parser: argparse.ArgumentParser) -> None:
    add_selection(parser, every="every agent that is not closed")
    # Accepted only to point a user of the old alias at `paseo daemon stop`.
    for flag, takes_value in (("--timeout", True), ("--kill-timeout", True), ("--force", False)):
        if takes_value:
            parser.add_argument(flag, type=float, help=argparse.SUPPRESS)
        else:
            parser.add_argument(flag, action="store_true", help=argparse.SUPPRESS)
    add_host(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if args.timeout is not None or args.force or args.kill_timeout is not None:
        raise CliError(
            "--timeout, --force and --kill-timeout are for stopping the daemon: "
            "`paseo daemon stop`",
            exit_code=EXIT_USAGE,
        )
    if not named(args):
        raise CliError(
            "stop what? give an agent ID, --all or --cwd DIR to stop agents; "
            "`paseo daemon stop` stops the daemon",
            exit_code=EXIT_USAGE,
        )
    require_one(args)
    with connect(args) as client:
        targets = selected(client, args, LIVE)
        stopped = [client.call("agent.stop", {"agentId": ref})["agent"] for ref in targets]
    if args.output != "table" or args.quiet:
        emit(args, stopped)
    else:
        for agent in stopped:
            sys.stdout.write(f"stopped {agent['id'][:8]}\n")
    return 0
