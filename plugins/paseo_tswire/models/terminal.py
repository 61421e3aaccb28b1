"""Terminal messages and the xterm cell grid of a Snapshot frame (``TerminalStateSchema``;
cells, the cursor and the state are ``.strict()`` on the client)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from paseo_tswire.models.wire import Inbound, Wire


class TerminalInfo(Wire):
    id: str
    name: str
    cwd: str
    title: str | None = None


class ListedTerminal(Wire):
    """A terminal in a listing (``TerminalInfoSchema.omit({cwd})``)."""

    id: str
    name: str
    title: str | None = None


class ListTerminals(Wire):
    cwd: str | None = None
    terminals: list[ListedTerminal]
    requestId: str


class TerminalsChanged(Wire):
    cwd: str
    terminals: list[ListedTerminal]


class CreateTerminal(Wire):
    terminal: TerminalInfo | None
    error: str | None
    requestId: str


class Subscribed(Wire):
    terminalId: str
    slot: int = Field(ge=0, le=255)
    error: None
    requestId: str


class SubscribeFailed(Wire):
    terminalId: str
    error: str
    requestId: str


class KillTerminal(Wire):
    terminalId: str
    success: bool
    requestId: str


class CaptureTerminal(Wire):
    terminalId: str
    lines: list[str]
    totalLines: int = Field(ge=0)
    requestId: str


class StreamExit(Wire):
    terminalId: str


class Cell(Wire):
    char: str
    fg: int | None = None
    bg: int | None = None
    fgMode: int | None = None
    bgMode: int | None = None
    bold: bool | None = None
    italic: bool | None = None
    underline: bool | None = None
    dim: bool | None = None
    inverse: bool | None = None
    strikethrough: bool | None = None


class TerminalCursor(Wire):
    row: int
    col: int
    hidden: bool | None = None
    style: Literal["block", "underline", "bar"] | None = None
    blink: bool | None = None


class TerminalState(Wire):
    rows: int
    cols: int
    grid: list[list[Cell]]
    scrollback: list[list[Cell]]
    cursor: TerminalCursor
    title: str | None = None


class StreamResize(Wire):
    """The payload of a Resize frame (``TerminalStreamResizeSchema``, strict)."""

    rows: int = Field(gt=0)
    cols: int = Field(gt=0)


class ListRequest(Inbound):
    requestId: str
    cwd: str | None = None


class CwdRef(Inbound):
    """``subscribe_terminals_request`` / ``unsubscribe_terminals_request`` (no reply)."""

    cwd: str


class CreateRequest(Inbound):
    requestId: str
    cwd: str
    name: str | None = None
    agentId: str | None = None
    command: str | None = None
    args: list[str] | None = None


class TerminalRef(Inbound):
    requestId: str
    terminalId: str


class TerminalOnly(Inbound):
    terminalId: str


class CaptureRequest(Inbound):
    requestId: str
    terminalId: str
    start: int | None = None
    end: int | None = None
    stripAnsi: bool = True


class ClientInput(Inbound):
    type: Literal["input"]
    data: str


class ClientResize(Inbound):
    type: Literal["resize"]
    rows: int
    cols: int


class ClientMouse(Inbound):
    type: Literal["mouse"]


class InputRequest(Inbound):
    """``terminal_input`` (no reply)."""

    terminalId: str
    message: ClientInput | ClientResize | ClientMouse = Field(discriminator="type")


TERMINAL_OUTBOUND: dict[str, type[Wire]] = {
    "list_terminals_response": ListTerminals,
    "terminals_changed": TerminalsChanged,
    "create_terminal_response": CreateTerminal,
    "kill_terminal_response": KillTerminal,
    "capture_terminal_response": CaptureTerminal,
    "terminal_stream_exit": StreamExit,
}
"""Outbound terminal messages (``subscribe_terminal_response`` has two shapes: see
:func:`paseo_tswire.envelope.validate_outbound`)."""
