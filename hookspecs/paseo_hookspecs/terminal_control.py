"""Terminals (a shell or a profile's program in a workspace), driven by a plugin.

Results are the JSON forms of the matching wire methods' answers (``terminal.list``,
``terminal.create``, ``terminal.kill``, ``terminal.capture``; docs/protocol.md).

.. versionadded:: 2.0
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable


class TerminalControl(Protocol):
    def list(self, workspace_id: str) -> dict[str, Any]:
        """``{"terminals": [...], "profiles": [...]}``: ``workspace_id``'s terminals and the
        profiles a new one can start from."""

    async def create(
        self,
        workspace_id: str,
        *,
        profile_id: str | None = None,
        prompt: str | None = None,
        columns: int = 120,
        rows: int = 40,
    ) -> dict[str, Any]:
        """``{"terminal": {...}}``: a terminal started in ``workspace_id``'s directory."""

    async def kill(self, terminal_id: str) -> dict[str, Any]:
        """``{"terminal": {...}}`` once its program was ended."""

    def capture(
        self, terminal_id: str, *, start: int | None = None, end: int | None = None
    ) -> dict[str, Any]:
        """``{"terminalId", "lines", "totalLines"}``: screen and scrollback as plain text."""

    def input(self, terminal_id: str, data: str) -> None:
        """Type ``data`` (see :func:`paseo_hookspecs.terminals.encode_keys`)."""


@runtime_checkable
class TerminalSource(Protocol):
    """A :class:`~paseo_hookspecs.context.DaemonContext` that offers terminals."""

    @property
    def terminals(self) -> TerminalControl: ...


__all__ = ["TerminalControl", "TerminalSource"]
