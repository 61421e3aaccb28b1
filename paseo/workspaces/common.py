"""What the placement RPC adapters share: the ``workspaces`` stream and owner-only methods."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from paseo_hookspecs.registration import RpcMethod
from pydantic import BaseModel

STREAM = "workspaces"
"""The notification stream of projects, workspaces, worktrees and labels."""


def owner_method(
    name: str,
    handler: Callable[[Any, Any], Awaitable[Any]],
    params: type[BaseModel] | None,
    result: type[BaseModel] | None,
    summary: str,
) -> RpcMethod:
    """An RPC method open to local and remote (not hub) sessions."""
    return RpcMethod(name, handler, params, result, summary=summary, access=OWNER)


OWNER = frozenset({"local", "remote"})
