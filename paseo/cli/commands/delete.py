"""``paseo delete``: stop agents and move them to the trash with their timelines (one ``ID``,
``--all`` or every agent of ``--cwd DIR``), each through ``agent.delete`` (``paseo trash``
restores them)."""

from __future__ import annotations

import argparse
import sys

from paseo.cli.commands._agentcli import add_host, connect
from paseo.cli.commands._select import add_selection, require_one, selected
from paseo.cli.output import emit


def configure(parser: argparse.ArgumentParser) -> None:
    add_selection(parser, every="every agent `paseo ls` lists (archived ones stay)")
    add_host(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    require_one(args)
    with connect(args) as client:
        targets = selected(client, args)
        deleted = [client.call("agent.delete", {"agentId": ref})["agentId"] for ref in targets]
    if args.output != "table" or args.quiet:
        rows = [{"id": agent_id, "deleted": True} for agent_id in deleted]
        emit(args, rows[0] if args.agent and rows else rows)
    else:
        for agent_id in deleted:
            sys.stdout.write(f"deleted {agent_id[:8]}\n")
        if not deleted:
            sys.stderr.write("paseo: no agent matched; nothing deleted\n")
    return 0
