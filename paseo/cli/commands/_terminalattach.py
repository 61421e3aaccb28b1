"""``paseo terminal attach``: join a daemon terminal from the user's own terminal.

The local terminal goes to raw mode; keystrokes become ``terminal.input`` calls (in order),
the local window size is applied with ``terminal.resize`` at start and on every SIGWINCH, and
the remote screen arrives as a snapshot followed by live ``terminal.output``. Output carries
byte offsets: chunks the snapshot already shows are skipped, and a gap (dropped output, a
``server.resync`` or a sequence gap) repaints from a fresh snapshot. Ctrl-] detaches.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import codecs
import contextlib
import os
import signal
import sys
import termios
import tty
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any

from paseo.cli.commands._terminalcli import resolve_async
from paseo.cli.errors import CliError

if TYPE_CHECKING:
    from paseo.client.client import PaseoClient

DETACH_KEY = b"\x1d"
"""Ctrl-], as telnet and ``docker attach`` use."""


class _Attachment:
    def __init__(self, client: PaseoClient, terminal_id: str, out: int) -> None:
        self.client = client
        self.terminal_id = terminal_id
        self.stream = f"terminal:{terminal_id}"
        self.out = out
        self.next_offset = 0
        self.ended: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        self._inputs: asyncio.Queue[str] = asyncio.Queue()
        # Keystrokes are read in chunks that may split a multi-byte character.
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self._repainting = False
        self._tasks: set[asyncio.Task[None]] = set()

    def spawn(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            try:
                written = os.write(self.out, view)
            except BlockingIOError:
                continue
            view = view[written:]

    async def repaint(self) -> None:
        if self._repainting:
            return
        self._repainting = True
        try:
            result = await self.client.call("terminal.subscribe", {"terminalId": self.terminal_id})
        finally:
            self._repainting = False
        self.next_offset = int(result["offset"])
        self._write(str(result["snapshot"]).encode())
        if result["terminal"]["state"] != "running":
            self._finish("exited")

    def on_output(self, method: str, params: dict[str, Any]) -> None:
        if params.get("terminalId") != self.terminal_id or self._repainting:
            return
        data = base64.b64decode(params["data"])
        offset = int(params["offset"])
        if params.get("dropped") or offset > self.next_offset:
            self.spawn(self.repaint())
            return
        if offset + len(data) <= self.next_offset:
            return
        self._write(data[self.next_offset - offset :])
        self.next_offset = offset + len(data)

    def on_exited(self, method: str, params: dict[str, Any]) -> None:
        if params.get("terminalId") == self.terminal_id:
            self._finish("exited")

    def on_resync(self, method: str, params: dict[str, Any]) -> None:
        if self.stream in params.get("streams", []):
            self.spawn(self.repaint())

    def on_gap(self, stream: str, expected: int | None, got: int) -> None:
        if stream == self.stream:
            self.spawn(self.repaint())

    def _finish(self, how: str) -> None:
        if not self.ended.done():
            self.ended.set_result(how)

    def on_stdin(self) -> None:
        try:
            data = os.read(sys.stdin.fileno(), 4096)
        except OSError:
            data = b""
        if not data:
            self._finish("detached")
            return
        before, detach, _ = data.partition(DETACH_KEY)
        text = self._decoder.decode(before)
        if text:
            self._inputs.put_nowait(text)
        if detach:
            self._finish("detached")

    async def send_inputs(self) -> None:
        while True:
            data = await self._inputs.get()
            await self.client.call(
                "terminal.input",
                {"terminalId": self.terminal_id, "data": data},
            )

    async def resize(self) -> None:
        with contextlib.suppress(OSError):
            size = os.get_terminal_size(self.out)
            await self.client.call(
                "terminal.resize",
                {"terminalId": self.terminal_id, "columns": size.columns, "rows": size.lines},
            )


async def _attach(args: argparse.Namespace) -> str:
    from paseo.cli.context import home_layout
    from paseo.client.client import PaseoClient

    loop = asyncio.get_running_loop()
    stdin = sys.stdin.fileno()
    async with PaseoClient(
        getattr(args, "host", None),
        home=home_layout(args).root,
        client_type="cli",
        reconnect=False,
    ) as client:
        terminal_id = await resolve_async(client, args.terminal)
        attachment = _Attachment(client, terminal_id, sys.stdout.fileno())
        client.on("terminal.output", attachment.on_output)
        client.on("terminal.exited", attachment.on_exited)
        client.on("server.resync", attachment.on_resync)
        client.on_gap(attachment.on_gap)
        saved = termios.tcgetattr(stdin)
        sender = loop.create_task(attachment.send_inputs())
        try:
            tty.setraw(stdin)
            await attachment.resize()
            await attachment.repaint()
            loop.add_reader(stdin, attachment.on_stdin)
            loop.add_signal_handler(
                signal.SIGWINCH, lambda: attachment.spawn(attachment.resize())
            )
            how = await attachment.ended
        finally:
            loop.remove_reader(stdin)
            loop.remove_signal_handler(signal.SIGWINCH)
            sender.cancel()
            termios.tcsetattr(stdin, termios.TCSADRAIN, saved)
        with contextlib.suppress(Exception):
            await client.call("terminal.unsubscribe", {"terminalId": terminal_id})
        return how


def attach(args: argparse.Namespace) -> int:
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise CliError("attach needs a terminal on stdin and stdout (try capture/send-keys)")
    how = asyncio.run(_attach(args))
    sys.stdout.write("\x1b[0m\r\n")
    sys.stderr.write(f"paseo: {'terminal exited' if how == 'exited' else 'detached'}\n")
    return 0
