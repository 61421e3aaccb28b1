"""How the ``project``, ``workspace``, ``worktree`` and ``label`` adapters reach their service.

Each group function takes the :class:`~paseo.services.ServiceRef` the composition root binds to
the :class:`~paseo.workspaces.service.WorkspacesService`; a handler receives the service's
:class:`~paseo.workspaces.service.Placement` first. An unbound ref (the protocol schema
generator's) answers ``unavailable``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeAlias

from paseo_hookspecs.registration import RpcMethod
from pydantic import BaseModel

from paseo.services import ServiceRef
from paseo.workspaces.common import owner_method

if TYPE_CHECKING:
    from paseo_hookspecs.context import RpcContext

    from paseo.workspaces.service import Placement, WorkspacesService

WorkspacesRef: TypeAlias = ServiceRef["WorkspacesService"]

PlacementHandler: TypeAlias = Callable[["Placement", "RpcContext", Any], Awaitable[Any]]


def placement_methods(
    ref: WorkspacesRef,
) -> Callable[
    [str, PlacementHandler, type[BaseModel] | None, type[BaseModel] | None, str], RpcMethod
]:
    """A maker of owner-only methods whose ``handler(placement, ctx, params)`` runs against the
    service bound to ``ref``: ``method(name, handler, params, result, summary)``."""

    def method(
        name: str,
        handler: PlacementHandler,
        params: type[BaseModel] | None,
        result: type[BaseModel] | None,
        summary: str,
    ) -> RpcMethod:
        async def call(ctx: RpcContext, value: Any) -> Any:
            return await handler(ref.get().placement, ctx, value)

        return owner_method(name, call, params, result, summary)

    return method
