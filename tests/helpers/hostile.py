"""Hostile clients shared by the daemon tests and ``bench/soak.py``: a client that asks for
large answers and never reads them, and the daemon's memory as the kernel reports it."""

from __future__ import annotations

import asyncio
import base64
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from websockets.exceptions import ConnectionClosed

from helpers.daemon_rpc import hello, open_ws, rpc

ICON_BYTES = 1024 * 1024


def large_png(size: int = ICON_BYTES) -> bytes:
    """A ``size``-byte file the daemon accepts as a PNG icon (only the signature is sniffed);
    random so nothing along the way can shrink it."""
    signature = b"\x89PNG\r\n\x1a\n"
    return signature + os.urandom(size - len(signature))


def memory_kib(pid: int) -> dict[str, int]:
    """``VmRSS`` (now) and ``VmHWM`` (the peak so far) of ``pid``, in KiB."""
    fields: dict[str, int] = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("VmRSS", "VmHWM"):
            fields[name] = int(value.split()[0])
    return fields


async def project_with_icon(url: str, credential: str, root: Path) -> str:
    """Add ``root`` as a project with a 1 MiB custom icon; returns the project id."""
    ws = await open_ws(url, credential, max_size=None)
    try:
        await hello(ws, "icon-setup")
        added = await rpc(ws, 1, "project.add", {"path": str(root)})
        project_id: str = added["result"]["project"]["projectId"]
        data = base64.b64encode(large_png()).decode("ascii")
        stored = await rpc(ws, 2, "project.setIcon", {"projectId": project_id, "data": data})
        assert "result" in stored, stored
        # One answer read in full, so the baseline includes what answering costs once.
        icon = await rpc(ws, 3, "project.icon", {"projectId": project_id})
        assert len(icon["result"]["data"]) > ICON_BYTES
        return project_id
    finally:
        await ws.close()


@dataclass
class HogOutcome:
    answers: int = 0
    errors: dict[str, int] = field(default_factory=dict)
    resyncs: int = 0
    dropped: int = 0
    close_code: int | None = None


async def icon_hog(
    url: str, credential: str, project_id: str, requests: int, per_second: float
) -> HogOutcome:
    """Ask for the icon ``requests`` times (paced, so the calls run rather than being refused
    as too many in flight) without reading; then read whatever is left, until the last
    request is accounted for or the daemon closes the connection."""
    ws = await open_ws(url, credential, max_queue=1, max_size=None)
    await hello(ws, "icon-hog")
    for request_id in range(1, requests + 1):
        frame = {
            "jsonrpc": "2.0",
            "id": request_id,
            "method": "project.icon",
            "params": {"projectId": project_id},
        }
        await ws.send(json.dumps(frame))
        await asyncio.sleep(1 / per_second)  # pacing the load, not synchronisation
    outcome = HogOutcome()
    try:
        async with asyncio.timeout(120):
            while True:
                message: dict[str, Any] = json.loads(await ws.recv())
                if message.get("method") == "server.resync":
                    outcome.resyncs += 1
                    dropped = message["params"]["droppedRequestIds"]
                    outcome.dropped += len(dropped)
                    if requests in dropped:
                        break
                elif "error" in message:
                    code = message["error"]["data"]["code"]
                    outcome.errors[code] = outcome.errors.get(code, 0) + 1
                elif "result" in message:
                    outcome.answers += 1
                if message.get("id") == requests:
                    break
    except ConnectionClosed:
        pass
    outcome.close_code = ws.close_code
    await ws.close()
    return outcome
