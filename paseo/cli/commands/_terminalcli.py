"""What the terminal commands share: the connection and naming terminals by id prefix."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from paseo.cli.errors import EXIT_USAGE, CliError

if TYPE_CHECKING:
    from paseo.client.client import PaseoClient
    from paseo.client.sync import SyncClient


def connect(args: argparse.Namespace) -> SyncClient:
    from paseo.cli.context import home_layout
    from paseo.client.sync import SyncClient

    return SyncClient(
        getattr(args, "host", None),
        home=home_layout(args).root,
        client_type="cli",
        reconnect=False,
    )


def match_terminal(terminals: list[dict[str, Any]], name: str) -> str:
    """The full id of the terminal ``name`` (an id or a unique prefix) among ``terminals``."""
    ids = [str(t["terminalId"]) for t in terminals]
    if name in ids:
        return name
    matches = [i for i in ids if i.startswith(name)]
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise CliError(f"no terminal {name!r}")
    raise CliError(f"terminal prefix {name!r} is ambiguous", exit_code=EXIT_USAGE)


def resolve(client: SyncClient, name: str) -> str:
    return match_terminal(client.call("terminal.list", {})["terminals"], name)


async def resolve_async(client: PaseoClient, name: str) -> str:
    return match_terminal((await client.call("terminal.list", {}))["terminals"], name)
