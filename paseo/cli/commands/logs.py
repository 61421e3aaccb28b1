"""``paseo logs``: an agent's timeline, readable or as JSON lines; ``-f`` keeps following."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Mapping
from typing import Any

from paseo.cli.commands._agentcli import (
    FILTERS,
    Follower,
    Renderer,
    add_host,
    connect,
    entry_writer,
    matches,
)
from paseo.cli.errors import CliError


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("agent", metavar="ID", help="agent id, id prefix or title")
    parser.add_argument("-f", "--follow", action="store_true", help="keep showing new events")
    parser.add_argument(
        "--tail", type=int, help="only the last N entries (for -o table: the last N shown)"
    )
    parser.add_argument("--filter", choices=sorted(FILTERS), help="only these events")
    add_host(parser)
    parser.set_defaults(run=run)


def _filtered_unit(name: str | None) -> Callable[[Mapping[str, Any]], str | None]:
    def unit(event: Mapping[str, Any]) -> str | None:
        return Renderer.unit(event) if matches(event, name) else None

    return unit


def run(args: argparse.Namespace) -> int:
    with connect(args) as client:
        agent = client.call("agent.get", {"agentId": args.agent})["agent"]
        renderer = Renderer(sys.stdout, color=sys.stdout.isatty(), agent=agent["id"][:8])
        write = entry_writer(args, renderer)

        def show(entry: dict[str, Any]) -> None:
            if matches(entry.get("event") or {}, args.filter):
                write(entry)

        follower = Follower(client, agent["id"])
        # A readable tail counts what it shows; structured output counts stored entries.
        unit = _filtered_unit(args.filter) if args.output == "table" else None
        for entry in follower.history(args.tail, unit=unit):
            show(entry)
        ended = follower.follow(show) if args.follow else "done"
        renderer.close()
    if ended == "lost":
        raise CliError("the connection to the daemon was lost")
    return 0
