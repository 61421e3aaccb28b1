"""Terminals: listing and its ``terminals_changed`` pushes, create / kill / capture, input, and
the binary stream of a subscribed terminal (``[opcode, slot, payload]``: Output 0x01 and
Snapshot 0x04 out, Input 0x02 and Resize 0x03 in), over the ``terminal.*`` methods.

A subscription takes a slot (0-255) on the connection. Its Snapshot is the screen and the
scrollback above it at the ``offset`` ``terminal.subscribe`` reported; output before that
offset is skipped, output that arrived while subscribing is held and sent after it. A chunk
reported ``dropped`` (the terminal's queue overflowed) is answered with a fresh Snapshot.
"""

from __future__ import annotations

import base64
import shlex
from typing import Any

from pydantic import ValidationError

from paseo_tswire import terminal_grid
from paseo_tswire.bridge import RpcFailure
from paseo_tswire.connection import ClientSession
from paseo_tswire.models import terminal as tm

OUTPUT, INPUT, RESIZE, SNAPSHOT = 0x01, 0x02, 0x03, 0x04
SLOTS = 256


def _info(raw: dict[str, Any]) -> tm.TerminalInfo:
    return tm.TerminalInfo(
        id=str(raw["terminalId"]), name=str(raw.get("title") or ""), cwd=str(raw.get("cwd") or "")
    )


def _listed(raw: dict[str, Any]) -> tm.ListedTerminal:
    return tm.ListedTerminal(id=str(raw["terminalId"]), name=str(raw.get("title") or ""))


class TerminalRoom:
    """The terminal state of one client session (see the module docstring)."""

    def __init__(self, session: ClientSession) -> None:
        self.session = session
        self.slots: dict[str, int] = {}
        self.offsets: dict[str, int] = {}
        self.held: dict[str, list[dict[str, Any]]] = {}
        self.cwds: set[str] = set()
        session.listeners.append(self.on_notification)
        session.binary = self.on_binary

    @classmethod
    def of(cls, session: ClientSession) -> TerminalRoom:
        room = session.extra.get("terminals")
        if not isinstance(room, TerminalRoom):
            room = cls(session)
            session.extra["terminals"] = room
        return room

    async def listing(self, cwd: str | None) -> list[dict[str, Any]]:
        found = await self.session.call("terminal.list", {})
        terminals = list(found.get("terminals") or [])
        return [t for t in terminals if cwd is None or t.get("cwd") == cwd]

    # ------------------------------------------------------------ subscription

    async def subscribe(self, terminal_id: str) -> tuple[int, dict[str, Any]]:
        """Take a slot and subscribe; output arriving meanwhile is held (see :meth:`flush`)."""
        slot = self.slots.get(terminal_id)
        if slot is None:
            used = set(self.slots.values())
            slot = next((n for n in range(SLOTS) if n not in used), None)
            if slot is None:
                raise RpcFailure("conflict", "every terminal slot of this connection is in use")
            self.slots[terminal_id] = slot
        self.offsets.pop(terminal_id, None)
        self.held[terminal_id] = []
        try:
            result = await self.session.call(
                "terminal.subscribe", {"terminalId": terminal_id, "scrollback": True}
            )
        except RpcFailure:
            await self.release(terminal_id)
            raise
        return slot, result

    async def snapshot(self, terminal_id: str, result: dict[str, Any] | None = None) -> None:
        slot = self.slots.get(terminal_id)
        if slot is None:
            return
        if result is None:
            result = await self.session.call(
                "terminal.subscribe", {"terminalId": terminal_id, "scrollback": True}
            )
            self.offsets[terminal_id] = int(result["offset"])
        state = terminal_grid.state(
            str(result["snapshot"]),
            columns=int(result["columns"]),
            rows=int(result["rows"]),
            title=str(result["terminal"].get("title") or "") or None,
            scrollback=[str(line) for line in result.get("scrollback") or []],
        )
        await self.session.raw(bytes([SNAPSHOT, slot]) + terminal_grid.encode(state))

    async def release(self, terminal_id: str) -> None:
        self.slots.pop(terminal_id, None)
        self.offsets.pop(terminal_id, None)
        self.held.pop(terminal_id, None)

    # ----------------------------------------------------------- notifications

    async def on_notification(self, method: str, params: dict[str, Any]) -> None:
        if method == "terminal.output":
            await self._output(params)
        elif method == "terminal.exited":
            terminal_id = str(params["terminalId"])
            if terminal_id in self.slots:
                await self.release(terminal_id)
                await self.session.push(
                    "terminal_stream_exit", tm.StreamExit(terminalId=terminal_id)
                )
        elif method == "terminal.changed":
            cwd = str(params["terminal"].get("cwd") or "")
            if cwd in self.cwds:
                listed = await self.listing(cwd)
                await self.session.push(
                    "terminals_changed",
                    tm.TerminalsChanged(cwd=cwd, terminals=[_listed(t) for t in listed]),
                )

    async def _output(self, params: dict[str, Any]) -> None:
        terminal_id = str(params["terminalId"])
        slot = self.slots.get(terminal_id)
        if slot is None:
            return
        if terminal_id not in self.offsets:
            self.held.setdefault(terminal_id, []).append(params)
            return
        if int(params.get("dropped") or 0) > 0:
            await self.snapshot(terminal_id)
            return
        data = base64.b64decode(str(params["data"]))
        offset = int(params["offset"])
        skip = self.offsets[terminal_id] - offset
        if skip >= len(data):
            return
        if skip > 0:
            data = data[skip:]
        self.offsets[terminal_id] = max(self.offsets[terminal_id], offset + skip + len(data))
        await self.session.raw(bytes([OUTPUT, slot]) + data)

    async def flush(self, terminal_id: str) -> None:
        for params in self.held.pop(terminal_id, []):
            await self._output(params)

    async def on_binary(self, frame: bytes) -> None:
        if len(frame) < 2:
            return
        opcode, slot, payload = frame[0], frame[1], frame[2:]
        terminal_id = next((t for t, s in self.slots.items() if s == slot), None)
        if terminal_id is None:
            return
        if opcode == INPUT:
            await self.session.call(
                "terminal.input",
                {"terminalId": terminal_id, "data": payload.decode("utf-8", "replace")},
            )
        elif opcode == RESIZE:
            try:
                size = tm.StreamResize.model_validate_json(payload)
            except ValidationError:
                return
            await self.session.call(
                "terminal.resize",
                {"terminalId": terminal_id, "columns": size.cols, "rows": size.rows},
            )


# --------------------------------------------------------------------- handlers


async def list_terminals(session: ClientSession, msg: tm.ListRequest) -> None:
    listed = await TerminalRoom.of(session).listing(msg.cwd)
    await session.push(
        "list_terminals_response",
        tm.ListTerminals(
            cwd=msg.cwd, terminals=[_listed(t) for t in listed], requestId=msg.requestId
        ),
    )


async def subscribe_terminals(session: ClientSession, msg: tm.CwdRef) -> None:
    room = TerminalRoom.of(session)
    room.cwds.add(msg.cwd)
    await session.follow(["terminals"])
    listed = await room.listing(msg.cwd)
    await session.push(
        "terminals_changed",
        tm.TerminalsChanged(cwd=msg.cwd, terminals=[_listed(t) for t in listed]),
    )


async def unsubscribe_terminals(session: ClientSession, msg: tm.CwdRef) -> None:
    TerminalRoom.of(session).cwds.discard(msg.cwd)


async def create_terminal(session: ClientSession, msg: tm.CreateRequest) -> None:
    try:
        created = await session.call("terminal.create", {"cwd": msg.cwd})
        terminal = created["terminal"]
        if msg.command:
            # This daemon starts a terminal's shell (or a profile): the command is typed into it.
            line = shlex.join([msg.command, *(msg.args or [])])
            await session.call(
                "terminal.input", {"terminalId": terminal["terminalId"], "data": line + "\r"}
            )
    except RpcFailure as exc:
        await session.push(
            "create_terminal_response",
            tm.CreateTerminal(terminal=None, error=exc.message, requestId=msg.requestId),
        )
        return
    await session.push(
        "create_terminal_response",
        tm.CreateTerminal(terminal=_info(terminal), error=None, requestId=msg.requestId),
    )


async def subscribe_terminal(session: ClientSession, msg: tm.TerminalRef) -> None:
    room = TerminalRoom.of(session)
    try:
        slot, result = await room.subscribe(msg.terminalId)
    except RpcFailure as exc:
        await session.push(
            "subscribe_terminal_response",
            tm.SubscribeFailed(
                terminalId=msg.terminalId, error=exc.message, requestId=msg.requestId
            ),
        )
        return
    await session.push(
        "subscribe_terminal_response",
        tm.Subscribed(terminalId=msg.terminalId, slot=slot, error=None, requestId=msg.requestId),
    )
    room.offsets[msg.terminalId] = int(result["offset"])
    await room.snapshot(msg.terminalId, result)
    await room.flush(msg.terminalId)


async def unsubscribe_terminal(session: ClientSession, msg: tm.TerminalOnly) -> None:
    room = TerminalRoom.of(session)
    await room.release(msg.terminalId)
    await session.call("terminal.unsubscribe", {"terminalId": msg.terminalId})


async def terminal_input(session: ClientSession, msg: tm.InputRequest) -> None:
    message = msg.message
    if isinstance(message, tm.ClientInput):
        await session.call("terminal.input", {"terminalId": msg.terminalId, "data": message.data})
    elif isinstance(message, tm.ClientResize):
        await session.call(
            "terminal.resize",
            {"terminalId": msg.terminalId, "columns": message.cols, "rows": message.rows},
        )


async def kill_terminal(session: ClientSession, msg: tm.TerminalRef) -> None:
    try:
        await session.call("terminal.kill", {"terminalId": msg.terminalId})
    except RpcFailure:
        success = False
    else:
        success = True
    await session.push(
        "kill_terminal_response",
        tm.KillTerminal(terminalId=msg.terminalId, success=success, requestId=msg.requestId),
    )


async def capture_terminal(session: ClientSession, msg: tm.CaptureRequest) -> None:
    params: dict[str, Any] = {"terminalId": msg.terminalId, "ansi": not msg.stripAnsi}
    if msg.start is not None:
        params["start"] = msg.start
    if msg.end is not None:
        params["end"] = msg.end
    found = await session.call("terminal.capture", params)
    await session.push(
        "capture_terminal_response",
        tm.CaptureTerminal(
            terminalId=msg.terminalId,
            lines=[str(line) for line in found.get("lines") or []],
            totalLines=int(found.get("totalLines") or 0),
            requestId=msg.requestId,
        ),
    )
