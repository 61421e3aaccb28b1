"""The ``loop.*`` RPC group: ``loop.run | list | inspect | logs | stop``.

Parameters take the TypeScript wire's names (``verifyChecks``, ``sleepMs``, ``maxIterations``,
``maxTimeMs``…); results are the TypeScript daemon's records.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

from paseo_hookspecs.errors import Unavailable
from paseo_hookspecs.registration import RpcMethod, RpcMethodGroup
from pydantic import BaseModel, ConfigDict, Field

if TYPE_CHECKING:
    from paseo_hookspecs.context import RpcContext

    from paseo_loops.service import LoopService


class RunParams(BaseModel):
    model_config = ConfigDict(extra="ignore", defer_build=True)

    prompt: str = Field(min_length=1, max_length=200_000)
    cwd: str = Field(min_length=1, max_length=4096)
    name: str | None = Field(default=None, max_length=200)
    provider: str | None = Field(default=None, max_length=200)
    model: str | None = Field(default=None, max_length=200)
    verifierProvider: str | None = Field(default=None, max_length=200)
    verifierModel: str | None = Field(default=None, max_length=200)
    verifyPrompt: str | None = Field(default=None, max_length=200_000)
    verifyChecks: list[str] = Field(default_factory=list, max_length=50)
    archive: bool = False
    sleepMs: int = Field(default=0, ge=0, le=7 * 24 * 3600 * 1000)
    maxIterations: int | None = Field(default=None, ge=1, le=10_000)
    maxTimeMs: int | None = Field(default=None, ge=1)


class LoopRef(BaseModel):
    model_config = ConfigDict(extra="ignore", defer_build=True)

    id: str = Field(min_length=1, max_length=200, description="a loop's id, id prefix or name")


class LogsParams(LoopRef):
    afterSeq: int = Field(default=0, ge=0, description="only entries after this seq")


log = logging.getLogger("paseo.loops")


class Runtime:
    """The running service, set by ``paseo_startup``."""

    def __init__(self) -> None:
        self.service: LoopService | None = None
        """The service once it has loaded its loops (:meth:`ready` waits for that)."""
        self.starting: LoopService | None = None
        """The service while it loads."""
        self._start: asyncio.Task[None] | None = None
        self._failure: str | None = None

    def begin(self, service: LoopService) -> None:
        """Load ``service``'s loops in the background (``paseo_startup`` is synchronous, the
        store is not); calls that come meanwhile wait in :meth:`ready`."""
        self.starting, self._failure = service, None

        async def start() -> None:
            try:
                await service.start()
            except Exception as exc:
                log.exception("the loop service failed to start")
                self._failure = str(exc)
                return
            if self.starting is service:
                self.service = service

        self._start = asyncio.get_running_loop().create_task(start(), name="loops-start")

    def end(self) -> LoopService | None:
        """Forget the service (``paseo_shutdown``); the one to close, loaded or not."""
        service = self.service or self.starting
        self.service = self.starting = None
        if self._start is not None and not self._start.done():
            self._start.cancel()
        self._start = None
        return service

    def require(self) -> LoopService:
        if self.service is None:
            reason = f": {self._failure}" if self._failure else ""
            raise Unavailable(f"the loop service is not running{reason}")
        return self.service

    async def ready(self) -> LoopService:
        """The service, once it has loaded its loops."""
        start = self._start
        if self.service is None and start is not None and not start.done():
            await asyncio.shield(start)
        return self.require()


def method_group(runtime: Runtime) -> RpcMethodGroup:
    async def run(ctx: RpcContext, params: Any) -> dict[str, Any]:
        return {"loop": await (await runtime.ready()).run(params)}

    async def list_(ctx: RpcContext, params: Any) -> dict[str, Any]:
        return {"loops": (await runtime.ready()).list()}

    async def inspect(ctx: RpcContext, params: Any) -> dict[str, Any]:
        return {"loop": (await runtime.ready()).get(params.id)}

    async def logs(ctx: RpcContext, params: Any) -> dict[str, Any]:
        loop = (await runtime.ready()).get(params.id)
        entries = [entry for entry in loop["logs"] if entry["seq"] > params.afterSeq]
        return {"loop": loop, "entries": entries, "nextSeq": loop["nextLogSeq"]}

    async def stop(ctx: RpcContext, params: Any) -> dict[str, Any]:
        return {"loop": await (await runtime.ready()).stop(params.id)}

    return RpcMethodGroup(
        area="loop",
        methods=[
            RpcMethod("loop.run", run, RunParams, None, "Start a loop"),
            RpcMethod("loop.list", list_, None, None, "Every loop, newest first"),
            RpcMethod("loop.inspect", inspect, LoopRef, None, "One loop with its iterations"),
            RpcMethod("loop.logs", logs, LogsParams, None, "A loop's log entries after a seq"),
            RpcMethod("loop.stop", stop, LoopRef, None, "Stop a running loop"),
        ],
    )
