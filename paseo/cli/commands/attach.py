"""``paseo attach``: show an agent's recent timeline, then its live events."""

from __future__ import annotations

import argparse
import sys

from paseo.cli.commands._agentcli import Follower, Renderer, add_host, connect
from paseo.cli.errors import CliError


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("agent", metavar="ID", help="agent id, id prefix or title")
    parser.add_argument("--tail", type=int, default=20, help="earlier entries to show first")
    add_host(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    with connect(args) as client:
        agent = client.call("agent.get", {"agentId": args.agent})["agent"]
        renderer = Renderer(sys.stdout, color=sys.stdout.isatty(), agent=agent["id"][:8])
        follower = Follower(client, agent["id"])
        for entry in follower.history(args.tail):
            renderer.entry(entry)
        sys.stdout.flush()
        ended = follower.follow(renderer.entry)
        renderer.close()
    if ended == "lost":
        raise CliError("the connection to the daemon was lost")
    sys.stderr.write(f"paseo: agent {agent['id'][:8]} was deleted\n")
    return 0
