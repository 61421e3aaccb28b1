"""``paseo logs``: an agent's timeline, readable or as JSON lines; ``-f`` keeps following.

``--since`` drops older entries; with ``--tail N`` it is the last N of those (timestamps grow
with the timeline, so taking the last N first and then dropping the older ones is the same).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

from paseo.cli.commands._agentcli import (
    FILTERS,
    Follower,
    Renderer,
    add_host,
    connect,
    entry_writer,
    matches,
    parse_duration,
)
from paseo.cli.errors import CliError


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("agent", metavar="ID", help="agent id, id prefix or title")
    parser.add_argument("-f", "--follow", action="store_true", help="keep showing new events")
    parser.add_argument(
        "--tail", type=int, help="only the last N entries (for -o table: the last N shown)"
    )
    parser.add_argument("--filter", choices=sorted(FILTERS), help="only these events")
    parser.add_argument(
        "--since",
        type=parse_since,
        metavar="WHEN",
        help="only entries from then on: a duration ago (30s, 5m, 2h) or an ISO 8601 time",
    )
    add_host(parser)
    parser.set_defaults(run=run)


def parse_since(text: str) -> datetime:
    """``--since``: a duration before now, or an ISO 8601 time (local time when it names no
    offset)."""
    try:
        return datetime.now(UTC) - timedelta(seconds=parse_duration(text))
    except argparse.ArgumentTypeError:
        pass
    try:
        when = datetime.fromisoformat(text.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"not a duration or a time: {text!r} (e.g. 10m, 2h, 2026-05-01T09:30)"
        ) from None
    return when if when.tzinfo is not None else when.astimezone()


def _stamp(entry: Mapping[str, Any]) -> datetime:
    when = datetime.fromisoformat(str(entry["timestamp"]))
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)


def _filtered_unit(name: str | None) -> Callable[[Mapping[str, Any]], str | None]:
    def unit(event: Mapping[str, Any]) -> str | None:
        return Renderer.unit(event) if matches(event, name) else None

    return unit


def run(args: argparse.Namespace) -> int:
    with connect(args, follow=args.follow) as client:
        agent = client.call("agent.get", {"agentId": args.agent})["agent"]
        renderer = Renderer(sys.stdout, color=sys.stdout.isatty(), agent=agent["id"][:8])
        write = entry_writer(args, renderer)

        def show(entry: dict[str, Any]) -> None:
            if args.since is not None and _stamp(entry) < args.since:
                return
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
        raise CliError(
            "the connection to the daemon was lost and did not come back; is it running? "
            "(`paseo daemon status`)"
        )
    return 0
