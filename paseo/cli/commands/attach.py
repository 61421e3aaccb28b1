"""``paseo attach``: show an agent's recent timeline, then its live events."""

from __future__ import annotations

import argparse
import sys

from paseo.cli.commands._agentcli import (
    RECONNECTS,
    Follower,
    Renderer,
    add_host,
    connect,
    entry_writer,
)
from paseo.cli.errors import CliError


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("agent", metavar="ID", help="agent id, id prefix or title")
    parser.add_argument(
        "--tail", type=int, default=20, help="earlier items to show first (default 20)"
    )
    add_host(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    with connect(args, follow=True) as client:
        agent = client.call("agent.get", {"agentId": args.agent})["agent"]
        renderer = Renderer(sys.stdout, color=sys.stdout.isatty(), agent=agent["id"][:8])
        write = entry_writer(args, renderer)
        follower = Follower(client, agent["id"])
        unit = Renderer.unit if args.output == "table" else None
        for entry in follower.history(args.tail, unit=unit):
            write(entry)
        sys.stdout.flush()
        ended = follower.follow(write)
        renderer.close()
    if ended == "lost":
        raise CliError(
            "the connection to the daemon was lost and did not come back "
            f"({RECONNECTS} reconnect attempts); is it running? (`paseo daemon status`)"
        )
    sys.stderr.write(f"paseo: agent {agent['id'][:8]} was deleted\n")
    return 0
