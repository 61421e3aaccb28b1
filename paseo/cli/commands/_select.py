"""Which agents a command acts on: one ``ID``, ``--all``, or every agent of ``--cwd DIR``."""

from __future__ import annotations

import argparse
import os
from typing import TYPE_CHECKING

from paseo.cli.errors import EXIT_USAGE, CliError

if TYPE_CHECKING:
    from paseo.client.sync import SyncClient


def add_selection(parser: argparse.ArgumentParser, *, every: str) -> None:
    """``ID``, ``--all`` (``every`` says which agents that is) and ``--cwd DIR``."""
    parser.add_argument("agent", metavar="ID", nargs="?", help="agent id, id prefix or title")
    parser.add_argument("--all", action="store_true", help=every)
    parser.add_argument(
        "--cwd", metavar="DIR", help="every agent working in DIR (exactly that directory)"
    )


def named(args: argparse.Namespace) -> bool:
    """Whether the command line names any agent at all."""
    return bool(args.agent or args.all or args.cwd)


def require_one(args: argparse.Namespace) -> None:
    """A usage error unless exactly one of ``ID``, ``--all`` and ``--cwd`` is given (checked
    before connecting: a wrong command line is wrong whether or not the daemon runs)."""
    if sum(1 for value in (args.agent, args.all, args.cwd) if value) != 1:
        raise CliError("give an agent ID, --all or --cwd DIR (exactly one)", exit_code=EXIT_USAGE)


def selected(
    client: SyncClient, args: argparse.Namespace, statuses: list[str] | None = None
) -> list[str]:
    """The agent references the command line selects (``statuses`` bounds ``--all`` and
    ``--cwd``); see :func:`require_one`."""
    require_one(args)
    if args.agent:
        return [str(args.agent)]
    params = {"statuses": statuses} if statuses is not None else {}
    agents = client.call("agent.list", params)["agents"]
    if args.cwd:
        where = os.path.normpath(os.path.abspath(args.cwd))
        agents = [agent for agent in agents if os.path.normpath(agent["cwd"]) == where]
    return [str(agent["id"]) for agent in agents]
