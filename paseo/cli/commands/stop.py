"""``paseo stop``: interrupt agents and stop their provider processes (a new prompt resumes
them); ``paseo stop`` naming no agent stops the daemon, as ``paseo daemon stop`` does."""

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
    daemon = parser.add_argument_group("with no ID, --all or --cwd: stop the daemon")
    daemon.add_argument(
        "--timeout", type=float, help="seconds to wait for a graceful exit (default 15)"
    )
    daemon.add_argument(
        "--force", action="store_true", help="kill the daemon's process group if it hangs"
    )
    daemon.add_argument(
        "--kill-timeout", type=float, help="seconds to wait after the kill (default 3)"
    )
    add_host(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    daemon_flags = args.timeout is not None or args.force or args.kill_timeout is not None
    # Only the top-level `paseo stop` is the daemon's alias; `paseo agent stop` always means agents.
    if not named(args) and getattr(args, "command", None) == "stop":
        from paseo.cli.commands import daemon

        args.timeout = 15.0 if args.timeout is None else args.timeout
        args.kill_timeout = 3.0 if args.kill_timeout is None else args.kill_timeout
        return daemon.run_stop(args)
    if daemon_flags:
        raise CliError(
            "--timeout, --force and --kill-timeout are for stopping the daemon: `paseo stop` "
            "naming no agent",
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
