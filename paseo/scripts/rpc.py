"""``script.*`` over the wire: list, resolve (for ``script run``), start, stop, restart, logs."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from paseo_hookspecs.registration import RpcMethod, RpcMethodGroup
from pydantic import Field

from paseo.rpc.models import StreamEvent, WireModel
from paseo.services import ServiceRef

if TYPE_CHECKING:
    from paseo_hookspecs.context import RpcContext
    from pydantic import BaseModel

    from paseo.scripts.service import ScriptService

OWNER = frozenset({"local", "remote"})


class ScriptInfoModel(WireModel):
    name: str
    type: str = Field(description='"script" or "service"')
    command: str
    status: str | None = Field(
        description="services: stopped, starting, running, exited or failed; scripts: null"
    )
    port: int | None
    url: str | None
    exitCode: int | None
    pid: int | None
    proxyHost: str | None = Field(
        None,
        description="services: <script>.<branch>.<project>.localhost, reached through the "
        "daemon's port",
    )


class ScriptCwdParams(WireModel):
    cwd: str = Field(description="a directory of the workspace (placed into its workspace)")


class ScriptRefParams(ScriptCwdParams):
    name: str


class ScriptLogsParams(ScriptRefParams):
    since: int = Field(0, description="offset returned by a previous call")


class ScriptListResult(WireModel):
    workspaceId: str
    scripts: list[ScriptInfoModel]


class ScriptResult(WireModel):
    script: ScriptInfoModel


class ScriptResolveResult(WireModel):
    workspaceId: str
    script: ScriptInfoModel
    command: str
    cwd: str
    env: dict[str, str] = Field(description="the PASEO_* variables to add to the environment")


class ScriptLogsResult(WireModel):
    text: str
    offset: int = Field(description="pass as since to get only what comes next")
    script: ScriptInfoModel


def _model(info: Any) -> ScriptInfoModel:
    return ScriptInfoModel(**info.to_json())


def method_groups(ref: ServiceRef[ScriptService]) -> list[RpcMethodGroup]:
    """The ``script`` group, reaching its service through ``ref``."""

    async def list_scripts(ctx: RpcContext, params: ScriptCwdParams) -> ScriptListResult:
        workspace, infos = await ref.get().list(params.cwd)
        return ScriptListResult(
            workspaceId=workspace.workspaceId, scripts=[_model(i) for i in infos]
        )

    async def resolve(ctx: RpcContext, params: ScriptRefParams) -> ScriptResolveResult:
        return ScriptResolveResult(**await ref.get().resolve(params.cwd, params.name))

    async def start(ctx: RpcContext, params: ScriptRefParams) -> ScriptResult:
        return ScriptResult(script=_model(await ref.get().start_service(params.cwd, params.name)))

    async def stop(ctx: RpcContext, params: ScriptRefParams) -> ScriptResult:
        return ScriptResult(script=_model(await ref.get().stop_service(params.cwd, params.name)))

    async def restart(ctx: RpcContext, params: ScriptRefParams) -> ScriptResult:
        info = await ref.get().restart_service(params.cwd, params.name)
        return ScriptResult(script=_model(info))

    async def logs(ctx: RpcContext, params: ScriptLogsParams) -> ScriptLogsResult:
        return ScriptLogsResult(**await ref.get().logs(params.cwd, params.name, params.since))

    def method(name: str, handler: Any, params: Any, result: Any, summary: str) -> RpcMethod:
        return RpcMethod(name, handler, params, result, summary=summary, access=OWNER)

    return [
        RpcMethodGroup(
            "script",
            [
                method(
                    "script.list",
                    list_scripts,
                    ScriptCwdParams,
                    ScriptListResult,
                    "The paseo.json scripts of a workspace, services with status and port",
                ),
                method(
                    "script.resolve",
                    resolve,
                    ScriptRefParams,
                    ScriptResolveResult,
                    "The command, cwd and PASEO_* environment a script runs with",
                ),
                method(
                    "script.start",
                    start,
                    ScriptRefParams,
                    ScriptResult,
                    "Start a service (no-op when it runs)",
                ),
                method("script.stop", stop, ScriptRefParams, ScriptResult, "Stop a service"),
                method(
                    "script.restart", restart, ScriptRefParams, ScriptResult, "Restart a service"
                ),
                method(
                    "script.logs",
                    logs,
                    ScriptLogsParams,
                    ScriptLogsResult,
                    "The kept tail of a service's output after an offset",
                ),
            ],
        )
    ]


class ScriptChangedEvent(StreamEvent):
    """A service of a workspace started, began answering on its port, or exited: its status
    (``script.list``) changed. Sent on the ``workspaces`` stream."""

    workspaceId: str
    script: str


def notifications() -> dict[str, type[BaseModel]]:
    """``script.changed`` on the ``workspaces`` stream."""
    return {"script.changed": ScriptChangedEvent}
