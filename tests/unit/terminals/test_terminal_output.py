"""A terminal's output queue: bounded in bytes, published in offset order, drops announced."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from paseo.terminals.pty import PtyProcess
from paseo.terminals.terminal import FRAME_BYTES, PENDING_LIMIT, Terminal, TerminalSpec

Chunk = tuple[int, bytes, int]


async def _with_terminal(tmp_path: Path, work: object) -> list[Chunk]:
    published: list[Chunk] = []
    exited = asyncio.Event()
    got_output = asyncio.Event()

    def output(terminal: Terminal, offset: int, data: bytes, dropped: int) -> None:
        published.append((offset, data, dropped))
        got_output.set()

    async def on_exit(terminal: Terminal) -> None:
        exited.set()

    process = await PtyProcess.spawn(
        ["sleep", "100"], cwd=str(tmp_path), env=dict(os.environ), columns=80, rows=24
    )
    terminal = Terminal(
        TerminalSpec("t1", None, None, "test", str(tmp_path), "now"),
        process,
        columns=80,
        rows=24,
        scrollback=10,
        output=output,
        changed=lambda t: None,
        exited=on_exit,
    )
    terminal.start()
    try:
        assert callable(work)
        await work(terminal, got_output)
    finally:
        await process.kill(grace=0)
        await asyncio.wait_for(exited.wait(), 10)
    return published


def test_a_burst_beyond_the_bound_is_dropped_oldest_first_and_announced(
    tmp_path: Path,
) -> None:
    burst = PENDING_LIMIT + 3 * FRAME_BYTES

    async def work(terminal: Terminal, got_output: asyncio.Event) -> None:
        # Queued faster than one flush interval: the pending buffer must cap it.
        for _ in range(burst // 1024):
            terminal._queue(b"x" * 1024)
        assert terminal.offset == burst

    published = asyncio.run(_with_terminal(tmp_path, work))
    first_offset, _, dropped = published[0]
    assert dropped == burst - PENDING_LIMIT
    assert first_offset == dropped
    position = first_offset
    for offset, data, later_dropped in published:
        assert offset == position
        assert len(data) <= FRAME_BYTES
        assert later_dropped == 0 or offset == first_offset
        position += len(data)
    assert position == burst


def test_small_writes_are_coalesced_into_one_chunk(tmp_path: Path) -> None:
    async def work(terminal: Terminal, got_output: asyncio.Event) -> None:
        for _ in range(50):
            terminal._queue(b"ab")
        await asyncio.wait_for(got_output.wait(), 10)

    published = asyncio.run(_with_terminal(tmp_path, work))
    assert published[0] == (0, b"ab" * 50, 0)
