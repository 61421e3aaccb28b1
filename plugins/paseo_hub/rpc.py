"""The ``hub.relationship.*`` RPC group: the local surface of ``paseo hub``.

Only a trusted local, non-browser session may call these, as the server observed it
(``RpcContext.trusted_local``): remote, browser-origin and Hub sessions get ``access_denied``
whatever their hello claimed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from paseo_hookspecs.errors import AccessDenied, Unavailable
from paseo_hookspecs.registration import RpcMethod, RpcMethodGroup
from pydantic import BaseModel, ConfigDict, Field

from paseo_hub.service import HubStatus

if TYPE_CHECKING:
    from paseo_hookspecs.agents import Subscription
    from paseo_hookspecs.context import RpcContext

    from paseo_hub.service import HubService

LOCAL = frozenset({"local"})


class ConnectParams(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    url: str = Field(min_length=1, max_length=2000, description="the Hub's http(s) origin")
    token: str = Field(min_length=1, max_length=2000, description="a one-time enrollment token")


class DisconnectParams(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    force: bool = Field(
        default=False, description="drop local authority now, even if the Hub cannot be told"
    )


def trusted_local(ctx: RpcContext) -> bool:
    """Whether the kernel vouches that ``ctx`` is a person at this machine's terminal. A
    context that does not say (not one the RPC server made) is not trusted."""
    return ctx.session_kind == "local" and getattr(ctx, "trusted_local", False) is True


class Runtime:
    """The running service and the pre-approval subscription, set by ``paseo_startup``."""

    def __init__(self) -> None:
        self.service: HubService | None = None
        self.preapproval: Subscription | None = None

    def require(self, ctx: RpcContext) -> HubService:
        if not trusted_local(ctx):
            raise AccessDenied("only a local, non-browser session may manage the Hub relationship")
        service = self.service
        if service is None:
            raise Unavailable("the Hub relationship service is not running")
        return service


def method_group(runtime: Runtime) -> RpcMethodGroup:
    async def connect(ctx: RpcContext, params: Any) -> HubStatus:
        return await runtime.require(ctx).connect(params.url, params.token)

    async def get_status(ctx: RpcContext, params: Any) -> HubStatus:
        return runtime.require(ctx).status()

    async def disconnect(ctx: RpcContext, params: Any) -> HubStatus:
        return await runtime.require(ctx).disconnect(force=params.force)

    return RpcMethodGroup(
        area="hub.relationship",
        methods=[
            RpcMethod(
                "hub.relationship.connect",
                connect,
                ConnectParams,
                HubStatus,
                "Enroll this daemon with a Paseo Hub and keep a socket to it",
                LOCAL,
            ),
            RpcMethod(
                "hub.relationship.get_status",
                get_status,
                None,
                HubStatus,
                "The Hub relationship's state",
                LOCAL,
            ),
            RpcMethod(
                "hub.relationship.disconnect",
                disconnect,
                DisconnectParams,
                HubStatus,
                "Revoke the relationship on the Hub, then forget it",
                LOCAL,
            ),
        ],
    )
