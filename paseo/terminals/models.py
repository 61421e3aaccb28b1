"""Wire models of the ``terminal.*`` methods and notifications."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

_Id = Annotated[str, Field(min_length=1)]
_Columns = Annotated[int, Field(ge=2, le=1000)]
_Rows = Annotated[int, Field(ge=1, le=1000)]


class _Model(BaseModel):
    # Validators are built on first use, so loading the daemon does not pay for them.
    model_config = ConfigDict(extra="forbid", defer_build=True)


TerminalState = Literal["running", "exited"]


class TerminalInfo(_Model):
    """One live terminal as lists and ``terminal.changed`` show it."""

    terminalId: str
    workspaceId: str | None
    """The owning workspace; ``null`` only for legacy terminals (visible to unscoped lists)."""
    profileId: str | None
    title: str
    """The program's window title when it set one, else the profile's name."""
    cwd: str
    command: list[str]
    pid: int
    columns: int
    rows: int
    state: TerminalState
    exitCode: int | None = None
    """The program's exit status once ``state`` is ``exited``."""
    signal: int | None = None
    """The signal that ended the program, when one did."""
    active: bool
    """Output arrived within the activity window: the workspace counts as running."""
    outputBytes: int
    """Bytes the program has written so far (the offset of the next ``terminal.output``)."""
    createdAt: str


class TerminalProfileInfo(_Model):
    id: str
    name: str
    command: str
    args: list[str]
    icon: str | None = None


class TerminalListParams(_Model):
    workspaceId: str | None = None
    """Only this workspace's terminals (absent: every terminal, legacy ones included)."""


class TerminalListResult(_Model):
    terminals: list[TerminalInfo]
    profiles: list[TerminalProfileInfo]
    """The profiles a new terminal can start from, in display order."""


class TerminalCreateParams(_Model):
    workspaceId: str | None = None
    """Open in this workspace's exact directory."""
    cwd: str | None = None
    """Without ``workspaceId``: a directory, placed into its workspace (created if needed)."""
    profileId: str | None = None
    """Which profile to start (default: the first one)."""
    prompt: str | None = None
    """Fills a profile's ``{{{prompt}}}`` argument; without it such arguments are dropped."""
    columns: _Columns = 80
    rows: _Rows = 24


class TerminalRefParams(_Model):
    terminalId: _Id


class TerminalSubscribeParams(_Model):
    terminalId: _Id
    scrollback: bool = False
    """Also answer the lines kept above the screen (``scrollback``), taken with the snapshot."""


class TerminalResult(_Model):
    terminal: TerminalInfo


class TerminalCaptureParams(_Model):
    terminalId: _Id
    start: int | None = None
    """First line, inclusive (0 is the oldest scrollback line; negative counts from the end)."""
    end: int | None = None
    """Last line, inclusive (-1 is the last line)."""
    ansi: bool = False
    """Keep colours and attributes as ANSI SGR sequences."""


class TerminalCaptureResult(_Model):
    terminalId: str
    lines: list[str]
    totalLines: int
    """Lines in scrollback plus screen, for choosing a range."""


class TerminalInputParams(_Model):
    terminalId: _Id
    data: str
    """Text typed into the terminal (control characters included)."""


class TerminalResizeParams(_Model):
    terminalId: _Id
    columns: _Columns
    rows: _Rows


class TerminalSubscribeResult(_Model):
    terminalId: str
    stream: str
    """Where ``terminal.output`` and ``terminal.exited`` arrive (``terminal:<id>``)."""
    snapshot: str
    """ANSI text repainting the current screen; live output continues from it."""
    offset: int
    """Output bytes produced before the snapshot: the next ``terminal.output`` starts here."""
    columns: int
    rows: int
    terminal: TerminalInfo
    scrollback: list[str] = Field(default_factory=list)
    """With ``scrollback``: the lines above the screen as ANSI text, oldest first (each line
    as wide as the screen was when it scrolled off)."""


class TerminalUnsubscribeResult(_Model):
    terminalId: str
    unsubscribed: bool


class TerminalKillResult(_Model):
    terminal: TerminalInfo
    """The terminal as it ended (it is no longer listed)."""


class TerminalInputResult(_Model):
    ok: bool = True
    """The input was queued for the program (it reads it when it is ready)."""


# --- notifications --------------------------------------------------------------------------


class _Event(_Model):
    stream: str
    seq: int


class TerminalOutputEvent(_Event):
    """Program output on ``terminal:<id>``. ``offset`` counts output bytes since the terminal
    started, so ``offset + len(data)`` is the next event's offset unless output was dropped."""

    terminalId: str
    offset: int
    data: str
    """The bytes, base64."""
    dropped: int = 0
    """Bytes left out just before this chunk because output outran publication (the terminal's
    bounded output queue overflowed): the screen is no longer what this stream painted, call
    ``terminal.subscribe`` again."""


class TerminalExitedEvent(_Event):
    terminalId: str
    exitCode: int | None
    signal: int | None


class TerminalChangedEvent(_Event):
    """On ``terminals``: a terminal was created, changed activity or state, or was removed."""

    terminal: TerminalInfo
    removed: bool = False
    workspaceActive: bool | None = None
    """Whether any terminal of the terminal's workspace is active now (``null``: no owner)."""
