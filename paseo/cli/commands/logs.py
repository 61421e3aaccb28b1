"""``paseo logs``: an agent's timeline, readable or as JSON lines; ``-f`` keeps following."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from paseo.cli.commands._agentcli import (
    FILTERS,
    Follower,
    Renderer,
    add_host,
    connect,
    dumps,
    matches,
)
from paseo.cli.errors import CliError


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("agent", metavar="ID", help="agent id, id prefix or title")
    parser.add_argument("-f", "--follow", action="store_true", help="keep showing new events")
    parser.add_argument("--tail", type=int, help="only the last N entries")
    parser.add_argument("--filter", choices=sorted(FILTERS), help="only these events")
    add_host(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    with connect(args) as client:
        agent = client.call("agent.get", {"agentId": args.agent})["agent"]
        renderer = Renderer(sys.stdout, color=sys.stdout.isatty(), agent=agent["id"][:8])
        structured = args.output != "table"

        def show(entry: dict[str, Any]) -> None:
            if not matches(entry.get("event") or {}, args.filter):
                return
            if structured:
                sys.stdout.write(dumps(entry) + "\n")
                sys.stdout.flush()
            else:
                renderer.entry(entry)

        follower = Follower(client, agent["id"])
        for entry in follower.history(args.tail):
            show(entry)
        ended = follower.follow(show) if args.follow else "done"
        renderer.close()
    if ended == "lost":
        raise CliError("the connection to the daemon was lost")
    return 0
