"""``paseo ls``: list agents, newest first, page by page.

The answer is fetched and written one ``agent.list`` page at a time (a JSON array written
incrementally, JSON lines, YAML or table rows), so neither the daemon nor the CLI ever holds
every agent. Without ``--all`` it shows the most recent :data:`DEFAULT_LIMIT` and says on
stderr how many more there are.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, TextIO

from paseo.cli.commands._agentcli import add_host, ago, connect_light, parse_labels
from paseo.cli.errors import EXIT_USAGE, CliError
from paseo.cli.output import dump_yaml, render_table

if TYPE_CHECKING:
    from paseo.client.light import LightClient

COLUMNS = (
    ("short", "ID"),
    ("title", "TITLE"),
    ("provider", "PROVIDER"),
    ("status", "STATUS"),
    ("attention", "ATTENTION"),
    ("activity", "ACTIVITY"),
    ("cwd", "CWD"),
)
DEFAULT_LIMIT = 20
PAGE = 500
"""Agents per ``agent.list`` call: big enough to keep round trips few, small enough that a
page is a few hundred KB on either side."""


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "-a", "--all", action="store_true", help="every agent, archived ones included"
    )
    parser.add_argument(
        "--limit",
        type=int,
        metavar="N",
        help=f"the most recent N agents (default {DEFAULT_LIMIT}; 0: no limit)",
    )
    parser.add_argument("--jsonl", action="store_true", help="one JSON object per line")
    parser.add_argument("--label", action="append", metavar="K=V", help="only with this label")
    add_host(parser)
    parser.set_defaults(run=run)


def _pages(
    client: LightClient, params: dict[str, Any], limit: int | None
) -> Iterator[tuple[list[dict[str, Any]], int | None, bool]]:
    """Each page's agents, with the matching total on the first, and whether the daemon said
    the page may be incomplete (its agent index still being checked after a start)."""
    cursor: str | None = None
    left = limit
    while True:
        size = PAGE if left is None else min(PAGE, left)
        result = client.call("agent.list", {**params, "limit": size, "cursor": cursor})
        agents: list[dict[str, Any]] = result["agents"]
        yield agents, result.get("total"), bool(result.get("partial"))
        if left is not None:
            left -= len(agents)
        cursor = result.get("nextCursor")
        if cursor is None or left == 0:
            return


def _row(agent: dict[str, Any]) -> dict[str, Any]:
    return {
        "short": agent["id"][:8],
        "title": agent.get("title"),
        "provider": agent["provider"],
        "status": agent["lastStatus"] + (" (archived)" if agent.get("archivedAt") else ""),
        "attention": agent.get("attentionReason") if agent.get("requiresAttention") else None,
        "activity": ago(agent.get("lastActivityAt")),
        "cwd": agent["cwd"],
    }


class _Writer:
    """Writes pages in the chosen format as they arrive."""

    def __init__(self, args: argparse.Namespace, out: TextIO) -> None:
        self.out = out
        self.fmt = "jsonl" if args.jsonl else args.output
        self.quiet = bool(args.quiet) and self.fmt == "table"
        self.headers = not getattr(args, "no_headers", False)
        self.written = 0

    def page(self, agents: list[dict[str, Any]]) -> None:
        out = self.out
        if self.quiet:
            out.writelines(f"{agent['id']}\n" for agent in agents)
        elif self.fmt == "jsonl":
            out.writelines(json.dumps(a, ensure_ascii=False) + "\n" for a in agents)
        elif self.fmt == "json":
            # The array is opened by its first element and closed by close(): valid JSON
            # however many pages it spans.
            for index, agent in enumerate(agents, start=self.written):
                text = json.dumps(agent, indent=2, ensure_ascii=False).replace("\n", "\n  ")
                out.write(("[\n  " if not index else ",\n  ") + text)
        elif self.fmt == "yaml":
            if agents:
                out.write(dump_yaml(agents))
        else:
            out.write(
                render_table(
                    [_row(a) for a in agents], COLUMNS, headers=self.headers and not self.written
                )
            )
        self.written += len(agents)
        out.flush()

    def close(self) -> None:
        if self.fmt == "json":
            self.out.write("\n]\n" if self.written else "[]\n")
        elif self.fmt == "yaml" and not self.written:
            self.out.write("[]\n")


def run(args: argparse.Namespace) -> int:
    if args.limit is not None and args.limit < 0:
        raise CliError("--limit takes a count of agents (0: no limit)", exit_code=EXIT_USAGE)
    limit = args.limit if args.limit is not None else (0 if args.all else DEFAULT_LIMIT)
    params = {
        "includeArchived": args.all,
        "labels": parse_labels(args.label),
        "newestFirst": True,
    }
    writer = _Writer(args, sys.stdout)
    total: int | None = None
    partial = False
    with connect_light(args) as client:
        for agents, page_total, page_partial in _pages(client, params, limit or None):
            total = page_total if total is None else total
            partial = partial or page_partial
            writer.page(agents)
    writer.close()
    if partial:
        sys.stderr.write(
            "partial listing: the daemon has just started and is still checking its agent "
            "index against the records; run `paseo ls` again in a moment for every agent\n"
        )
    shown = writer.written
    if total is not None and total > shown:
        sys.stderr.write(
            f"{total - shown} more agent{'s' if total - shown != 1 else ''} not shown "
            f"(showing the {shown} most recent): use --limit N or --all to see them\n"
        )
    return 0
