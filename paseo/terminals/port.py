"""The contract's :class:`~paseo_hookspecs.terminal_control.TerminalControl` over the terminal
service (answers shaped as ``terminal.list``/``create``/``kill``/``capture`` answer)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from paseo.terminals.models import (
    TerminalCaptureResult,
    TerminalKillResult,
    TerminalListResult,
    TerminalProfileInfo,
    TerminalResult,
)

if TYPE_CHECKING:
    from paseo.terminals.service import TerminalService


def _json(result: Any) -> dict[str, Any]:
    data: dict[str, Any] = result.model_dump(mode="json", by_alias=True)
    return data


class KernelTerminals:
    def __init__(self, service: TerminalService) -> None:
        self._service = service

    def list(self, workspace_id: str) -> dict[str, Any]:
        service = self._service
        return _json(
            TerminalListResult(
                terminals=service.terminals(workspace_id),
                profiles=[
                    TerminalProfileInfo(
                        id=p.id, name=p.name, command=p.command, args=p.args or [], icon=p.icon
                    )
                    for p in service.profiles()
                ],
            )
        )

    async def create(
        self,
        workspace_id: str,
        *,
        profile_id: str | None = None,
        prompt: str | None = None,
        columns: int = 120,
        rows: int = 40,
    ) -> dict[str, Any]:
        terminal = await self._service.create(
            workspace_id=workspace_id,
            cwd=None,
            profile_id=profile_id,
            prompt=prompt,
            columns=columns,
            rows=rows,
        )
        return _json(TerminalResult(terminal=terminal))

    async def kill(self, terminal_id: str) -> dict[str, Any]:
        return _json(TerminalKillResult(terminal=await self._service.kill(terminal_id)))

    def capture(
        self, terminal_id: str, *, start: int | None = None, end: int | None = None
    ) -> dict[str, Any]:
        lines, total = self._service.capture(terminal_id, start, end, ansi=False)
        return _json(TerminalCaptureResult(terminalId=terminal_id, lines=lines, totalLines=total))

    def input(self, terminal_id: str, data: str) -> None:
        self._service.input(terminal_id, data.encode())
