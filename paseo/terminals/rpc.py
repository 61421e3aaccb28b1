"""The ``terminal.*`` RPC method group: a thin adapter over :class:`TerminalService`.

Handlers reach the service through the :class:`paseo.services.ServiceRef` the composition root
binds, so :func:`method_groups` can be built without a service (the protocol schema does).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from paseo_hookspecs.registration import RpcMethod, RpcMethodGroup
from pydantic import BaseModel

from paseo.services import ServiceRef
from paseo.terminals.models import (
    TerminalCaptureParams,
    TerminalCaptureResult,
    TerminalChangedEvent,
    TerminalCreateParams,
    TerminalExitedEvent,
    TerminalInputParams,
    TerminalInputResult,
    TerminalKillResult,
    TerminalListParams,
    TerminalListResult,
    TerminalOutputEvent,
    TerminalProfileInfo,
    TerminalRefParams,
    TerminalResizeParams,
    TerminalResult,
    TerminalSubscribeParams,
    TerminalSubscribeResult,
    TerminalUnsubscribeResult,
)
from paseo.terminals.service import TerminalService, stream_of

if TYPE_CHECKING:
    from paseo_hookspecs.context import RpcContext

OWNER = frozenset({"local", "remote"})


def method_groups(ref: ServiceRef[TerminalService]) -> list[RpcMethodGroup]:
    """The ``terminal`` method group, its handlers bound to ``ref``."""

    async def list_terminals(ctx: RpcContext, params: TerminalListParams) -> TerminalListResult:
        service = ref.get()
        return TerminalListResult(
            terminals=service.terminals(params.workspaceId),
            profiles=[
                TerminalProfileInfo(
                    id=p.id, name=p.name, command=p.command, args=p.args or [], icon=p.icon
                )
                for p in service.profiles()
            ],
        )

    async def create(ctx: RpcContext, params: TerminalCreateParams) -> TerminalResult:
        terminal = await ref.get().create(
            workspace_id=params.workspaceId,
            cwd=params.cwd,
            profile_id=params.profileId,
            prompt=params.prompt,
            columns=params.columns,
            rows=params.rows,
        )
        return TerminalResult(terminal=terminal)

    async def kill(ctx: RpcContext, params: TerminalRefParams) -> TerminalKillResult:
        return TerminalKillResult(terminal=await ref.get().kill(params.terminalId))

    async def capture(ctx: RpcContext, params: TerminalCaptureParams) -> TerminalCaptureResult:
        lines, total = ref.get().capture(
            params.terminalId, params.start, params.end, ansi=params.ansi
        )
        return TerminalCaptureResult(terminalId=params.terminalId, lines=lines, totalLines=total)

    async def send_input(ctx: RpcContext, params: TerminalInputParams) -> TerminalInputResult:
        ref.get().input(params.terminalId, params.data.encode())
        return TerminalInputResult()

    async def resize(ctx: RpcContext, params: TerminalResizeParams) -> TerminalResult:
        info = ref.get().resize(params.terminalId, params.columns, params.rows)
        return TerminalResult(terminal=info)

    async def subscribe(
        ctx: RpcContext, params: TerminalSubscribeParams
    ) -> TerminalSubscribeResult:
        service = ref.get()
        stream = stream_of(service.get(params.terminalId).terminal_id)
        ctx.subscribe([stream])
        # Taken after subscribing: output already queued for publication arrives too, with
        # offsets below the snapshot's, and the client skips it. The scrollback is read in
        # the same step (no await between), so it joins the snapshot exactly.
        snapshot, offset, info = service.snapshot(params.terminalId)
        history = service.scrollback(params.terminalId) if params.scrollback else []
        return TerminalSubscribeResult(
            terminalId=params.terminalId,
            stream=stream,
            snapshot=snapshot,
            offset=offset,
            columns=info.columns,
            rows=info.rows,
            terminal=info,
            scrollback=history,
        )

    async def unsubscribe(ctx: RpcContext, params: TerminalRefParams) -> TerminalUnsubscribeResult:
        stream = stream_of(params.terminalId)
        return TerminalUnsubscribeResult(
            terminalId=params.terminalId, unsubscribed=stream in ctx.unsubscribe([stream])
        )

    def method(name: str, handler: Any, params: Any, result: Any, summary: str) -> RpcMethod:
        return RpcMethod(name, handler, params, result, summary=summary, access=OWNER)

    return [
        RpcMethodGroup(
            "terminal",
            [
                method(
                    "terminal.list",
                    list_terminals,
                    TerminalListParams,
                    TerminalListResult,
                    "Live terminals (of one workspace, or all) and the profiles in force",
                ),
                method(
                    "terminal.create",
                    create,
                    TerminalCreateParams,
                    TerminalResult,
                    "Start a profile's program on a PTY in a workspace's directory",
                ),
                method(
                    "terminal.kill",
                    kill,
                    TerminalRefParams,
                    TerminalKillResult,
                    "End a terminal's program and session, and forget the terminal",
                ),
                method(
                    "terminal.capture",
                    capture,
                    TerminalCaptureParams,
                    TerminalCaptureResult,
                    "Plain or ANSI text of a line range of scrollback plus screen",
                ),
                method(
                    "terminal.input",
                    send_input,
                    TerminalInputParams,
                    TerminalInputResult,
                    "Type text (control characters included) into a terminal",
                ),
                method(
                    "terminal.resize",
                    resize,
                    TerminalResizeParams,
                    TerminalResult,
                    "Set a terminal's window size (the program gets SIGWINCH)",
                ),
                method(
                    "terminal.subscribe",
                    subscribe,
                    TerminalSubscribeParams,
                    TerminalSubscribeResult,
                    "Receive a terminal's output: a screen snapshot, then live output",
                ),
                method(
                    "terminal.unsubscribe",
                    unsubscribe,
                    TerminalRefParams,
                    TerminalUnsubscribeResult,
                    "Stop receiving a terminal's output",
                ),
            ],
        )
    ]


def notifications() -> dict[str, type[BaseModel]]:
    """The ``terminal.*`` notifications (method → params model), for the protocol schema."""
    return {
        "terminal.output": TerminalOutputEvent,
        "terminal.exited": TerminalExitedEvent,
        "terminal.changed": TerminalChangedEvent,
    }
